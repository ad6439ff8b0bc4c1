// Where a Cilk function's children may be outstanding and what each sync must keep: the
// control-flow facts the device emitter (emit_device.cpp) lowers syncs with. Source order and the
// nesting of blocks stand in for a control-flow graph (Clang's LiveVariables gave no
// statement-level answers here: every variable came out dead); a goto or switch makes every
// answer the conservative one.
#include "analysis/sync_flow.hpp"

#include "analysis/analysis.hpp"

#include <clang/Basic/SourceManager.h>

#include <algorithm>

namespace chanflow::compiler {
namespace {

void add_declared(const clang::Stmt* s, std::vector<const clang::VarDecl*>& out) {
  if (auto* d = llvm::dyn_cast<clang::DeclStmt>(s))
    for (const clang::Decl* decl : d->decls())
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(decl); v && v->hasLocalStorage()) out.push_back(v);
}

}  // namespace

SyncFlow::SyncFlow(clang::ASTContext& ctx, const CilkFunction& f) : Ctx(ctx), F(f) {
  collect_uses(f.decl->getBody());
  for (const clang::CallExpr* c : f.syncs) Points.emplace_back(c, c->getBeginLoc());
  for (const clang::CompoundStmt* c : f.scopes) Points.emplace_back(c, c->getRBracLoc());
  for (const SpawnSite& s : f.spawns)
    if (s.plain_call && !llvm::isa<clang::ReturnStmt>(s.statement)) Points.emplace_back(s.statement, s.call->getEndLoc());
  for (const SpawnSite& s : f.spawns)
    if (s.batched) BatchPoints.push_back(s.call->getBeginLoc());
}

const std::vector<clang::SourceLocation>& SyncFlow::uses(const clang::VarDecl* v) const {
  static const std::vector<clang::SourceLocation> none;
  auto it = Uses.find(v);
  return it == Uses.end() ? none : it->second;
}

const clang::Stmt* SyncFlow::parent(const clang::Stmt* s) const { return parent_stmt(Ctx, s); }

// Of the locals in scope at a sync, those the code after it may use, and those results are
// delivered into. A local is kept if it is named after the sync in the source, or anywhere in a
// loop around it (the next iteration); with a goto in the function, every local is kept.
// A `return` after the sync in a block around it ends what can run after the sync: uses written
// after that return are not kept (a base case `if (n <= B) { ...; cilk_sync; return; }` keeps
// nothing the general case below it names), nor are loops around that block.
std::vector<const clang::VarDecl*> SyncFlow::live(const std::vector<const clang::VarDecl*>& in_scope, const SyncAt& at) const {
  if (F.has_goto) return in_scope;
  const clang::SourceManager& sm = Ctx.getSourceManager();
  const auto [end, block] = returns_after(at);
  std::vector<clang::SourceRange> loops;
  for (const clang::Stmt* p = parent(at.stmt); p && p != F.decl->getBody() && p != block; p = parent(p))
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p)) loops.push_back(p->getSourceRange());
  std::vector<const clang::VarDecl*> out;
  for (const clang::VarDecl* v : in_scope) {
    bool used = pending_root(v, at);
    for (clang::SourceLocation use : uses(v)) {
      if (used) break;
      used = sm.isBeforeInTranslationUnit(at.stmt->getEndLoc(), use) &&
             (end.isInvalid() || !sm.isBeforeInTranslationUnit(end, use));
      for (const clang::SourceRange& loop : loops)
        used = used || (!sm.isBeforeInTranslationUnit(use, loop.getBegin()) && !sm.isBeforeInTranslationUnit(loop.getEnd(), use));
    }
    if (used) out.push_back(v);
  }
  return out;
}

// The first `return` written after sync `at` in a block around it, where nothing between them
// (nor in the statement holding `at`) can leave the block another way (a break or continue,
// which may target a loop or switch outside it): its end and the block; none if there is none.
std::pair<clang::SourceLocation, const clang::Stmt*> SyncFlow::returns_after(const SyncAt& at) const {
  const auto leaves = [](const clang::Stmt* s, const auto& self) -> bool {
    if (!s) return false;
    if (llvm::isa<clang::BreakStmt, clang::ContinueStmt>(s)) return true;
    for (const clang::Stmt* c : s->children())
      if (self(c, self)) return true;
    return false;
  };
  const clang::Stmt* x = at.stmt;
  for (const clang::Stmt* p = at.end ? at.stmt : parent(x); p; x = p, p = parent(p)) {
    if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(p)) {
      auto it = std::find(c->body_begin(), c->body_end(), x);
      if (x != p && it == c->body_end()) return {};
      if (x != p && leaves(x, leaves)) return {};
      for (it = x == p ? c->body_end() : std::next(it); it != c->body_end(); ++it) {
        if (llvm::isa<clang::ReturnStmt>(*it)) return {(*it)->getEndLoc(), c};
        if (leaves(*it, leaves)) return {};
      }
    }
    if (p == F.decl->getBody()) break;
  }
  return {};
}

bool SyncFlow::only_returns_after(const clang::Stmt* s) const {
  const clang::Stmt* body = F.decl->getBody();
  for (; s != body && !llvm::isa<clang::ReturnStmt>(s); s = parent(s)) {
    const clang::Stmt* up = parent(s);
    if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(up)) {
      const auto at = std::find(c->body_begin(), c->body_end(), s);
      if (at == c->body_end()) return false;
      if (std::next(at) != c->body_end()) {  // then only `return;`
        const auto* r = llvm::dyn_cast<clang::ReturnStmt>(*std::next(at));
        return r && !r->getRetValue();
      }
    } else if (!llvm::isa_and_nonnull<clang::IfStmt>(up)) {
      return false;  // in a loop, a switch, an expression
    }
  }
  return true;
}

