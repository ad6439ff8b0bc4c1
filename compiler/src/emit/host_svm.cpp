// Host variables in SVM: a compiled program's host code may hand a Cilk function the address of a
// variable of its own however it likes (`&x` in the call, a pointer variable, a struct field, an
// array of pointers), and a GPU cannot reach the host's stack or data. So every host variable
// whose address host code takes lives in SVM: the host C names an SVM cell wherever it names the
// variable (DESIGN.md decision 10, with the heap redirected by <chanflow/cilk_host.h>).
#include "analysis/analysis.hpp"
#include "emit/emit.hpp"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>
#include <clang/Rewrite/Core/Rewriter.h>
#include <fmt/format.h>

#include <map>
#include <set>
#include <vector>

namespace chanflow::compiler {
namespace {

// What host code (outside Cilk functions, whose bodies become stubs) does with its variables.
struct HostUses : clang::RecursiveASTVisitor<HostUses> {
  HostUses(clang::ASTContext& ctx, const CilkProgram& program) : Ctx(ctx), Program(program) {}

  bool TraverseFunctionDecl(clang::FunctionDecl* f) {
    if (Program.cilk_function(f)) return true;  // device code: its body is replaced
    // A declaration inside a body (`void helper(int *A);` in compile_program) leaves the body's
    // function the one its uses are in.
    const clang::FunctionDecl* outer = Function;
    if (f->doesThisDeclarationHaveABody()) Function = f;
    const bool go_on = clang::RecursiveASTVisitor<HostUses>::TraverseFunctionDecl(f);
    Function = outer;
    return go_on;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->getOpcode() == clang::UO_AddrOf && !to_library(u)) take(u->getSubExpr());
    return true;
  }
  // An array used as a pointer (passed, assigned, stored): not `a[i]`, which only reads it.
  bool VisitImplicitCastExpr(clang::ImplicitCastExpr* c) {
    if (c->getCastKind() != clang::CK_ArrayToPointerDecay) return true;
    const auto parents = Ctx.getParents(*c);
    if (!parents.empty())
      if (const auto* a = parents[0].get<clang::ArraySubscriptExpr>(); a && a->getBase() == c) return true;
    if (!to_library(c)) take(c->getSubExpr());
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl())) Refs.push_back({r, v, Function});
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    if (!Function || !callee) return true;
    if (memory_call(callee) == MemoryCall::Alloca) AllocaUsers.insert(Function);
    Calls[Function->getCanonicalDecl()].insert(callee->getCanonicalDecl());
    return true;
  }
  bool VisitDeclStmt(clang::DeclStmt* d) {
    for (const clang::Decl* decl : d->decls())
      if (const auto* v = llvm::dyn_cast<clang::VarDecl>(decl)) Declared[v] = d;
    return true;
  }

  // Whether the address `e` is an argument of a call to a library function (declared in a system
  // header) that returns no pointer and takes no function to call back (`clock_gettime(c, &t)`,
  // `sscanf(s, "%d", &n)`): the address goes nowhere device code could get it from, and the
  // variable stays where C put it (a timer's local in an SVM cell cost a GPU call ~0.5 ms).
  bool to_library(const clang::Expr* e) const {
    for (;;) {
      const auto parents = Ctx.getParents(*e);
      if (parents.size() != 1) return false;
      if (const auto* up = parents[0].get<clang::Expr>();
          up && (llvm::isa<clang::ParenExpr>(up) || llvm::isa<clang::CastExpr>(up))) {
        e = up;
        continue;
      }
      const auto* call = parents[0].get<clang::CallExpr>();
      const clang::FunctionDecl* callee = call ? call->getDirectCallee() : nullptr;
      if (!callee || call->getCallee()->IgnoreParenImpCasts() == e) return false;
      if (!Ctx.getSourceManager().isInSystemHeader(callee->getCanonicalDecl()->getLocation())) return false;
      if (callee->getReturnType()->isPointerType()) return false;  // it may hand the address back
      for (const clang::ParmVarDecl* p : callee->parameters())
        if (p->getType()->isFunctionPointerType()) return false;  // a callback may get it
      return true;
    }
  }

  // The variable an lvalue is part of (x, x.f, x[i] of an array x), whose address is taken.
  void take(const clang::Expr* e) {
    e = e->IgnoreParenImpCasts();
    while (true) {
      if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e); m && !m->isArrow()) e = m->getBase()->IgnoreParenImpCasts();
      else if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e); a && a->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
        e = a->getBase()->IgnoreParenImpCasts();
      else break;
    }
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e);
    const auto* v = r ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
    if (!v) return;
    Addressed.insert(v);
    if (!Function) InInitializer.insert(v);
  }

  struct Ref {
    const clang::DeclRefExpr* expr;
    const clang::VarDecl* var;
    const clang::FunctionDecl* function;  // the host function it is in, or null (a global's initializer)
  };
  clang::ASTContext& Ctx;
  const CilkProgram& Program;
  const clang::FunctionDecl* Function = nullptr;
  std::set<const clang::VarDecl*> Addressed;
  std::set<const clang::VarDecl*> InInitializer;  // addressed in a global's initializer
  std::vector<Ref> Refs;
  std::map<const clang::VarDecl*, const clang::DeclStmt*> Declared;
  std::set<const clang::FunctionDecl*> AllocaUsers;  // host functions calling alloca
  std::map<const clang::FunctionDecl*, std::set<const clang::FunctionDecl*>> Calls;  // canonical, direct
};

