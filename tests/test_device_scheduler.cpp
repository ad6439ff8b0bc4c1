// The device scheduler (scheduler/cl/schedule.cl): Cilk Fibonacci under it gives what the serial
// code gives at generous and tiny capacities (levels that fill inside a launch are deallocated
// there), under both built-in policies and a user's device policy; what cannot run is refused
// before it starts, and a device policy that takes nothing ends with the no-progress diagnostic. A
// graph run again writes before its launches only what changed.
#include "chanflow/chanflow.hpp"
#include "fib/fib.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

using namespace chanflow;
using chanflow::test::runtime;
using workloads::fib_cilk;
using workloads::fib_serial;
using workloads::FibCilk;

namespace {

// Breadth first: the shallowest level first, the reverse of Levelized (correct all the same: join
// counters, not the order, make a continuation wait for its children).
constexpr const char* kShallowFirst = R"CL(
int chanflow_user_policy_score(const chanflow_policy_view* v) {
  return v->in_stack ? (int)(1000u - min(v->level, 999u)) : 1;
}
)CL";

// Takes nothing: a run under it cannot progress.
constexpr const char* kNothing = R"CL(
int chanflow_user_policy_score(const chanflow_policy_view* v) { (void)v; return -1; }
)CL";

RunSettings device(std::uint32_t capacity, std::uint32_t wg) {
  return {.capacity = capacity, .wg_size = wg, .scheduler = Scheduler::Device};
}

}  // namespace

TEST_SUITE("device_scheduler") {

TEST_CASE("Cilk-Fibonacci is right under the device scheduler, at generous and tiny capacities" *
          doctest::timeout(900)) {
  if (!device_scheduler_holds(runtime().caps())) return;  // refused: the next test
  Levelized levelized;
  Greedy greedy;
  for (const std::uint32_t n : {1u, 2u, 9u, 17u, 21u}) {
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)}) {
      CAPTURE(n);
      CAPTURE(policy->name());
      const auto big = fib_cilk(runtime(), n, *policy, device(1u << 14, 64));
      CHECK(big.value == fib_serial(n));
      CHECK(big.stats.scheduler == "device");
      CHECK(big.stats.yields == 0);
      // A device profile where the device has a clock (NVIDIA's %globaltimer), none elsewhere.
      if (n > 2) CHECK(big.stats.device_scheduler.busy_ms_per_node.empty() == (device_order(runtime().caps()) != DeviceOrder::Ptx));
      // One work-group's request per level: the levels fill and empty again within launches.
      const auto tiny = fib_cilk(runtime(), n, *policy, device(64, 16));
      CHECK(tiny.value == fib_serial(n));
      CHECK(tiny.stats.yields == 0);
    }
  }
}

TEST_CASE("A graph run again on the device scheduler writes nothing before its launches, every run right" *
          doctest::timeout(900)) {
  if (!device_scheduler_holds(runtime().caps())) return;
  Levelized levelized;
  Greedy greedy;
  FibCilk fib(runtime(), device(1u << 12, 64));
  // The first run writes every block a launch reads; a run that reaches no new level and keeps
  // the policy finds them as the last launch's readback left them (readback.cl puts back what a
  // launch changes), whatever n is. On a CPU device a run takes several launches and each grows
  // the stacks some levels past the deepest with work at its start, which depends on how far the
  // last launch got: a re-run may make a level the first did not, and then writes.
  const auto first = fib.run(18, levelized);
  CHECK(first.value == fib_serial(18));
  CHECK(first.stats.device_scheduler.blocks_written > 0);
  std::uint32_t channels = first.stats.channels;
  auto again = [&](std::uint32_t n) {
    CAPTURE(n);
    CAPTURE(channels);
    const auto run = fib.run(n, levelized);
    CHECK(run.value == fib_serial(n));
    if (run.stats.channels == channels)
      CHECK(run.stats.device_scheduler.blocks_written == 0);
    else
      CHECK(run.stats.device_scheduler.blocks_written > 0);
    channels = run.stats.channels;
  };
  for (const std::uint32_t n : {18u, 11u, 1u, 18u}) again(n);
  // Another policy is another header: written, then right again.
  const auto other = fib.run(18, greedy);
  CHECK(other.value == fib_serial(18));
  CHECK(other.stats.device_scheduler.blocks_written > 0);
  const auto back = fib.run(17, levelized);
  CHECK(back.value == fib_serial(17));
  CHECK(back.stats.device_scheduler.blocks_written > 0);
  channels = back.stats.channels;
  again(17);
  again(1);  // level 0 only: never a new one
}

