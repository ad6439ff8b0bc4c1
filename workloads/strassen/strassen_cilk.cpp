// Builds and runs the Strassen flow graph of strassen.cl.
#include "strassen.hpp"

#include "chanflow_workloads_sources.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow::workloads {
namespace {

std::size_t element_bytes(Precision p) { return p == Precision::F32 ? sizeof(float) : sizeof(double); }

// Frames at depth d belong to the 7^d tasks of order n >> d; those above the base case keep
// 17 temporaries of order (n >> d) / 2 (strassen.c's `t`).
FrameScratch frame_scratch(std::uint64_t n, Precision p, std::uint32_t base) {
  return {.bytes = [=](std::uint32_t d) -> std::size_t {
            const std::uint64_t order = n >> d;
            return order <= base ? 0 : 17 * (order / 2) * (order / 2) * element_bytes(p);
          },
          .max_frames = [](std::uint32_t d) {
            std::uint64_t f = 1;
            for (std::uint32_t i = 0; i < d && f < (1u << 30); ++i) f *= 7;
            return static_cast<std::uint32_t>(std::min<std::uint64_t>(f, 1u << 30));
          }};
}

}  // namespace

std::uint64_t strassen_scratch_bytes(std::uint64_t n, Precision precision, std::uint32_t capacity, std::uint32_t base) {
  const FrameScratch scratch = frame_scratch(n, precision, base);
  std::uint64_t total = 0;
  for (std::uint32_t d = 0; (n >> d) > base; ++d) total += scratch.pool_bytes(d, capacity);
  return total;
}

StrassenCilk::StrassenCilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                           std::uint64_t n, Precision precision, const CilkOptions& options, StrassenCombine combine,
                           std::uint32_t base)
    : graph_(runtime, options.graph_options()) {
  Graph& g = graph_;
  const bool f32 = precision == Precision::F32;
  g.add_source(fmt::format("#define REAL {}\n#define STRASSEN_ATOMIC_ADD {}\n#define STRASSEN_BASE {}\n"
                           "#define STRASSEN_JOIN {}\n",
                           f32 ? "float" : "double", f32 ? "chanflow_atomic_add_float" : "chanflow_atomic_add_double",
                           base, combine == StrassenCombine::Join ? 1 : 0));
  g.add_source(std::string(workloads_cl::strassen_types_h()));
  g.add_source(std::string(workloads_cl::strassen_cl()));
  const std::uint32_t cap = options.capacity_per_level;
  auto& tasks = g.channel_stack<StrassenTask>("strassen", cap);
  auto& conts = g.channel_stack<StrassenCont>("strassen_cont", cap, StackKind::Continuations);
  conts.set_frame_scratch(frame_scratch(n, precision, base));
  auto& spawn = g.kernel<StrassenTask>("strassen_spawn", "strassen_spawn");
  auto& post_sync = g.kernel<StrassenCont>("strassen_combine", "strassen_combine");
  make_edge(tasks, spawn);
  make_edge(spawn, conts, Continuation{});
  make_edge(spawn, tasks, Children{.max_per_item = 7});
  make_edge(conts, post_sync);
  const StrassenArgs args{a.get(), b.get(), c.get(), n};
  spawn.set_args(args).uses(a).uses(b).uses(c);
  post_sync.set_args(args).uses(c);
  tasks_ = &tasks;
}

RunStats StrassenCilk::run(SchedulingPolicy& policy, const RunOptions& run_options) {
  tasks_->push(0, StrassenTask{{0, 0, 0, 0}, STRASSEN_ROOT, 0});
  return graph_.run(policy, run_options);
}

RunStats strassen_cilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                       std::uint64_t n, Precision precision, SchedulingPolicy& policy, const CilkOptions& options,
                       const RunOptions& run_options, StrassenCombine combine, std::uint32_t base) {
  return StrassenCilk(runtime, a, b, c, n, precision, options, combine, base).run(policy, run_options);
}

}  // namespace chanflow::workloads
