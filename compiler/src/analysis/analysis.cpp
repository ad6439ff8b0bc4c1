// The analysis (see analysis.hpp): the Cilk model. Cilk functions are those that spawn, sync, open
// a cilk_scope, are spawned, carry Cilk-5's `cilk`, or are called from a Cilk function and call
// one; main and everything else it calls stays host code, and so do host drivers
// (host_drivers.cpp). What device code needs and may not do is device_code.cpp's.
#include "analysis/analyzer.hpp"

#include "emit/emit.hpp"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <llvm/Support/Path.h>

namespace chanflow::compiler {

std::optional<CilkProgram> Analyzer::run() {
  Program.name = llvm::sys::path::stem(Options.input).str();
  Program.path = Options.input;
  collect_functions();
  find_cilk_functions();
  Program.max_loop_spawns = Options.max_loop_spawns;
  Program.helper_stack_frames = Options.helper_stack_frames;
  Program.serial_forms = Options.serial_forms;
  Program.serial_cutoff = Options.serial_cutoff;
  for (const clang::FunctionDecl* f : CilkOrder) add_cilk_function(f);
  for (CilkFunction& f : Program.functions) describe(f);
  collect_helpers();
  if (Program.serial_forms && !Diags.hasErrorOccurred()) describe_serial_forms();
  if (!Diags.hasErrorOccurred()) apply_serial_below();
  find_work_measures();
  find_env_users();
  find_movable_tasks();
  collect_types_and_constants();
  if (Diags.hasErrorOccurred()) return std::nullopt;
  return std::move(Program);
}

// ---- diagnostics
void Analyzer::error(clang::SourceLocation loc, llvm::StringRef message) {
  if (Probing) {
    if (!Refused) ProbeWhy = message.str(), ProbeAt = loc;  // the first reason: -Rserial-form's
    Refused = true;
    return;
  }
  Diags.Report(loc, Diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << message;
}

void Analyzer::note(clang::SourceLocation loc, llvm::StringRef message) {
  if (Probing) return;
  Diags.Report(loc, Diags.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0")) << message;
}

// ---- functions
void Analyzer::collect_functions() {
  for (clang::Decl* d : Ctx.getTranslationUnitDecl()->decls()) {
    auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (!f || !f->doesThisDeclarationHaveABody() || !is_program_code(SM, f->getLocation())) continue;
    const clang::FunctionDecl* key = f->getCanonicalDecl();
    Definitions[key] = f;
    Order.push_back(key);
    Facts[key] = scan_body(f->getBody(), Keywords);
  }
}

const clang::FunctionDecl* Analyzer::definition(const clang::FunctionDecl* f) const {
  if (!f) return nullptr;
  auto it = Definitions.find(f->getCanonicalDecl());
  return it == Definitions.end() ? nullptr : it->second;
}

bool Analyzer::has_cilk_qualifier(const clang::FunctionDecl* f) const {
  const clang::SourceLocation begin = SM.getExpansionLoc(f->getBeginLoc());
  const clang::SourceLocation name = SM.getExpansionLoc(f->getLocation());
  for (clang::SourceLocation q : Keywords.cilk_qualifiers)
    if (!SM.isBeforeInTranslationUnit(q, begin) && SM.isBeforeInTranslationUnit(q, name)) return true;
  return false;
}

void Analyzer::find_cilk_functions() {
  std::set<const clang::FunctionDecl*> cilk;
  for (const clang::FunctionDecl* f : Order) {
    const BodyFacts& b = Facts[f];
    if (!b.spawns.empty() || !b.syncs.empty() || !b.scopes.empty() || has_cilk_qualifier(Definitions[f]))
      cilk.insert(f);
    for (const clang::CallExpr* s : b.spawns) {
      const clang::FunctionDecl* callee = s->getDirectCallee();
      if (!callee) continue;  // reported with the spawn
      if (definition(callee)) cilk.insert(callee->getCanonicalDecl());
    }
  }
  // Called from a Cilk function and calling one: it must run on the device and wait there.
  for (bool changed = true; changed;) {
    changed = false;
    for (const clang::FunctionDecl* f : Order) {
      if (!cilk.count(f)) continue;
      for (const clang::CallExpr* c : Facts[f].calls) {
        const clang::FunctionDecl* g = definition(c->getDirectCallee());
        if (!g || cilk.count(g->getCanonicalDecl()) || is_main(g)) continue;
        if (calls_cilk(g->getCanonicalDecl(), cilk)) {
          cilk.insert(g->getCanonicalDecl());
          changed = true;
        }
      }
    }
  }
  keep_on_host(cilk);
  for (const clang::FunctionDecl* f : Order) {
    if (!cilk.count(f) || is_main(Definitions[f])) continue;
    // Its body becomes a stub in the host code, which is the compiled file rewritten.
    if (!SM.isInMainFile(SM.getExpansionLoc(Definitions[f]->getLocation()))) {
      error(Definitions[f]->getLocation(), "Cilk function '" + Definitions[f]->getNameAsString() +
                                               "' is defined in a header: chanflowc lowers the Cilk functions of "
                                               "the file it compiles; define it there (helpers it calls may stay "
                                               "in headers)");
      continue;
    }
    CilkOrder.push_back(f);
  }
}

bool Analyzer::calls_cilk(const clang::FunctionDecl* f, const std::set<const clang::FunctionDecl*>& cilk) {
  std::set<const clang::FunctionDecl*> seen;
  std::function<bool(const clang::FunctionDecl*)> visit = [&](const clang::FunctionDecl* g) {
    if (!seen.insert(g).second) return false;
    for (const clang::CallExpr* c : Facts[g].calls) {
      const clang::FunctionDecl* h = definition(c->getDirectCallee());
      if (!h) continue;
      if (cilk.count(h->getCanonicalDecl()) || visit(h->getCanonicalDecl())) return true;
    }
    return false;
  };
  return visit(f);
}

void Analyzer::add_cilk_function(const clang::FunctionDecl* key) {
  CilkFunction f;
  f.decl = Definitions[key];
  f.name = f.decl->getNameAsString();
  f.index = static_cast<unsigned>(Program.functions.size());
  Program.function_index[key] = f.index;
  Program.functions.push_back(std::move(f));
}

// ---- one Cilk function: its spawns (and plain calls of Cilk functions), syncs, locals
void Analyzer::describe(CilkFunction& f) {
  const BodyFacts& b = Facts[f.decl->getCanonicalDecl()];
  const clang::FunctionDecl* d = f.decl;
  if (d->isVariadic()) error(d->getLocation(), "a Cilk function cannot be variadic");
  check_return_type(d);
  for (const clang::ParmVarDecl* p : d->parameters()) check_frame_type(p->getType(), p->getLocation(), "parameter");
  f.syncs = b.syncs;
  f.scopes = b.scopes;
  std::set<const clang::CallExpr*> spawned(b.spawns.begin(), b.spawns.end());
  for (const clang::CallExpr* call : b.calls) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    const CilkFunction* target = Program.cilk_function(callee);
    const bool is_spawn = spawned.count(call) != 0;
    if (!target) {
      if (is_spawn) {
        error(call->getBeginLoc(), "spawn of '" + callee->getNameAsString() +
                                       "', which has no definition in this file or its own headers; chanflowc spawns "
                                       "only functions it compiles");
      }
      continue;
    }
    SpawnSite site;
    site.call = call;
    site.callee = target->decl;
    site.plain_call = !is_spawn;
    site.site = static_cast<unsigned>(f.spawns.size());
    site.in_loop = inside_loop(call, d);
    if (!classify(site, f)) continue;
    f.spawns.push_back(site);
    f.callees.insert(target);
  }
  // Its node has an output port per function it spawns or calls, and its continuation (at most
  // kMostPorts), said here rather than when the graph is checked at run time.
  if (f.callees.size() + 1 > kMostPorts)
    error(d->getLocation(),
          "'" + d->getNameAsString() + "' spawns or calls " + std::to_string(f.callees.size()) +
              " different Cilk functions (a cilk_for's leaves and parts count among them): a Cilk function's node "
              "has at most " + std::to_string(kMostPorts - 1) +
              " besides its continuation; move some of its spawns into a function of their own");
  // A cilk_for's leaf (cilk_for.cpp) asks for its work-item: it runs as a work-group task, whose
  // work-items share its iterations, unless it spawns (a body that became one by a later pass).
  for (const clang::CallExpr* call : b.calls)
    if (call->getDirectCallee()->getName() == "__chanflow_group_item") f.group = f.spawns.empty() && b.syncs.empty();
  for (const clang::Expr* e : b.indirect_calls)
    error(e->getBeginLoc(), "calls through function pointers are not supported in Cilk functions");
  for (const clang::CallExpr* s : b.syncs) check_statement_position(s, "cilk_sync");
  // Frame fields: parameters, then locals, each a unique name (shadowed names get a suffix).
  std::map<std::string, int> used;
  auto add = [&](const clang::VarDecl* v) {
    std::string name = device_name(v->getNameAsString());
    if (name.empty()) name = "unnamed";
    const int n = used[name]++;
    f.field[v] = n == 0 ? name : name + "__" + std::to_string(n);
    f.locals.push_back(v);
  };
  for (const clang::ParmVarDecl* p : d->parameters()) add(p);
  for (const clang::VarDecl* v : b.locals) {
    if (v->getType()->isVariableArrayType()) {
      error(v->getLocation(), "variable-length arrays are not supported in Cilk functions");
      continue;
    }
    add(v);
  }
  // Arguments reach a child by value: a local whose address one of them is must outlive the
  // task's body (it is boxed: kept in the task's scratch block until the sync).
  std::set<const clang::VarDecl*> addressed;
  for (const SpawnSite& s : f.spawns)
    for (const clang::Expr* arg : s.call->arguments()) addressed_variables(arg, addressed, false);
  for (const clang::VarDecl* v : f.locals)
    if (addressed.count(v)) f.boxed.push_back(v);
  assign_slots(f);
  for (SpawnSite& s : f.spawns) {
    if (!s.in_loop || s.plain_call || s.elements) continue;
    const std::optional<std::uint64_t> trips = loop_trips(Ctx, s, f, Program.max_loop_spawns);
    s.batched = !trips;
    s.loop_trips = static_cast<unsigned>(trips.value_or(0));
  }
  f.continuation_spawns = spawns_after_sync(f);
  f.spawned_together = spawned_together(Ctx, f);
  check_device_code(d, b);
}

// Whether some spawn can run after a sync point: written after it, or in a loop around both, or
// in a loop that syncs a batch at a time.
bool Analyzer::spawns_after_sync(const CilkFunction& f) {
  for (const SpawnSite& s : f.spawns)
    if (s.batched) return true;
  std::vector<const clang::Stmt*> points(f.syncs.begin(), f.syncs.end());
  std::vector<clang::SourceLocation> at;
  for (const clang::CallExpr* s : f.syncs) at.push_back(s->getBeginLoc());
  for (const clang::CompoundStmt* c : f.scopes) {
    points.push_back(c);
    at.push_back(c->getRBracLoc());
  }
  for (const SpawnSite& s : f.spawns)
    if (s.plain_call && !llvm::isa<clang::ReturnStmt>(s.statement)) {
      points.push_back(s.call);
      at.push_back(s.call->getBeginLoc());
    }
  for (const SpawnSite& s : f.spawns)
    for (std::size_t i = 0; i < points.size(); ++i)
      if (SM.isBeforeInTranslationUnit(at[i], s.call->getBeginLoc()) || in_common_loop(points[i], s.call, f.decl))
        return true;
  return false;
}

bool Analyzer::in_common_loop(const clang::Stmt* a, const clang::Stmt* b, const clang::FunctionDecl* f) {
  std::set<const clang::Stmt*> loops_a;
  for (const clang::Stmt* p = parent_stmt(a); p && p != f->getBody(); p = parent_stmt(p))
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p)) loops_a.insert(p);
  for (const clang::Stmt* p = parent_stmt(b); p && p != f->getBody(); p = parent_stmt(p))
    if (loops_a.count(p)) return true;
  return false;
}