// A run's sharing that recalls every other launch of the device scheduler as it begins (before the
// kernel runs: it ends at its first poll), from the run's own thread, and moves nothing.
class RecallEveryOther : public WorkSharing {
 public:
  bool at_round(Graph&) override { return false; }
  void launch_begins(std::function<void()> recall) override {
    if (launches_++ % 2 == 0) recall();
  }
  bool wait_for_work(Graph&) override { return false; }
  bool wait_for_returns(Graph&) override { return false; }
  std::uint64_t recalled() const { return (launches_ + 1) / 2; }

 private:
  std::uint64_t launches_ = 0;
};

TEST_CASE("A recalled launch of the device scheduler ends at its work-groups' next poll, and the run goes on right" *
          doctest::timeout(900)) {
  if (!device_scheduler_holds(runtime().caps())) return;
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 12, 64));
  for (const std::uint32_t n : {1u, 12u, 18u}) {
    CAPTURE(n);
    RecallEveryOther sharing;
    const auto run = fib.run(n, levelized, RunOptions{.sharing = &sharing});
    CHECK(run.value == fib_serial(n));
    const auto& ds = run.stats.device_scheduler;
    MESSAGE("fib(" << n << "): " << ds.launches << " launches, " << ds.recalled << " recalled, " << ds.left_recalled
                   << " work-groups left recalled");
    // Every other launch was recalled before it ran, and so left without a batch; the others did
    // the work (a recalled launch that ends with its work undone is no stall).
    CHECK(ds.recalled == sharing.recalled());
    CHECK(ds.launches == 2 * ds.recalled - (ds.launches % 2));
    CHECK(ds.left_recalled >= ds.recalled);
  }
}

// Recalls the first launch from another thread once it has run `after`, and notes how long the
// launch took to end from then (to the next round's start).
class RecallFromAnotherThread : public WorkSharing {
 public:
  explicit RecallFromAnotherThread(std::chrono::microseconds after) : after_(after) {}
  ~RecallFromAnotherThread() override {
    if (thread_.joinable()) thread_.join();
  }
  bool at_round(Graph&) override {
    if (thread_.joinable() && !ended_) {
      thread_.join();
      ended_ = true;
      ended_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - recalled_at_).count();
    }
    return false;
  }
  void launch_begins(std::function<void()> recall) override {
    if (launches_++ > 0) return;
    thread_ = std::thread([this, recall] {
      std::this_thread::sleep_for(after_);
      recalled_at_ = std::chrono::steady_clock::now();
      recall();
    });
  }
  bool wait_for_work(Graph&) override { return false; }
  bool wait_for_returns(Graph&) override { return false; }
  double ended_us = -1;  // from the recall to the next round (or the run's end, if it came first)

 private:
  std::chrono::microseconds after_;
  std::thread thread_;
  std::chrono::steady_clock::time_point recalled_at_;
  std::uint64_t launches_ = 0;
  bool ended_ = false;
};

