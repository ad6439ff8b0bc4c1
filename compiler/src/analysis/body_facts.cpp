// Scanning a function body for its Cilk structure, and the AST utilities (see body_facts.hpp and
// analysis.hpp).
#include "analysis/body_facts.hpp"

#include "analysis/analysis.hpp"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>

namespace chanflow::compiler {

const clang::Expr* strip(const clang::Expr* e) {
  while (e) {
    if (auto* c = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) e = c->getSubExpr();
    else if (auto* p = llvm::dyn_cast<clang::ParenExpr>(e)) e = p->getSubExpr();
    else if (auto* w = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = w->getSubExpr();
    else break;
  }
  return e;
}

const clang::Stmt* parent_stmt(clang::ASTContext& ctx, const clang::Stmt* s) {
  auto parents = ctx.getParents(*s);
  if (parents.empty()) return nullptr;
  if (const auto* p = parents[0].get<clang::Stmt>()) return p;
  if (const auto* v = parents[0].get<clang::VarDecl>()) {
    auto vp = ctx.getParents(*v);
    if (!vp.empty()) return vp[0].get<clang::Stmt>();
  }
  return nullptr;
}

static const clang::VarDecl* addressed_root(const clang::Expr* e, bool globals) {
  for (e = e->IgnoreParenImpCasts();;) {
    if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e); m && !m->isArrow()) e = m->getBase()->IgnoreParenImpCasts();
    else if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e); a && a->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
      e = a->getBase()->IgnoreParenImpCasts();
    else break;
  }
  if (auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e))
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl()); v && (v->hasLocalStorage() || globals)) return v;
  return nullptr;
}

void addressed_variables(const clang::Expr* e, std::set<const clang::VarDecl*>& out, bool globals) {
  e = e->IgnoreParens();
  if (auto* c = llvm::dyn_cast<clang::CastExpr>(e)) {
    if (c->getCastKind() != clang::CK_ArrayToPointerDecay) return addressed_variables(c->getSubExpr(), out, globals);
    if (const clang::VarDecl* v = addressed_root(c->getSubExpr(), globals)) out.insert(v);
  } else if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_AddrOf) {
    if (const clang::VarDecl* v = addressed_root(u->getSubExpr(), globals)) out.insert(v);
  } else if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && (b->isAdditiveOp() || b->getOpcode() == clang::BO_Comma)) {
    if (b->isAdditiveOp()) addressed_variables(b->getLHS(), out, globals);
    addressed_variables(b->getRHS(), out, globals);
  } else if (auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    addressed_variables(c->getTrueExpr(), out, globals);
    addressed_variables(c->getFalseExpr(), out, globals);
  }
}

bool is_sync_call(const clang::CallExpr* call) {
  const clang::FunctionDecl* f = call->getDirectCallee();
  return f && f->getName() == "__chanflow_sync";
}

namespace {

class BodyScanner : public clang::RecursiveASTVisitor<BodyScanner> {
 public:
  BodyScanner(const KeywordLocations& keywords, BodyFacts& facts) : Keywords(keywords), Facts(facts) {}

  bool VisitCallExpr(clang::CallExpr* Call) {
    if (Keywords.spawn_targets.count(Call->getBeginLoc())) Facts.spawns.push_back(Call);
    if (is_sync_call(Call)) {
      Facts.syncs.push_back(Call);
      return true;
    }
    if (const clang::DeclRefExpr* stream = printed_stream(Call)) Streams.insert(stream);  // not a global device code reads
    if (Call->getDirectCallee()) Facts.calls.push_back(Call);
    else Facts.indirect_calls.push_back(Call);
    return true;
  }
  bool VisitCompoundStmt(clang::CompoundStmt* S) {
    if (Keywords.scope_braces.count(S->getLBracLoc())) Facts.scopes.push_back(S);
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* E) {
    if (auto* V = llvm::dyn_cast<clang::VarDecl>(E->getDecl()); V && V->hasGlobalStorage() && !Streams.count(E))
      Facts.global_refs.push_back(E);
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* V) {
    if (V->isLocalVarDecl() && !V->isStaticLocal()) Facts.locals.push_back(V);
    if (V->isStaticLocal()) StaticLocals.push_back(V);
    return true;
  }
  bool VisitReturnStmt(clang::ReturnStmt* S) {
    Facts.returns.push_back(S);
    return true;
  }
  bool VisitForStmt(clang::ForStmt* S) { return loop(S); }
  bool VisitWhileStmt(clang::WhileStmt* S) { return loop(S); }
  bool VisitDoStmt(clang::DoStmt* S) { return loop(S); }

  std::vector<const clang::VarDecl*> StaticLocals;

 private:
  bool loop(const clang::Stmt* S) {
    Facts.loops.push_back(S);
    return true;
  }
  const KeywordLocations& Keywords;
  BodyFacts& Facts;
  std::set<const clang::DeclRefExpr*> Streams;  // fprintf's stdout or stderr (printed_stream), visited after its call
};

}  // namespace

BodyFacts scan_body(const clang::Stmt* body, const KeywordLocations& keywords) {
  BodyFacts facts;
  BodyScanner scanner(keywords, facts);
  scanner.TraverseStmt(const_cast<clang::Stmt*>(body));
  facts.static_locals = scanner.StaticLocals;
  return facts;
}

}  // namespace chanflow::compiler
