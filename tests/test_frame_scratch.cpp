// Frame scratch and atomic floating-point addition (scheduler/cl/scratch.cl): a tree whose
// children report into their parent frame's block, under both policies and every dispatch mode,
// with generous and tiny capacities; an empty pool fails the run by name; blocks come back.
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace chanflow;
using chanflow::test::dispatch_modes;
using chanflow::test::runtime;

namespace {

struct TreeTask {
  chanflow_task task;
  std::uint32_t depth, side;
};
struct TreeFrame {
  chanflow_frame frame;
  std::uint32_t side, pad;
};

struct Tree {
  Graph g;
  ChannelStackNode& tasks;
  ChannelStackNode& frames;
  SvmBuffer result;
  Tree(std::uint32_t capacity, Sweeps mode, std::uint32_t wg = 16)
      : g(runtime(), {.wg_size = wg, .device_sweeps = mode}),
        tasks(g.channel_stack<TreeTask>("tree", capacity)),
        frames(g.channel_stack<TreeFrame>("tree_frames", capacity, StackKind::Continuations)),
        result(runtime(), sizeof(std::uint64_t)) {
    g.add_source(std::string(tests_cl::scratch_test_kernels_cl()));
    auto& spawn = g.kernel<TreeTask>("tree_spawn", "tree_spawn");
    auto& sync = g.kernel<TreeFrame>("tree_sync", "tree_sync");
    make_edge(tasks, spawn);
    make_edge(spawn, frames, Continuation{});
    make_edge(spawn, tasks, Children{.max_per_item = 2});
    make_edge(frames, sync);
    const std::uint64_t* r = static_cast<std::uint64_t*>(result.get());
    spawn.set_args(r).uses(result);
    sync.set_args(r).uses(result);
  }
  // side 2: the root takes a block it never gives back (TREE_LEAKS).
  std::uint64_t run(std::uint32_t depth, SchedulingPolicy& policy, std::uint32_t side = 0) {
    runtime().svm_fill_zero(result.get(), result.size());
    tasks.push(0, TreeTask{{}, depth, side});
    g.run(policy);
    std::uint64_t r = 0;
    runtime().svm_read(&r, result.get(), sizeof r);
    return r;
  }
};

struct PairTask {
  chanflow_task task;
  std::uint32_t depth, pad;
  std::uint64_t out;
};
struct PairFrame {
  chanflow_frame frame;
  std::uint64_t out;
};

// The tree of scratch_test_kernels.cl whose tasks keep their children's reports in a block of
// their own (chanflow_task_scratch); left children in stack A, right ones in stack B.
struct PairTree {
  Graph g;
  ChannelStackNode& a;
  ChannelStackNode& b;
  ChannelStackNode& frames;
  SvmBuffer result;
  PairTree(std::uint32_t capacity, Sweeps mode, bool scratch = true)
      : g(runtime(), {.wg_size = 16, .device_sweeps = mode}),
        a(g.channel_stack<PairTask>("pair_tasks_a", capacity)),
        b(g.channel_stack<PairTask>("pair_tasks_b", capacity)),
        // Room for every frame: tasks yield on their children's ports, after reserving frames.
        frames(g.channel_stack<PairFrame>("pair_frames", 4096, StackKind::Continuations)),
        result(runtime(), sizeof(std::uint64_t)) {
    g.add_source(std::string(tests_cl::scratch_test_kernels_cl()));
    if (scratch)
      frames.set_frame_scratch({.bytes = [](std::uint32_t) { return 2 * sizeof(std::uint64_t); }, .taken_by_tasks = true});
    for (const char* name : {"pair_a", "pair_b"}) {
      auto& node = g.kernel<PairTask>(name, name);
      make_edge(name == std::string("pair_a") ? a : b, node);
      make_edge(node, frames, Continuation{});
      make_edge(node, a, Children{.max_per_item = 1});
      make_edge(node, b, Children{.max_per_item = 1});
    }
    auto& sync = g.kernel<PairFrame>("pair_sync", "pair_sync");
    make_edge(frames, sync);
    sync.uses(result);
  }
  RunStats stats;
  std::uint64_t run(std::uint32_t depth, SchedulingPolicy& policy) {
    runtime().svm_fill_zero(result.get(), result.size());
    a.push(0, PairTask{{}, depth, 0, reinterpret_cast<std::uint64_t>(result.get())});
    stats = g.run(policy);
    std::uint64_t r = 0;
    runtime().svm_read(&r, result.get(), sizeof r);
    return r;
  }
};

// 2^15 tasks add i % 8 + 1 into one float and i + 1 into one double, through
// chanflow_atomic_add_float/_double: the sums must be exact.
void every_atomic_add_counts() {
  constexpr std::uint32_t kItems = 1 << 15;
  Graph g(runtime(), {.wg_size = 64});
  g.add_source(std::string(tests_cl::scratch_test_kernels_cl()));
  auto& items = g.channel<std::uint32_t>("items", kItems);
  auto& add = g.kernel<std::uint32_t>("fp_add", "fp_add");
  make_edge(items, add);
  SvmBuffer f(runtime(), sizeof(float)), d(runtime(), sizeof(double));
  runtime().svm_fill_zero(f.get(), f.size());
  runtime().svm_fill_zero(d.get(), d.size());
  struct {
    void* f;
    void* d;
  } args{f.get(), d.get()};
  add.set_args(args).uses(f).uses(d);
  for (std::uint32_t i = 0; i < kItems; ++i) items.push(i);
  Levelized levelized;
  g.run(levelized);
  float fsum = 0;
  double dsum = 0;
  runtime().svm_read(&fsum, f.get(), sizeof fsum);
  runtime().svm_read(&dsum, d.get(), sizeof dsum);
  CHECK(fsum == 4.5f * kItems);  // every partial sum is an integer below 2^24: exact in float
  if (runtime().caps().fp64) CHECK(dsum == static_cast<double>(kItems) * (kItems + 1) / 2);
}

}  // namespace