TEST_CASE("A launch recalled from another thread while it runs ends, and the run goes on right" * doctest::timeout(900)) {
  if (!device_scheduler_holds(runtime().caps())) return;
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 16, 64));
  for (const std::uint32_t n : {20u, 24u}) {
    for (const int after_us : {0, 1000}) {
      CAPTURE(n);
      CAPTURE(after_us);
      RecallFromAnotherThread sharing{std::chrono::microseconds(after_us)};
      const auto run = fib.run(n, levelized, RunOptions{.sharing = &sharing});
      CHECK(run.value == fib_serial(n));
      const auto& ds = run.stats.device_scheduler;
      // Whether the recall came before the first launch ended is the machine's timing: said, not checked.
      MESSAGE("fib(" << n << "), recalled after " << after_us << " µs: " << ds.launches << " launches ("
                     << ds.recalled << " recalled, " << ds.left_recalled << " work-groups left so), the run "
                     << run.stats.wall_ms << " ms; the next round began " << sharing.ended_us << " µs after the recall");
      CHECK(ds.recalled <= 1);
    }
  }
}

TEST_CASE("A user's device policy is compiled into the scheduler; one that takes nothing cannot progress" *
          doctest::timeout(600)) {
  if (!device_scheduler_holds(runtime().caps())) {
    DevicePolicy shallow("shallow-first", kShallowFirst);
    CHECK_THROWS_WITH_AS(fib_cilk(runtime(), 10, shallow, device(256, 16)),
                         doctest::Contains("device policy without a host form"), RunError);
    return;
  }
  DevicePolicy shallow("shallow-first", kShallowFirst);
  for (const std::uint32_t n : {5u, 18u}) {
    CAPTURE(n);
    const auto r = fib_cilk(runtime(), n, shallow, device(1u << 12, 32));
    CHECK(r.value == fib_serial(n));
    CHECK(r.stats.policy == "shallow-first");
    CHECK(r.stats.scheduler == "device");
  }
  DevicePolicy nothing("nothing", kNothing);
  CHECK_THROWS_WITH_AS(fib_cilk(runtime(), 6, nothing, device(256, 16)), doctest::Contains("no progress"), RunError);
}

TEST_CASE("The watchdog samples a launch while it runs and leaves a run that moves alone" * doctest::timeout(600)) {
  // A watch of one second, sampled every millisecond: the launches are read while they run (under
  // ThreadSanitizer too) and none is taken for stuck (a node body that never returns is the CLI's
  // test, cli_run_cilk_never_returns: the watch ends that process).
  if (!device_scheduler_holds(runtime().caps())) return;
  ::setenv("CHANFLOW_SCHED_WATCHDOG", "1", 1);
  ::setenv("CHANFLOW_SCHED_WATCH_EVERY_MS", "1", 1);
  Levelized levelized;
  for (const std::uint32_t capacity : {1u << 16, 64u}) {  // launches of thousands of CEs, then of a few
    CAPTURE(capacity);
    const auto r = fib_cilk(runtime(), 24, levelized, device(capacity, capacity > 64 ? 64 : 16));
    CHECK(r.value == fib_serial(24));
    CHECK(r.stats.scheduler == "device");
  }
  ::unsetenv("CHANFLOW_SCHED_WATCHDOG");
  ::unsetenv("CHANFLOW_SCHED_WATCH_EVERY_MS");
}

TEST_CASE("What the device scheduler cannot run is refused before the run, saying why") {
  // A host policy has no device form.
  FunctionPolicy host("host-only", [](const GraphView& view, std::vector<Dispatch>& out) {
    for (const auto& c : view.channels)
      if (c.admissible) out.push_back({c.id});
  });
  if (device_scheduler_holds(runtime().caps())) {
    CHECK_THROWS_WITH_AS(fib_cilk(runtime(), 8, host, device(256, 16)), doctest::Contains("is a host policy"), RunError);
    // Auto keeps a host policy on the rounds.
    const auto r = fib_cilk(runtime(), 8, host, {.capacity = 256, .wg_size = 16});
    CHECK(r.value == fib_serial(8));
    CHECK(r.stats.scheduler == "rounds");
  } else {
    Levelized levelized;
    CHECK_THROWS_WITH_AS(fib_cilk(runtime(), 8, levelized, device(256, 16)),
                         doctest::Contains("needs a device that orders stores at device scope"), RunError);
  }
  // A device policy without a host form cannot run in rounds.
  DevicePolicy shallow("shallow-first", kShallowFirst);
  RunSettings rounds{.capacity = 256, .wg_size = 16, .scheduler = Scheduler::Rounds};
  CHECK_THROWS_WITH_AS(fib_cilk(runtime(), 8, shallow, rounds), doctest::Contains("device policy without a host form"),
                       RunError);
  // With one, it does.
  DevicePolicy both("shallow-first", kShallowFirst, [](const GraphView& view, std::vector<Dispatch>& out) {
    Levelized().decide(view, out);
  });
  const auto r = fib_cilk(runtime(), 8, both, rounds);
  CHECK(r.value == fib_serial(8));
  CHECK(r.stats.scheduler == "rounds");
}

