// What chanflowc knows about a Cilk program after analysis: its Cilk functions, their spawn and
// sync points, the helpers device code calls, and the entry points main reaches. Built by
// analysis.cpp from Clang's AST and the keyword locations; read by the emitters.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Token.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace chanflow::compiler {

/// The most output ports a kernel node has (CHANFLOW_MAX_PORTS, scheduler/include/chanflow/
/// node_layout.h): a Cilk function's node has one per function it spawns or calls, and its
/// continuation.
inline constexpr std::size_t kMostPorts = 32;

/// `#pragma chanflow serial_below(EXPR)`: the function defined next runs its serial form in a
/// task whose EXPR (of its parameters) holds, whatever the run's depth.
struct SerialBelowPragma {
  clang::SourceLocation loc;           ///< of `serial_below`
  std::vector<clang::Token> tokens;    ///< EXPR's, macros expanded
  std::vector<std::string> spellings;  ///< each token's
};

/// Where each keyword was written (raw locations of the token that follows it), recorded by the
/// preprocessor callbacks of frontend.cpp.
struct KeywordLocations {
  std::vector<SerialBelowPragma> serial_below;
  std::set<clang::SourceLocation> spawn_targets;  ///< first token of each spawned call
  std::set<clang::SourceLocation> scope_braces;   ///< `{` of each cilk_scope
  std::vector<clang::SourceLocation> cilk_qualifiers;  ///< Cilk-5 `cilk` (expansion locations)
  std::vector<clang::SourceLocation> cilk_fors;        ///< each cilk_for keyword (expansion locations)
};

/// How a spawn's result reaches its destination once the continuation runs.
enum class ResultKind {
  None,     ///< a void spawn, or a value nobody reads
  Local,    ///< into a local variable (or a part of one: s.f, a[i]); its offset is recorded
  Memory,   ///< through a pointer (*p, p->f, p[i]); the address is recorded
};

/// One spawn (or plain call of a Cilk function, lowered as a spawn followed by a sync).
struct SpawnSite {
  const clang::CallExpr* call = nullptr;
  const clang::FunctionDecl* callee = nullptr;
  const clang::Stmt* statement = nullptr;  ///< the statement the spawn is (ExprStmt-level expr or DeclStmt)
  const clang::Expr* destination = nullptr;  ///< lvalue receiving the result, or null
  /// `x += cilk_spawn f()` (Cilk-5's implicit inlet): the operator applied with the result when it
  /// is delivered, at the sync; null for `=`.
  const clang::CompoundAssignOperator* compound = nullptr;
  const clang::VarDecl* declared = nullptr;  ///< `T x = cilk_spawn f()`: the variable
  const clang::VarDecl* root = nullptr;      ///< ResultKind::Local: the local the destination is part of
  ResultKind result = ResultKind::None;
  bool plain_call = false;  ///< written without spawn: a sync follows at once
  bool in_loop = false;
  unsigned site = 0;        ///< index among the function's sites (the continuation's delivery switch)
  unsigned slot = 0;        ///< with static slots (CilkFunction::static_slots): its own result slot
  /// With static slots, a site in a loop storing into a local array (`a[i] = cilk_spawn f()`):
  /// the array's length, one slot per element from `slot` on; 0 otherwise.
  unsigned elements = 0;
  /// A site in a loop with no slot per element whose loops' trip counts are not known to keep it
  /// under --max-loop-spawns: the loop syncs before it once the segment has spawned that many
  /// children, so its trip count is no limit (a batch at a time).
  bool batched = false;
  /// A site in loops of known trip counts, not batched: how often it runs per segment (0 otherwise).
  unsigned loop_trips = 0;
};

