// The analysis as one pass over the AST (analysis.hpp is its interface): the Cilk model —
// which functions are Cilk functions, their spawn sites, syncs, locals and result slots
// (analysis.cpp) — and what device code needs and may not do — the device-subset checks, the
// helpers, the heap's users, types and constants (device_code.cpp).
#pragma once

#include "analysis/analysis.hpp"
#include "analysis/body_facts.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/Basic/SourceManager.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace chanflow::compiler {

class Analyzer {
 public:
  Analyzer(clang::ASTContext& ctx, const KeywordLocations& keywords, const TranslateOptions& options)
      : Ctx(ctx), SM(ctx.getSourceManager()), Diags(ctx.getDiagnostics()), Keywords(keywords), Options(options) {}

  std::optional<CilkProgram> run();
  /// Of `cilk`, the functions keep_on_host leaves on the host.
  std::set<const clang::FunctionDecl*> host_drivers(std::set<const clang::FunctionDecl*> cilk);

 private:
  // ---- diagnostics
  void error(clang::SourceLocation loc, llvm::StringRef message);
  void note(clang::SourceLocation loc, llvm::StringRef message);

  // ---- functions
  void collect_functions();
  const clang::FunctionDecl* definition(const clang::FunctionDecl* f) const;
  bool is_main(const clang::FunctionDecl* f) const { return f->isMain(); }
  bool has_cilk_qualifier(const clang::FunctionDecl* f) const;
  void find_cilk_functions();
  bool calls_cilk(const clang::FunctionDecl* f, const std::set<const clang::FunctionDecl*>& cilk);
  /// Removes the host drivers from `cilk` (host_drivers.cpp), and returns them.
  std::set<const clang::FunctionDecl*> keep_on_host(std::set<const clang::FunctionDecl*>& cilk);
  bool needs_host(const clang::FunctionDecl* f);
  void add_cilk_function(const clang::FunctionDecl* key);

  // ---- one Cilk function: its spawns (and plain calls of Cilk functions), syncs, locals
  void describe(CilkFunction& f);
  // Whether some spawn can run after a sync point: written after it, or in a loop around both, or
  // in a loop that syncs a batch at a time.
  bool spawns_after_sync(const CilkFunction& f);
  bool in_common_loop(const clang::Stmt* a, const clang::Stmt* b, const clang::FunctionDecl* f);
  void check_return_type(const clang::FunctionDecl* d);
  void check_frame_type(clang::QualType t, clang::SourceLocation loc, llvm::StringRef what);
  // Result slots. Static where every result site outside loops gets a slot of its own and every
  // one in a loop stores into an element of a local array no other site stores into (`a[i] =
  // cilk_spawn`: a slot per element); otherwise slots are filled in spawn order, up to
  // --max-loop-spawns for the loops.
  void assign_slots(CilkFunction& f);
  // For `a[i] = cilk_spawn f()` with `a` a local one-dimensional array that no other site
  // stores into: its length; otherwise 0.
  static unsigned array_elements(const SpawnSite& s, const CilkFunction& f);
  bool inside_loop(const clang::Stmt* s, const clang::FunctionDecl* f);
  const clang::Stmt* parent_stmt(const clang::Stmt* s) { return compiler::parent_stmt(Ctx, s); }
  // Climbs from an expression through casts and parentheses to the node that uses its value.
  clang::DynTypedNode user_of(const clang::Expr* e, const clang::Expr** top);
  // Whether `s` stands as a statement of its own (not a condition, not part of an expression).
  bool is_statement(const clang::Stmt* s);
  void check_statement_position(const clang::CallExpr* sync, llvm::StringRef what);
  // The statement forms a spawn (or a plain call of a Cilk function) may take.
  bool classify(SpawnSite& site, CilkFunction& f);
  bool classify_destination(SpawnSite& site, const clang::Expr* lhs, CilkFunction& f);

  // ---- device code: what Cilk functions and helpers may not do
  void check_device_code(const clang::FunctionDecl* d, const BodyFacts& b);
  bool writes(const clang::DeclRefExpr* ref);
  const char* unshareable(const clang::VarDecl* v) const;
  void record_assertion(const clang::FunctionDecl* d, const clang::CallExpr* c);
  const clang::Stmt* find_cilk5_abort(const clang::Stmt* s);

  // ---- helpers: functions device code calls that are not Cilk functions, callees first
  void collect_helpers();

  // ---- helpers that call themselves (recursive_helpers.cpp): their calls of themselves, the
  // statements those sit in, and what such a helper may not do
  void describe_recursive_helper(const clang::FunctionDecl* def);
  /// `serial`: the Cilk function whose serial form this is, whose boxed locals and alloca blocks
  /// its activations take from a LIFO of blocks on the heap (recursive_helper.cpp); null: a helper, which may have none.
  RecursiveHelper recursive_form(const clang::FunctionDecl* def, const CilkFunction* serial = nullptr);
  /// The serial forms --serial-cutoff asks for: of each Cilk function that spawns and calls only
  /// itself and functions with serial forms, and could be a recursive helper but for its boxed
  /// locals and alloca blocks (no other address of a local, no goto, no call of itself the explicit
  /// stack cannot stop at), callees first.
  /// Others keep spawning at every depth.
  void describe_serial_forms();
  /// `f`'s serial form as recursive_form makes it, errors refusing it (Refused, ProbeWhy).
  RecursiveHelper probe_serial_form(const CilkFunction& f);
  void apply_serial_below();  ///< `#pragma chanflow serial_below` to the functions they precede
  const clang::Stmt* carrier_of(const clang::CallExpr* call, const clang::FunctionDecl* def);
  bool calls_first_in(const clang::DeclStmt* d, const clang::FunctionDecl* def) const;
  void check_recursive_addresses(const clang::FunctionDecl* def, const clang::Stmt* s, const CilkFunction* serial);

  // ---- the node's environment: which functions reach the device heap or a recursive helper
  void find_env_users();

  // ---- which Cilk functions' tasks may run on another device (movable_tasks.cpp)
  void find_movable_tasks();
  void find_work_measures();  ///< CilkFunction::work: what groups its serial levels (work_measure.cpp)

  // ---- types and constants device code needs, in dependency order
  void collect_types_and_constants();
  /// Types device code may not use (`long double`, `__int128`, ...), at the first use of each.
  void check_device_scalars(const clang::FunctionDecl* f);
  void visit_body_types(const clang::Stmt* s, const std::function<void(clang::QualType)>& visit_type);

  clang::ASTContext& Ctx;
  clang::SourceManager& SM;
  clang::DiagnosticsEngine& Diags;
  const KeywordLocations& Keywords;
  const TranslateOptions& Options;
  CilkProgram Program;
  std::map<const clang::FunctionDecl*, const clang::FunctionDecl*> Definitions;
  std::map<const clang::FunctionDecl*, BodyFacts> Facts;
  // While probing whether a form can be made (describe_serial_forms), errors refuse it instead
  // of being reported.
  bool Probing = false, Refused = false;
  std::string ProbeWhy;  // the first error that refused a probed form, and where
  clang::SourceLocation ProbeAt;
  std::vector<const clang::FunctionDecl*> Order;
  std::vector<const clang::FunctionDecl*> CilkOrder;
};

}  // namespace chanflow::compiler
