// Host drivers (see analyzer.hpp): functions that spawn but that only host code calls and that
// need the host, such as the classic mains' timing and printing wrappers. They stay host code like
// main: their spawns and calls of Cilk functions are graph runs, one after another, and their syncs
// have nothing left to wait for. The cilk_for pass asks the same question before the analysis
// (host_drivers), to write their loops as main's.
#include "analysis/analyzer.hpp"

#include <functional>

namespace chanflow::compiler {

std::set<const clang::FunctionDecl*> Analyzer::host_drivers(std::set<const clang::FunctionDecl*> cilk) {
  Probing = true;  // nothing reported: the analysis proper says it
  collect_functions();
  return keep_on_host(cilk);
}

std::set<const clang::FunctionDecl*> host_drivers(clang::ASTContext& ctx, const KeywordLocations& keywords,
                                                  const TranslateOptions& options,
                                                  std::set<const clang::FunctionDecl*> cilk) {
  return Analyzer(ctx, keywords, options).host_drivers(std::move(cilk));
}

// One that a Cilk function spawns or calls (itself, say) stays a Cilk function whatever it needs,
// and is told why it cannot be.
std::set<const clang::FunctionDecl*> Analyzer::keep_on_host(std::set<const clang::FunctionDecl*>& cilk) {
  std::set<const clang::FunctionDecl*> host;
  for (const clang::FunctionDecl* f : cilk)
    if (Definitions.count(f) && !is_main(Definitions[f]) && needs_host(f)) host.insert(f);
  for (const clang::FunctionDecl* f : cilk) {  // called by another Cilk function, itself included: not a driver
    if (!Definitions.count(f) || is_main(Definitions[f])) continue;
    for (const auto* calls : {&Facts[f].calls, &Facts[f].spawns})
      for (const clang::CallExpr* c : *calls)
        if (const clang::FunctionDecl* g = definition(c->getDirectCallee())) host.erase(g->getCanonicalDecl());
  }
  for (const clang::FunctionDecl* f : host) cilk.erase(f);
  return host;
}

// Whether a function, or a helper it calls, does what device code cannot or should not: calls a
// function with no definition that is not a device built-in, or printf (a driver's output belongs
// in order on the host's stdout); touches a global it cannot share (stderr); keeps a static local.
bool Analyzer::needs_host(const clang::FunctionDecl* f) {
  std::set<const clang::FunctionDecl*> seen;
  std::function<bool(const clang::FunctionDecl*)> visit = [&](const clang::FunctionDecl* g) {
    if (!seen.insert(g).second) return false;
    const BodyFacts& b = Facts[g];
    if (!b.static_locals.empty()) return true;
    for (const clang::DeclRefExpr* r : b.global_refs) {
      const auto* v = llvm::cast<clang::VarDecl>(r->getDecl());
      if ((!(v->getType().isConstQualified() && v->hasInit()) || writes(r)) && unshareable(v)) return true;
    }
    for (const clang::CallExpr* c : b.calls) {
      const clang::FunctionDecl* callee = c->getDirectCallee();
      if (!callee || memory_call(callee) != MemoryCall::None) continue;
      const clang::FunctionDecl* h = definition(callee);
      if (!h) {
        if (!is_device_builtin(callee) || callee->getName() == "printf" || printed_stream(c)) return true;
      } else if (visit(h->getCanonicalDecl())) {
        return true;
      }
    }
    return false;
  };
  return visit(f);
}

}  // namespace chanflow::compiler
