// Builds and runs the Strassen flow graph of strassen.cl.
#include "strassen.hpp"

#include "chanflow_workloads_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

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

// The base case's work-group grid on a GPU (strassen.cl's strassen_leaf_tiles): TX × TY work-items,
// TX the largest power of two up to √wg (and the base order) that divides wg, so that each keeps
// a small square of the product; k-tiles of TK in local memory.
struct LeafTiling {
  std::uint32_t tk, tx, ty;
};

LeafTiling leaf_tiling(std::uint32_t wg, std::uint32_t base) {
  wg = std::max(wg, 1u);
  std::uint32_t tx = 1;
  while (wg % (2 * tx) == 0 && 4 * tx * tx <= wg && 2 * tx <= base) tx *= 2;
  return {std::min(16u, base), tx, wg / tx};
}

constexpr std::uint32_t kCpuCapacity = 1u << 12;  // CEs per level on CPU devices

}  // namespace

// Two tasks (control and data) and a continuation per slot; order n recurses log2(n / base)
// levels. (Frame scratch comes on top: at most 7^level frames per level have it,
// FrameScratch::max_frames.) No max_wg: on a GPU the base cases and bands are work-group tasks,
// for which wider groups are better (H100, strassen 2048 joined: 33.6 ms at wg 64, 17.8 at 256).
StackFootprint strassen_footprint(std::uint64_t n) {
  std::uint32_t levels = 1;
  for (std::uint64_t order = n; order > kStrassenBase; order /= 2) ++levels;
  return {.bytes_per_slot = 2 * sizeof(StrassenTask) + sizeof(StrassenCont) + 3 * StackFootprint::kControlBytes,
          .levels = levels + 1, .cpu_capacity = kCpuCapacity};
}

std::uint64_t strassen_scratch_bytes(std::uint64_t n, Precision precision, std::uint32_t capacity, std::uint32_t base) {
  const FrameScratch scratch = frame_scratch(n, precision, base);
  std::uint64_t total = 0;
  for (std::uint32_t d = 0; (n >> d) > base; ++d) total += scratch.pool_bytes(d, capacity);
  return total;
}

StrassenCilk::StrassenCilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                           std::uint64_t n, Precision precision, const RunSettings& options, StrassenCombine combine,
                           std::uint32_t base, DataTasks data, StrassenShare share)
    : graph_(runtime, options.for_device(runtime.caps()).graph_options()) {
  if (share.depth > 0 && combine != StrassenCombine::Atomic)
    throw std::invalid_argument("strassen: a share of the products is added into C, so it needs the atomic combination");
  Graph& g = graph_;
  const RunSettings settings = options.for_device(runtime.caps());
  const bool f32 = precision == Precision::F32;
  const LeafTiling tiling = leaf_tiling(settings.wg_size, base);
  // Data in work-group tasks on a GPU; in the tasks that need it on a CPU device (strassen.cl).
  const bool data_tasks = work_group_data(data, runtime.caps());
  // Bands of rows per frame: up to 32 (strassen.cl), as many as one work-group's request fits in a
  // channel, at least 8.
  std::uint32_t bands = 8;
  while (bands < 32 && 2 * bands * std::max(1u, settings.wg_size) <= settings.capacity) bands *= 2;
  g.add_source(fmt::format("#define STRASSEN_MAX_BANDS {}u\n", bands));
  g.add_source(fmt::format("#define REAL {}\n#define STRASSEN_ATOMIC_ADD {}\n#define STRASSEN_BASE {}\n"
                           "#define STRASSEN_JOIN {}\n#define STRASSEN_TK {}\n#define STRASSEN_TX {}\n"
                           "#define STRASSEN_TY {}\n#define STRASSEN_RB {}\n#define STRASSEN_CB {}\n#define STRASSEN_DATA_TASKS {}\n",
                           f32 ? "float" : "double", f32 ? "chanflow_atomic_add_float" : "chanflow_atomic_add_double",
                           base, combine == StrassenCombine::Join ? 1 : 0, tiling.tk, tiling.tx, tiling.ty,
                           (base + tiling.ty - 1) / tiling.ty, (base + tiling.tx - 1) / tiling.tx, data_tasks ? 1 : 0));
  g.add_source(std::string(workloads_cl::strassen_types_h()));
  g.add_source(std::string(workloads_cl::strassen_serial_h()));  // strassen.c's helpers, the same text
  g.add_source(std::string(workloads_cl::strassen_cl()));
  const std::uint32_t cap = settings.capacity;
  auto& tasks = g.channel_stack<StrassenTask>("strassen", cap);
  auto& conts = g.channel_stack<StrassenCont>("strassen_cont", cap, StackKind::Continuations);
  conts.set_frame_scratch(frame_scratch(n, precision, base));
  auto& spawn = g.kernel<StrassenTask>("strassen_spawn", "strassen_spawn");
  auto& post_sync = g.kernel<StrassenCont>("strassen_combine", "strassen_combine");
  make_edge(tasks, spawn);
  make_edge(spawn, conts, Continuation{});
  make_edge(conts, post_sync);
  const StrassenArgs args{a.get(), b.get(), c.get(), n, share.depth, share.first, share.last, 0};
  spawn.set_args(args).uses(a).uses(b).uses(c);
  post_sync.set_args(args).uses(c);
  if (data_tasks) {
    // A task spawns its frame and either the work-group tasks forming its children's factors or
    // its seven base cases; the frame, after each sync, its seven products, then the work-group
    // tasks combining them (at most `bands` of rows: strassen.cl's STRASSEN_MAX_BANDS).
    auto& data = g.channel_stack<StrassenTask>("strassen_base", cap);
    auto& group = g.kernel<StrassenTask>("strassen_leaves", "strassen_leaves");
    make_edge(spawn, data, Children{.max_per_item = bands});
    make_edge(data, group);
    make_edge(post_sync, tasks, Children{.max_per_item = 7});
    make_edge(post_sync, data, Children{.max_per_item = bands});
    group.set_args(args).uses(a).uses(b).uses(c);
  } else {
    make_edge(spawn, tasks, Children{.max_per_item = 7});  // a task spawns its frame and its seven products
  }
  tasks_ = &tasks;
}

RunStats StrassenCilk::run(SchedulingPolicy& policy, const RunOptions& run_options) {
  tasks_->push(0, StrassenTask{{0, 0, 0, 0}, STRASSEN_ROOT, 0});
  return graph_.run(policy, run_options);
}

RunStats strassen_cilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                       std::uint64_t n, Precision precision, SchedulingPolicy& policy, const RunSettings& options,
                       const RunOptions& run_options, StrassenCombine combine, std::uint32_t base,
                       DataTasks data) {
  return StrassenCilk(runtime, a, b, c, n, precision, options, combine, base, data).run(policy, run_options);
}

}  // namespace chanflow::workloads
