// The kernel nodes each Cilk function's resumable body F__run runs behind (scheduler/cl/node_macros.cl):
// F__spawn, a task from the top (a yielding node, or a work-group node for a cilk_for's leaf on a
// GPU), and F__sync, a frame from the sync point it was saved at.
#include "analysis/cilk_model.hpp"
#include "emit/emit.hpp"

#include <fmt/format.h>

namespace chanflow::compiler {
namespace {

// Whether a cilk_for's leaf gets its loop's block by address (held by every leaf and part of the
// loop: it lets go of it once done), not in its task (a loop's one leaf: cilk_for.cpp).
bool holds_block(const CilkFunction& f) {
  for (const clang::ParmVarDecl* p : f.decl->parameters())
    if (p->getName() == "cf_caps") return p->getType()->isPointerType();
  return false;
}

}  // namespace

std::string kernel_node_code(const CilkFunction& f, bool box_in_wrapper) {
  const std::string& n = f.name;
  if (f.group) {  // a cilk_for's leaf: every work-item of a group runs its share of the iterations
    // and, once all have, lets go of the loop's block (cilk_for.cpp: the last holder frees it);
    // a loop's one leaf holds the block in its task, and has nothing to let go of.
    const bool holds = holds_block(f);
    return fmt::format("{1}#ifdef CHANFLOW_CPU_DEVICE\n"
                       "void {0}__task_body(__global {0}__task* t, chanflow_ctx* ctx) {{ {0}__run(t, ctx);{2} }}\n"
                       "CHANFLOW_YIELDING_KERNEL_NODE({0}__spawn, {0}__task, {0}__task_body)\n#else\n"
                       "void {0}__group_body(__global {0}__task* t, __local uint* l, chanflow_ctx* ctx) {{ (void)l; {0}__run(t, ctx); }}\n"
                       "CHANFLOW_GROUP_KERNEL_NODE_THEN({0}__spawn, {0}__task, uint, {0}__group_body, {3})\n#endif\n",
                       n,
                       holds ? fmt::format("void {0}__release(__global {0}__task* t, chanflow_ctx* ctx) {{ "
                                           "chanflow_caps_release(ctx->env, t->cf_caps); }}\n", n)
                             : "",
                       holds ? fmt::format(" {}__release(t, ctx);", n) : "",
                       holds ? n + "__release" : "CHANFLOW_NOTHING_AFTER");
  }
  if (f.spawns.empty()) {
    return fmt::format("void {0}__task_body(__global {0}__task* t, chanflow_ctx* ctx) {{ {0}__run(t, ctx); }}\n"
                       "CHANFLOW_YIELDING_KERNEL_NODE({0}__spawn, {0}__task, {0}__task_body)\n",
                       n);
  }
  // Its serial levels grouped by work where a parameter measures it (analysis/work_measure.cpp).
  const std::string task_node =
      f.work ? fmt::format("/* its measure of work */\nlong {0}__work(__global {0}__task* t) {{ return (long)t->{1}; }}\n"
                           "CHANFLOW_YIELDING_KERNEL_NODE_BY_WORK({0}__spawn, {0}__task, {0}__task_body, {0}__work)\n",
                           n, f.field.at(f.work))
             : fmt::format("CHANFLOW_YIELDING_KERNEL_NODE({0}__spawn, {0}__task, {0}__task_body)\n", n);
  if (!f.waits()) {  // every sync forwards: no frame is ever resumed
    return fmt::format("void {0}__task_body(__global {0}__task* t, chanflow_ctx* ctx) {{ {0}__run(t, 0, ctx); }}\n{1}",
                       n, task_node);
  }
  return fmt::format(
      "void {0}__task_body(__global {0}__task* t, chanflow_ctx* ctx) {{ {1}{0}__run(t, 0, ctx); }}\n{2}"
      "void {0}__frame_body(__global {0}__frame* c, chanflow_ctx* ctx) {{ {0}__run(0, c, ctx); }}\n"
      "CHANFLOW_CONTINUATION_NODE({0}__sync, {0}__frame, {0}__frame_body)\n",
      n, box_in_wrapper ? "if (!chanflow_task_scratch(ctx)) return; /* the run fails: the pool was empty */ " : "",
      task_node);
}

}  // namespace chanflow::compiler