void Analyzer::check_return_type(const clang::FunctionDecl* d) {
  const clang::QualType r = d->getReturnType();
  if (r->isVoidType()) return;
  if (r->isRecordType() || r->isArrayType() || Ctx.getTypeSize(r) > 64)
    error(d->getLocation(), "Cilk function '" + d->getNameAsString() + "' returns '" + r.getAsString() +
                                "'; a Cilk function returns void, a scalar or a pointer (at most 8 bytes)");
}

void Analyzer::check_frame_type(clang::QualType t, clang::SourceLocation loc, llvm::StringRef what) {
  if (t->isVariableArrayType()) error(loc, "variable-length arrays are not supported in Cilk functions");
  if (t->isSpecificBuiltinType(clang::BuiltinType::LongDouble))
    error(loc, (llvm::Twine("a ") + what + " of type 'long double' cannot live on an OpenCL device").str());
  if (t->isFunctionPointerType()) error(loc, "function pointers are not supported in Cilk functions");
}

// Result slots. Static where every result site outside loops gets a slot of its own and every
// one in a loop stores into an element of a local array no other site stores into (`a[i] =
// cilk_spawn`: a slot per element); otherwise slots are filled in spawn order, up to
// --max-loop-spawns for the loops.
void Analyzer::assign_slots(CilkFunction& f) {
  f.has_goto = has_goto(f.decl->getBody());
  unsigned fixed = 0, slots = 0;
  bool loops = false, per_element = true;
  for (SpawnSite& s : f.spawns) {
    if (s.result == ResultKind::None) continue;
    s.slot = slots;
    if (!s.in_loop || s.plain_call) {  // a plain call syncs at once: one child at a time, in a loop too
      ++fixed;
      ++slots;
      continue;
    }
    loops = true;
    s.elements = array_elements(s, f);
    per_element = per_element && s.elements;
    slots += s.elements;
  }
  f.static_slots = per_element && slots <= 32 && !f.has_goto;
  if (f.static_slots) {
    f.result_slots = slots;
    return;
  }
  for (SpawnSite& s : f.spawns) s.elements = 0;
  f.result_slots = fixed + (loops ? Program.max_loop_spawns : 0);
}

