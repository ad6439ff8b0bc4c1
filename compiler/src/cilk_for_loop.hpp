// What a cilk_for loop says, read from its source text and AST: its range (canonical form, the
// bounds evaluated once, a perfectly nested pair), whether its body stays in it, and the text
// and diagnostics the lowering (cilk_for.cpp) writes with. The lowering's base class.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>

#include <set>
#include <string>

namespace chanflow::compiler {

class LoopSource {
 public:
  explicit LoopSource(clang::ASTContext& ctx) : Ctx(ctx), SM(ctx.getSourceManager()) {
    Policy.SuppressTagKeyword = false;
    Policy.Bool = false;
  }

  std::set<clang::SourceLocation> CilkFors;  // where every cilk_for of this pass is (expansion locations)
  bool Quiet = false;                        // fail() reports nothing

 protected:
  static const clang::Expr* bare(const clang::Expr* e) { return e ? e->IgnoreParenImpCasts() : nullptr; }
  static bool names(const clang::Expr* e, const clang::VarDecl* v) {
    const auto* r = llvm::dyn_cast_or_null<clang::DeclRefExpr>(bare(e));
    return r && r->getDecl() == v;
  }

  // for (T i = a; i OP b; i++ / i-- / i += s / i -= s), with i an integer declared there.
  bool canonical(const clang::ForStmt* s) {
    const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(s->getInit());
    Var = init && init->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(init->getSingleDecl()) : nullptr;
    if (!Var || !Var->getInit() || !Var->getType()->isIntegerType())
      return fail(s->getForLoc(), "cilk_for needs its loop variable declared in it with a starting value, an integer: "
                                  "`cilk_for (int i = a; i < b; i++)`");
    First = Var->getInit();
    const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(bare(s->getCond()));
    if (cond && names(cond->getLHS(), Var)) {
      Op = cond->getOpcode();
      Limit = cond->getRHS();
    } else if (cond && names(cond->getRHS(), Var)) {
      Op = clang::BinaryOperator::reverseComparisonOp(cond->getOpcode());
      Limit = cond->getLHS();
    }
    if (!cond || !Limit ||
        (Op != clang::BO_LT && Op != clang::BO_LE && Op != clang::BO_GT && Op != clang::BO_GE && Op != clang::BO_NE))
      return fail(s->getCond() ? s->getCond()->getBeginLoc() : s->getForLoc(),
                  "cilk_for's condition must compare its loop variable with a limit (<, <=, >, >= or !=)");
    const clang::Expr* inc = bare(s->getInc());
    if (const auto* u = llvm::dyn_cast_or_null<clang::UnaryOperator>(inc); u && names(u->getSubExpr(), Var)) {
      if (u->isIncrementOp()) Step = "1L";
      if (u->isDecrementOp()) Step = "-1L";
    } else if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(inc); c && names(c->getLHS(), Var)) {
      // In long before negating: `i -= 1u` must step by -1, not by 2^32 - 1.
      if (c->getOpcode() == clang::BO_AddAssign) Step = "(long)(" + text(c->getRHS()) + ")";
      if (c->getOpcode() == clang::BO_SubAssign) Step = "-(long)(" + text(c->getRHS()) + ")";
    }
    if (Step.empty())
      return fail(s->getInc() ? s->getInc()->getBeginLoc() : s->getForLoc(),
                  "cilk_for's increment must be ++, --, += or -= of its loop variable");
    return true;
  }

  // The range canonical() read: the loop variable, start, limit, comparison and step.
  struct Range {
    const clang::VarDecl* var;
    const clang::Expr* first;
    const clang::Expr* limit;
    clang::BinaryOperatorKind op;
    std::string step;
  };

  Range range() const { return {Var, First, Limit, Op, Step}; }

  void set_range(const Range& r) {
    Var = r.var, First = r.first, Limit = r.limit, Op = r.op, Step = r.step;
  }

