// The emitters: OpenCL C kernel nodes (emit_device.cpp), the shared types header (emit_types.cpp),
// and the host C and graph C++ (emit_host.cpp), all from one CilkProgram.
#pragma once

#include "chanflow/compiler.hpp"
#include "analysis/cilk_model.hpp"

#include <clang/AST/ASTContext.h>

#include <string>

namespace clang {
class Rewriter;
}

namespace chanflow::compiler {

/// The frame-layout phase, after the analysis and before any emitter: each Cilk function's
/// FrameLayout (its resume points and what its syncs save), found by one pass of the device
/// printer over its body (the pass that also reports pointers into locals used after a sync).
void lay_out_frames(clang::ASTContext& ctx, CilkProgram& program);

/// The emitters, in any order: they read the program and its frame layouts.
Translation emit(clang::ASTContext& ctx, const CilkProgram& program);

/// How device code spells a type: every pointer inside it to global memory (`global_pointers`) or
/// as written (OpenCL C's default, private); typedefs from system headers desugared.
std::string device_type(clang::ASTContext& ctx, clang::QualType type, bool global_pointers,
                        const std::string& declarator = "");
clang::QualType device_qual_type(clang::ASTContext& ctx, clang::QualType type, bool global_pointers);
/// A scalar type as device code spells it: `long long` and `unsigned long long` as channel_layout.h's
/// chanflow_llong and chanflow_ullong (64 bits on both sides; OpenCL C's `long long` is 128), any
/// other type as it is.
clang::QualType device_scalar_type(clang::ASTContext& ctx, clang::QualType type);

std::string emit_types_header(clang::ASTContext& ctx, const CilkProgram& program);
/// The header's two parts: the user's types device code needs, and each Cilk function's task,
/// locals and frame structs (the host C gets only these, after the user's own types).
std::string emit_user_types(clang::ASTContext& ctx, const CilkProgram& program);
std::string emit_frame_types(clang::ASTContext& ctx, const CilkProgram& program);
/// One Cilk function's: the host C puts them before its definition, after the types it names.
std::string emit_frame_types(clang::ASTContext& ctx, const CilkFunction& f);
std::string emit_device_code(clang::ASTContext& ctx, const CilkProgram& program);
/// The kernel nodes F__run runs behind (kernel_nodes.cpp); `box_in_wrapper`: the task node takes
/// the task's scratch block before the body.
std::string kernel_node_code(const CilkFunction& f, bool box_in_wrapper);
std::string emit_host_c(clang::ASTContext& ctx, const CilkProgram& program);
/// Every host variable whose address host code takes, and every global device code uses, moves to
/// an SVM cell that host code names instead (host_svm.cpp): rewrites for emit_host_c. Returns the
/// definition of `<name>__globals()`, the shared globals' addresses (empty where there are none).
std::string place_host_variables_in_svm(clang::ASTContext& ctx, const CilkProgram& program, clang::Rewriter& rewriter);
std::string emit_graph_cpp(const CilkProgram& program, const std::string& types_h, const std::string& device_cl);
std::string emit_dot(const CilkProgram& program);

/// Per-port spawn bound: the most children of `callee` one segment of `caller` may spawn.
unsigned spawn_bound(const CilkProgram& program, const CilkFunction& caller, const CilkFunction& callee);

/// A user identifier as device code spells it: names OpenCL C reserves (address spaces, its scalar
/// and vector types, `kernel`, ...) get a trailing underscore.
std::string device_name(const std::string& name);

/// Formats generated C, C++ or OpenCL C (clang-format's LLVM style, 110 columns).
std::string format_code(const std::string& code, const std::string& file_name);

}  // namespace chanflow::compiler