TEST_SUITE("ports") {
  TEST_CASE("task scratch: a task's own block outlives its body, also when it yields between children") {
    Levelized levelized;
    Greedy greedy;
    std::uint64_t partial_yields = 0;
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)})
      for (const Sweeps mode : dispatch_modes())
        for (const std::uint32_t capacity : {4096u, 16u}) {  // 16: one work-group's request per port
          const std::string dispatch = to_string(mode);
          CAPTURE(dispatch);
          CAPTURE(capacity);
          PairTree t(capacity, mode);
          CHECK(t.run(14, *policy) == 610);  // fib(15) leaves
          partial_yields += t.stats.partial_yields;
          CHECK(t.run(8, *policy) == 34);  // every block came back (checked at quiescence)
        }
    // Some tasks yielded after their frame was reserved, between their children: they resumed at
    // their flush, so the poison their bodies write first never lands on a child's count.
    CHECK(partial_yields > 0);
  }

  TEST_CASE("task scratch needs a continuation stack with frame scratch") {
    PairTree t(64, Sweeps::Off, /*scratch=*/false);
    Levelized levelized;
    CHECK_THROWS_WITH_AS(t.run(3, levelized), doctest::Contains("has no frame scratch"), RunError);
  }

  TEST_CASE("frame scratch: children report into their parent's block, every policy and dispatch mode") {
    Levelized levelized;
    Greedy greedy;
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)})
      for (const Sweeps mode : dispatch_modes())
        for (const std::uint32_t capacity : {4096u, 32u}) {  // 32: one work-group's request (wg 16, 2 children)
          const std::string dispatch = to_string(mode);
          CAPTURE(dispatch);
          CAPTURE(capacity);
          Tree t(capacity, mode);
          t.frames.set_frame_scratch({.bytes = [](std::uint32_t) { return 2 * sizeof(std::uint64_t); }});
          CHECK(t.run(10, *policy) == 1024);
          // Every block came back (the run checks it at quiescence), so a second run finds them.
          CHECK(t.run(7, *policy) == 128);
          CHECK(t.frames.scratch_bytes() > 0);
        }
  }

  TEST_CASE("frame scratch: a pool smaller than the live frames fails the run by name") {
    Levelized levelized;
    Tree t(4096, Sweeps::Off);
    // Level 3 holds 8 frames at once under the levelized policy; its pool only 2.
    t.frames.set_frame_scratch({.bytes = [](std::uint32_t) { return 2 * sizeof(std::uint64_t); },
                                .max_frames = [](std::uint32_t level) { return level == 3 ? 2u : 4096u; }});
    CHECK_THROWS_WITH_AS(t.run(6, levelized), doctest::Contains("empty (all 2 blocks taken)"),
                         RunError);
  }

  TEST_CASE("frame scratch: a block never given back fails the run at its end, by stack and level") {
    Levelized levelized;
    for (const Sweeps mode : dispatch_modes()) {
      const std::string dispatch = to_string(mode);
      CAPTURE(dispatch);
      Tree t(4096, mode);
      t.frames.set_frame_scratch({.bytes = [](std::uint32_t) { return 2 * sizeof(std::uint64_t); }});
      CHECK(t.run(5, levelized) == 32);
      CHECK_THROWS_WITH_AS(t.run(5, levelized, 2), doctest::Contains("level 0 of channel stack 'tree_frames' still has 1 frame scratch block(s)"),
                           RunError);
    }
  }

  TEST_CASE("frame scratch belongs to continuation stacks, set once") {
    Tree t(64, Sweeps::Off);
    CHECK_THROWS_WITH_AS(t.tasks.set_frame_scratch({.bytes = [](std::uint32_t) { return std::size_t{8}; }}),
                         doctest::Contains("holds tasks"), GraphError);
    t.frames.set_frame_scratch({.bytes = [](std::uint32_t) { return std::size_t{8}; }});
    CHECK_THROWS_WITH_AS(t.frames.set_frame_scratch({.bytes = [](std::uint32_t) { return std::size_t{8}; }}),
                         doctest::Contains("already has frame scratch"), GraphError);
  }

  TEST_CASE("atomic floating-point addition loses no update") { every_atomic_add_counts(); }
}

TEST_SUITE("gpu_only") {

TEST_CASE("GPU only: floating-point atomic addition in the device's own instruction (PTX red.add, cl_ext_float_atomics) loses no update") {
  const DeviceCaps& caps = runtime().caps();
  CAPTURE(caps.name);
  REQUIRE((caps.fp32_atomic_add || device_order(caps) == DeviceOrder::Ptx));
  every_atomic_add_counts();
}

}  // TEST_SUITE
