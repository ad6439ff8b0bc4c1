// The OpenCL C of a Cilk program (DESIGN.md decision 8, the scheme of the hand lowerings in
// workloads/): each Cilk function F becomes one resumable body, F__run, behind two kernel nodes.
// F__spawn (yielding) runs a task from the top; F__sync (a continuation node) runs a frame from
// the sync point it was saved at. A spawn records a child into the callee's stack one level down,
// its result slot noted with where the result goes; a sync with children outstanding saves the
// locals in scope into the next frame and ends the kernel; the frame resumes after the last child
// returns, delivers the results and goes on. A sync with nothing outstanding is passed straight
// through, so base cases never pay for a frame.
#include "analysis/address_spaces.hpp"
#include "emit/resumable_printer.hpp"
#include "analysis/analysis.hpp"
#include "emit/emit.hpp"
#include "analysis/sync_flow.hpp"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/PrettyPrinter.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>

namespace chanflow::compiler {
namespace {

// Prints one Cilk function's body: spawns, syncs, returns and cilk_scope blocks lowered, the rest
// as DevicePrinter prints device code; a resume enters the loops around its point at their heads.
class FunctionPrinter : public ResumablePrinter {
 public:
  FunctionPrinter(clang::ASTContext& ctx, const CilkProgram& program, const CilkFunction& f, const FunctionSpaces& spaces)
      : ResumablePrinter(ctx, program, spaces, nullptr), F(f), Flow(ctx, f), Printed(f.field), Allocas(program.calls_alloca(f.decl)) {
    ResumeLoops = &F.frame.resume_loops;
    Group = f.group;
    ResumeIndex = "cf_frame->resume";
    for (const SpawnSite& s : f.spawns) Sites[s.statement] = &s;
    Scopes.insert(f.scopes.begin(), f.scopes.end());
    for (const clang::VarDecl* v : f.boxed) Printed[v] = "cf_box->" + f.field.at(v);
    Names = &Printed;
    // The box is taken where its first local is declared (base cases that return before never
    // take one), or at the top where a parameter is boxed or a jump could skip a declaration.
    BoxAtEntry = Flow.jumps();
    for (const clang::VarDecl* v : f.boxed) BoxAtEntry = BoxAtEntry || llvm::isa<clang::ParmVarDecl>(v);
    // Where a spawn sits in a loop (so a resume point may be inside it: a batch's sync, or one
    // written there), the task node takes the box before the body runs: PoCL 3.1's kernel
    // compiler recurses without end on a body that takes it (a search loop over the pool's
    // bitmap) and is entered in the middle of a loop on resume.
    for (const SpawnSite& s : f.spawns) BoxInWrapper = BoxInWrapper || (!f.boxed.empty() && s.in_loop);
  }

  // The frame-layout phase: one pass over the body finds the sync points and what each saves.
  CilkFunction::FrameLayout lay_out() {
    Layout = {};
    print_body();
    Layout.resume_points = Resumes;
    return Layout;
  }

  std::string run_function() {
    TotalResumes = F.frame.resume_points;  // with one resume point, the frame needs no index
    const std::string body = print_body();
    const bool waits = !F.spawns.empty();
    std::string out = waits ? fmt::format("void {0}__run(__global {0}__task* cf_task, __global {0}__frame* cf_frame, "
                                          "chanflow_ctx* cf_ctx) {{\n",
                                          F.name)
                            : fmt::format("void {0}__run(__global {0}__task* cf_task, chanflow_ctx* cf_ctx) {{\n", F.name);
    for (const clang::ParmVarDecl* p : F.decl->parameters())
      if (!F.is_boxed(p)) out += "  " + device_type(Ctx, p->getType().getUnqualifiedType(), true, F.field.at(p)) + ";\n";
    if (Program.takes_env(F.decl))
      out += fmt::format("  __global const chanflow_node_env* cf_env = cf_ctx->env; /* {} */\n",
                         Program.reaches_heap(F.decl) ? "the device heap's" : "its errors and shared globals go through it");
    if (Allocas) out += "  ulong cf_allocas = 0; /* its alloca blocks, released when it returns */\n";
    if (!F.boxed.empty()) {
      out += fmt::format("  /* locals whose address children get: the task's scratch block, kept by its frame */\n"
                         "  __global {0}__box* cf_box = cf_frame ? (__global {0}__box*)chanflow_frame_scratch(&cf_frame->frame) : {1};\n",
                         F.name, BoxInWrapper ? fmt::format("(__global {}__box*)cf_ctx->task_scratch", F.name) : "0");
      if (BoxAtEntry && !BoxInWrapper) out += "  " + take_box();
    }
    if (waits) {
      if (F.returns_value()) out += "  " + device_type(Ctx, F.decl->getReturnType().getUnqualifiedType(), true, "cf_ret") + ";\n";
      out += fmt::format("  {}__frame cf_next; /* the frame a sync with children outstanding saves */\n", F.name);
      out += "  uint cf_spawned = 0; /* children since the last sync */\n";
      if (!F.static_slots) out += "  cf_next.results = 0;\n";
      else if (F.result_slots) out += "  cf_next.filled = 0;\n";
      if (in_loops()) out += "  volatile uint cf_resuming = cf_frame != 0; /* until the resume point: loops are entered at their head (volatile: kept from being threaded past them) */\n";
      if (TotalResumes) out += "  if (cf_frame)\n" + dispatch(nullptr);
    }
    for (const clang::ParmVarDecl* p : F.decl->parameters()) out += "  " + ref(p) + " = cf_task->" + F.field.at(p) + ";\n";
    if (const RecursiveHelper* s = Program.serial_form(F.decl); s && !s->leaf) out += serial_below_cutoff();
    return out + body + release() + "}\n";
  }