// Where each local is named, and whether the function has a switch (for jumps()).
void SyncFlow::collect_uses(const clang::Stmt* s) {
  if (!s) return;
  if (auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s))
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl())) Uses[v].push_back(r->getLocation());
  HasSwitch = HasSwitch || llvm::isa<clang::SwitchStmt>(s);
  for (const clang::Stmt* c : s->children()) collect_uses(c);
}

// Whether statement `p` runs before `at` on every path to it: `p` is a statement of a block that
// encloses `at` (or, for a block's end, of that block), written before the part holding `at`.
bool SyncFlow::precedes(const clang::Stmt* p, const SyncAt& at) const {
  const auto* block = llvm::dyn_cast_or_null<clang::CompoundStmt>(parent(p));
  if (!block) return false;
  if (at.end && at.stmt == block) return true;
  const clang::Stmt* x = at.stmt;
  while (x && parent(x) != block) x = parent(x);
  if (!x || x == p) return false;
  for (const clang::Stmt* item : block->body()) {
    if (item == p) return true;
    if (item == x) return false;
  }
  return false;
}

// Whether spawn `s` may have a child outstanding at `at`: it is written before `at` (or in a
// loop around it), and no sync point after it runs before `at` on every path (none can be
// relied on in a function with goto or switch).
bool SyncFlow::outstanding(const SpawnSite& s, const SyncAt& at) const {
  const clang::SourceManager& sm = Ctx.getSourceManager();
  bool reaches = sm.isBeforeInTranslationUnit(s.call->getBeginLoc(), at.loc);
  for (const clang::Stmt* p = parent(s.call); !reaches && s.in_loop && p && p != F.decl->getBody(); p = parent(p))
    reaches = llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p) &&
              p->getSourceRange().fullyContains(clang::SourceRange(at.loc, at.loc));
  if (!reaches || jumps()) return reaches;
  for (const auto& [point, where] : Points)
    if ((point == s.statement || sm.isBeforeInTranslationUnit(s.call->getBeginLoc(), where)) && precedes(point, at))
      return false;
  return true;
}

bool SyncFlow::may_have_children(const SyncAt& at) const {
  for (const SpawnSite& s : F.spawns)
    if (outstanding(s, at)) return true;
  return false;
}

// Whether a result may be delivered into local `v` at `at`.
bool SyncFlow::pending_root(const clang::VarDecl* v, const SyncAt& at) const {
  for (const SpawnSite& s : F.spawns)
    if (s.root == v && outstanding(s, at)) return true;
  return false;
}

// Whether a spawn's result certainly overwrites all of local `v` at `at`: the spawn runs on
// every path to `at`, once, with no sync between, so `v`'s value before it need not be saved.
bool SyncFlow::overwritten(const clang::VarDecl* v, const SyncAt& at) const {
  if (jumps()) return false;
  const clang::SourceManager& sm = Ctx.getSourceManager();
  for (const SpawnSite& s : F.spawns) {
    if (s.root != v || s.in_loop || s.result != ResultKind::Local || s.compound || !outstanding(s, at)) continue;
    if (s.destination && !llvm::isa<clang::DeclRefExpr>(strip(s.destination))) continue;  // a part of it
    if (!precedes(s.statement, at)) continue;
    bool between = false;
    for (const auto& [point, where] : Points)
      between = between || (point != s.statement && sm.isBeforeInTranslationUnit(s.call->getBeginLoc(), where) &&
                             sm.isBeforeInTranslationUnit(where, at.loc));
    for (clang::SourceLocation where : BatchPoints)  // the result may have been delivered there
      between = between || (sm.isBeforeInTranslationUnit(s.call->getBeginLoc(), where) &&
                             sm.isBeforeInTranslationUnit(where, at.loc));
    if (!between) return true;
  }
  return false;
}


// The locals in scope just after statement `s`: parameters, then those declared before it in
// each enclosing block (and `s` itself if it declares one), and for-loop variables around it.
std::vector<const clang::VarDecl*> SyncFlow::scope_at(const clang::Stmt* s) const {
  std::vector<const clang::VarDecl*> out(F.decl->param_begin(), F.decl->param_end());
  std::vector<const clang::VarDecl*> inner;
  const clang::Stmt* child = s;
  for (const clang::Stmt* p = parent(s); p; child = p, p = parent(p)) {
    std::vector<const clang::VarDecl*> here;
    if (auto* c = llvm::dyn_cast<clang::CompoundStmt>(p)) {
      for (const clang::Stmt* item : c->body()) {
        add_declared(item, here);
        if (item == child) break;
      }
    } else if (auto* l = llvm::dyn_cast<clang::ForStmt>(p)) {
      if (l->getInit() && l->getInit() != child) add_declared(l->getInit(), here);
    }
    inner.insert(inner.begin(), here.begin(), here.end());
    if (p == F.decl->getBody()) break;
  }
  out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

std::vector<const clang::VarDecl*> SyncFlow::scope_at_end(const clang::CompoundStmt* c) const {
  if (c->body_empty()) return scope_at(c);
  std::vector<const clang::VarDecl*> out = scope_at(c->body_back());
  for (const clang::Stmt* item : c->body()) {
    std::vector<const clang::VarDecl*> here;
    add_declared(item, here);
    for (const clang::VarDecl* v : here)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

}  // namespace chanflow::compiler
