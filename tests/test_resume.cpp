// Resuming a yielded task: a restart continues its flush with the spawns it kept and never runs
// its body again (scheduler/cl/yield.cl), under every dispatch mode and policy.
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace chanflow;
using chanflow::test::dispatch_modes;
using chanflow::test::runtime;

namespace {

struct CountTask {
  chanflow_task task;
  std::uint32_t id, n;
};
struct CountCont {
  chanflow_frame frame;
  std::uint64_t left, right;
};
struct CountArgs {
  std::uint32_t* runs;
};

// What count_pre_sync's tree must leave: every call's id counted once.
void count_calls(std::uint32_t id, std::uint32_t n, std::vector<std::uint32_t>& runs) {
  ++runs[id];
  if (n < 2) return;
  count_calls(2 * id + 1, n - 1, runs);
  count_calls(2 * id + 2, n - 2, runs);
}

struct CountRun {
  std::uint64_t calls = 0;
  std::vector<std::uint32_t> runs;  // per call id: how often its body ran
  RunStats stats;
};

// The counting tree of graph_test_kernels.cl for n, at `capacity` CEs per level.
CountRun count_tree(std::uint32_t n, SchedulingPolicy& policy, std::uint32_t capacity, std::uint32_t wg, Sweeps mode,
                    bool room_check = true) {
  Graph g(runtime(), {.wg_size = wg, .device_sweeps = mode, .sweep_room_check = room_check});
  g.add_source(std::string(tests_cl::graph_test_kernels_cl()));
  auto& tasks = g.channel_stack<CountTask>("count", capacity);
  auto& conts = g.channel_stack<CountCont>("count_cont", capacity, StackKind::Continuations);
  auto& spawn = g.kernel<CountTask>("count_spawn", "count_spawn");
  auto& sync = g.kernel<CountCont>("count_sync", "count_sync");
  make_edge(tasks, spawn);
  make_edge(spawn, conts, Continuation{});
  make_edge(spawn, tasks, Children{.max_per_item = 2});
  make_edge(conts, sync);
  const std::size_t ids = std::size_t{2} << n;
  SvmBuffer runs(runtime(), ids * sizeof(std::uint32_t));
  SvmBuffer result(runtime(), sizeof(std::uint64_t));
  runtime().svm_fill_zero(runs.get(), runs.size());
  runtime().svm_fill_zero(result.get(), result.size());
  spawn.set_args(CountArgs{static_cast<std::uint32_t*>(runs.get())}).uses(runs).uses(result);
  sync.uses(result);
  tasks.push(0, CountTask{{reinterpret_cast<std::uint64_t>(result.get()), 0, 0, 0}, 0, n});
  CountRun r;
  r.stats = g.run(policy);
  runtime().svm_read(&r.calls, result.get(), sizeof r.calls);
  r.runs.resize(ids);
  runtime().svm_read(r.runs.data(), runs.get(), runs.size());
  return r;
}

}  // namespace

TEST_SUITE("yield") {

TEST_CASE("A task that yields resumes at its flush: no body runs twice, under every dispatch and policy" *
          doctest::timeout(600)) {
  Greedy greedy;
  Levelized levelized;
  const std::uint32_t n = 16;
  std::vector<std::uint32_t> expected(std::size_t{2} << n, 0);
  count_calls(0, n, expected);
  const auto calls = static_cast<std::uint64_t>(std::count(expected.begin(), expected.end(), 1u));
  std::uint64_t yields = 0, partial = 0;
  auto check = [&](const CountRun& r) {
    CHECK(r.calls == calls);
    CHECK(r.runs == expected);  // each body ran exactly once
    CHECK(r.stats.restarts == r.stats.yields);
    std::uint64_t per_port = 0;
    for (const auto& [port, count] : r.stats.restarts_per_port) per_port += count;
    CHECK(per_port == r.stats.restarts);
    yields += r.stats.yields;
    partial += r.stats.partial_yields;
  };
  for (const Sweeps mode : dispatch_modes()) {
    for (std::uint32_t wg : {16u, 64u}) {
      for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&greedy), static_cast<SchedulingPolicy*>(&levelized)}) {
        CAPTURE(std::string(to_string(mode)));
        CAPTURE(wg);
        CAPTURE(policy->name());
        check(count_tree(n, *policy, 2 * wg, wg, mode));
        // Claimed sweeps that claim without prepaying yield too, some after reserving their
        // continuation: a level's continuations may fill with the frames of its own resumed tasks,
        // which need no room there (the run must not stop waiting for it).
        if (mode == Sweeps::Claimed)
          for (std::uint32_t capacity : {3 * wg, 4 * wg}) check(count_tree(n, *policy, capacity, wg, mode, /*room_check=*/false));
      }
    }
  }
  CHECK(yields > 0);
  CHECK(partial > 0);  // some yielded after reserving their continuation, and resumed past it
}

}  // TEST_SUITE
