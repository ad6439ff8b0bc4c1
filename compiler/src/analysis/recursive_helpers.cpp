// Helpers that call themselves (see cilk_model.hpp, RecursiveHelper): where their calls of
// themselves sit, the order a statement makes them in, and what such a helper may not do. OpenCL C
// has no recursion, so the emitter (emit/recursive_helper.cpp) runs the helper as one loop over an
// explicit stack of its activations: every call of itself must be one the loop can stop at and
// come back to (a statement's part, evaluated whatever the rest of the statement does), and no
// pointer may name its locals (its activations take turns in one copy of them), but a Cilk
// function's serial form may point its calls to its boxed locals and alloca blocks: each
// activation takes those from a LIFO of blocks that never move. Also which bodies the emitter may
// resume directly at each call (one_entry), and why a function has no serial form (-Rserial-form).
#include "analysis/analyzer.hpp"

#include <algorithm>
#include <functional>
#include <set>

namespace chanflow::compiler {
namespace {

// Whether no code after a call of itself is reached both from the body's top without a call and
// from a call's resume point (fib's body: a base case returns, then each call is made on every
// path). Else, in the emitter's direct form, that code is entered both from the top and from the
// return's dispatch, a loop of two entries (cholesky's mul_and_subT, whose calls each sit in an
// if): PoCL 3.1's kernel compiler recursed on it without end. The form that resumes through the
// top of the pass has one entry (emit/recursive_helper.cpp).
bool one_entry(const RecursiveHelper& h) {
  const std::set<const clang::Stmt*> calls(h.calls.begin(), h.calls.end());
  std::function<bool(const clang::Stmt*)> has_call = [&](const clang::Stmt* s) {
    if (!s) return false;
    if (calls.count(s)) return true;
    for (const clang::Stmt* c : s->children())
      if (has_call(c)) return true;
    return false;
  };
  // Where control may come from at a point: the top (no call made yet), a resume point.
  struct From {
    bool top = false, resumed = false;
  };
  bool two = false;
  std::function<From(const clang::Stmt*, From)> flow = [&](const clang::Stmt* s, From in) -> From {
    two = two || (in.top && in.resumed);
    if (!s || two) return in;
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (const clang::Stmt* c : block->body()) in = flow(c, in);
      return in;
    }
    if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s)) {
      const From cond = flow(i->getCond(), in);
      const From then = flow(i->getThen(), cond), otherwise = flow(i->getElse(), cond);
      const From out{then.top || otherwise.top, then.resumed || otherwise.resumed};
      two = two || (out.top && out.resumed);
      return out;
    }
    if (!has_call(s)) return llvm::isa<clang::ReturnStmt>(s) ? From{} : in;  // a return ends the activation
    if (!llvm::isa<clang::Expr, clang::DeclStmt, clang::ReturnStmt>(s)) {  // a switch, a label: not followed
      two = true;
      return in;
    }
    // A statement making a call makes it on every path through it: the analysis refuses a call
    // of itself in a branch of ?: or right of && and ||, and splits a return's ?: into an if.
    return llvm::isa<clang::ReturnStmt>(s) ? From{} : From{false, true};
  };
  if (has_goto(h.decl->getBody())) return false;
  flow(h.decl->getBody(), From{true, false});
  return !two;
}

// What an expression of a guard reads, besides the function's parameters (one walk).
struct GuardReads {
  bool locals = false;       // a local, or a static one
  bool globals = false;      // a global variable or a function's name
  bool calls = false;        // a call of another function
  bool self_call = false;    // a call of the function itself, or through a pointer
  bool statements = false;   // a statement expression or a block
  std::set<std::string> names;  // of the values, functions, typedefs and tags it names
};

void type_names(const clang::ASTContext& ctx, clang::QualType t, std::set<std::string>& out) {
  for (int steps = 0; !t.isNull() && steps < 16; ++steps) {
    if (const auto* td = t->getAs<clang::TypedefType>()) out.insert(td->getDecl()->getNameAsString());
    if (const auto* tag = t->getAsTagDecl()) out.insert(tag->getNameAsString());
    if (t->isPointerType()) t = t->getPointeeType();
    else if (const clang::ArrayType* a = ctx.getAsArrayType(t)) t = a->getElementType();
    else if (t.getSingleStepDesugaredType(ctx) != t) t = t.getSingleStepDesugaredType(ctx);
    else break;
  }
}