  // The body with spawns, syncs and returns lowered, and the implicit sync at its end.
  std::string print_body() {
    Resumes = 0;
    std::string body;
    llvm::raw_string_ostream os(body);
    F.decl->getBody()->printPretty(os, this, Policy, 0);
    os.flush();
    return body + end_of_function();
  }

  // A boxed local's declaration: its initial value stored in the box (taken here if need be).
  void print_declaration(const clang::Decl* decl, llvm::raw_ostream& os) override {
    const auto* v = llvm::dyn_cast<clang::VarDecl>(decl);
    if (!v || !F.is_boxed(v)) return DevicePrinter::print_declaration(decl, os);
    if (!BoxAtEntry && !BoxTaken) os << take_box();
    print_boxed_init(v, ref(v), os);
  }

  bool handledStmt(clang::Stmt* s, llvm::raw_ostream& os) override {
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(s)) {
      print_loop(s, os);
      return true;
    }
    if (auto it = Sites.find(s); it != Sites.end()) {
      print_spawn(*it->second, os);
      return true;
    }
    if (auto* call = llvm::dyn_cast<clang::CallExpr>(s)) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      if (callee && callee->getName() == "__chanflow_sync") {
        const SyncAt at{s, s->getBeginLoc(), false};
        os << "do {\n" << sync_point(Flow.live(Flow.scope_at(s), at), at, false) << "} while (0)";
        return true;
      }
    }
    if (auto* r = llvm::dyn_cast<clang::ReturnStmt>(s)) {
      print_return(r, os);
      return true;
    }
    if (auto* d = llvm::dyn_cast<clang::DeclStmt>(s); d && !BoxAtEntry) {  // `long x, y;`: one take
      for (const clang::Decl* decl : d->decls())
        if (auto* v = llvm::dyn_cast<clang::VarDecl>(decl); v && F.is_boxed(v)) {
          os << take_box();
          BoxTaken = true;
          DevicePrinter::handledStmt(s, os);
          BoxTaken = false;
          return true;
        }
    }
    if (auto* c = llvm::dyn_cast<clang::CompoundStmt>(s); c && Scopes.count(c)) {
      os << "{ /* cilk_scope */\n";
      for (clang::Stmt* child : c->body()) print_statement(child, os);
      const SyncAt at{c, c->getRBracLoc(), true};
      os << sync_point(Flow.live(Flow.scope_at_end(c), at), at, false) << "}\n";
      return true;
    }
    return DevicePrinter::handledStmt(s, os);
  }