TEST_CASE("Auto takes the device scheduler on a GPU once its program is built beside the graph's; rounds before, "
          "and on CPU devices" * doctest::timeout(900)) {
  Levelized levelized;
  FibCilk fib(runtime(), RunSettings{.capacity = 1u << 12, .wg_size = 64});
  const bool gpu = !(runtime().caps().type & CL_DEVICE_TYPE_CPU) && device_scheduler_holds(runtime().caps());
  // Until the scheduler's program is built (a minute on a machine that never built it) the runs
  // go on in rounds, every one of them right.
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  std::string scheduler;
  for (std::uint32_t n = 18; scheduler != "device" && std::chrono::steady_clock::now() < until; n = n == 22 ? 18 : n + 1) {
    const auto r = fib.run(n, levelized);
    CHECK(r.value == fib_serial(n));
    scheduler = r.stats.scheduler;
    if (!gpu) break;
  }
  CHECK(scheduler == (gpu ? "device" : "rounds"));
  // Idle work-groups leave a node kernel at once on a GPU, never on a CPU device (PoCL 3.1
  // mis-runs a kernel whose work-groups skip its barriers).
  const bool leave = fib.graph().device_build_options().find("-DCHANFLOW_IDLE_GROUPS_LEAVE") != std::string::npos;
  CHECK(leave == !(runtime().caps().type & CL_DEVICE_TYPE_CPU));
}

TEST_CASE("The scheduler built in the background: runs go on in rounds meanwhile, then take it, every one right" *
          doctest::timeout(900)) {
  if (!device_scheduler_holds(runtime().caps())) return;
  // On a CPU device only where asked for (CHANFLOW_SCHED_BESIDE_ON_CPU): the background build and
  // the switch, with PoCL's one-poll scheduler.
  ::setenv("CHANFLOW_SCHED_BESIDE_ON_CPU", "1", 1);
  // A machine that built this scheduler before (a second run of the suites) builds it at once.
  const chanflow::test::FreshBuildNotes notes;
  Levelized levelized;
  Greedy greedy;
  std::vector<std::string> seen;
  {
    // A work-group size no other test builds the scheduler with: its build is this test's own.
    FibCilk fib(runtime(), RunSettings{.capacity = 1u << 10, .wg_size = 32});
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    for (std::uint32_t i = 0; (seen.empty() || seen.back() != "device") && std::chrono::steady_clock::now() < until; ++i) {
      const std::uint32_t n = 12 + i % 6;
      SchedulingPolicy& policy = i % 2 ? static_cast<SchedulingPolicy&>(greedy) : levelized;
      const auto r = fib.run(n, policy);
      CHECK(r.value == fib_serial(n));
      if (seen.empty() || seen.back() != r.stats.scheduler) seen.push_back(r.stats.scheduler);
    }
    // Once taken, kept: a few more runs on it.
    for (const std::uint32_t n : {1u, 16u, 19u}) {
      const auto r = fib.run(n, levelized);
      CHECK(r.value == fib_serial(n));
      CHECK(r.stats.scheduler == "device");
    }
  }
  // A graph that goes while its scheduler builds waits for the build (no thread outlives it).
  {
    FibCilk fib(runtime(), RunSettings{.capacity = 1u << 9, .wg_size = 8});
    CHECK(fib.run(15, levelized).value == fib_serial(15));
    CHECK(fib.run(14, levelized).value == fib_serial(14));  // the second run starts the build
  }
  ::unsetenv("CHANFLOW_SCHED_BESIDE_ON_CPU");
  REQUIRE(!seen.empty());
  CHECK(seen.front() == "rounds");  // the first run never waits for the build
  CHECK(seen.back() == "device");
  CHECK(seen.size() == 2);
}

