// The analysis: which functions are Cilk functions, where they spawn and sync, what device code
// needs (helpers, types, constants), and every construct outside the supported subset, reported
// as a Clang diagnostic where it is written.
#pragma once

#include "chanflow/compiler.hpp"
#include "analysis/cilk_model.hpp"

#include <clang/AST/ASTContext.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace chanflow::compiler {

/// Builds the program model; nullopt (with diagnostics reported) if the source is outside the subset.
std::optional<CilkProgram> analyze(clang::ASTContext& ctx, const KeywordLocations& keywords,
                                   const TranslateOptions& options);

/// Of `cilk` (the functions that would be Cilk functions), those that stay host code as main does:
/// only host code reaches them and they need the host (Analyzer::keep_on_host). The cilk_for pass
/// asks, to write their loops as main's.
std::set<const clang::FunctionDecl*> host_drivers(clang::ASTContext& ctx, const KeywordLocations& keywords,
                                                  const TranslateOptions& options,
                                                  std::set<const clang::FunctionDecl*> cilk);

/// Rewrites, in the AST, each `return c ? a : b;` of a function whose branches call the function
/// itself into `if (c) return a; else return b;` (conditional_returns.cpp): before the analysis.
void split_conditional_returns(clang::ASTContext& ctx);

/// The expression with implicit casts, parentheses and cleanups looked through.
const clang::Expr* strip(const clang::Expr* e);

/// The statement around `s` (through a variable declaration, for its initializer), or null.
const clang::Stmt* parent_stmt(clang::ASTContext& ctx, const clang::Stmt* s);

/// Of `h`'s calls of itself, those whose value its return only adds to, each with the addend
/// (RecursiveHelper::sums; summed_calls.cpp says which qualify).
std::map<const clang::CallExpr*, const clang::Expr*> summed_calls(clang::ASTContext& ctx, const RecursiveHelper& h);

/// Whether `s` assigns `var` (=, op=, ++, --) or takes its address, anywhere in it (loop_bounds.cpp).
bool assigns(const clang::Stmt* s, const clang::VarDecl* var);

/// `for (i = a; i < b; i++)` (or `<=`, `++i`, `i += 1`, a declared `i`) with integer constants a
/// and b, and `i` not assigned in the body: its trip count (loop_bounds.cpp); nullopt otherwise.
std::optional<std::uint64_t> constant_trip_count(clang::ASTContext& ctx, const clang::ForStmt* loop);

/// How often spawn `s` of `f`, in loops, runs per segment where that is known to stay within
/// `limit`: every loop around it counts a variable from a constant to a constant bound by one,
/// and their trip counts times the spawn sites in the outermost stay within it (loop_bounds.cpp);
/// nullopt otherwise.
std::optional<std::uint64_t> loop_trips(clang::ASTContext& ctx, const SpawnSite& s, const CilkFunction& f, unsigned limit);

/// The pairs of callees one run of `f`'s body may spawn both of (spawn_groups.cpp): each with
/// itself, and those whose sites reach each other without a sync between.
std::set<std::pair<const clang::FunctionDecl*, const clang::FunctionDecl*>> spawned_together(clang::ASTContext& ctx,
                                                                                              const CilkFunction& f);

/// The variables whose address the pointer value `e` may be (&x, &x.f, &a[i], an array decaying,
/// and arithmetic and conditionals on those), added to `out`: locals only, or globals too.
void addressed_variables(const clang::Expr* e, std::set<const clang::VarDecl*>& out, bool globals);

}  // namespace chanflow::compiler