void guard_reads(const clang::ASTContext& ctx, const clang::FunctionDecl* f, const clang::Stmt* s, GuardReads& r) {
  if (!s) return;
  if (llvm::isa<clang::StmtExpr, clang::BlockExpr>(s)) r.statements = true;
  if (const auto* c = llvm::dyn_cast<clang::CallExpr>(s)) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    (callee && callee->getCanonicalDecl() != f->getCanonicalDecl() ? r.calls : r.self_call) = true;
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
    const clang::ValueDecl* d = ref->getDecl();
    const auto* p = llvm::dyn_cast<clang::ParmVarDecl>(d);
    if (!(p && p->getDeclContext() == f)) {
      r.names.insert(d->getNameAsString());
      const auto* v = llvm::dyn_cast<clang::VarDecl>(d);
      if (v && (!v->hasGlobalStorage() || v->isStaticLocal())) r.locals = true;
      else if (!llvm::isa<clang::EnumConstantDecl>(d)) r.globals = true;
    }
  }
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) type_names(ctx, e->getType(), r.names);
  if (const auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(s)) type_names(ctx, c->getTypeAsWritten(), r.names);
  if (const auto* u = llvm::dyn_cast<clang::UnaryExprOrTypeTraitExpr>(s); u && u->isArgumentType())
    type_names(ctx, u->getArgumentType(), r.names);
  for (const clang::Stmt* c : s->children()) guard_reads(ctx, f, c, r);
}

// The guards the body opens with (RecursiveHelper::guards): a run of `if (C) return E;` with no
// else. C reads only the parameters, enumerators and literals, calls nothing and changes nothing
// (a guard that fails at the call is run again by the activation). E is evaluated once either way,
// at the call or in the activation, in the same order with the arguments: it may also read globals
// and call other functions (`if (row >= 7) return complete(...);`), but not the function itself,
// and reads no local. A guard runs at a call inside the caller's body, where a name the body
// declares (anywhere: a variable, a type, an enumerator) may hide the file-scope one C or E means
// (a local `kSmall` declared after the guards, hiding an enumerator): a guard naming one ends the
// run. fib's `if (n <= 2) return ...;`: half of its calls end there, and a call that does costs a
// frame pushed, a pass from the top and a dispatch back without it.
std::vector<RecursiveHelper::Guard> opening_guards(const RecursiveHelper& h, const clang::ASTContext& ctx) {
  std::vector<RecursiveHelper::Guard> out;
  const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(h.decl->getBody());
  if (!body) return out;
  std::set<std::string> declared;
  std::function<void(const clang::Stmt*)> declares = [&](const clang::Stmt* s) {
    if (!s) return;
    if (const auto* d = llvm::dyn_cast<clang::DeclStmt>(s))
      for (const clang::Decl* decl : d->decls()) {
        if (const auto* n = llvm::dyn_cast<clang::NamedDecl>(decl)) declared.insert(n->getNameAsString());
        if (const auto* e = llvm::dyn_cast<clang::EnumDecl>(decl))
          for (const clang::EnumConstantDecl* c : e->enumerators()) declared.insert(c->getNameAsString());
      }
    for (const clang::Stmt* c : s->children()) declares(c);
  };
  declares(body);
  const auto hides = [&](const GuardReads& r) {
    return std::any_of(r.names.begin(), r.names.end(), [&](const std::string& n) { return declared.count(n) > 0; });
  };
  for (const clang::Stmt* s : body->body()) {
    const auto* i = llvm::dyn_cast<clang::IfStmt>(s);
    if (!i || i->getElse() || i->getInit() || i->getConditionVariable() || i->isConstexpr()) break;
    const clang::Stmt* then = i->getThen();
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(then)) then = block->size() == 1 ? block->body_front() : nullptr;
    const auto* ret = llvm::dyn_cast_or_null<clang::ReturnStmt>(then);
    if (!ret) break;
    GuardReads cond, value;
    guard_reads(ctx, h.decl, i->getCond(), cond);
    guard_reads(ctx, h.decl, ret->getRetValue(), value);
    if (i->getCond()->HasSideEffects(ctx) || cond.locals || cond.globals || cond.calls || cond.self_call ||
        cond.statements || hides(cond))
      break;
    if (value.locals || value.self_call || value.statements || hides(value)) break;
    out.push_back({i->getCond(), ret->getRetValue()});
  }
  return out;
}

}  // namespace