 private:
  // A spawn, or a plain call (a spawn then a sync).
  void print_spawn(const SpawnSite& s, llvm::raw_ostream& os) {
    const CilkFunction& callee = *Program.cilk_function(s.callee);
    if (s.declared) os << type_of(s.declared, F.field.at(s.declared)) << ";\n";
    const bool is_return = llvm::isa<clang::ReturnStmt>(s.statement);
    os << "do {\n";
    if (s.batched) {  // a batch's worth spawned: sync, and go on with the loop in the continuation
      const SyncAt at{s.statement, s.call->getBeginLoc(), false};
      BatchSync = true;
      os << fmt::format("if (cf_spawned >= {}u) {{\n", Program.max_loop_spawns)
         << sync_point(Flow.live(Flow.scope_at(s.statement), at), at, false) << "}\n";
      BatchSync = false;
    }
    os << fmt::format("{0}__task cf_child;\n{{ const chanflow_task cf_header = CHANFLOW_TASK_INIT; cf_child.task = cf_header; }}\n",
                      callee.name);
    unsigned i = 0;
    for (const clang::Expr* arg : s.call->arguments()) {
      const clang::ParmVarDecl* param = callee.decl->getParamDecl(i++);
      os << "cf_child." << callee.field.at(param) << " = ";
      print_expr(arg, os);
      os << ";\n";
    }
    // The task node's port, or the continuation node's where code after a sync spawns (its ports
    // are the children's only: it waits again in its own frame).
    const std::string port =
        F.continuation_spawns && F.waits()
            ? fmt::format("(cf_frame ? CHANFLOW_PORT({0}__sync, {1}) : CHANFLOW_PORT({0}__spawn, {1}))", F.name, callee.name)
            : fmt::format("CHANFLOW_PORT({}__spawn, {})", F.name, callee.name);
    if (s.result == ResultKind::None) {
      os << "chanflow_spawn_void_child(cf_ctx, " << port << ", cf_child);\n";
    } else if (s.elements) {  // a[i]: element i's slot (none outside the array: its result is dropped)
      os << "{\nconst uint cf_e = (uint)(";
      print_expr(llvm::cast<clang::ArraySubscriptExpr>(strip(s.destination))->getIdx(), os);
      os << fmt::format(");\nif (cf_e < {0}u) {{\n  cf_next.filled |= 1u << ({1}u + cf_e);\n"
                        "  chanflow_spawn_child(cf_ctx, {2}, cf_child, {1}u + cf_e);\n}} else {{\n"
                        "  chanflow_spawn_void_child(cf_ctx, {2}, cf_child);\n}}\n}}\n",
                        s.elements, s.slot, port);
    } else if (F.static_slots) {  // its own slot
      os << fmt::format("cf_next.filled |= {}u;\n", 1u << s.slot);
      print_destination(s, std::to_string(s.slot), os);
      os << fmt::format("chanflow_spawn_child(cf_ctx, {}, cf_child, {});\n", port, s.slot);
    } else {
      os << fmt::format("if (cf_next.results < {}) {{\n", F.result_slots);
      if (F.result_sites() > 1) os << fmt::format("  cf_next.site[cf_next.results] = {};\n", s.site);
      print_destination(s, "cf_next.results", os);
      os << "}\n";
      os << "chanflow_spawn_child(cf_ctx, " << port << ", cf_child, cf_next.results);\n++cf_next.results;\n";
    }
    os << "++cf_spawned;\n";
    if (s.plain_call || is_return) {
      const SyncAt at{s.statement, s.call->getEndLoc(), false};
      os << sync_point(is_return ? std::vector<const clang::VarDecl*>{} : Flow.live(Flow.scope_at(s.statement), at), at, false);
    }
    if (is_return) os << return_value(F.returns_value() ? "cf_ret" : "");
    os << "} while (0)";
    if (!llvm::isa<clang::Expr>(s.statement)) os << ";\n";
  }

  // Where a result goes, recorded in the next frame's dest[slot] when the continuation cannot name
  // it by itself: an address (memory through a pointer), or an offset in a local (a[i], s.f).
  void print_destination(const SpawnSite& s, const std::string& slot, llvm::raw_ostream& os) {
    if (s.result == ResultKind::Memory) {
      os << "  cf_next.dest[" << slot << "] = (ulong)&(";
      print_expr(s.destination, os);
      os << ");\n";
    } else if (s.destination && !llvm::isa<clang::DeclRefExpr>(strip(s.destination))) {
      const std::string bytes = F.is_boxed(s.root) ? "(__global uchar*)" : "(uchar*)";
      os << "  cf_next.dest[" << slot << "] = (ulong)(" << bytes << "&(";
      print_expr(s.destination, os);
      os << ") - " << bytes << "&" << ref(s.root) << ");\n";
    }
  }

