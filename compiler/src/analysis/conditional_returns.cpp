// A function that calls itself inside a branch of `?:` in a return (`return n <= 0 ? 0 : 1 +
// depth(n - 1);`) returns from an if statement instead, before the analysis looks: a helper that
// calls itself runs on an explicit stack, where each call must be a point the loop stops at,
// made whatever the rest of its statement does, which a branch is not (recursive_helpers.cpp).
#include "analysis/analysis.hpp"

#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

namespace chanflow::compiler {
namespace {

bool calls(const clang::Stmt* s, const clang::FunctionDecl* f) {
  if (!s) return false;
  if (auto* c = llvm::dyn_cast<clang::CallExpr>(s))
    if (const clang::FunctionDecl* callee = c->getDirectCallee(); callee && callee->getCanonicalDecl() == f->getCanonicalDecl())
      return true;
  for (const clang::Stmt* c : s->children())
    if (calls(c, f)) return true;
  return false;
}

class Splitter {
 public:
  Splitter(clang::ASTContext& ctx, const clang::FunctionDecl* f) : Ctx(ctx), F(f) {}

  // `s` with every such return split, in place where it is a child of another statement.
  clang::Stmt* visit(clang::Stmt* s) {
    if (!s) return s;
    if (auto* r = llvm::dyn_cast<clang::ReturnStmt>(s)) return split(r);
    if (llvm::isa<clang::Expr>(s)) return s;
    for (clang::Stmt*& child : s->children()) child = visit(child);
    return s;
  }

 private:
  // `return c ? a : b;` as `if (c) return a; else return b;`, each return split again.
  clang::Stmt* split(clang::ReturnStmt* r) {
    clang::Expr* value = r->getRetValue();
    if (!value) return r;
    // The conversion to the return type, if any, goes onto each branch.
    auto* cast = llvm::dyn_cast<clang::ImplicitCastExpr>(value);
    clang::Expr* inner = (cast ? cast->getSubExpr() : value)->IgnoreParens();
    auto* c = llvm::dyn_cast<clang::ConditionalOperator>(inner);
    if (!c || (!calls(c->getTrueExpr(), F) && !calls(c->getFalseExpr(), F))) return r;
    auto branch = [&](clang::Expr* e) -> clang::Stmt* {
      if (cast)
        e = clang::ImplicitCastExpr::Create(Ctx, cast->getType(), cast->getCastKind(), e, nullptr, cast->getValueKind(),
                                            clang::FPOptionsOverride());
      return split(clang::ReturnStmt::Create(Ctx, r->getReturnLoc(), e, nullptr));
    };
    return clang::IfStmt::Create(Ctx, r->getReturnLoc(), clang::IfStatementKind::Ordinary, nullptr, nullptr, c->getCond(),
                                 c->getQuestionLoc(), c->getColonLoc(), branch(c->getTrueExpr()), c->getColonLoc(),
                                 branch(c->getFalseExpr()));
  }

  clang::ASTContext& Ctx;
  const clang::FunctionDecl* F;
};

}  // namespace

void split_conditional_returns(clang::ASTContext& ctx) {
  for (clang::Decl* d : ctx.getTranslationUnitDecl()->decls()) {
    auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (!f || !f->doesThisDeclarationHaveABody() || !calls(f->getBody(), f)) continue;
    Splitter(ctx, f).visit(f->getBody());
  }
}

}  // namespace chanflow::compiler