// For `a[i] = cilk_spawn f()` with `a` a local one-dimensional array that no other site
// stores into: its length; otherwise 0 (for `a[i] += cilk_spawn f()` too: two children may add
// to one element before the sync, and each needs a slot).
unsigned Analyzer::array_elements(const SpawnSite& s, const CilkFunction& f) {
  const auto* e = s.destination ? llvm::dyn_cast<clang::ArraySubscriptExpr>(strip(s.destination)) : nullptr;
  const auto* base = e ? llvm::dyn_cast<clang::DeclRefExpr>(e->getBase()->IgnoreParenImpCasts()) : nullptr;
  if (!base || base->getDecl() != s.root || s.result != ResultKind::Local || s.compound) return 0;
  const auto* array = llvm::dyn_cast<clang::ConstantArrayType>(s.root->getType()->getAsArrayTypeUnsafe());
  if (!array || array->getElementType()->isArrayType()) return 0;
  for (const SpawnSite& other : f.spawns)
    if (&other != &s && other.root == s.root) return 0;
  return static_cast<unsigned>(array->getSize().getZExtValue());
}

bool Analyzer::inside_loop(const clang::Stmt* s, const clang::FunctionDecl* f) {
  for (const clang::Stmt* p = parent_stmt(s); p; p = parent_stmt(p)) {
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p)) return true;
    if (p == f->getBody()) break;
  }
  return false;
}