/// A Cilk function: becomes a task stack and node, and a continuation stack and node.
struct CilkFunction {
  const clang::FunctionDecl* decl = nullptr;
  std::string name;
  unsigned index = 0;
  /// `#pragma chanflow serial_below(EXPR)`'s EXPR, token by token (a parameter's tokens name it):
  /// its tasks run the serial form where it holds, instead of from the run's depth; empty: none.
  struct ConditionToken {
    std::string spelling;
    const clang::ParmVarDecl* param = nullptr;
  };
  std::vector<ConditionToken> serial_below;
  std::vector<SpawnSite> spawns;
  std::vector<const clang::CallExpr*> syncs;  ///< explicit cilk_sync calls
  std::vector<const clang::CompoundStmt*> scopes;  ///< cilk_scope blocks (a sync at their end)
  std::vector<const clang::VarDecl*> locals;  ///< every local variable, in order (frame fields)
  std::map<const clang::VarDecl*, std::string> field;  ///< local -> unique frame field name
  /// Locals whose address a child gets (`cilk_spawn f(&x)`), in declaration order: they live in
  /// a block the task owns from its body until its last sync (the library's task scratch), not
  /// in private memory, and are not copied into the frame.
  std::vector<const clang::VarDecl*> boxed;
  bool is_boxed(const clang::VarDecl* v) const { return std::find(boxed.begin(), boxed.end(), v) != boxed.end(); }
  std::set<const CilkFunction*> callees;  ///< functions it spawns or calls
  /// Callees (canonical declarations) one run of its body may spawn both of: their ports share
  /// no staging (KernelNode::spawns_together); others' do.
  std::set<std::pair<const clang::FunctionDecl*, const clang::FunctionDecl*>> spawned_together;
  unsigned result_slots = 0;  ///< most results one segment can wait for (the frame's slots)
  /// Each result site outside loops has a slot of its own, and each in a loop one per element of
  /// the local array it stores into (no goto): slots are known when the code is written, and the
  /// frame keeps a bit per slot filled instead of a count and the site numbers. Otherwise slots
  /// are filled in spawn order and each records its site.
  bool static_slots = false;
  bool has_goto = false;  ///< then every local in scope is kept at every sync
  /// What the frame holds, found by the frame-layout phase (lay_out_frames) before any emitter
  /// runs: the sync points it can resume at (with one, it keeps no resume index), whether one
  /// saves the return value (a `return e` with children outstanding), and the locals some sync
  /// point saves (live after it): the frame holds only these.
  struct FrameLayout {
    unsigned resume_points = 0;
    bool saves_return = false;
    bool saves_allocas = false;  ///< the chain of its alloca blocks (released when it returns)
    /// Per resume point (k - 1), the loops around it, outermost first: a resume enters each
    /// through its head (the CFG stays reducible: PoCL 3.1's kernel compiler recursed without
    /// end on bodies entered in the middle of a loop).
    std::vector<std::vector<const clang::Stmt*>> resume_loops;
    std::set<const clang::VarDecl*> saved;
  } frame;
  /// Whether code after a sync can spawn: only then does the continuation node have output ports
  /// (a continuation that only returns never needs room, so it can always run).
  bool continuation_spawns = false;
  /// A work-group task (CHANFLOW_GROUP_KERNEL_NODE): a cilk_for's leaf, whose work-items share its
  /// iterations (`__chanflow_group_item()` is the work-item, `__chanflow_group_items()` their number).
  bool group = false;
  /// Whether its tasks may run on another device of a run across devices (movable_tasks.cpp):
  /// empty, they may; otherwise why they stay on the device that spawned them, in words for the
  /// run's statistics ("its parameter 'a' is a pointer").
  std::string stays_because;
  bool movable() const { return stays_because.empty(); }
  /// What measures its work, for its serial levels grouped by work (work_measure.cpp): a parameter
  /// each spawn of itself makes smaller by a constant step; null: none (not grouped).
  const clang::ParmVarDecl* work = nullptr;
  bool returns_value() const { return !decl->getReturnType()->isVoidType(); }
  /// Whether a run of it can leave a continuation: some sync point resumes (a function whose every
  /// sync hands its children its own return, chanflow_forward_children, has no continuation stack).
  bool waits() const { return frame.resume_points > 0; }
  /// Result-carrying spawn sites: with one, the frame needs no per-slot site numbers.
  unsigned result_sites() const {
    unsigned n = 0;
    for (const SpawnSite& s : spawns) n += s.result != ResultKind::None;
    return n;
  }
  /// Whether some result goes somewhere the continuation cannot name by itself (a part of a
  /// local picked at the spawn, or memory through a pointer): the frame records it per slot.
  bool results_need_destinations() const {
    for (const SpawnSite& s : spawns)
      if (s.result == ResultKind::Memory || (s.result == ResultKind::Local && !s.elements && s.destination &&
                                              !llvm::isa<clang::DeclRefExpr>(s.destination->IgnoreParenImpCasts())))
        return true;
    return false;
  }
};

