// Ports and node kinds stated once: typed edges, the continuation's place fixed by the library,
// port indices by name on the device, node kinds read from the program, and the problems each
// of these catches before (or, on the device, while) a graph runs.
#include "chanflow/chanflow.hpp"
#include "chain_types.hpp"
#include "chanflow_tests_sources.hpp"
#include "fib/fib.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <array>
#include <numeric>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

struct Item {
  std::uint32_t id;
};
struct SumArgs {
  std::uint64_t* sum;
};
using chanflow::test::ChainCont;
using chanflow::test::ChainFrame;

// Two sinks summing what they get, and a kernel made without a node macro.
constexpr const char* kSums = R"CL(
typedef struct { uint id; } NItem;
typedef struct { __global ulong* sum; } SumArgs;
void sum_body(__global const NItem* it, chanflow_ctx* ctx) {
  atom_add(CHANFLOW_ARGS(ctx, SumArgs)->sum, (ulong)it->id);
}
CHANFLOW_KERNEL_NODE(sum_evens, NItem, sum_body)
CHANFLOW_KERNEL_NODE(sum_odds, NItem, sum_body)
__kernel void not_a_node(__global uint* x) { *x = 1u; }
)CL";

// A node with two named ports, used through CHANFLOW_PORT (a source using CHANFLOW_PORT needs
// its node in the graph: the names are defined per graph).
constexpr const char* kFanout = R"CL(
void fanout_body(__global const NItem* it, chanflow_ctx* ctx) {
  const NItem even = {2u * it->id}, odd = {2u * it->id + 1u};
  chanflow_spawn(ctx, CHANFLOW_PORT(fanout, evens), even);
  chanflow_spawn(ctx, CHANFLOW_PORT(fanout, odds), odd);
}
CHANFLOW_KERNEL_NODE(fanout, NItem, fanout_body)
)CL";

// A node spawning each item's value once, on one port or the other: its ports never spawn together.
constexpr const char* kPick = R"CL(
void pick_body(__global const NItem* it, chanflow_ctx* ctx) {
  for (uint k = 0; k < 3u; ++k) {
    const NItem v = {it->id * 3u + k};
    if (it->id % 2u == 0u)
      chanflow_spawn(ctx, CHANFLOW_PORT(pick, evens), v);
    else
      chanflow_spawn(ctx, CHANFLOW_PORT(pick, odds), v);
  }
}
CHANFLOW_KERNEL_NODE(pick, NItem, pick_body)
)CL";

struct Wide {
  std::uint32_t w[4];
};

// Runs `g` over items 0..n-1 pushed into `numbers`, the sinks adding what they get into two
// counters; returns {evens' sum, odds' sum}.
std::array<std::uint64_t, 2> run_sums(Graph& g, ChannelNode& numbers, KernelNode& sum_evens, KernelNode& sum_odds,
                                      std::uint32_t n) {
  SvmBuffer sums(runtime(), 2 * sizeof(std::uint64_t));
  runtime().svm_fill_zero(sums.get(), sums.size());
  auto* sum = static_cast<std::uint64_t*>(sums.get());
  sum_evens.set_args(SumArgs{sum}).uses(sums);
  sum_odds.set_args(SumArgs{sum + 1}).uses(sums);
  for (std::uint32_t i = 0; i < n; ++i) numbers.push(Item{i});
  g.run();
  std::array<std::uint64_t, 2> got{};
  runtime().svm_read(got.data(), sums.get(), sizeof got);
  return got;
}

std::string problems_of(Graph& g) {
  try {
    g.validate();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "valid";
}

}  // namespace

