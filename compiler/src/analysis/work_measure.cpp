// What measures a Cilk function's work, for its serial levels grouped by work (scheduler/cl/
// sweep.cl, chanflow_group_by_work): a work-group's tasks at the run's serial depth go to its
// work-items largest first, so a warp's lanes run subtrees of about one size. The measure is an
// integer parameter every spawn of the function itself makes smaller by a constant step:
// `n - 1` (fib), `size / 2` (a sort's halves), `len >> 1`. The larger it is, the larger the
// subtree, for all the compiler can say; a function with no such parameter is not grouped.
#include "analysis/analyzer.hpp"

namespace chanflow::compiler {
namespace {

// Whether `e` is `p - c`, `p / c` or `p >> c` for a constant c that makes it smaller (c >= 1,
// c >= 2 and c >= 1), through casts and parentheses.
bool smaller_by_a_step(clang::ASTContext& ctx, const clang::Expr* e, const clang::ParmVarDecl* p) {
  const auto* op = llvm::dyn_cast<clang::BinaryOperator>(strip(e));
  if (!op) return false;
  const auto* lhs = llvm::dyn_cast<clang::DeclRefExpr>(strip(op->getLHS()));
  if (!lhs || lhs->getDecl() != p) return false;
  clang::Expr::EvalResult step;
  if (op->getRHS()->isValueDependent() || !op->getRHS()->EvaluateAsInt(step, ctx)) return false;
  const llvm::APSInt& c = step.Val.getInt();
  switch (op->getOpcode()) {
    case clang::BO_Sub:
    case clang::BO_Shr:
      return c.isStrictlyPositive();
    case clang::BO_Div:
      return c.isStrictlyPositive() && c != 1;
    default:
      return false;
  }
}

}  // namespace

void Analyzer::find_work_measures() {
  for (CilkFunction& f : Program.functions) {
    const RecursiveHelper* form = Program.serial_form(f.decl);
    if (!form || form->leaf || !f.serial_below.empty() || f.group) continue;  // no serial level of the run's depth
    const clang::FunctionDecl* self = f.decl->getCanonicalDecl();
    for (unsigned i = 0; i < f.decl->getNumParams() && !f.work; ++i) {
      const clang::ParmVarDecl* p = f.decl->getParamDecl(i);
      if (!p->getType()->isIntegerType() || p->getType()->isBooleanType() || f.is_boxed(p)) continue;
      unsigned selves = 0;
      bool every = true;
      for (const SpawnSite& s : f.spawns) {
        if (!s.callee || s.callee->getCanonicalDecl() != self) continue;
        ++selves;
        every = every && i < s.call->getNumArgs() && smaller_by_a_step(Ctx, s.call->getArg(i), p);
      }
      if (!selves || !every) continue;
      // written in the body or its address taken, `p - 1` at a spawn says nothing of what the task was given
      if (!assigns(f.decl->getBody(), p)) f.work = p;
    }
  }
}

}  // namespace chanflow::compiler