  // return e; — e is evaluated first, then the implicit sync, then the value goes to the parent.
  void print_return(const clang::ReturnStmt* r, llvm::raw_ostream& os) {
    os << "{\n";
    if (r->getRetValue() && F.returns_value()) {
      os << (F.spawns.empty() ? device_type(Ctx, F.decl->getReturnType().getUnqualifiedType(), true, "cf_ret") : "cf_ret")
         << " = ";
      print_expr(r->getRetValue(), os);
      os << ";\n";
    } else if (r->getRetValue()) {
      print_expr(r->getRetValue(), os);
      os << ";\n";
    }
    if (!F.spawns.empty()) os << sync_point({}, SyncAt{r, r->getBeginLoc(), false}, r->getRetValue() != nullptr);  // only the value survives
    os << return_value(r->getRetValue() && F.returns_value() ? "cf_ret" : "") << "}\n";
  }

  std::string return_value(const std::string& value) const {
    if (value.empty()) return release() + "return;\n";
    return release() + "chanflow_return(cf_ctx, " + to_bits(F.decl->getReturnType(), value) + ");\nreturn;\n";
  }

  // The function's alloca blocks go back to the heap as it returns (after its last sync).
  // A task at the run's serial depth or deeper runs the whole call in its work-item, as the
  // serial form (a task's continuations are at its depth: none of them gets here).
  std::string serial_below_cutoff() {
    std::string call = F.name + "__serial(cf_env";
    for (const clang::ParmVarDecl* p : F.decl->parameters()) call += ", " + ref(p);
    call += ")";
    std::string test = "chanflow_depth(cf_ctx) >= chanflow_serial_depth(cf_ctx)", why = "granularity control";
    if (!F.serial_below.empty()) {  // its own condition, unless the run turned granularity control off
      std::string condition;
      for (const CilkFunction::ConditionToken& t : F.serial_below)
        condition += (condition.empty() ? "" : " ") + (t.param ? ref(t.param) : t.spelling);
      test = "chanflow_serial_depth(cf_ctx) != CHANFLOW_SERIAL_OFF && (" + condition + ")";
      why = "#pragma chanflow serial_below";
    }
    std::string out = "  if (!cf_frame && " + test + ") { /* " + why + " */\n";
    if (F.returns_value()) out += "    chanflow_return(cf_ctx, " + to_bits(F.decl->getReturnType(), call) + ");\n";
    else out += "    " + call + ";\n";
    return out + "    return;\n  }\n";
  }

  std::string release() const { return Allocas ? "chanflow_release_allocas(cf_env, cf_allocas);\n" : ""; }

  std::string end_of_function() {
    const auto* body = llvm::cast<clang::CompoundStmt>(F.decl->getBody());
    if (F.spawns.empty() || (!body->body_empty() && llvm::isa<clang::ReturnStmt>(body->body_back()))) return "";
    return sync_point({}, SyncAt{body, body->getRBracLoc(), true}, false) + release() + "return;\n";
  }

  // A sync: with children outstanding, save what is in scope and end the kernel; resume here.
  // `keep_return`: the return value is computed before it (`return e;`) and saved too. A tail
  // sync hands the children this task's return instead (forwards).
  std::string sync_point(const std::vector<const clang::VarDecl*>& in_scope, const SyncAt& at, bool keep_return) {
    if (F.spawns.empty() || !Flow.may_have_children(at)) return "";
    if (forwards(at)) return "if (cf_spawned) {\n  chanflow_forward_children(cf_ctx);\n  return;\n}\n";
    const unsigned k = ++Resumes;
    Layout.resume_loops.push_back(Loops);
    keep_return = keep_return && F.returns_value();
    std::string out = "if (cf_spawned) {\n";
    if (TotalResumes > 1) out += fmt::format("  cf_next.resume = {};\n", k);
    std::vector<const clang::VarDecl*> saved;
    for (const clang::VarDecl* v : in_scope) {
      if (F.is_boxed(v) || Flow.overwritten(v, at)) continue;  // it stays where it is; a result replaces it
      if (space_of(v) == Space::Private) {
        private_pointer_after_sync(v, at.loc);
        continue;
      }
      Layout.saved.insert(v);
      saved.push_back(v);
      out += copy("cf_next.locals." + F.field.at(v), F.field.at(v), false, v->getType());
    }
    if (keep_return) {
      Layout.saves_return = true;
      out += "  cf_next.locals.cf_ret = cf_ret;\n";
    }
    if (Allocas) {
      Layout.saves_allocas = true;
      out += "  cf_next.locals.cf_allocas = cf_allocas;\n";
    }
    out += F.continuation_spawns ? "  if (cf_frame) chanflow_continue_in_place(cf_ctx, cf_next);\n"
                                   "  else chanflow_spawn_continuation(cf_ctx, cf_next);\n  return;\n}\n"
                                 : "  chanflow_spawn_continuation(cf_ctx, cf_next);\n  return;\n}\n";
    out += fmt::format("if (0) {{\ncf_resume_{}:\n", k);
    if (in_loops()) out += "  cf_resuming = 0;\n";
    for (const clang::VarDecl* v : saved) out += copy(F.field.at(v), "cf_frame->locals." + F.field.at(v), true, v->getType());
    if (keep_return) out += "  cf_ret = cf_frame->locals.cf_ret;\n";
    if (Allocas) out += "  cf_allocas = cf_frame->locals.cf_allocas;\n";
    out += deliveries(in_scope, at);
    out += "  cf_spawned = 0;\n}\n";
    return out;
  }

