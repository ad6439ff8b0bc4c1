// Which callees one run of a Cilk function's body may spawn together (cilk_model.hpp,
// CilkFunction::spawned_together): a run starts at the function's entry or after a sync and ends
// at the first sync after a spawn (its children are outstanding there, so it waits), so two
// spawn sites are in one run when one reaches the other on the control-flow graph without a
// sync between. Conservative where it cannot tell: a batch's sync (it may not happen) and a
// cilk_scope's end do not separate runs, and a body whose sites or syncs the graph does not show
// spawns everything together.
#include "analysis/analysis.hpp"

#include <clang/Analysis/CFG.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace chanflow::compiler {
namespace {

using Pairs = std::set<std::pair<const clang::FunctionDecl*, const clang::FunctionDecl*>>;

Pairs everything(const CilkFunction& f) {
  Pairs all;
  for (const SpawnSite& a : f.spawns)
    for (const SpawnSite& b : f.spawns) all.emplace(a.callee->getCanonicalDecl(), b.callee->getCanonicalDecl());
  return all;
}

}  // namespace

Pairs spawned_together(clang::ASTContext& ctx, const CilkFunction& f) {
  if (f.spawns.empty()) return {};
  const std::unique_ptr<clang::CFG> cfg = clang::CFG::buildCFG(f.decl, f.decl->getBody(), &ctx, clang::CFG::BuildOptions());
  if (!cfg) return everything(f);
  // Where each call is: its block and element.
  std::map<const clang::Stmt*, std::pair<const clang::CFGBlock*, unsigned>> at;
  for (const clang::CFGBlock* b : *cfg)
    for (unsigned i = 0; i < b->size(); ++i)
      if (auto s = (*b)[i].getAs<clang::CFGStmt>()) at.emplace(s->getStmt(), std::make_pair(b, i));
  std::map<const clang::Stmt*, const SpawnSite*> sites;
  for (const SpawnSite& s : f.spawns) {
    if (!at.count(s.call)) return everything(f);
    sites[s.call] = &s;
  }
  std::set<const clang::Stmt*> syncs(f.syncs.begin(), f.syncs.end());
  for (const clang::CallExpr* s : f.syncs)
    if (!at.count(s)) return everything(f);

  Pairs together;
  for (const SpawnSite& from : f.spawns) {
    const clang::FunctionDecl* a = from.callee->getCanonicalDecl();
    together.emplace(a, a);
    if (from.plain_call) continue;  // a sync follows at once
    // Forward from just after the site, to the first sync on every path.
    std::vector<std::pair<const clang::CFGBlock*, unsigned>> work{{at.at(from.call).first, at.at(from.call).second + 1}};
    std::set<const clang::CFGBlock*> entered;
    while (!work.empty()) {
      auto [b, i] = work.back();
      work.pop_back();
      bool stopped = false;
      for (; i < b->size() && !stopped; ++i) {
        const auto e = (*b)[i].getAs<clang::CFGStmt>();
        if (!e) continue;
        if (syncs.count(e->getStmt())) {
          stopped = true;
        } else if (auto it = sites.find(e->getStmt()); it != sites.end()) {
          const clang::FunctionDecl* c = it->second->callee->getCanonicalDecl();
          together.emplace(a, c);
          together.emplace(c, a);
          stopped = it->second->plain_call;
        }
      }
      if (stopped) continue;
      for (const clang::CFGBlock::AdjacentBlock& next : b->succs())
        if (const clang::CFGBlock* n = next.getReachableBlock(); n && entered.insert(n).second) work.emplace_back(n, 0);
    }
  }
  return together;
}

}  // namespace chanflow::compiler
