// What a Cilk function's syncs must do (sync_flow.cpp): whether children may be outstanding at
// one, which locals the code after it uses, which a result certainly overwrites, and which are in
// scope there.
#pragma once

#include "analysis/cilk_model.hpp"

#include <clang/AST/ASTContext.h>

#include <map>
#include <utility>
#include <vector>

namespace chanflow::compiler {

/// A sync point: its statement, where it syncs, and whether that is the statement's end (a
/// cilk_scope block, the function's body).
struct SyncAt {
  const clang::Stmt* stmt;
  clang::SourceLocation loc;
  bool end;
};

class SyncFlow {
 public:
  SyncFlow(clang::ASTContext& ctx, const CilkFunction& f);

  /// Whether spawn `s` may have a child outstanding at `at`: it is written before `at` (or in a
  /// loop around it), and no sync point after it runs before `at` on every path.
  bool outstanding(const SpawnSite& s, const SyncAt& at) const;
  bool may_have_children(const SyncAt& at) const;
  /// Of the locals in scope at a sync, those the code after it may use and those a result may be
  /// delivered into.
  std::vector<const clang::VarDecl*> live(const std::vector<const clang::VarDecl*>& in_scope, const SyncAt& at) const;
  /// Whether a spawn's result certainly overwrites all of local `v` at `at` (its value before need
  /// not be saved).
  bool overwritten(const clang::VarDecl* v, const SyncAt& at) const;
  /// The locals in scope just after statement `s`, and at the end of block `c`.
  std::vector<const clang::VarDecl*> scope_at(const clang::Stmt* s) const;
  std::vector<const clang::VarDecl*> scope_at_end(const clang::CompoundStmt* c) const;
  /// Whether nothing but `return;` can follow statement `s`: it is the body, a return, or the last
  /// statement (or followed by `return;`) of blocks and if-branches up to the body.
  bool only_returns_after(const clang::Stmt* s) const;
  /// A goto or switch: a jump may skip a declaration or a sync.
  bool jumps() const { return F.has_goto || HasSwitch; }

 private:
  void collect_uses(const clang::Stmt* s);
  const std::vector<clang::SourceLocation>& uses(const clang::VarDecl* v) const;
  bool precedes(const clang::Stmt* p, const SyncAt& at) const;
  bool pending_root(const clang::VarDecl* v, const SyncAt& at) const;
  std::pair<clang::SourceLocation, const clang::Stmt*> returns_after(const SyncAt& at) const;
  const clang::Stmt* parent(const clang::Stmt* s) const;

  clang::ASTContext& Ctx;
  const CilkFunction& F;
  std::map<const clang::VarDecl*, std::vector<clang::SourceLocation>> Uses;  // where each local is named
  bool HasSwitch = false;
  std::vector<std::pair<const clang::Stmt*, clang::SourceLocation>> Points;  // sync points but returns, where each syncs
  // Where a loop may sync a batch at a time (before each batched spawn site): a sync that may or
  // may not happen, so it ends no child's outstanding, but a result may be delivered there.
  std::vector<clang::SourceLocation> BatchPoints;
};

}  // namespace chanflow::compiler