  // The current range's start, limit and step, evaluated once each, as cilk_for does, in long (an
  // int range's count can overflow int), then its trip count: cf_a, cf_b, cf_s, cf_n + suffix.
  std::string range_bounds(const std::string& x, bool declare = true) const {
    std::string trip;
    if (Op == clang::BO_LT) trip = "cf_b{0} > cf_a{0} ? (cf_b{0} - cf_a{0} + cf_s{0} - 1) / cf_s{0} : 0";
    if (Op == clang::BO_LE) trip = "cf_b{0} >= cf_a{0} ? (cf_b{0} - cf_a{0}) / cf_s{0} + 1 : 0";
    if (Op == clang::BO_GT) trip = "cf_a{0} > cf_b{0} ? (cf_a{0} - cf_b{0} - cf_s{0} - 1) / -cf_s{0} : 0";
    if (Op == clang::BO_GE) trip = "cf_a{0} >= cf_b{0} ? (cf_a{0} - cf_b{0}) / -cf_s{0} + 1 : 0";
    if (Op == clang::BO_NE) trip = "(cf_b{0} - cf_a{0}) / cf_s{0}";
    const std::string form = declare ? "long cf_a{0} = (long)({1}), cf_b{0} = (long)({2}), cf_s{0} = {3}; long cf_n{0} = "
                                     : "cf_a{0} = (long)({1}); cf_b{0} = (long)({2}); cf_s{0} = {3}; cf_n{0} = ";
    return fmt::format(fmt::runtime(form + trip + ";"), x, text(First), text(Limit), Step);
  }