void Analyzer::describe_recursive_helper(const clang::FunctionDecl* def) {
  Program.recursive_helpers.push_back(recursive_form(def));
}

void Analyzer::describe_serial_forms() {
  // Callees first: a function whose other callees all have serial forms calls theirs, so the
  // forms are found until a pass finds none (functions that spawn each other never get one). A
  // leaf (spawned, spawning nothing) has one as it is: its spawners' forms call it.
  std::set<const CilkFunction*> formed;
  for (bool grew = true; grew;) {
    grew = false;
    for (const CilkFunction& f : Program.functions) {
      const bool leaf = f.spawns.empty();
      if (formed.count(&f) || f.group || (f.has_goto && !leaf)) continue;
      if (!std::all_of(f.callees.begin(), f.callees.end(), [&](const CilkFunction* c) { return c == &f || formed.count(c); }))
        continue;
      RecursiveHelper h = probe_serial_form(f);
      if (Refused) continue;
      h.serial = true;  // find_env_users gives the function the environment its form reports through
      h.leaf = leaf;
      Program.recursive_helpers.push_back(std::move(h));
      formed.insert(&f);
      grew = true;
    }
  }
  if (!Options.remark_serial_forms) return;
  // -Rserial-form: why each function of the user's that spawns has none (its tasks spawn at every
  // depth, a channel level each). A cilk_for's functions (cilk_for.cpp: STEM__cilk_for_LINE,
  // with __part and __leaf) are named by the loop's line.
  const auto named = [](const std::string& name) {
    const std::size_t at = name.find("__cilk_for_");
    if (at == std::string::npos) return "'" + name + "'";
    return "the cilk_for at line " + name.substr(at + 11, name.find_first_not_of("0123456789", at + 11) - at - 11);
  };
  for (const CilkFunction& f : Program.functions) {
    if (formed.count(&f) || f.group || f.name.find("__cilk_for_") != std::string::npos) continue;
    std::string why;
    clang::SourceLocation at = f.decl->getLocation();
    const auto formless = std::find_if(f.callees.begin(), f.callees.end(),
                                       [&](const CilkFunction* c) { return c != &f && !formed.count(c); });
    if (f.has_goto) {
      why = "it has a goto, which its explicit stack cannot follow";
      at = first_goto(f.decl->getBody())->getBeginLoc();
    } else if (formless != f.callees.end()) {
      const auto& theirs = (*formless)->callees;
      why = std::find(theirs.begin(), theirs.end(), &f) != theirs.end()
                ? "it and " + named((*formless)->name) + " spawn each other (functions that do have none)"
                : "it spawns or calls " + named((*formless)->name) + ", which has none";
    } else {
      probe_serial_form(f);
      why = ProbeWhy.empty() ? "it returns nothing and calls itself inside a larger statement" : ProbeWhy;
      if (ProbeAt.isValid()) at = ProbeAt;
    }
    Diags.Report(at, Diags.getCustomDiagID(clang::DiagnosticsEngine::Remark, "%0"))
        << ("'" + f.name + "' has no serial form: " + why +
            "; its tasks spawn at every depth, a channel level each (CHANFLOW_MAX_CHANNELS bounds the depth)");
  }
}

RecursiveHelper Analyzer::probe_serial_form(const CilkFunction& f) {
  RecursiveHelper h;
  {
    struct Probe {  // errors refuse the form instead of being reported, until the probe ends
      bool& probing;
      explicit Probe(bool& p) : probing(p) { probing = true; }
      ~Probe() { probing = false; }
    } probe(Probing);
    Refused = false;
    ProbeWhy.clear();
    ProbeAt = {};
    h = recursive_form(f.decl, &f);
  }
  // A void function's call of itself in a statement of its own: one returning nothing has no
  // temporary to print in a larger statement (`return f(x);`, `(void)f(x);`).
  if (!f.returns_value())
    for (const auto& [statement, calls] : h.carriers)
      if (calls.size() != 1 || statement != calls.front()) Refused = true;
  return h;
}