  // Whether the sync at `at` is a tail its children can return through (chanflow_forward_children:
  // no continuation runs): after it the function only returns, with nothing to give back, none of
  // the children outstanding there has a result to deliver, and none can read anything that ends
  // with this task (no boxed locals, no alloca blocks). Not a batch's sync in a loop; not where a
  // goto or switch could jump back before it.
  bool forwards(const SyncAt& at) const {
    if (F.returns_value() || !F.boxed.empty() || Allocas || BatchSync || Flow.jumps()) return false;
    for (const SpawnSite& s : F.spawns)
      if (s.result != ResultKind::None && Flow.outstanding(s, at)) return false;
    return Flow.only_returns_after(at.stmt);
  }

  // Each filled slot to its destination, by the spawn site that filled it: with static slots, the
  // slot of each site that may be outstanding here if its bit is set; otherwise the slots filled,
  // by the site each records.
  std::string deliveries(const std::vector<const clang::VarDecl*>& in_scope, const SyncAt& at) {
    if (!F.result_slots) return "";
    std::set<const clang::VarDecl*> visible(in_scope.begin(), in_scope.end());
    std::string out, cases;
    const bool one_site = F.result_sites() == 1;  // then the frame keeps no site numbers: case 0
    for (const SpawnSite& s : F.spawns) {
      if (s.result == ResultKind::None) continue;
      const std::string slot = F.static_slots ? std::to_string(s.slot) : "cf_i";
      const std::string value = from_bits(Ctx, s.callee->getReturnType(), "cf_frame->slot[" + slot + "]");
      const std::string op = s.compound ? " " + s.compound->getOpcodeStr().str() + " " : " = ";  // x += spawn f()
      std::string store;
      if (llvm::isa<clang::ReturnStmt>(s.statement)) {
        store = "cf_ret = " + value + ";";
      } else if (s.result == ResultKind::Memory) {
        store = fmt::format("*(__global {}*)cf_frame->dest[{}]{}{};",
                            device_type(Ctx, s.destination->getType().getUnqualifiedType(), true), slot, op, value);
      } else if (visible.count(s.root)) {
        const std::string root = ref(s.root);
        const std::string space = F.is_boxed(s.root) ? "__global " : "";
        if (!s.destination || llvm::isa<clang::DeclRefExpr>(strip(s.destination)))
          store = root + op + value + ";";
        else
          store = fmt::format("*({}{}*)(({}uchar*)&{} + cf_frame->dest[{}]){}{};", space,
                              device_type(Ctx, s.destination->getType().getUnqualifiedType(), true), space, root, slot,
                              op, value);
      }
      if (s.elements && visible.count(s.root)) {  // a slot per element
        if (Flow.outstanding(s, at))
          out += fmt::format("  for (uint cf_k = 0; cf_k < {0}u; ++cf_k)\n    if (cf_frame->filled & (1u << ({1}u + cf_k))) {2}[cf_k] = {3};\n",
                             s.elements, s.slot, ref(s.root),
                             from_bits(Ctx, s.callee->getReturnType(), fmt::format("cf_frame->slot[{}u + cf_k]", s.slot)));
        continue;
      }
      if (store.empty()) continue;
      if (!F.static_slots)
        cases += fmt::format("    case {}: {} break;\n", one_site ? 0u : s.site, store);
      else if (Flow.outstanding(s, at))
        out += fmt::format("  if (cf_frame->filled & {}u) {}\n", 1u << s.slot, store);
    }
    if (cases.empty()) return out;
    const std::string site = F.result_sites() > 1 ? "cf_frame->site[cf_i]" : "0";
    return "  for (uint cf_i = 0; cf_i < cf_frame->results; ++cf_i) {\n    switch (" + site + ") {\n" + cases +
           "    }\n  }\n";
  }

  // How a local is named in device code: its field name, or its place in the box.
  std::string ref(const clang::VarDecl* v) const { return Printed.at(v); }

