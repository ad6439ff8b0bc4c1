// Address spaces for device code. OpenCL C 1.2 (and PoCL 3.1 under every -cl-std) has no generic
// address space: an unqualified pointer is private. chanflowc infers where each pointer points,
// per function and call: pointers a Cilk function receives or keeps in memory point to global
// memory (SVM); `&local` and a local array point to private memory, unless the local is boxed (its
// address goes to a child: it lives in global memory, cilk_model.hpp); const globals are __constant.
// A helper called with different address spaces gets one copy per combination.
#pragma once

#include "analysis/cilk_model.hpp"

#include <clang/AST/ASTContext.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace chanflow::compiler {

enum class Space { Unknown, Private, Global, Constant };

/// One device function as compiled for one combination of its pointer parameters' spaces.
struct FunctionSpaces {
  const clang::FunctionDecl* decl = nullptr;
  std::vector<Space> params;  ///< the pointee space of each pointer parameter (Unknown otherwise)
  std::string name;           ///< the emitted name (the function's own unless it has several copies)
  Space result = Space::Unknown;
  std::map<const clang::VarDecl*, Space> vars;          ///< pointer parameters and locals
  std::map<const clang::CallExpr*, const FunctionSpaces*> calls;  ///< helper calls: which copy
  std::map<const clang::Expr*, Space> casts;            ///< explicit casts to pointer types
  /// memcpy, memmove and memset: the spaces of their pointers (destination, then source), as
  /// the suffix of the device library's copy for them ("gp": to global from private).
  std::map<const clang::CallExpr*, std::string> memory;
};

class AddressSpaces {
 public:
  /// Infers every Cilk function (pointer parameters global) and the helper copies they call;
  /// conflicts are reported as diagnostics.
  AddressSpaces(clang::ASTContext& ctx, const CilkProgram& program);

  const FunctionSpaces& cilk_function(const CilkFunction& f) const { return *cilk_.at(f.decl); }
  /// Every helper copy, callees before callers.
  const std::vector<const FunctionSpaces*>& helpers() const { return order_; }

 private:
  FunctionSpaces& instance(const clang::FunctionDecl* f, const std::vector<Space>& params);
  void infer(FunctionSpaces& fs);
  Space expr_space(FunctionSpaces& fs, const clang::Expr* e);
  Space storage_space(FunctionSpaces& fs, const clang::Expr* lvalue);
  void unify(FunctionSpaces& fs, const clang::VarDecl* v, Space s, clang::SourceLocation at);
  void visit(FunctionSpaces& fs, const clang::Stmt* s);
  void name_copies();

  clang::ASTContext& ctx_;
  const CilkProgram& program_;
  std::map<const clang::FunctionDecl*, std::unique_ptr<FunctionSpaces>> cilk_;
  std::map<std::pair<const clang::FunctionDecl*, std::vector<Space>>, std::unique_ptr<FunctionSpaces>> helpers_;
  std::vector<const FunctionSpaces*> order_;
  bool changed_ = false;
};

/// How device code spells `type` whose outermost pointer points into `space` (deeper pointers,
/// and pointers inside arrays and records, point to global memory).
std::string device_type_in(clang::ASTContext& ctx, clang::QualType type, Space space, const std::string& declarator = "");

}  // namespace chanflow::compiler