/// A helper that calls itself (OpenCL C has no recursion): compiled into one loop over an
/// explicit, bounded stack of its activations (emit/recursive_helper.cpp). Each call of itself is a
/// resume point; a statement holding such calls makes them first, innermost first and left to right
/// (as C allows: they are not sequenced against the rest), into temporaries it then reads.
struct RecursiveHelper {
  const clang::FunctionDecl* decl = nullptr;  ///< its definition
  unsigned id = 0;  ///< its index in CilkProgram::recursive_helpers: names it in a run-time error
  std::vector<const clang::CallExpr*> calls;  ///< its calls of itself, in source order
  /// Each statement holding calls of itself (an expression statement, a return, a declaration, or
  /// an if or switch through its condition), with those calls in the order they are made.
  std::map<const clang::Stmt*, std::vector<const clang::CallExpr*>> carriers;
  std::vector<const clang::VarDecl*> variables;  ///< its parameters and locals: an activation's fields
  /// The serial form of a Cilk function (F__serial, --serial-cutoff): its spawns are calls, its
  /// syncs nothing.
  bool serial = false;
  /// A serial form of a Cilk function that spawns nothing (a leaf others spawn): its body as a
  /// plain function, so that its spawners get serial forms; its tasks never run it themselves.
  bool leaf = false;
  /// No code after a call of itself is reached both from the top without a call and from a
  /// resume point: the emitter may resume each call directly (recursive_helpers.cpp).
  bool one_entry = false;
  /// One of the guards its body opens with: `if (cond) return value;` (value null: `return;`).
  struct Guard {
    const clang::Expr* cond = nullptr;
    const clang::Expr* value = nullptr;
  };
  /// The guards its body opens with that the emitter runs at each call on the call's arguments,
  /// so that a call one of them ends pushes no frame (recursive_helpers.cpp says which qualify).
  std::vector<Guard> guards;
  /// Its calls whose value its return only adds an integer to (`return x + f(n - 2)`, or `y =
  /// f(n - 2); cilk_sync; return x + y;`), each with that addend: the emitter makes such a call the
  /// activation's own continuation, the addend kept in an accumulator (summed_calls.cpp).
  std::map<const clang::CallExpr*, const clang::Expr*> sums;
};

/// The definition of a global: its one with an initializer, or else its tentative one (`int n;`);
/// `v` itself where the file has neither (an `extern` defined elsewhere).
inline const clang::VarDecl* global_definition(const clang::VarDecl* v) {
  auto* var = const_cast<clang::VarDecl*>(v);  // Clang 15's getActingDefinition is not const
  if (const clang::VarDecl* d = var->getDefinition()) return d;
  if (const clang::VarDecl* d = var->getActingDefinition()) return d;
  return v;
}