// Climbs from an expression through casts and parentheses to the node that uses its value.
clang::DynTypedNode Analyzer::user_of(const clang::Expr* e, const clang::Expr** top) {
  const clang::Expr* cur = e;
  for (;;) {
    auto parents = Ctx.getParents(*cur);
    if (parents.empty()) {
      *top = cur;
      return {};
    }
    const auto* p = parents[0].get<clang::Expr>();
    if (p && (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p) ||
              llvm::isa<clang::ExprWithCleanups>(p))) {
      cur = p;
      continue;
    }
    *top = cur;
    return parents[0];
  }
}

// Whether `s` stands as a statement of its own (not a condition, not part of an expression).
bool Analyzer::is_statement(const clang::Stmt* s) {
  auto parents = Ctx.getParents(*s);
  if (parents.empty()) return false;
  const auto* p = parents[0].get<clang::Stmt>();
  if (!p) return false;
  if (llvm::isa<clang::CompoundStmt, clang::LabelStmt, clang::CaseStmt, clang::DefaultStmt>(p)) return true;
  if (auto* i = llvm::dyn_cast<clang::IfStmt>(p)) return i->getThen() == s || i->getElse() == s;
  if (auto* l = llvm::dyn_cast<clang::ForStmt>(p)) return l->getBody() == s;
  if (auto* l = llvm::dyn_cast<clang::WhileStmt>(p)) return l->getBody() == s;
  if (auto* l = llvm::dyn_cast<clang::DoStmt>(p)) return l->getBody() == s;
  return false;
}