// Each `#pragma chanflow serial_below(EXPR)` belongs to the function defined next in its file,
// which must be a Cilk function with a serial form, and EXPR may name only its parameters.
void Analyzer::apply_serial_below() {
  for (const SerialBelowPragma& pragma : Keywords.serial_below) {
    const clang::SourceLocation at = SM.getExpansionLoc(pragma.loc);
    const clang::FunctionDecl* next = nullptr;
    unsigned next_offset = 0;
    for (const clang::Decl* d : Ctx.getTranslationUnitDecl()->decls()) {
      const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
      if (!f || !f->doesThisDeclarationHaveABody()) continue;
      const clang::SourceLocation begin = SM.getExpansionLoc(f->getBeginLoc());
      if (SM.getFileID(begin) != SM.getFileID(at) || SM.getFileOffset(begin) <= SM.getFileOffset(at)) continue;
      if (!next || SM.getFileOffset(begin) < next_offset) next = f, next_offset = SM.getFileOffset(begin);
    }
    if (!next) {
      error(pragma.loc, "'#pragma chanflow serial_below' is followed by no function definition");
      continue;
    }
    auto f = std::find_if(Program.functions.begin(), Program.functions.end(),
                          [&](const CilkFunction& c) { return c.decl->getCanonicalDecl() == next->getCanonicalDecl(); });
    if (f == Program.functions.end()) {
      error(pragma.loc, "'#pragma chanflow serial_below' precedes '" + next->getNameAsString() +
                            "', which is not a Cilk function (it neither spawns nor syncs)");
      continue;
    }
    std::vector<CilkFunction::ConditionToken> condition;
    bool named_only_parameters = true;
    for (std::size_t i = 0; i < pragma.tokens.size(); ++i) {
      const clang::Token& t = pragma.tokens[i];
      CilkFunction::ConditionToken piece{.spelling = pragma.spellings[i]};
      if (t.is(clang::tok::identifier)) {
        for (const clang::ParmVarDecl* p : f->decl->parameters())
          if (p->getName() == piece.spelling) piece.param = p;
        if (!piece.param) {
          std::string names;
          for (const clang::ParmVarDecl* p : f->decl->parameters()) names += (names.empty() ? "" : ", ") + p->getNameAsString();
          error(t.getLocation(), "'#pragma chanflow serial_below' of '" + f->name + "' may name only its parameters (" +
                                     names + "); '" + piece.spelling + "' is not one");
          named_only_parameters = false;
        }
      }
      condition.push_back(std::move(piece));
    }
    if (!named_only_parameters || !Program.serial_forms) continue;  // --serial-cutoff=off: every spawn a task
    if (!Program.serial_form(f->decl)) {
      error(pragma.loc, "'" + f->name + "' has no serial form for '#pragma chanflow serial_below' to run: a Cilk "
                        "function has one where it spawns only itself and functions that have one, and could be a "
                        "helper on an explicit stack (no pointer to a local but those its children get, no "
                        "goto, no cilk_for)");
      continue;
    }
    f->serial_below = std::move(condition);
  }
}

