// Which loop spawn sites need no batch sync (emit_device.cpp, "batched"): those whose loops
// count a variable between constants, few enough times.
#include "analysis/analysis.hpp"

#include <clang/AST/ASTContext.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace chanflow::compiler {
namespace {

bool names(const clang::Expr* e, const clang::VarDecl* var) {
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
  return r && r->getDecl() == var;
}

// `i++`, `++i` or `i += 1`.
bool steps_by_one(const clang::Expr* inc, const clang::VarDecl* var) {
  if (!inc) return false;
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(inc)) return u->isIncrementOp() && names(u->getSubExpr(), var);
  if (const auto* c = llvm::dyn_cast<clang::CompoundAssignOperator>(inc)) {
    const auto* one = llvm::dyn_cast<clang::IntegerLiteral>(c->getRHS()->IgnoreParenImpCasts());
    return c->getOpcode() == clang::BO_AddAssign && names(c->getLHS(), var) && one && one->getValue() == 1;
  }
  return false;
}

}  // namespace

// Whether `s` assigns `var` (=, op=, ++, --) or takes its address.
bool assigns(const clang::Stmt* s, const clang::VarDecl* var) {
  if (!s) return false;
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b && b->isAssignmentOp() && names(b->getLHS(), var)) return true;
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s);
      u && (u->isIncrementDecrementOp() || u->getOpcode() == clang::UO_AddrOf) && names(u->getSubExpr(), var))
    return true;
  for (const clang::Stmt* c : s->children())
    if (assigns(c, var)) return true;
  return false;
}

// `for (i = a; i < b; i++)` (or `<=`, `++i`, `i += 1`, a declared `i`) with integer constants a
// and b, and `i` not assigned in the body: its trip count.
std::optional<std::uint64_t> constant_trip_count(clang::ASTContext& ctx, const clang::ForStmt* loop) {
  const clang::VarDecl* var = nullptr;
  const clang::Expr* start = nullptr;
  if (const auto* d = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit()); d && d->isSingleDecl()) {
    var = llvm::dyn_cast<clang::VarDecl>(d->getSingleDecl());
    start = var ? var->getInit() : nullptr;
  } else if (const auto* a = llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getInit()); a && a->getOpcode() == clang::BO_Assign) {
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(a->getLHS()->IgnoreParenImpCasts())) var = llvm::dyn_cast<clang::VarDecl>(r->getDecl());
    start = a->getRHS();
  }
  const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getCond());
  if (!var || !start || !cond || (cond->getOpcode() != clang::BO_LT && cond->getOpcode() != clang::BO_LE)) return std::nullopt;
  const auto* lhs = llvm::dyn_cast<clang::DeclRefExpr>(cond->getLHS()->IgnoreParenImpCasts());
  if (!lhs || lhs->getDecl() != var || !steps_by_one(loop->getInc(), var) || assigns(loop->getBody(), var)) return std::nullopt;
  clang::Expr::EvalResult from, to;
  if (!start->EvaluateAsInt(from, ctx) || !cond->getRHS()->EvaluateAsInt(to, ctx)) return std::nullopt;
  const std::int64_t a = from.Val.getInt().getExtValue(), b = to.Val.getInt().getExtValue() + (cond->getOpcode() == clang::BO_LE);
  return static_cast<std::uint64_t>(b > a ? b - a : 0);
}

// How often a spawn in loops runs per segment where that is known to stay within --max-loop-spawns:
// every loop around it counts a variable from a constant to a constant bound by one (`for (i = 0;
// i < 10; i++)`), and their trip counts times the spawn sites in the outermost stay under it.
std::optional<std::uint64_t> loop_trips(clang::ASTContext& ctx, const SpawnSite& s, const CilkFunction& f, unsigned limit) {
  std::uint64_t trips = 1;
  const clang::Stmt* outermost = nullptr;
  for (const clang::Stmt* p = parent_stmt(ctx, s.call); p && p != f.decl->getBody(); p = parent_stmt(ctx, p)) {
    if (!llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p)) continue;
    const auto* loop = llvm::dyn_cast<clang::ForStmt>(p);
    const std::optional<std::uint64_t> n = loop ? constant_trip_count(ctx, loop) : std::nullopt;
    if (!n) return std::nullopt;
    trips *= std::max<std::uint64_t>(*n, 1);
    if (trips > limit) return std::nullopt;
    outermost = p;
  }
  unsigned sites = 0;
  for (const SpawnSite& other : f.spawns)
    sites += outermost && outermost->getSourceRange().fullyContains(other.call->getSourceRange());
  if (trips * std::max(sites, 1u) > limit) return std::nullopt;
  return trips;
}

}  // namespace chanflow::compiler