struct CilkProgram {
  std::string name;  ///< the input's stem: names the generated files
  std::string path;  ///< the input as given (for #line in the host code)
  std::vector<CilkFunction> functions;
  std::map<const clang::FunctionDecl*, unsigned> function_index;
  std::vector<const clang::FunctionDecl*> helpers;  ///< device helpers, callees before callers
  std::vector<const clang::Decl*> types;  ///< record, enum and typedef declarations device code needs, in order
  std::vector<const clang::VarDecl*> constants;  ///< const globals device code reads
  std::map<const clang::CallExpr*, const SpawnSite*> spawn_of;
  bool uses_double = false;
  bool device_prints = false;  ///< device code calls printf (or fprintf to stdout or stderr)
  unsigned max_loop_spawns = 32;
  /// Device functions (canonical declarations of Cilk functions and helpers) that reach the
  /// device heap, themselves or through the helpers they call: each of them has the node's
  /// environment at hand as `cf_env` (a helper takes it as its first parameter).
  std::set<const clang::FunctionDecl*> heap_users;
  /// Some device function allocates (malloc, calloc, realloc, alloca), so blocks of the heap may
  /// reach host code; where only explicit stacks spill to it, none do.
  bool device_allocates = false;
  /// Device functions that call alloca: their blocks are released when they return.
  std::set<const clang::FunctionDecl*> alloca_users;
  /// Device functions that need the node's environment (`cf_env`): those reaching the heap, and
  /// those reaching a recursive helper (which reports an overflow of its stack through it).
  std::set<const clang::FunctionDecl*> env_users;
  std::vector<RecursiveHelper> recursive_helpers;
  /// The assertions of device code (assert's calls of __assert_fail), as C words a failure
  /// (`file:line: function: Assertion `expr' failed.`), and the index of each call.
  std::vector<std::string> assertions;
  std::map<const clang::CallExpr*, unsigned> assertion_of;
  /// The file's globals device code reads or writes (their definitions), other than the constants
  /// it copies: each lives in an SVM cell host code names too (host_svm.cpp), whose address kernel
  /// nodes find at index i of their argument block (CHANFLOW_ARGS).
  std::vector<const clang::VarDecl*> device_globals;
  std::map<const clang::VarDecl*, unsigned> global_index;
  /// `v`'s index in device_globals, if device code reaches it there.
  std::optional<unsigned> device_global(const clang::VarDecl* v) const {
    auto it = global_index.find(global_definition(v));
    return it == global_index.end() ? std::nullopt : std::optional<unsigned>(it->second);
  }
  unsigned helper_stack_frames = 64;  ///< --helper-stack: a recursive helper's frames in private memory (more spill to the heap)
  bool serial_forms = true;  ///< granularity control (TranslateOptions::serial_forms)
  std::optional<unsigned> serial_cutoff;  ///< --serial-cutoff=N: the program's own depth; none: auto
  bool uses_heap() const { return !heap_users.empty(); }
  bool takes_env(const clang::FunctionDecl* f) const { return env_users.count(f->getCanonicalDecl()) != 0; }
  const RecursiveHelper* recursive_helper(const clang::FunctionDecl* f) const {
    for (const RecursiveHelper& h : recursive_helpers)
      if (!h.serial && h.decl->getCanonicalDecl() == f->getCanonicalDecl()) return &h;
    return nullptr;
  }
  /// The serial form of Cilk function `f`, or null where it has none (it always spawns).
  const RecursiveHelper* serial_form(const clang::FunctionDecl* f) const {
    for (const RecursiveHelper& h : recursive_helpers)
      if (h.serial && h.decl->getCanonicalDecl() == f->getCanonicalDecl()) return &h;
    return nullptr;
  }
  bool reaches_heap(const clang::FunctionDecl* f) const { return heap_users.count(f->getCanonicalDecl()) != 0; }
  bool calls_alloca(const clang::FunctionDecl* f) const { return alloca_users.count(f->getCanonicalDecl()) != 0; }

  const CilkFunction* cilk_function(const clang::FunctionDecl* decl) const {
    auto it = function_index.find(decl ? decl->getCanonicalDecl() : nullptr);
    return it == function_index.end() ? nullptr : &functions[it->second];
  }
};

/// The C library's memory functions, which device code may call: the allocators run on the
/// device heap (scheduler/cl/heap.cl), the copies per address space of their pointers.
enum class MemoryCall { None, Malloc, Calloc, Realloc, Free, Alloca, Memcpy, Memmove, Memset };

inline MemoryCall memory_call(const clang::FunctionDecl* callee) {
  if (!callee || !callee->getIdentifier()) return MemoryCall::None;
  static const std::map<std::string, MemoryCall> calls = {
      {"malloc", MemoryCall::Malloc},          {"__chanflow_caps_new", MemoryCall::Malloc},
      {"calloc", MemoryCall::Calloc},
      {"realloc", MemoryCall::Realloc},        {"free", MemoryCall::Free},
      {"alloca", MemoryCall::Alloca},          {"__builtin_alloca", MemoryCall::Alloca},
      {"memcpy", MemoryCall::Memcpy},          {"__builtin_memcpy", MemoryCall::Memcpy},
      {"memmove", MemoryCall::Memmove},        {"__builtin_memmove", MemoryCall::Memmove},
      {"memset", MemoryCall::Memset},          {"__builtin_memset", MemoryCall::Memset}};
  auto it = calls.find(callee->getName().str());
  return it == calls.end() ? MemoryCall::None : it->second;
}