  // The cilk_for that is all of `s`'s body, if its range does not name `s`'s variable (nor does it
  // write anything): the pair runs as one range, so a leaf holds a grain of both (a matrix's
  // rows and columns). Otherwise null.
  const clang::ForStmt* collapsible(const clang::ForStmt* s) {
    const clang::Stmt* b = s->getBody();
    if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(b); c && c->size() == 1) b = c->body_front();
    const auto* in = llvm::dyn_cast<clang::ForStmt>(b);
    if (!in || !CilkFors.count(SM.getExpansionLoc(in->getForLoc()))) return nullptr;
    const Range outer = range();
    const bool ok = !mentions(in->getInit(), outer.var) && !mentions(in->getCond(), outer.var) &&
              !mentions(in->getInc(), outer.var) && canonical_quietly(in) &&
              Var->getName() != outer.var->getName();  // an inner i hiding the outer one: two loops
    set_range(outer);
    // The inner body may not leave the inner loop either (the next pass would say so).
    return ok && quietly([&] { return body_stays(in->getBody()); }) ? in : nullptr;
  }

  // Whether `in` is canonical (reporting nothing: if not, the next pass lowers it alone and says
  // why), and its start and limit have no effects (they are evaluated once, not once per row).
  bool canonical_quietly(const clang::ForStmt* in) {
    return quietly([&] { return canonical(in); }) && !has_effects(in->getInit()) && !has_effects(in->getCond());
  }

  // A check whose failure only says no (reported nothing, and the loop not failed).
  template <class Check>
  bool quietly(Check check) {
    Quiet = true;
    const bool failed = Failed;
    const bool ok = check();
    Failed = failed;
    Quiet = false;
    return ok;
  }

  static bool mentions(const clang::Stmt* s, const clang::VarDecl* v) {
    if (!s) return false;
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s); r && r->getDecl() == v) return true;
    for (const clang::Stmt* c : s->children())
      if (mentions(c, v)) return true;
    return false;
  }

  // Whether `s` assigns, increments or calls anything.
  static bool has_effects(const clang::Stmt* s) {
    if (!s) return false;
    if (llvm::isa<clang::CallExpr>(s)) return true;
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b && b->isAssignmentOp()) return true;
    if (const auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->isIncrementDecrementOp()) return true;
    for (const clang::Stmt* c : s->children())
      if (has_effects(c)) return true;
    return false;
  }

  // The body may not leave the loop: a return, a goto, or a break of the loop itself.
  bool body_stays(const clang::Stmt* s, int breakable = 0) {
    if (!s) return true;
    if (llvm::isa<clang::ReturnStmt>(s)) return fail(s->getBeginLoc(), "a return inside cilk_for's body");
    if (llvm::isa<clang::GotoStmt, clang::IndirectGotoStmt>(s)) return fail(s->getBeginLoc(), "a goto inside cilk_for's body");
    if (llvm::isa<clang::BreakStmt>(s) && breakable == 0)
      return fail(s->getBeginLoc(), "a break out of cilk_for's body (its iterations run in parallel)");
    const bool inner = llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::SwitchStmt>(s);
    for (const clang::Stmt* c : s->children())
      if (!body_stays(c, breakable + (inner ? 1 : 0))) return false;
    return true;
  }

  // A continue of the loop itself (not of one inside the body).
  static bool has_continue(const clang::Stmt* s, bool nested = false) {
    if (!s) return false;
    if (llvm::isa<clang::ContinueStmt>(s)) return !nested;
    const bool loop = llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(s);
    for (const clang::Stmt* c : s->children())
      if (has_continue(c, nested || loop)) return true;
    return false;
  }

  static bool contains_sync(const clang::Stmt* s) {
    if (!s) return false;
    if (const auto* c = llvm::dyn_cast<clang::CallExpr>(s); c && c->getDirectCallee() &&
                                                             c->getDirectCallee()->getName() == "__chanflow_sync")
      return true;
    for (const clang::Stmt* c : s->children())
      if (contains_sync(c)) return true;
    return false;
  }

  // A statement's text with the semicolon that ends it.
  clang::CharSourceRange statement_range(const clang::Stmt* s) const {
    const clang::SourceLocation begin = SM.getExpansionLoc(s->getBeginLoc());
    clang::SourceLocation end = clang::Lexer::getLocForEndOfToken(SM.getExpansionLoc(s->getEndLoc()), 0, SM,
                                                                  Ctx.getLangOpts());
    if (!llvm::isa<clang::CompoundStmt>(s)) {
      const clang::SourceLocation semi = clang::Lexer::findLocationAfterToken(
          SM.getExpansionLoc(s->getEndLoc()), clang::tok::semi, SM, Ctx.getLangOpts(), false);
      if (semi.isValid()) end = semi;
    }
    return clang::CharSourceRange::getCharRange(begin, end);
  }

  clang::CharSourceRange loop_range(const clang::ForStmt* s) const {
    return clang::CharSourceRange::getCharRange(SM.getExpansionLoc(s->getForLoc()),
                                                statement_range(s->getBody()).getEnd());
  }

  std::string text(const clang::Expr* e) const {
    return text(clang::CharSourceRange::getTokenRange(SM.getExpansionRange(e->getSourceRange()).getAsRange()));
  }

  std::string text(clang::CharSourceRange r) const {
    return clang::Lexer::getSourceText(r, SM, Ctx.getLangOpts()).str();
  }

  std::string print(clang::QualType t, const std::string& declarator) const {
    std::string out;
    llvm::raw_string_ostream os(out);
    t.print(os, Policy, declarator);
    return os.str();
  }

  static std::string identifier(const std::string& s) {
    std::string out = s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) ? "cf_" : "";  // 3d.c
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
  }

  bool fail(clang::SourceLocation at, const std::string& message) {
    clang::DiagnosticsEngine& d = Ctx.getDiagnostics();
    if (!Quiet) d.Report(at, d.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << message;
    Failed = true;
    return false;
  }

  void warn(clang::SourceLocation at, const std::string& message) {
    clang::DiagnosticsEngine& d = Ctx.getDiagnostics();
    d.Report(at, d.getCustomDiagID(clang::DiagnosticsEngine::Warning, "%0")) << message;
  }

  clang::ASTContext& Ctx;
  const clang::SourceManager& SM;
  clang::PrintingPolicy Policy{Ctx.getLangOpts()};
  const clang::VarDecl* Var = nullptr;
  const clang::Expr* First = nullptr;
  const clang::Expr* Limit = nullptr;
  clang::BinaryOperatorKind Op = clang::BO_Comma;
  std::string Step;
  bool Failed = false;
};

}  // namespace chanflow::compiler