TEST_SUITE("ports") {

TEST_CASE("Ports: a kernel finds its ports by name, whatever order the edges were made in") {
  Graph g(runtime(), {.wg_size = 16});
  g.add_source(kSums);
  g.add_source(kFanout);
  auto& numbers = g.channel<Item>("numbers", 1024);
  auto& odds = g.channel<Item>("odd_numbers", 1024);
  auto& evens = g.channel<Item>("even_numbers", 1024);
  auto& fanout = g.kernel<Item>("fanout", "fanout");
  auto& sum_odds = g.kernel<Item>("sum_odds", "sum_odds");
  auto& sum_evens = g.kernel<Item>("sum_evens", "sum_evens");
  make_edge(numbers, fanout);
  const Port to_odds = make_edge(fanout, odds, Spawns{.name = "odds"});  // made first: index 0
  const Port to_evens = make_edge(fanout, evens, Spawns{.name = "evens"});
  make_edge(odds, sum_odds);
  make_edge(evens, sum_evens);
  CHECK(to_odds.index() == 0);
  CHECK(to_evens.index() == 1);
  CHECK(to_evens.name() == "evens");

  constexpr std::uint32_t kN = 300;
  const auto got = run_sums(g, numbers, sum_evens, sum_odds, kN);
  std::uint64_t want_even = 0, want_odd = 0;
  for (std::uint64_t i = 0; i < kN; ++i) {
    want_even += 2 * i;
    want_odd += 2 * i + 1;
  }
  CHECK(got[0] == want_even);
  CHECK(got[1] == want_odd);
  CHECK(fanout.kind() == NodeKind::Plain);
}

TEST_CASE("Ports: ports that never spawn together share their staging and yield state") {
  Graph g(runtime(), {.wg_size = 16});
  auto& in = g.channel<Item>("in", 64);
  auto& a = g.channel<Item>("a", 1024);
  auto& b = g.channel<Wide>("b", 1024);
  auto& c = g.channel<Item>("c", 1024);
  auto& k = g.kernel<Item>("k", "k");
  make_edge(in, k);
  make_edge(k, a, Spawns{.max_per_item = 4});
  make_edge(k, b, Spawns{.max_per_item = 2});
  make_edge(k, c, Spawns{.max_per_item = 3});
  // Undeclared: one after another (4 + 2·4 + 3 words).
  CHECK(k.staging_offsets() == std::vector<std::uint32_t>{0, 4, 12});
  CHECK(k.staging_words() == 15);
  // a and b together, c alone: c starts where a does.
  k.spawns_together({0b011, 0b011, 0b100});
  CHECK(k.staging_offsets() == std::vector<std::uint32_t>{0, 4, 0});
  CHECK(k.staging_words() == 12);
  // Task scratch block (2 words), three counts, nine return slots, the staging.
  CHECK(k.yield_state_bytes() == 4 * (2 + 3 + 9 + 12));
  CHECK_THROWS_AS(k.spawns_together({0b011, 0b010, 0b100}), std::invalid_argument);  // not symmetric
  CHECK_THROWS_AS(k.spawns_together({0b010, 0b011, 0b100}), std::invalid_argument);  // a without itself
  CHECK_THROWS_AS(k.spawns_together({0b1, 0b1}), std::invalid_argument);              // two ports of three

  // On the device: items spawn on one port or the other from the same staging words.
  Graph h(runtime(), {.wg_size = 16});
  h.add_source(kSums);
  h.add_source(kPick);
  auto& numbers = h.channel<Item>("numbers", 1024);
  auto& evens = h.channel<Item>("evens", 4096);
  auto& odds = h.channel<Item>("odds", 4096);
  auto& pick = h.kernel<Item>("pick", "pick");
  auto& sum_evens = h.kernel<Item>("sum_evens", "sum_evens");
  auto& sum_odds = h.kernel<Item>("sum_odds", "sum_odds");
  make_edge(numbers, pick);
  make_edge(pick, evens, Spawns{.max_per_item = 3, .name = "evens"});
  make_edge(pick, odds, Spawns{.max_per_item = 3, .name = "odds"});
  make_edge(evens, sum_evens);
  make_edge(odds, sum_odds);
  pick.spawns_together({0b01, 0b10});
  CHECK(pick.staging_offsets() == std::vector<std::uint32_t>{0, 0});
  constexpr std::uint32_t kN = 500;
  const auto got = run_sums(h, numbers, sum_evens, sum_odds, kN);
  std::uint64_t want[2] = {0, 0};
  for (std::uint64_t i = 0; i < kN; ++i)
    for (std::uint64_t j = 0; j < 3; ++j) want[i % 2] += i * 3 + j;
  CHECK(got[0] == want[0]);
  CHECK(got[1] == want[1]);
}

TEST_CASE("Ports: the continuation is port 0 even when the children's edge came first") {
  // Children reserved before their continuation would return into frame 0 of the level (the
  // continuation's index was not known yet): wrong sums, frames enqueued twice.
  Graph g(runtime(), {.wg_size = 16, .device_sweeps = Sweeps::Off});
  g.add_source(std::string(tests_cl::graph_test_kernels_cl()));
  auto& tasks = g.channel_stack<ChainFrame>("chain", 256);
  auto& conts = g.channel_stack<ChainCont>("chain_cont", 256, StackKind::Continuations);
  auto& spawn = g.kernel<ChainFrame>("chain_spawn", "chain_spawn");
  auto& sync = g.kernel<ChainCont>("chain_sync", "chain_sync");
  make_edge(tasks, spawn);
  const Port children = make_edge(spawn, tasks, Children{});
  const Port cont = make_edge(spawn, conts, Continuation{});
  make_edge(conts, sync);
  CHECK(cont.index() == 0);
  CHECK(children.index() == 1);
  CHECK(spawn.continuation_port() == 0u);

  constexpr std::uint32_t kRoots = 40;
  SvmBuffer results(runtime(), kRoots * sizeof(std::uint64_t));
  runtime().svm_fill_zero(results.get(), results.size());
  spawn.uses(results);
  sync.uses(results);
  auto* slot = static_cast<std::uint64_t*>(results.get());
  for (std::uint32_t i = 0; i < kRoots; ++i)
    tasks.push(0, ChainFrame{{reinterpret_cast<std::uint64_t>(slot + i), 0, 0, 0}, 5 + i % 9, 0});
  Levelized levelized;
  g.run(levelized);
  std::vector<std::uint64_t> got(kRoots);
  runtime().svm_read(got.data(), results.get(), results.size());
  for (std::uint32_t i = 0; i < kRoots; ++i) CHECK(got[i] == std::uint64_t{5 + i % 9} * (6 + i % 9) / 2);
  CHECK(spawn.kind() == NodeKind::Yielding);
  CHECK(sync.kind() == NodeKind::Continuation);
}

TEST_CASE("Ports: node kinds come from the node macros, and kind problems are rejected before the run") {
  // The Cilk Fibonacci example never says its task node yields: the macro does.
  Levelized levelized;
  CHECK(workloads::fib_cilk(runtime(), 16, levelized, {.capacity = 64, .wg_size = 16,
                                                      .dispatch = Sweeps::Off}).value == 987);
  auto check = [](const std::string& what, auto build) {
    CAPTURE(what);
    Graph g(runtime(), {.wg_size = 16});
    g.add_source(kSums);
    g.add_source(std::string(tests_cl::graph_test_kernels_cl()));
    build(g);
    const std::string msg = problems_of(g);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  };
  check("kernel node 'raw': kernel 'not_a_node' was not made with a node macro", [](Graph& g) {
    make_edge(g.channel<Item>("in", 64), g.kernel<Item>("raw", "not_a_node"));
  });
  check("kernel node 'ghost' runs kernel 'no_such_kernel', which the graph's sources do not define", [](Graph& g) {
    make_edge(g.channel<Item>("in", 64), g.kernel<Item>("ghost", "no_such_kernel"));
  });
  check("kernel node 'plain' consumes the continuation stack 'frames': define its kernel with CHANFLOW_CONTINUATION_NODE",
        [](Graph& g) {
          make_edge(g.channel_stack<ChainCont>("frames", 64, StackKind::Continuations),
                    g.kernel<ChainCont>("plain", "chain_seed"));
        });
  check("kernel node 'sync' is a CHANFLOW_CONTINUATION_NODE but its input 'plain_frames' is not a continuation stack",
        [](Graph& g) { make_edge(g.channel_stack<ChainCont>("plain_frames", 64), g.kernel<ChainCont>("sync", "chain_sync")); });
  check("kernel node 'seed' has a continuation port, but a CHANFLOW_KERNEL_NODE cannot make a frame ready", [](Graph& g) {
    auto& seed = g.kernel<std::uint64_t>("seed", "chain_seed");
    make_edge(g.channel<std::uint64_t>("seeds", 64), seed);
    auto& conts = g.channel_stack<ChainCont>("conts", 64, StackKind::Continuations);
    make_edge(seed, conts, Continuation{});
    make_edge(conts, g.kernel<ChainCont>("sync", "chain_sync"));
  });
  check("kernel node 'spawn' spawns children into 'conts', a continuation stack", [](Graph& g) {
    auto& tasks = g.channel_stack<ChainFrame>("tasks", 64);
    auto& conts = g.channel_stack<ChainCont>("conts", 64, StackKind::Continuations);
    auto& spawn = g.kernel<ChainFrame>("spawn", "chain_spawn");
    make_edge(tasks, spawn);
    make_edge(spawn, conts, Children{});
    make_edge(conts, g.kernel<ChainCont>("sync", "chain_sync"));
  });
  check("kernel node 'spawn' has 2 continuation ports", [](Graph& g) {
    auto& tasks = g.channel_stack<ChainFrame>("tasks", 64);
    auto& conts = g.channel_stack<ChainCont>("conts", 64, StackKind::Continuations);
    auto& spawn = g.kernel<ChainFrame>("spawn", "chain_spawn");
    make_edge(tasks, spawn);
    make_edge(spawn, conts, Continuation{});
    make_edge(spawn, conts, Continuation{.name = "again"});
    make_edge(conts, g.kernel<ChainCont>("sync", "chain_sync"));
  });
  check("kernel node 'fanout' has two ports named 'same'", [](Graph& g) {
    auto& fanout = g.kernel<Item>("fanout", "sum_evens");
    auto& out = g.channel<Item>("out", 1024);
    make_edge(g.channel<Item>("in", 1024), fanout);
    make_edge(fanout, out, Spawns{.name = "same"});
    make_edge(fanout, out, Spawns{.name = "same"});
    make_edge(out, g.kernel<Item>("sink", "sum_odds"));
  });
  check("kernel 'sum_evens' runs in nodes 'first' (ports a) and 'second' (ports b); nodes sharing a kernel need the "
        "same port names in the same order",
        [](Graph& g) {
          auto& mid = g.channel<Item>("mid", 1024);
          auto& out = g.channel<Item>("out", 1024);
          auto& first = g.kernel<Item>("first", "sum_evens");
          auto& second = g.kernel<Item>("second", "sum_evens");
          make_edge(g.channel<Item>("in", 1024), first);
          make_edge(first, mid, Spawns{.name = "a"});
          make_edge(mid, second);
          make_edge(second, out, Spawns{.name = "b"});
          make_edge(out, g.kernel<Item>("sink", "sum_odds"));
        });
  check("port name 'not an identifier' (to 'out') is not an OpenCL C identifier", [](Graph& g) {
    auto& split = g.kernel<Item>("sink_a", "sum_odds");
    auto& out = g.channel<Item>("out", 1024);
    make_edge(g.channel<Item>("in", 1024), split);
    make_edge(split, out, Spawns{.name = "not an identifier"});
    make_edge(out, g.kernel<Item>("sink_b", "sum_evens"));
  });
}

TEST_CASE("Ports: a child spawned by a node without a continuation is reported by name") {
  // chain_spawn spawns its continuation and a child returning into it; this node has neither.
  Graph g(runtime(), {.wg_size = 16, .device_sweeps = Sweeps::Off});
  g.add_source(std::string(tests_cl::graph_test_kernels_cl()));
  auto& tasks = g.channel_stack<ChainFrame>("chain", 256);
  auto& spawn = g.kernel<ChainFrame>("orphan_spawn", "chain_spawn");
  make_edge(tasks, spawn);
  make_edge(spawn, tasks, Children{});
  SvmBuffer result(runtime(), sizeof(std::uint64_t));
  runtime().svm_fill_zero(result.get(), result.size());
  spawn.uses(result);
  tasks.push(0, ChainFrame{{reinterpret_cast<std::uint64_t>(result.get()), 0, 0, 0}, 3, 0});
  try {
    g.run();
    FAIL("the run should have stopped");
  } catch (const RunError& e) {
    CHECK(std::string(e.what()).find("kernel node 'orphan_spawn' spawned a child returning into its continuation") !=
          std::string::npos);
  }
}

}  // TEST_SUITE
