// A graph runs again: its channels, stack levels, kernels and pools are made by the first run and
// reused by the next ones (new seeds, other policies, deeper recursions), a run that threw leaves
// the graph refusing to run, and the workloads' instances (compiled programs' calls too) reuse
// their graphs across repetitions.
#include "chanflow/chanflow.hpp"
#include "fib/fib.hpp"
#include "queens/queens.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace chanflow;
using chanflow::test::dispatch_modes;
using chanflow::test::runtime;

TEST_SUITE("rerun") {

TEST_CASE("A graph runs again on new inputs, making no level and allocating nothing a deeper run did not need") {
  Levelized levelized;
  Greedy greedy;
  for (const Sweeps mode : dispatch_modes()) {
    const std::string dispatch = to_string(mode);
    CAPTURE(dispatch);
    // Four work-groups' requests per level: host-sized dispatches yield and restart.
    workloads::FibCilk fib(runtime(), {.capacity = 256, .wg_size = 32, .dispatch = mode});
    const RunStats first = fib.run(16, levelized).stats;
    const std::uint32_t depth = fib.graph().stacks().front()->depth();
    const std::uint32_t table = fib.graph().table().size();
    // Device sweeps descend as far as their work-groups' timing takes them between host rounds
    // (claimed sweeps take what is ready when a work-group starts; planned passes are chained on
    // the device while they finish work, and which work-group wins an output's credits, so which
    // CEs yield, is a race), and stacks are grown a few levels beyond the deepest work seen (up
    // to 8): a later run may see deeper work and make a level more (a ThreadSanitizer run showed
    // it for planned sweeps). Host-sized dispatches descend one level per dispatch and repeat.
    const bool repeats = mode == Sweeps::Off;
    std::uint64_t yields = first.yields;
    int run = 0;
    for (const std::uint32_t n : {12u, 16u, 1u, 15u, 16u}) {
      CAPTURE(n);
      CAPTURE(run);
      // The first run's policy, then the other: a run may take another policy than the last.
      SchedulingPolicy& policy = ++run < 4 ? static_cast<SchedulingPolicy&>(levelized) : greedy;
      const auto r = fib.run(n, policy);
      CHECK(r.value == workloads::fib_serial(n));
      if (repeats && run < 4) {
        CHECK(r.stats.host.levels_ms == 0);  // no level made
        CHECK(r.stats.peak_channel_bytes <= first.peak_channel_bytes);
      }
      yields += r.stats.yields;
    }
    if (repeats) {
      CHECK(fib.graph().stacks().front()->depth() == depth);
      CHECK(fib.graph().table().size() == table);  // no channel added
    } else {
      CHECK(fib.graph().stacks().front()->depth() <= depth + 8);
    }
    if (mode == Sweeps::Off) CHECK(yields > 0);
    // Deeper than before: the run is right, and the stacks are as deep as it went (grown where
    // the levels made so far did not reach: device sweeps may have grown them up to 8 beyond the
    // first run's deepest work already, and then fib 19 needs none more, as an H100 showed).
    const auto deeper = fib.run(19, levelized);
    CHECK(deeper.value == workloads::fib_serial(19));
    CHECK(fib.graph().stacks().front()->depth() > deeper.stats.max_level);
    // Host-sized dispatches see every level they reach; device sweeps may descend inside a chain
    // of passes the host does not look between.
    if (repeats) CHECK(deeper.stats.max_level > first.max_level);
    if (repeats) CHECK(fib.graph().stacks().front()->depth() > depth);
  }
}

TEST_CASE("A graph whose run threw refuses to run again, saying why") {
  Levelized levelized;
  workloads::FibCilk fib(runtime(), {.capacity = 256, .wg_size = 32});
  CHECK(fib.run(10, levelized).value == 55);
  CHECK_THROWS_WITH_AS(fib.run(16, levelized, {.max_rounds = 1}), doctest::Contains("round limit"), RunError);
  CHECK_THROWS_WITH_AS(fib.run(10, levelized), doctest::Contains("last run did not finish (stopped after the round limit"),
                       RunError);
}

TEST_CASE("A workload instance reuses its graph across repetitions, every result checked") {
  const std::vector<std::pair<const char*, std::uint64_t>> sizes{
      {"fib", 14}, {"queens", 7}, {"sort", 5000}, {"sort-u64", 2000}, {"strassen", 128}, {"strassen-f64", 128}};
  for (const auto& [name, size] : sizes) {
    const auto& w = workloads::find_workload(name);
    auto instance = w.prepare(runtime(), size, 5, {.wg_size = 32});
    for (const auto& impl : w.impls()) {
      if (impl.rfind("chanflow", 0) != 0) continue;  // chanflow-compiled: chanflowc's graph, kept by its runtime
      const std::string workload = name;
      CAPTURE(workload);
      CAPTURE(impl);
      for (int rep = 0; rep < 2; ++rep) {
        CAPTURE(rep);
        const workloads::Measurement m = instance->run(impl);
        CHECK(m.correct);
        CHECK(m.stats);
      }
    }
  }
}

}  // TEST_SUITE
