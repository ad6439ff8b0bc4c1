// Resuming a yielded task: a restart continues its flush with the spawns it kept and never runs
// its body again (scheduler/cl/yield.cl), under every dispatch mode and policy. And a yielding
// node's serial batches grouped by work (node_macros.cl): its CEs handed to other work-items.
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
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

struct WorkTask {
  chanflow_task task;
  std::uint32_t id;
  std::int32_t work;
};
struct WorkArgs {
  std::uint32_t* where;
};

// Where each of `works.size()` tasks of work_task (graph_test_kernels.cl) ran, pushed at level 0 in
// id order and run in one host-sized dispatch of work-groups of `wg`, a GPU's shape
// (CHANFLOW_SHAPE: a CPU device's takes no grouping) from serial depth `serial_depth`: per work-group, its
// tasks' works in its work-items' order.
std::map<std::uint32_t, std::vector<std::int32_t>> works_by_group(const std::vector<std::int32_t>& works, std::uint32_t wg,
                                                                  std::uint32_t serial_depth) {
  struct GpuShape {  // read as the graph's program is built, at its first run; gone however the case ends
    GpuShape() { ::setenv("CHANFLOW_SHAPE", "gpu", 1); }
    ~GpuShape() { ::unsetenv("CHANFLOW_SHAPE"); }
  } shape;
  Graph g(runtime(), {.wg_size = wg, .device_sweeps = Sweeps::Off, .scheduler = Scheduler::Rounds});
  g.add_source(std::string(tests_cl::graph_test_kernels_cl()));
  auto& tasks = g.channel_stack<WorkTask>("work", 4096);
  auto& node = g.kernel<WorkTask>("work_task", "work_task");
  make_edge(tasks, node);
  SvmBuffer where(runtime(), works.size() * sizeof(std::uint32_t));
  runtime().svm_fill_zero(where.get(), where.size());
  node.set_args(WorkArgs{static_cast<std::uint32_t*>(where.get())}).uses(where);
  for (std::uint32_t id = 0; id < works.size(); ++id) tasks.push(0, WorkTask{{0, 0, 0, 0}, id, works[id]});
  Greedy greedy;
  const RunStats stats = g.run(greedy, {.record_dispatches = true, .serial_depth = serial_depth});
  REQUIRE(stats.dispatch_log.size() == 1);  // each work-group ran one batch
  std::vector<std::uint32_t> at(works.size());
  runtime().svm_read(at.data(), where.get(), where.size());
  std::map<std::uint32_t, std::map<std::uint32_t, std::int32_t>> lanes;  // group -> work-item -> work
  for (std::uint32_t id = 0; id < works.size(); ++id) {
    REQUIRE(at[id] != 0);  // it ran
    const std::uint32_t item = at[id] - 1;
    CHECK(lanes[item / wg].count(item % wg) == 0);  // no work-item ran two
    lanes[item / wg][item % wg] = works[id];
  }
  std::map<std::uint32_t, std::vector<std::int32_t>> out;
  for (const auto& [group, items] : lanes) {
    std::uint32_t next = 0;
    for (const auto& [item, work] : items) {
      CHECK(item == next++);  // the group's CEs on its first work-items
      out[group].push_back(work);
    }
  }
  return out;
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

TEST_CASE("A serial batch of a node grouped by work runs its largest works on its first work-items; above the "
          "serial depth, in the order claimed") {
  std::mt19937 gen(7);
  std::uniform_int_distribution<std::int32_t> pick(-40, 40);  // repeats among them: ties keep their order
  std::vector<std::int32_t> works(16 * 7 + 5);                 // the last group partly full
  for (std::int32_t& w : works) w = pick(gen);
  works[3] = 0x7fffffff;                                        // extremes, clamped alike on the device
  works[4] = -0x7fffffff - 1;
  const std::uint32_t wg = 16;
  const auto grouped = works_by_group(works, wg, 0);
  REQUIRE(grouped.size() == (works.size() + wg - 1) / wg);
  for (const auto& [group, in_order] : grouped) {
    CAPTURE(group);
    // the group's CEs are the dispatch's group-th run of `wg`, now largest first
    std::vector<std::int32_t> want(works.begin() + group * wg, works.begin() + std::min<std::size_t>(works.size(), (group + 1) * wg));
    std::stable_sort(want.begin(), want.end(), std::greater<>());
    CHECK(in_order == want);
  }
  // Above the serial depth (none here): every group's work-items take its CEs in claim order.
  const auto claimed = works_by_group(works, wg, kSerialOff);
  for (const auto& [group, in_order] : claimed) {
    CAPTURE(group);
    CHECK(in_order == std::vector<std::int32_t>(works.begin() + group * wg,
                                                works.begin() + std::min<std::size_t>(works.size(), (group + 1) * wg)));
  }
}

}  // TEST_SUITE