TEST_CASE("Scheduler names round-trip") {
  for (const Scheduler s : {Scheduler::Auto, Scheduler::Device, Scheduler::Rounds})
    CHECK(scheduler_from_string(to_string(s)) == s);
  CHECK_THROWS_AS(scheduler_from_string("gpu"), std::invalid_argument);
}

}  // TEST_SUITE

TEST_SUITE("gpu_only") {

TEST_CASE("GPU only: idle work-groups leave a node kernel before its collectives, and every run is right" *
          doctest::timeout(900)) {
  CAPTURE(runtime().caps().name);
  Levelized levelized;
  Greedy greedy;
  // Planned sweeps launch a grid for the widest level, so most work-groups of a narrow level's
  // launch find nothing; under the device scheduler, polls that find nothing do the same.
  for (const Scheduler scheduler : {Scheduler::Rounds, Scheduler::Device}) {
    FibCilk fib(runtime(), RunSettings{.capacity = 1u << 14, .wg_size = 64, .dispatch = Sweeps::Planned, .scheduler = scheduler});
    for (const std::uint32_t n : {1u, 2u, 9u, 17u, 23u}) {
      CAPTURE(to_string(scheduler));
      CAPTURE(n);
      SchedulingPolicy& policy = n % 2 ? static_cast<SchedulingPolicy&>(levelized) : greedy;
      CHECK(fib.run(n, policy).value == fib_serial(n));
    }
    REQUIRE(fib.graph().device_build_options().find("-DCHANFLOW_IDLE_GROUPS_LEAVE") != std::string::npos);
  }
}

TEST_CASE("GPU only: the device scheduler times each node on the device's clock" * doctest::timeout(900)) {
  CAPTURE(runtime().caps().name);
  REQUIRE(device_order(runtime().caps()) == DeviceOrder::Ptx);  // %globaltimer
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 14, 64));
  const auto r = fib.run(22, levelized);
  CHECK(r.value == fib_serial(22));
  REQUIRE(r.stats.scheduler == "device");
  const auto& busy = r.stats.device_scheduler.busy_ms_per_node;
  CHECK(busy.size() == fib.graph().kernels().size());  // fib_spawn and fib_sync, each of which ran
  for (const auto& k : fib.graph().kernels()) {
    CAPTURE(k->name());
    REQUIRE(busy.contains(k->name()));
    CHECK(busy.at(k->name()) > 0.0);
  }
}

TEST_CASE("GPU only: a narrow recursion runs its spawns in the work-group that made them, and every CE is counted" *
          doctest::timeout(900)) {
  CAPTURE(runtime().caps().name);
  REQUIRE(!(runtime().caps().type & CL_DEVICE_TYPE_CPU));  // a CPU device keeps no spawns (one poll a group)
  // Fib's calls at each depth of its tree (n <= 2 a leaf, as fib_cilk.cl): what the stack's
  // levels must have carried, published or kept.
  const std::uint32_t n = 22;
  std::vector<std::uint64_t> calls;
  const auto count = [&](auto& self, std::uint32_t m, std::size_t depth) -> void {
    if (calls.size() <= depth) calls.resize(depth + 1);
    ++calls[depth];
    if (m <= 2) return;
    self(self, m - 1, depth + 1);
    self(self, m - 2, depth + 1);
  };
  count(count, n, 0);
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 14, 64));
  const auto r = fib.run(n, levelized);
  CHECK(r.value == fib_serial(n));
  REQUIRE(r.stats.scheduler == "device");
  CHECK(r.stats.ces_per_level.at("fib") == calls);
  CHECK(r.stats.max_level + 1 == calls.size());
  // The top of the tree is narrower than a work-group: some level's tasks were kept, not published.
  std::uint64_t kept = 0;
  for (const auto& stack : fib.graph().stacks())
    if (stack->kind() == StackKind::Tasks)
      for (std::uint32_t d = 0; d < stack->depth(); ++d) kept += stack->level(d).counters().ctrl_kept;
  CHECK(kept > 0);
}

