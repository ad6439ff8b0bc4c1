// What a cilk_for pass finds before it rewrites (cilk_for.cpp): the loops written as cilk_for,
// with the function each is in, and the functions that are Cilk functions as far as can be told
// before the analysis (they spawn, sync or hold a cilk_for, or call one that does).
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace chanflow::compiler {

// The ForStmts written as cilk_for, with the function each is in.
class LoopFinder : public clang::RecursiveASTVisitor<LoopFinder> {
 public:
  LoopFinder(const clang::SourceManager& sm, const std::vector<clang::SourceLocation>& keywords)
      : SM(sm), Keywords(keywords.begin(), keywords.end()) {}

  bool TraverseFunctionDecl(clang::FunctionDecl* f) {
    const clang::FunctionDecl* outer = Function;  // a declaration inside a body leaves it the body's
    if (f->doesThisDeclarationHaveABody()) Function = f;
    const bool r = RecursiveASTVisitor::TraverseFunctionDecl(f);
    Function = outer;
    return r;
  }
  bool VisitForStmt(clang::ForStmt* s) {
    if (Function && Keywords.count(SM.getExpansionLoc(s->getForLoc()))) Found.emplace_back(s, Function);
    return true;
  }

  std::vector<std::pair<const clang::ForStmt*, const clang::FunctionDecl*>> Found;

 private:
  const clang::SourceManager& SM;
  std::set<clang::SourceLocation> Keywords;
  const clang::FunctionDecl* Function = nullptr;
};

// The functions of the translation unit that are Cilk functions as far as a pass can tell before
// the analysis: they spawn, sync or hold a cilk_for, or call one that does. A cilk_for whose body
// calls one waits for it each iteration, as a spawn would: one task per iteration.
class CilkReach : public clang::RecursiveASTVisitor<CilkReach> {
 public:
  CilkReach(const clang::SourceManager& sm, const std::vector<clang::SourceLocation>& spawns,
            const std::vector<clang::SourceLocation>& loops)
      : SM(sm), Marks(spawns) {
    Marks.insert(Marks.end(), loops.begin(), loops.end());
  }

  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (!f->hasBody() || !f->doesThisDeclarationHaveABody()) return true;
    Current = f->getCanonicalDecl();
    const clang::SourceLocation begin = SM.getExpansionLoc(f->getBody()->getBeginLoc());
    const clang::SourceLocation end = SM.getExpansionLoc(f->getBody()->getEndLoc());
    for (clang::SourceLocation at : Marks)
      if (!SM.isBeforeInTranslationUnit(at, begin) && !SM.isBeforeInTranslationUnit(end, at)) Cilk.insert(Current);
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    if (!Current || !callee) return true;
    if (callee->getName() == "__chanflow_sync") Cilk.insert(Current);
    Calls[Current].insert(callee->getCanonicalDecl());
    return true;
  }

  /// The Cilk functions: those marked, and every caller of one.
  std::set<const clang::FunctionDecl*> functions();

 private:
  const clang::SourceManager& SM;
  std::vector<clang::SourceLocation> Marks;  // spawns and cilk_for keywords (expansion locations)
  const clang::FunctionDecl* Current = nullptr;
  std::map<const clang::FunctionDecl*, std::set<const clang::FunctionDecl*>> Calls;
  std::set<const clang::FunctionDecl*> Cilk;
};

}  // namespace chanflow::compiler
