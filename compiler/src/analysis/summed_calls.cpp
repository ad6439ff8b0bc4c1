// Calls of itself whose value the caller's return only adds to (RecursiveHelper::sums): fib's
// `y = fib(n - 2); cilk_sync; return x + y;` or a helper's `return f(n - 1) + f(n - 2);`. C
// compilers make such a call a loop (the caller goes on as the callee, its addend kept in an
// accumulator: GCC's tail recursion with accumulators, LLVM's accumulator recursion elimination);
// chanflowc gives them no recursion to rewrite, so it does the same in its explicit stack
// (emit/recursive_calls.cpp): such a call pushes no frame. fib's serial form makes half as many
// pushes and pops (docs/compiler.md has the figures).
//
// What qualifies: an integer result (not bool, not an enum), the sum in that same type, the call
// the last its statement makes, and nothing between it and the return but syncs. Its addend is
// evaluated before the call instead of after, so it may read only what the call cannot change:
// constants, the function's parameters and non-volatile locals (no pointer names them in a form
// on an explicit stack: recursive_helpers.cpp), and the values of calls of itself made before,
// through arithmetic with no side effect. The sum is kept unsigned, where it wraps as the signed
// one does on every OpenCL device, and no partial sum can overflow where the program's did not.
#include "analysis/analysis.hpp"
#include "analysis/body_facts.hpp"

#include <algorithm>
#include <functional>

namespace chanflow::compiler {
namespace {

// Whether `e` may be evaluated before the call instead of after it (above); `earlier`: the calls
// of itself its statement makes before, `result`: the local the call's value goes to, if any.
bool addend_moves(const clang::Expr* e, const clang::FunctionDecl* def, const std::vector<const clang::CallExpr*>& earlier,
                  const clang::VarDecl* result) {
  e = e->IgnoreParens();
  if (llvm::isa<clang::IntegerLiteral, clang::CharacterLiteral>(e)) return true;
  if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (llvm::isa<clang::EnumConstantDecl>(r->getDecl())) return true;
    const auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl());
    return v && v != result && v->hasLocalStorage() && v->getDeclContext() == def && !v->getType().isVolatileQualified() &&
           v->getType()->isScalarType();
  }
  if (const auto* c = llvm::dyn_cast<clang::CallExpr>(e)) return std::count(earlier.begin(), earlier.end(), c) > 0;
  if (const auto* c = llvm::dyn_cast<clang::CastExpr>(e))
    return c->getType()->isIntegerType() && addend_moves(c->getSubExpr(), def, earlier, result);
  if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    switch (u->getOpcode()) {
      case clang::UO_Plus: case clang::UO_Minus: case clang::UO_Not: case clang::UO_LNot:
        return addend_moves(u->getSubExpr(), def, earlier, result);
      default: return false;  // ++, --, *, &
    }
  }
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e))
    return !b->isAssignmentOp() && !b->isCommaOp() && b->getLHS()->getType()->isIntegerType() &&
           b->getRHS()->getType()->isIntegerType() && addend_moves(b->getLHS(), def, earlier, result) &&
           addend_moves(b->getRHS(), def, earlier, result);
  if (const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e))
    return addend_moves(c->getCond(), def, earlier, result) && addend_moves(c->getTrueExpr(), def, earlier, result) &&
           addend_moves(c->getFalseExpr(), def, earlier, result);
  return false;
}

// `value` is `addend + operand` or `operand + addend` in the function's result type: the addend.
const clang::Expr* addend_of(const clang::Expr* value, const std::function<bool(const clang::Expr*)>& is_operand,
                             clang::QualType result) {
  const auto* sum = llvm::dyn_cast_or_null<clang::BinaryOperator>(strip(value));
  if (!sum || sum->getOpcode() != clang::BO_Add) return nullptr;
  const auto same = [&](clang::QualType t) { return t.getCanonicalType().getUnqualifiedType() == result; };
  if (!same(sum->getType()) || !same(strip(sum->getLHS())->getType()) || !same(strip(sum->getRHS())->getType())) return nullptr;
  if (is_operand(strip(sum->getRHS()))) return sum->getLHS();
  if (is_operand(strip(sum->getLHS()))) return sum->getRHS();
  return nullptr;
}

}  // namespace

std::map<const clang::CallExpr*, const clang::Expr*> summed_calls(clang::ASTContext& ctx, const RecursiveHelper& h) {
  std::map<const clang::CallExpr*, const clang::Expr*> out;
  const clang::QualType result = h.decl->getReturnType().getCanonicalType().getUnqualifiedType();
  if (!result->isIntegerType() || result->isBooleanType() || result->isEnumeralType()) return out;
  for (const auto& [carrier, calls] : h.carriers) {
    const clang::CallExpr* call = calls.empty() ? nullptr : calls.back();
    if (!call || result != call->getType().getCanonicalType().getUnqualifiedType()) continue;
    const std::vector<const clang::CallExpr*> earlier(calls.begin(), calls.end() - 1);
    const auto is_call = [&](const clang::Expr* e) { return e == call; };
    // `return a + f(...)`: the call is the return's operand.
    if (const auto* ret = llvm::dyn_cast<clang::ReturnStmt>(carrier)) {
      if (const clang::Expr* addend = ret->getRetValue() ? addend_of(ret->getRetValue(), is_call, result) : nullptr;
          addend && addend_moves(addend, h.decl, earlier, nullptr))
        out[call] = addend;
      continue;
    }
    // `T y = f(...);` or `y = f(...);`, then syncs, then `return a + y;`.
    const clang::VarDecl* local = nullptr;
    if (const auto* d = llvm::dyn_cast<clang::DeclStmt>(carrier); d && d->isSingleDecl()) {
      const auto* v = llvm::dyn_cast<clang::VarDecl>(d->getSingleDecl());
      if (v && v->getInit() && strip(v->getInit()) == call) local = v;
    } else if (const auto* a = llvm::dyn_cast<clang::BinaryOperator>(carrier); a && a->getOpcode() == clang::BO_Assign) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(a->getLHS()));
      if (r && strip(a->getRHS()) == call) local = llvm::dyn_cast<clang::VarDecl>(r->getDecl());
    }
    if (!local || !earlier.empty() || !local->hasLocalStorage() || local->getType().isVolatileQualified() ||
        local->getType().getCanonicalType().getUnqualifiedType() != result)
      continue;
    const auto* block = llvm::dyn_cast_or_null<clang::CompoundStmt>(parent_stmt(ctx, carrier));
    if (!block) continue;
    auto next = std::find(block->body_begin(), block->body_end(), carrier);
    if (next == block->body_end()) continue;
    const auto passes = [](const clang::Stmt* x) {  // a sync, or an empty statement
      const auto* c = llvm::dyn_cast<clang::CallExpr>(x);
      return llvm::isa<clang::NullStmt>(x) || (c && is_sync_call(c));
    };
    for (++next; next != block->body_end() && passes(*next);) ++next;
    const auto* ret = next == block->body_end() ? nullptr : llvm::dyn_cast<clang::ReturnStmt>(*next);
    if (!ret || !ret->getRetValue()) continue;
    const auto is_local = [&](const clang::Expr* e) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
      return r && r->getDecl() == local;
    };
    if (const clang::Expr* addend = addend_of(ret->getRetValue(), is_local, result);
        addend && addend_moves(addend, h.decl, {}, local))
      out[call] = addend;
  }
  return out;
}

}  // namespace chanflow::compiler
