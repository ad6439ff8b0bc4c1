// cilk_for, rewritten in the source before the analysis sees it (frontend.cpp runs Clang again on
// the result): each loop becomes a call of a Cilk function of its own that splits the iteration
// range in eight, spawning each part (one dispatch takes a level of them): down to one iteration
// a task where the body spawns, else down to a grain the device asks for, each grain a leaf (a
// work-group task on a GPU; on a CPU device a small loop runs where it is); a perfectly nested pair
// is one range (compiler/README.md, "cilk_for"). What the body names from the
// function around it is passed in: by value where it only reads a scalar, by address where it
// writes it or takes its address, arrays as pointers to their elements. A loop the device cannot
// run (its body calls a function with no definition: a library's) stays a serial loop where it is,
// with a warning.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/Basic/SourceLocation.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace chanflow::compiler {

/// The main file rewritten with every cilk_for at `loops` (the expansion locations of their
/// keyword) that is not inside another one lowered (a nested loop is rewritten by the next pass,
/// in the function made for the outer one); nullopt after reporting a loop it cannot lower (not
/// in canonical form: `for (T i = a; i < b; i++)`, with <, <=, >, >= or != and ++, --, += or -=;
/// or a body that leaves the loop with break, return or goto). Line numbers stay those of the
/// original file (`path`, as #line names it in the functions made). `host_drivers` says which of
/// the functions that look like Cilk functions stay host code (analysis.hpp): their loops are
/// written as main's.
using HostDrivers = std::function<std::set<const clang::FunctionDecl*>(std::set<const clang::FunctionDecl*>)>;
std::optional<std::string> rewrite_cilk_fors(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& loops,
                                             const std::vector<clang::SourceLocation>& spawns,
                                             const std::string& path, const HostDrivers& host_drivers);

}  // namespace chanflow::compiler