  std::string take_box() const {
    if (BoxInWrapper) return "";  // taken by the task node before the body ran
    return fmt::format("if (!cf_box) {{\n  cf_box = (__global {}__box*)chanflow_task_scratch(cf_ctx);\n"
                       "  if (!cf_box) return; /* the run fails: the pool was empty */\n}}\n",
                       F.name);
  }

  // A pointer to private memory does not survive a sync: the kernel that took it has ended.
  void private_pointer_after_sync(const clang::VarDecl* v, clang::SourceLocation at) {
    if (!Reported.insert(v).second) return;
    clang::DiagnosticsEngine& d = Ctx.getDiagnostics();
    if (BatchSync) {
      d.Report(at, d.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                     "pointer '%0' into a local is used in a loop that spawns; such a loop syncs "
                                     "every %1 children (--max-loop-spawns), which ends the kernel that holds the "
                                     "local's private copy, so chanflowc cannot keep the pointer: take the address "
                                     "again in the loop, or pass it to a spawned function first (that keeps the "
                                     "local until the sync)"))
          << v->getName() << Program.max_loop_spawns;
      d.Report(v->getLocation(), d.getCustomDiagID(clang::DiagnosticsEngine::Note, "'%0' declared here")) << v->getName();
      return;
    }
    d.Report(at, d.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                   "pointer '%0' into a local is used after this sync; the sync ends the kernel that "
                                   "holds the local's private copy, so chanflowc cannot keep the pointer: take the "
                                   "address again after the sync, or pass it to a spawned function first (that "
                                   "keeps the local until the sync)"))
        << v->getName();
    d.Report(v->getLocation(), d.getCustomDiagID(clang::DiagnosticsEngine::Note, "'%0' declared here")) << v->getName();
  }

  const CilkFunction& F;
  const SyncFlow Flow;
  CilkFunction::FrameLayout Layout;  // what lay_out() finds
  std::map<const clang::VarDecl*, std::string> Printed;  // every local's name in device code
  bool BoxAtEntry = false;
  bool BoxTaken = false;  // printing a declaration statement whose take is already printed
  bool BatchSync = false;  // printing the sync a loop makes a batch at a time
  bool Allocas = false;  // F calls alloca: the chain of its blocks, released when it returns
 public:
  bool BoxInWrapper = false;  // the task node takes the box before the body (see the constructor)
  std::set<const clang::VarDecl*> Reported;
  std::map<const clang::Stmt*, const SpawnSite*> Sites;
  std::set<const clang::CompoundStmt*> Scopes;
  unsigned Resumes = 0;
};

}  // namespace

void lay_out_frames(clang::ASTContext& ctx, CilkProgram& program) {
  const AddressSpaces spaces(ctx, program);
  for (CilkFunction& f : program.functions) {
    FunctionPrinter printer(ctx, program, f, spaces.cilk_function(f));
    f.frame = printer.lay_out();
  }
}

std::string emit_device_code(clang::ASTContext& ctx, const CilkProgram& program) {
  std::string out = fmt::format(
      "/* Generated by chanflowc from {0}.c: its Cilk functions as kernel nodes (DESIGN.md decision 8).\n"
      " * Each Cilk function F runs as F__run: from the top in F__spawn (a task), from a sync point in\n"
      " * F__sync (a continuation frame, after its children returned). The types are in {0}.types.h. */\n",
      program.name);
  if (program.uses_double) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  for (const clang::VarDecl* c : program.constants) {
    std::string init;
    llvm::raw_string_ostream os(init);
    c->getInit()->printPretty(os, nullptr, clang::PrintingPolicy(ctx.getLangOpts()), 0);
    out += "__constant " + device_type(ctx, c->getType(), false, c->getNameAsString()) + " = " + os.str() + ";\n";
  }
  const AddressSpaces spaces(ctx, program);
  for (const FunctionSpaces* h : spaces.helpers()) out += "\n" + helper_code(ctx, program, *h);
  for (const RecursiveHelper& h : program.recursive_helpers)  // callees first
    if (h.serial) out += "\n" + serial_form_code(ctx, program, h, spaces.cilk_function(*program.cilk_function(h.decl)));
  for (const CilkFunction& f : program.functions) {
    FunctionPrinter printer(ctx, program, f, spaces.cilk_function(f));
    out += "\n/* " + f.name + " */\n" + printer.run_function();
    out += kernel_node_code(f, printer.BoxInWrapper);
  }
  return out;
}

}  // namespace chanflow::compiler
