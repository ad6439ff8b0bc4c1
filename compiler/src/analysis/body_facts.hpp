// What one function body contains, as far as the Cilk structure is concerned (spawns, syncs,
// scopes, calls, globals, loops, locals, returns), and the AST utilities the analysis and the
// emitters share.
#pragma once

#include "analysis/cilk_model.hpp"

#include <clang/AST/ASTContext.h>

#include <set>
#include <vector>

namespace chanflow::compiler {

// What one function body contains, as far as the Cilk structure is concerned.
struct BodyFacts {
  std::vector<const clang::CallExpr*> spawns;
  std::vector<const clang::CallExpr*> syncs;
  std::vector<const clang::CompoundStmt*> scopes;
  std::vector<const clang::CallExpr*> calls;  // every direct call, spawns included
  std::vector<const clang::Expr*> indirect_calls;
  std::vector<const clang::DeclRefExpr*> global_refs;
  std::vector<const clang::Stmt*> loops;
  std::vector<const clang::VarDecl*> locals;
  std::vector<const clang::ReturnStmt*> returns;
  std::vector<const clang::VarDecl*> static_locals;
};

/// The facts of `body`: spawns are the calls the preprocessor saw a spawn keyword before.
BodyFacts scan_body(const clang::Stmt* body, const KeywordLocations& keywords);

/// Whether `call` is a sync (cilk_sync expands to a call of __chanflow_sync under chanflowc).
bool is_sync_call(const clang::CallExpr* call);

}  // namespace chanflow::compiler
