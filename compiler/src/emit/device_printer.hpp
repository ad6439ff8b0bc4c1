// Device code as chanflowc prints it (the helpers' and the Cilk functions' bodies alike): Clang's
// statement printer with every pointer given its address space (analysis/address_spaces.hpp),
// loop declarations hoisted, locals renamed where OpenCL C reserves their names, the C library's
// memory functions on the device heap, and helpers that allocate given the node's environment.
#pragma once

#include "analysis/address_spaces.hpp"
#include "analysis/cilk_model.hpp"
#include "emit/emit.hpp"

#include <clang/AST/PrettyPrinter.h>
#include <clang/AST/Stmt.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <string>

namespace chanflow::compiler {

// How a value of type `t` travels in a 64-bit result slot, and back.
std::string to_bits(clang::QualType t, const std::string& v);
std::string from_bits(clang::ASTContext& ctx, clang::QualType t, const std::string& bits);

// Prints device code: Clang's statement printer, with declarations, casts and calls given their
// address spaces (address_spaces.hpp), loop declarations hoisted, and renamed locals renamed.
class DevicePrinter : public clang::PrinterHelper {
 public:
  DevicePrinter(clang::ASTContext& ctx, const CilkProgram& program, const FunctionSpaces& spaces,
                const std::map<const clang::VarDecl*, std::string>* names)
      : Ctx(ctx), Policy(ctx.getLangOpts()), Program(program), Spaces(spaces), Names(names) {
    Policy.SuppressTagKeyword = false;
    Policy.Bool = false;
  }

  bool handledStmt(clang::Stmt* s, llvm::raw_ostream& os) override;
  /// Whether `l` is printed with `#pragma unroll` (device_printer.cpp).
  bool unrolls(const clang::ForStmt* l) const;

  // A call of the C library's memory functions: the device heap's (heap.cl), or the copy for the
  // address spaces of its pointers.
  void print_memory_call(const clang::CallExpr* call, MemoryCall m, llvm::raw_ostream& os);

 protected:
  void print_expr(const clang::Stmt* e, llvm::raw_ostream& os) { e->printPretty(os, this, Policy, 0); }

  void print_statement(clang::Stmt* s, llvm::raw_ostream& os) {
    print_expr(s, os);
    if (llvm::isa<clang::Expr>(s)) os << ";";
    os << "\n";
  }

  std::string name_of(const clang::VarDecl* v) const {
    return Names && Names->count(v) ? Names->at(v) : device_name(v->getNameAsString());
  }

  Space space_of(const clang::VarDecl* v) const {
    auto it = Spaces.vars.find(v);
    return it == Spaces.vars.end() ? Space::Global : it->second;
  }

  std::string type_of(const clang::VarDecl* v, const std::string& name) const {
    return device_type_in(Ctx, v->getType().getUnqualifiedType(), space_of(v), name);
  }

  virtual void print_declaration(const clang::Decl* decl, llvm::raw_ostream& os) {
    if (const auto* t = llvm::dyn_cast<clang::TypedefNameDecl>(decl)) {
      os << "typedef " << device_type(Ctx, t->getUnderlyingType(), true, t->getNameAsString()) << ";\n";
      return;
    }
    const auto* v = llvm::dyn_cast<clang::VarDecl>(decl);
    if (!v) {
      decl->print(os, Policy);
      os << ";\n";
      return;
    }
    os << type_of(v, name_of(v));
    if (const clang::Expr* init = v->getInit()) {
      os << " = ";
      print_expr(init, os);
    }
    os << ";\n";
  }

  clang::ASTContext& Ctx;
  clang::PrintingPolicy Policy;
  const CilkProgram& Program;
  const FunctionSpaces& Spaces;
  const std::map<const clang::VarDecl*, std::string>* Names;

 public:
  bool ReleasesAllocas = false;  // a helper that calls alloca: its returns release the blocks
  bool AllocasOnLifo = false;  // a serial form: alloca takes from its activations' LIFO of blocks (cf_lifo)
  bool Group = false;  // printing a work-group task (a cilk_for's leaf)
};

/// A helper as compiled for one combination of its pointers' address spaces.
std::string helper_code(clang::ASTContext& ctx, const CilkProgram& program, const FunctionSpaces& fs);
/// Its declarator: the return type, the copy's name and the parameters (the node's environment
/// first where it needs it).
std::string helper_signature(clang::ASTContext& ctx, const CilkProgram& program, const FunctionSpaces& fs);
/// A helper that calls itself, as one loop over an explicit stack of its activations
/// (recursive_helper.cpp).
std::string recursive_helper_code(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h,
                                  const FunctionSpaces& fs);
/// The serial form of a Cilk function (F__serial: its spawns calls, its syncs nothing), printed as
/// a recursive helper from `fs`, the function's own spaces.
std::string serial_form_code(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h,
                             const FunctionSpaces& fs);

}  // namespace chanflow::compiler