RecursiveHelper Analyzer::recursive_form(const clang::FunctionDecl* def, const CilkFunction* serial) {
  RecursiveHelper h;
  h.decl = def;
  h.id = static_cast<unsigned>(Program.recursive_helpers.size());
  const BodyFacts& facts = Facts[def->getCanonicalDecl()];
  h.variables.assign(def->param_begin(), def->param_end());
  h.variables.insert(h.variables.end(), facts.locals.begin(), facts.locals.end());
  for (const clang::CallExpr* c : facts.calls) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    if (callee && callee->getCanonicalDecl() == def->getCanonicalDecl()) h.calls.push_back(c);
    if (memory_call(callee) == MemoryCall::Alloca && !serial)
      error(c->getBeginLoc(), "alloca in '" + def->getNameAsString() +
                                  "', a helper that calls itself: its activations share one frame of locals on an "
                                  "explicit stack, so chanflowc cannot release their blocks apart; use malloc and free");
  }
  std::set<const clang::Stmt*> carriers;
  for (const clang::CallExpr* c : h.calls)
    if (const clang::Stmt* s = carrier_of(c, def)) carriers.insert(s);
  // Each carrier's calls in the order they are made: a call's arguments (and the calls in them)
  // first, then left to right. An if or a switch carries only its condition's.
  for (const clang::Stmt* s : carriers) {
    std::vector<const clang::CallExpr*>& order = h.carriers[s];
    std::function<void(const clang::Stmt*)> walk = [&](const clang::Stmt* e) {
      if (!e) return;
      for (const clang::Stmt* child : e->children()) walk(child);
      if (auto* c = llvm::dyn_cast<clang::CallExpr>(e); c && std::count(h.calls.begin(), h.calls.end(), c)) order.push_back(c);
    };
    if (auto* i = llvm::dyn_cast<clang::IfStmt>(s)) walk(i->getCond());
    else if (auto* w = llvm::dyn_cast<clang::SwitchStmt>(s)) walk(w->getCond());
    else walk(s);
  }
  if (!h.calls.empty()) check_recursive_addresses(def, def->getBody(), serial);  // else one activation: no other to name
  h.one_entry = one_entry(h);
  if (!h.calls.empty()) h.guards = opening_guards(h, Ctx);
  if (!h.calls.empty()) h.sums = summed_calls(Ctx, h);
  return h;
}

// The statement that makes `call` (a call of `def` in its own body), or null after an error where
// the call cannot be made first: past `&&`, `||`, `?` or `,`, in a loop's head, under sizeof.
const clang::Stmt* Analyzer::carrier_of(const clang::CallExpr* call, const clang::FunctionDecl* def) {
  const std::string name = def->getNameAsString();
  auto refuse = [&](const std::string& where) -> const clang::Stmt* {
    error(call->getBeginLoc(), "call of '" + name + "' " + where + ": '" + name +
                                   "' calls itself, so chanflowc runs it on an explicit stack, where a call of "
                                   "itself must be made whatever the rest of its statement does; make the call a "
                                   "statement of its own (`r = " + name + "(...);`) and use its result");
    return nullptr;
  };
  const clang::Stmt* child = call;
  for (const clang::Stmt* p = parent_stmt(child); p; child = p, p = parent_stmt(p)) {
    if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(p)) {
      if (b->getOpcode() == clang::BO_Comma) return refuse("in an operand of ','");
      if (b->isLogicalOp() && child == b->getRHS()) return refuse(std::string("on the right of '") + b->getOpcodeStr().str() + "'");
    }
    if (auto* c = llvm::dyn_cast<clang::AbstractConditionalOperator>(p); c && child != c->getCond())
      return refuse("in a branch of '?:'");
    if (llvm::isa<clang::UnaryExprOrTypeTraitExpr>(p)) return refuse("under sizeof");
    if (llvm::isa<clang::Expr>(p)) continue;
    if (auto* d = llvm::dyn_cast<clang::DeclStmt>(p)) {
      // `int l = f(a), r = f(b);`: every call first, then the declarators reading their results,
      // which is C's order where no initializer reads a variable declared before it in the
      // statement and none has an effect of its own to keep before a later call.
      if (!d->isSingleDecl() && !calls_first_in(d, def))
        return refuse("in a declaration of several variables whose initializers read each other or have effects of "
                      "their own");
      return p;
    }
    if (llvm::isa<clang::ReturnStmt>(p)) return p;
    if (auto* i = llvm::dyn_cast<clang::IfStmt>(p); i && child == i->getCond()) return p;
    if (auto* w = llvm::dyn_cast<clang::SwitchStmt>(p); w && child == w->getCond()) return p;
    if (auto* f = llvm::dyn_cast<clang::ForStmt>(p); f && child != f->getBody())
      return refuse("in a for loop's head");
    if (auto* w = llvm::dyn_cast<clang::WhileStmt>(p); w && child != w->getBody()) return refuse("in a loop's condition");
    if (auto* d = llvm::dyn_cast<clang::DoStmt>(p); d && child != d->getBody()) return refuse("in a loop's condition");
    return llvm::isa<clang::Expr>(child) ? child : nullptr;  // an expression statement
  }
  return nullptr;
}