/// A function of C's <math.h> that OpenCL C has under its double form's name (`exp`, and `expf`
/// under `exp`): the name device code calls, or empty where it has none. OpenCL C overloads them
/// by argument type, so device code calls them with each argument converted to the C function's
/// parameter type, as C does (`exp(-2 * t)` of an int t, `sqrt(f)` of a float in double).
inline std::string device_math_name(const clang::FunctionDecl* callee) {
  static const std::set<std::string> names = {
      "acos",  "acosh", "asin",  "asinh", "atan",      "atan2",    "atanh", "cbrt",  "ceil",  "copysign", "cos",
      "cosh",  "erf",   "erfc",  "exp",   "exp2",      "expm1",    "fabs",  "fdim",  "floor", "fma",      "fmax",
      "fmin",  "fmod",  "hypot", "ldexp", "lgamma",    "log",      "log10", "log1p", "log2",  "logb",     "nextafter",
      "pow",   "remainder", "rint", "round", "sin",    "sinh",     "sqrt",  "tan",   "tanh",  "tgamma",   "trunc"};
  if (!callee || callee->hasBody() || !callee->getReturnType()->isRealFloatingType()) return "";
  std::string name = callee->getNameAsString();
  if (!names.count(name) && name.size() > 1 && name.back() == 'f' && names.count(name.substr(0, name.size() - 1)))
    name.pop_back();  // expf: float's form, the same built-in
  return names.count(name) ? name : "";
}

/// C's calls that end the process, as device code may make them: `exit(status)` (and `_Exit`),
/// and `abort()`. The run stops after the dispatch, and the process ends as the call says.
enum class ProcessEnd { None, Exit, Abort };
inline ProcessEnd process_end(const clang::FunctionDecl* callee) {
  if (!callee || callee->hasBody()) return ProcessEnd::None;
  const std::string name = callee->getNameAsString();
  if ((name == "exit" || name == "_Exit") && callee->getNumParams() == 1) return ProcessEnd::Exit;
  if (name == "abort" && callee->getNumParams() == 0) return ProcessEnd::Abort;
  return ProcessEnd::None;
}

/// The first goto (or computed one) in `s`, or null.
inline const clang::Stmt* first_goto(const clang::Stmt* s) {
  if (!s) return nullptr;
  if (llvm::isa<clang::GotoStmt, clang::IndirectGotoStmt>(s)) return s;
  for (const clang::Stmt* c : s->children())
    if (const clang::Stmt* g = first_goto(c)) return g;
  return nullptr;
}

/// Whether `s` holds a goto (or a computed one).
inline bool has_goto(const clang::Stmt* s) { return first_goto(s) != nullptr; }

/// `fprintf(stdout, ...)` or `fprintf(stderr, ...)`: its stream, which device code leaves out,
/// printing the call as OpenCL C's printf (whose output reaches standard output); else null.
inline const clang::DeclRefExpr* printed_stream(const clang::CallExpr* c) {
  const clang::FunctionDecl* callee = c->getDirectCallee();
  if (!callee || callee->hasBody() || callee->getName() != "fprintf" || c->getNumArgs() < 2) return nullptr;
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(c->getArg(0)->IgnoreParenImpCasts());
  return r && (r->getDecl()->getName() == "stderr" || r->getDecl()->getName() == "stdout") ? r : nullptr;
}

/// Functions without a definition that device code may call: OpenCL built-ins by their C names,
/// the math library's (device_math_name), exit and abort, and chanflowc's own markers.
inline bool is_device_builtin(const clang::FunctionDecl* callee) {
  static const std::set<std::string> builtins = {
      "abs", "labs", "llabs", "printf", "__assert_fail", "__chanflow_sync", "__chanflow_group_item", "__chanflow_group_items",
      "__chanflow_caps_hold", "__chanflow_loop_inline", "__chanflow_loop_grain"};
  return builtins.count(callee->getNameAsString()) != 0 || !device_math_name(callee).empty() ||
         process_end(callee) != ProcessEnd::None;
}

/// Whether the call takes memory from the device heap or gives it back.
inline bool allocates(MemoryCall m) {
  return m == MemoryCall::Malloc || m == MemoryCall::Calloc || m == MemoryCall::Realloc || m == MemoryCall::Free ||
         m == MemoryCall::Alloca;
}

/// Whether `loc` is the program's own code: the file chanflowc compiles or a header of its own
/// (#include "..."), not a system header (<stdio.h>, <cilk/cilk.h>). The functions, types and
/// constants device code uses come from the program's own code.
inline bool is_program_code(const clang::SourceManager& sm, clang::SourceLocation loc) {
  const clang::SourceLocation at = sm.getExpansionLoc(loc);
  return at.isValid() && !sm.isInSystemHeader(at);
}

}  // namespace chanflow::compiler