void Analyzer::check_statement_position(const clang::CallExpr* sync, llvm::StringRef what) {
  const clang::Expr* top = nullptr;
  user_of(sync, &top);
  if (!is_statement(top)) error(sync->getBeginLoc(), (what + " must be a statement of its own").str());
}

// The statement forms a spawn (or a plain call of a Cilk function) may take.
bool Analyzer::classify(SpawnSite& site, CilkFunction& f) {
  const clang::Expr* top = nullptr;
  clang::DynTypedNode user = user_of(site.call, &top);
  const std::string what = site.plain_call ? "a call of Cilk function '" + site.callee->getNameAsString() + "'"
                                           : "a spawn";
  const std::string forms = site.plain_call ? "`x = f(...);`, `x += f(...);`, `T x = f(...);`, `f(...);` or "
                                              "`return f(...);`"
                                            : "`x = cilk_spawn f(...);`, `x += cilk_spawn f(...);`, "
                                              "`T x = cilk_spawn f(...);` or `cilk_spawn f(...);`";
  bool ok = false;
  if (is_statement(top)) {
    ok = true;  // result discarded
    site.statement = top;
  } else if (const auto* b = user.get<clang::BinaryOperator>(); b && b->getOpcode() == clang::BO_Assign &&
                                                                 strip(b->getRHS()) == site.call && is_statement(b)) {
    ok = classify_destination(site, b->getLHS(), f);
    site.statement = b;
    if (!ok) return false;
  } else if (const auto* c = user.get<clang::CompoundAssignOperator>(); c && strip(c->getRHS()) == site.call &&
                                                                          is_statement(c)) {
    ok = classify_destination(site, c->getLHS(), f);  // applied when the result is delivered, at the sync
    site.statement = c;
    site.compound = c;
    if (!ok) return false;
  } else if (const auto* v = user.get<clang::VarDecl>(); v && v->getInit() && strip(v->getInit()) == site.call) {
    auto dp = Ctx.getParents(*v);
    const auto* ds = dp.empty() ? nullptr : dp[0].get<clang::DeclStmt>();
    if (ds && ds->isSingleDecl()) {
      ok = true;
      site.statement = ds;
      site.declared = v;
      site.root = v;
      site.result = ResultKind::Local;
    }
  } else if (const auto* r = user.get<clang::ReturnStmt>(); r && strip(r->getRetValue()) == site.call) {
    ok = true;
    site.statement = r;
    site.result = f.returns_value() ? ResultKind::Local : ResultKind::None;
  }
  if (!ok) {
    error(site.call->getBeginLoc(), what + " must be a statement of its own: " + forms);
    return false;
  }
  if (site.result != ResultKind::None && site.callee->getReturnType()->isVoidType()) site.result = ResultKind::None;
  return true;
}

bool Analyzer::classify_destination(SpawnSite& site, const clang::Expr* lhs, CilkFunction& f) {
  (void)f;
  const clang::Expr* e = strip(lhs);
  site.destination = lhs;
  for (;;) {
    if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) {
      if (m->isArrow()) break;
      e = strip(m->getBase());
    } else if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      const clang::Expr* base = a->getBase()->IgnoreParenImpCasts();
      if (!base->getType()->isArrayType()) break;
      e = base;
    } else {
      break;
    }
  }
  if (auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (v->hasGlobalStorage()) {  // a global device code shares: stored through its address
        site.result = ResultKind::Memory;
        return true;
      }
      site.root = v;
      site.result = ResultKind::Local;
      return true;
    }
  }
  site.result = ResultKind::Memory;  // through a pointer: the address is taken at the spawn
  return true;
}

std::optional<CilkProgram> analyze(clang::ASTContext& ctx, const KeywordLocations& keywords,
                                   const TranslateOptions& options) {
  split_conditional_returns(ctx);
  Analyzer analyzer(ctx, keywords, options);
  std::optional<CilkProgram> program = analyzer.run();
  if (program)
    for (CilkFunction& f : program->functions)
      for (SpawnSite& s : f.spawns) program->spawn_of[s.call] = &s;
  return program;
}

}  // namespace chanflow::compiler