TEST_CASE("GPU only: a narrow recursion's ascent runs in the work-group whose children completed each frame, and "
          "every frame is counted" * doctest::timeout(900)) {
  CAPTURE(runtime().caps().name);
  REQUIRE(!(runtime().caps().type & CL_DEVICE_TYPE_CPU));  // a CPU device keeps nothing (one poll a group)
  // Fib's calls with children at each depth of its tree (n <= 2 a leaf, as fib_cilk.cl): the frames
  // the continuation stack's levels must have carried, published or kept.
  const std::uint32_t n = 18;
  std::vector<std::uint64_t> frames;
  const auto count = [&](auto& self, std::uint32_t m, std::size_t depth) -> void {
    if (m <= 2) return;
    if (frames.size() <= depth) frames.resize(depth + 1);
    ++frames[depth];
    self(self, m - 1, depth + 1);
    self(self, m - 2, depth + 1);
  };
  count(count, n, 0);
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 14, 64));
  const auto frames_kept = [&] {  // so far: a channel's counters run on across runs
    std::uint64_t kept = 0;
    for (const auto& stack : fib.graph().stacks())
      if (stack->kind() == StackKind::Continuations)
        for (std::uint32_t d = 0; d < stack->depth(); ++d) kept += stack->level(d).counters().ctrl_kept;
    return kept;
  };
  for (int run = 0; run < 2; ++run) {  // and again on the same graph
    CAPTURE(run);
    const std::uint64_t before = frames_kept();
    const auto r = fib.run(n, levelized);
    CHECK(r.value == fib_serial(n));
    REQUIRE(r.stats.scheduler == "device");
    CHECK(r.stats.ces_per_level.at("fib_cont") == frames);
    // The last frames up the tree complete one at a time: some ran where they became ready.
    CHECK(frames_kept() > before);
  }
}

TEST_CASE("GPU only: work-groups beyond what the work wants doze, every group polls when told to, and every run is "
          "right" * doctest::timeout(900)) {
  CAPTURE(runtime().caps().name);
  REQUIRE(!(runtime().caps().type & CL_DEVICE_TYPE_CPU));  // a CPU device's work-groups poll once
  Levelized levelized;
  FibCilk fib(runtime(), device(1u << 14, 64));
  // Fib's first and last levels are narrower than the launch's thousands of work-groups.
  for (const std::uint32_t n : {9u, 22u}) {
    CAPTURE(n);
    const auto r = fib.run(n, levelized);
    CHECK(r.value == fib_serial(n));
    REQUIRE(r.stats.scheduler == "device");
    CHECK(r.stats.device_scheduler.naps > 0);
  }
  ::setenv("CHANFLOW_SCHED_AWAKE", "1000000", 1);  // at least the launch's work-groups: none dozes
  const auto all = fib.run(22, levelized);
  ::unsetenv("CHANFLOW_SCHED_AWAKE");
  CHECK(all.value == fib_serial(22));
  CHECK(all.stats.device_scheduler.naps == 0);
  ::setenv("CHANFLOW_SCHED_AWAKE", "1", 1);  // one work-group polls while others hold batches
  const auto one = fib.run(22, levelized);
  ::unsetenv("CHANFLOW_SCHED_AWAKE");
  CHECK(one.value == fib_serial(22));
  CHECK(one.stats.device_scheduler.naps > 0);
}

}  // TEST_SUITE