// The host functions (canonical) that may run a graph while they are active: those calling a
// Cilk function, and their callers.
std::set<const clang::FunctionDecl*> run_graphs(const HostUses& uses, const CilkProgram& program) {
  std::set<const clang::FunctionDecl*> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [f, callees] : uses.Calls) {
      if (out.count(f)) continue;
      for (const clang::FunctionDecl* c : callees)
        if (program.cilk_function(c) || out.count(c)) {
          grew = out.insert(f).second || grew;
          break;
        }
    }
  }
  return out;
}

// The location just past the `;` that ends the declaration ending at `end`.
clang::SourceLocation after_semicolon(clang::SourceLocation end, const clang::SourceManager& sm, const clang::LangOptions& lo) {
  for (;;) {
    const llvm::Optional<clang::Token> t = clang::Lexer::findNextToken(end, sm, lo);
    if (!t) return {};
    if (t->is(clang::tok::semi)) return t->getEndLoc();
    end = t->getLocation();
  }
}

}  // namespace

std::string place_host_variables_in_svm(clang::ASTContext& ctx, const CilkProgram& program, clang::Rewriter& rewriter) {
  clang::SourceManager& sm = ctx.getSourceManager();
  const clang::LangOptions& lo = ctx.getLangOpts();
  clang::DiagnosticsEngine& diags = ctx.getDiagnostics();
  HostUses uses(ctx, program);
  uses.TraverseDecl(ctx.getTranslationUnitDecl());
  for (const clang::VarDecl* g : program.device_globals) uses.Addressed.insert(g);  // device code's: shared

  std::map<const clang::VarDecl*, std::string> cell;  // how host code names each placed variable
  unsigned next = 0;
  // A local's cell, made from its value where the text goes and freed when its scope ends.
  auto local_cell = [&](clang::SourceLocation after, const clang::VarDecl* v, const std::string& name) {
    rewriter.InsertTextAfterToken(after, fmt::format(" __typeof__({0}) *{1} __attribute__((cleanup(chanflow_cilk_svm_release))) "
                                                     "= chanflow_cilk_svm_place(&{0}, sizeof {0});",
                                                     v->getName().str(), name));
    cell[v] = "(*" + name + ")";
  };
  for (const clang::VarDecl* v : uses.Addressed) {
    const clang::SourceLocation at = sm.getExpansionLoc(v->getLocation());
    if (!sm.isInMainFile(at) || v->getType()->isVariableArrayType()) continue;
    const std::string name = fmt::format("cf_svm_{}_{}", v->getName().str(), next++);
    if (uses.InInitializer.count(v)) {
      diags.Report(at, diags.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                             "the address of '%0' is taken in a global's initializer: chanflowc "
                                             "keeps '%0' in SVM, where a GPU can reach it, but cannot name that "
                                             "place before the program runs; take the address in a function"))
          << v->getName();
      continue;
    }
    if (llvm::isa<clang::ParmVarDecl>(v)) {
      const auto* f = llvm::dyn_cast<clang::FunctionDecl>(v->getDeclContext());
      if (!f || !f->hasBody()) continue;
      local_cell(sm.getExpansionLoc(llvm::cast<clang::CompoundStmt>(f->getBody())->getLBracLoc()), v, name);
    } else if (v->hasLocalStorage()) {
      auto d = uses.Declared.find(v);
      if (d == uses.Declared.end()) continue;
      const auto parents = ctx.getParents(*d->second);
      if (parents.empty() || !parents[0].get<clang::CompoundStmt>()) continue;  // a for-loop's own variable
      local_cell(sm.getExpansionLoc(d->second->getEndLoc()), v, name);
    } else if (v->isStaticLocal()) {
      auto d = uses.Declared.find(v);
      if (d == uses.Declared.end()) continue;
      rewriter.InsertTextAfterToken(sm.getExpansionLoc(d->second->getEndLoc()),
                                    fmt::format(" static __typeof__({0}) *{1}; if (!{1}) {1} = chanflow_cilk_svm_place(&{0}, sizeof {0});",
                                                v->getName().str(), name));
      cell[v] = "(*" + name + ")";
    } else if (v->isThisDeclarationADefinition() != clang::VarDecl::DeclarationOnly) {
      // A global: its cell is made at the first use (the device opens then, not before main).
      const clang::SourceLocation end = after_semicolon(sm.getExpansionLoc(v->getEndLoc()), sm, lo);
      if (end.isInvalid()) continue;
      rewriter.InsertTextBefore(end, fmt::format("\nstatic __typeof__({0}) *{1}(void) {{ static __typeof__({0}) *cell; "
                                                 "if (!cell) cell = chanflow_cilk_svm_place(&{0}, sizeof {0}); return cell; }}\n",
                                                 v->getName().str(), name));
      cell[v] = "(*" + name + "())";
    }
  }
  // Every use in host functions names the cell (the declaration keeps the initial value). A use
  // spelled in a macro's body (`#define AT(i) (m[(i) * nBlocks])`) is redirected there, once,
  // where every expansion's token names this global: a local of the same name at one of them
  // would be redirected too, so that is refused, as is a macro of another file.
  std::map<clang::SourceLocation, std::set<const clang::VarDecl*>> spelled;
  for (const HostUses::Ref& r : uses.Refs)
    if (r.function && r.expr->getLocation().isMacroID())
      spelled[sm.getSpellingLoc(r.expr->getLocation())].insert(r.var->hasGlobalStorage() ? global_definition(r.var) : r.var);
  std::set<clang::SourceLocation> redirected;
  for (const HostUses::Ref& r : uses.Refs) {
    auto it = cell.find(r.var);
    if (it == cell.end()) it = cell.find(global_definition(r.var));  // a global named by another declaration
    if (it == cell.end() || !r.function) continue;
    if (auto d = uses.Declared.find(r.var); d != uses.Declared.end() &&
                                            d->second->getSourceRange().fullyContains(r.expr->getSourceRange()))
      continue;  // in its own declaration
    clang::SourceLocation loc = r.expr->getLocation();
    if (loc.isMacroID()) {
      loc = sm.getSpellingLoc(loc);
      if (spelled[loc].size() != 1 || !sm.isWrittenInMainFile(loc)) {
        diags.Report(sm.getExpansionLoc(r.expr->getLocation()),
                     diags.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                           "'%0' is named inside a macro's body that %1: chanflowc keeps '%0' in SVM "
                                           "and cannot redirect this use; name it outside the macro"))
            << r.var->getName()
            << (spelled[loc].size() != 1 ? "names another variable of that name where it is expanded elsewhere"
                                         : "another file defines");
        continue;
      }
    }
    if (!redirected.insert(loc).second) continue;  // a macro's body, redirected at another expansion
    rewriter.ReplaceText(loc, static_cast<unsigned>(r.var->getName().size()), it->second);
  }
  // alloca's blocks are SVM (cilk_host.h) in a function that may run a graph while it is active,
  // the only one whose blocks device code can reach, released when it returns; elsewhere they stay
  // on the stack, as fast as C's.
  const std::set<const clang::FunctionDecl*> drivers = run_graphs(uses, program);
  for (const clang::FunctionDecl* f : uses.AllocaUsers) {
    const clang::SourceLocation at = sm.getExpansionLoc(llvm::cast<clang::CompoundStmt>(f->getBody())->getLBracLoc());
    if (sm.isInMainFile(at) && drivers.count(f->getCanonicalDecl()))
      rewriter.InsertTextAfterToken(at, " const int cf_alloca_svm = 1; size_t cf_alloca_mark "
                                        "__attribute__((cleanup(chanflow_cilk_alloca_release))) = chanflow_cilk_alloca_mark();");
  }
  if (program.device_globals.empty()) return "";
  // The addresses of the globals device code shares, in its order: its kernel nodes' arguments.
  std::string table;
  for (std::size_t i = 0; i < program.device_globals.size(); ++i) {
    auto it = cell.find(program.device_globals[i]);
    table += fmt::format("  table[{}] = {};\n", i, it == cell.end() ? "0" : "&" + it->second);
  }
  return fmt::format("\n/* chanflowc: the globals device code shares with this file's host code, as its kernel nodes find them */\n"
                     "void* const* {0}__globals(void) {{\n  static void* table[{1}];\n{2}  return table;\n}}\n",
                     program.name, program.device_globals.size(), table);
}

}  // namespace chanflow::compiler