// Whether a declaration of several variables may make its calls of `def` before any declarator:
// no initializer names a variable declared earlier in it, and none has an effect (an assignment,
// ++ or --, a call of another function) outside its calls of `def`, whose arguments are evaluated
// in order at each call.
bool Analyzer::calls_first_in(const clang::DeclStmt* d, const clang::FunctionDecl* def) const {
  std::set<const clang::VarDecl*> declared;
  bool ok = true;
  std::function<void(const clang::Stmt*)> walk = [&](const clang::Stmt* e) {
    if (!e || !ok) return;
    if (auto* c = llvm::dyn_cast<clang::CallExpr>(e)) {
      const clang::FunctionDecl* callee = c->getDirectCallee();
      if (!callee || callee->getCanonicalDecl() != def->getCanonicalDecl()) ok = false;
    }
    if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && b->isAssignmentOp()) ok = false;
    if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->isIncrementDecrementOp()) ok = false;
    if (auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e))
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl()); v && declared.count(v)) ok = false;
    for (const clang::Stmt* child : e->children()) walk(child);
  };
  for (const clang::Decl* decl : d->decls())
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(decl)) {
      walk(v->getInit());
      declared.insert(v);
    }
  return ok;
}

// No pointer may name a local or parameter of a helper that calls itself: they live once, and its
// activations take turns in them. A local array indexed, or handed to a call that returns no
// pointer (memcpy into it, a helper filling it), is fine: the pointer ends with that expression.
void Analyzer::check_recursive_addresses(const clang::FunctionDecl* def, const clang::Stmt* s, const CilkFunction* serial) {
  if (!s) return;
  const clang::Expr* pointer = nullptr;
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->getOpcode() == clang::UO_AddrOf) pointer = u;
  if (auto* c = llvm::dyn_cast<clang::ImplicitCastExpr>(s); c && c->getCastKind() == clang::CK_ArrayToPointerDecay)
    pointer = c;
  if (pointer) {
    std::set<const clang::VarDecl*> named;
    addressed_variables(pointer, named, false);
    if (serial)  // a serial form's boxed locals live in its activation's block, which never moves
      for (const clang::VarDecl* v : serial->boxed) named.erase(v);
    const clang::Stmt* user = parent_stmt(pointer);
    while (user && llvm::isa<clang::ParenExpr, clang::ImplicitCastExpr>(user)) user = parent_stmt(user);
    const auto* index = llvm::dyn_cast_or_null<clang::ArraySubscriptExpr>(user);
    const auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(user);
    const bool passes = call && call->getDirectCallee() && call->getDirectCallee()->getCanonicalDecl() != def->getCanonicalDecl() &&
                        !call->getType()->isPointerType();
    const bool memory = call && memory_call(call->getDirectCallee()) != MemoryCall::None;
    if (!named.empty() && !(index && strip(index->getBase()) == strip(pointer)) && !passes && !memory) {
      const clang::VarDecl* v = *named.begin();
      if (serial)
        error(pointer->getBeginLoc(), "a pointer to '" + v->getNameAsString() + "', which no child of '" +
                                          def->getNameAsString() + "' gets: the activations of its serial form "
                                          "take turns in one copy of such locals");
      else
        error(pointer->getBeginLoc(), "a pointer to '" + v->getNameAsString() + "' in '" + def->getNameAsString() +
                                        "', a helper that calls itself: chanflowc runs it on an explicit stack, "
                                        "where its activations take turns in one copy of its locals, so the "
                                        "pointer would name another activation's; pass the value, or use memory "
                                        "from malloc or the caller");
    }
  }
  for (const clang::Stmt* c : s->children()) check_recursive_addresses(def, c, serial);
}

}  // namespace chanflow::compiler
