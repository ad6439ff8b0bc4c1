// The channel-flow graph API and the aggregator: results, delivery, policies, validation,
// no-progress detection, device-side errors, DOT and trace output.
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "fib/fib.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

struct Seed {
  std::uint32_t base, count;
};
struct Item {
  std::uint32_t id;
};
struct SinkArgs {
  std::uint32_t* seen;
  std::uint32_t* errors;
  std::uint32_t seen_len, pad;
};
struct TreeNode {
  std::uint32_t max_depth;
};
struct TreeArgs {
  std::uint32_t* per_level;
};

std::string graph_kernels() { return std::string(tests_cl::graph_test_kernels_cl()); }

struct Pipeline {
  Graph g;
  ChannelNode& seeds;
  ChannelNode& items;
  KernelNode& split;
  KernelNode& sink;
  SvmBuffer seen, errors;
  std::uint32_t total = 0;

  Pipeline(std::uint32_t n_seeds, std::uint32_t items_capacity)
      : g(runtime(), {.wg_size = 32, .scheduler = Scheduler::Rounds}),  // admission control splits rounds
        seeds(g.channel<Seed>("seeds", 4096)),
        items(g.channel<Item>("items", items_capacity)),
        split(g.kernel<Seed>("split", "split")),
        sink(g.kernel<Item>("sink", "sink")) {
    g.add_source(graph_kernels());
    make_edge(seeds, split);
    make_edge(split, items, Spawns{.max_per_item = 8});
    make_edge(items, sink);
    for (std::uint32_t i = 0; i < n_seeds; ++i) total += i % 8 + 1;
    seen = SvmBuffer(runtime(), total * 4);
    errors = SvmBuffer(runtime(), 4);
    runtime().svm_fill_zero(seen.get(), seen.size());
    runtime().svm_fill_zero(errors.get(), 4);
    sink.set_args(SinkArgs{static_cast<std::uint32_t*>(seen.get()), static_cast<std::uint32_t*>(errors.get()), total, 0})
        .uses(seen)
        .uses(errors);
    std::uint32_t base = 0;
    for (std::uint32_t i = 0; i < n_seeds; ++i) {
      seeds.push(Seed{base, i % 8 + 1});
      base += i % 8 + 1;
    }
  }

  void require_each_item_once() {
    std::vector<std::uint32_t> counts(total);
    runtime().svm_read(counts.data(), seen.get(), seen.size());
    std::uint32_t errs = 0;
    runtime().svm_read(&errs, errors.get(), 4);
    CHECK(errs == 0);
    std::size_t once = 0;
    for (auto c : counts) once += c == 1;
    CHECK(once == total);
  }
};

struct TreeGraph {
  Graph g;
  ChannelStackNode& stack;
  KernelNode& node;
  SvmBuffer per_level;
  std::uint32_t max_depth;

  explicit TreeGraph(std::uint32_t depth, Scheduler scheduler = Scheduler::Auto)
      : g(runtime(), {.wg_size = 16, .scheduler = scheduler}),
        stack(g.channel_stack<TreeNode>("tree", 1u << 14)),
        node(g.kernel<TreeNode>("grow", "tree")),
        max_depth(depth) {
    g.add_source(graph_kernels());
    make_edge(stack, node);
    make_edge(node, stack, Children{.max_per_item = 2});
    per_level = SvmBuffer(runtime(), 64 * 4);
    runtime().svm_fill_zero(per_level.get(), per_level.size());
    node.set_args(TreeArgs{static_cast<std::uint32_t*>(per_level.get())}).uses(per_level);
    stack.push(0, TreeNode{depth});
  }

  std::vector<std::uint32_t> levels() {
    std::vector<std::uint32_t> v(64);
    runtime().svm_read(v.data(), per_level.get(), 64 * 4);
    v.resize(max_depth + 1);
    return v;
  }
};

std::string run_error(Graph& g, SchedulingPolicy& p) {
  try {
    g.run(p);
  } catch (const RunError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("graph") {

TEST_CASE("Graph: the Figure 4-5 naive Fibonacci graph computes fib(n) for n = 1..27" * doctest::timeout(300)) {
  Greedy greedy;
  for (std::uint32_t n = 1; n <= 27; ++n) {
    CAPTURE(n);
    const auto r = workloads::fib_naive(runtime(), n, greedy);
    CHECK(r.value == workloads::fib_serial(n));
    CHECK(r.stats.ces == 2 * workloads::fib_serial(n) - 1);  // every call is one CE
  }
}

TEST_CASE("Graph: a two-stage pipeline delivers every CE exactly once") {
  Pipeline p(1000, 1024);  // items can hold 128 seeds' worth: admission control splits rounds
  Greedy greedy;
  const auto stats = p.g.run(greedy);
  p.require_each_item_once();
  CHECK(stats.ces_per_channel.at("seeds") == 1000);
  CHECK(stats.ces_per_channel.at("items") == p.total);
  CHECK(stats.rounds > 2);
}

TEST_CASE("Graph: Greedy and Levelized give identical results") {
  Greedy greedy;
  Levelized levelized;
  // In rounds, which the host plans, on every device (a GPU's Auto takes the device scheduler,
  // whose stacks grow levels ahead of the deepest it reached).
  TreeGraph a(10, Scheduler::Rounds), b(10, Scheduler::Rounds);
  RunOptions log{.record_dispatches = true};
  const auto sa = a.g.run(greedy, log);
  const auto sb = b.g.run(levelized, log);
  const auto la = a.levels(), lb = b.levels();
  CHECK(la == lb);
  for (std::uint32_t d = 0; d <= 10; ++d) CHECK(la[d] == (1u << d));
  CHECK(sa.max_level == 10);
  CHECK(sb.max_level == 10);
  // The stack grew on demand to the levels a dispatch could reach: 0..10 and 11, which the
  // level-10 dispatch was admitted to spawn into.
  CHECK(a.stack.depth() == 12);
  // Levelized ran one level per round, deepest first.
  std::map<std::uint64_t, std::set<std::uint32_t>> levels_per_round;
  for (const auto& d : sb.dispatch_log) levels_per_round[d.round].insert(d.level);
  for (const auto& [round, levels] : levels_per_round) CHECK(levels.size() == 1);

  Pipeline pa(300, 4096), pb(300, 4096);
  pa.g.run(greedy);
  pb.g.run(levelized);
  pa.require_each_item_once();
  pb.require_each_item_once();
  for (std::uint32_t n : {5u, 16u, 22u}) CHECK(workloads::fib_naive(runtime(), n, levelized).value == workloads::fib_serial(n));
}

TEST_CASE("Graph: a run counts the CEs of each stack level, and its serial depth reaches every task") {
  Levelized levelized;
  TreeGraph t(8);
  const RunStats first = t.g.run(levelized);
  const std::vector<std::uint64_t> whole = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  CHECK(first.ces_per_level.at("tree") == whole);
  CHECK(first.serial_depth == kSerialOff);
  // Run again from a new root, with tasks stopping at level 5: this run's counts, not the sum.
  t.stack.push(0, TreeNode{8});
  const RunStats second = t.g.run(levelized, {.serial_depth = 5});
  CHECK(second.ces_per_level.at("tree") == std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32});
  CHECK(second.serial_depth == 5);
  const auto seen = t.levels();  // both runs
  for (std::uint32_t d = 0; d <= 8; ++d) CHECK(seen[d] == (1u << d) + (d <= 5 ? (1u << d) : 0u));
}

TEST_CASE("Graph: a stack's levels grow to the width the recursion can reach, within the budget, and it is right") {
  Levelized levelized;
  const std::uint32_t base = 128, most = 2048, n = 16;  // a work-group of 64 asks for 128 at once
  // Within a budget no run reaches: level d holds 2^d CEs (two children a task), from 128 to 2,048.
  workloads::FibCilk grown(runtime(), {.capacity = base, .wg_size = 64});
  for (const auto& stack : grown.graph().stacks()) stack->grow_levels(2, most, std::uint64_t{1} << 40);
  for (int run = 0; run < 2; ++run) CHECK(grown.run(n, levelized).value == workloads::fib_serial(n));
  for (const auto& stack : grown.graph().stacks()) {
    CAPTURE(stack->name());
    REQUIRE(stack->depth() > 6);
    for (std::uint32_t d = 0; d < stack->depth(); ++d) {
      CAPTURE(d);
      CHECK(stack->level(d).config().capacity == std::clamp(1u << std::min(d, 16u), base, most));
      CHECK(stack->capacity_of(d) == stack->level(d).config().capacity);
    }
    CHECK(stack->largest_level() == most);
    CHECK(stack->capacity_of(stack->depth()) == most);  // what the next level would get
  }
  // A budget the table has passed already: every level as the first.
  workloads::FibCilk held(runtime(), {.capacity = base, .wg_size = 64});
  for (const auto& stack : held.graph().stacks()) stack->grow_levels(2, most, 0);
  CHECK(held.run(n, levelized).value == workloads::fib_serial(n));
  for (const auto& stack : held.graph().stacks()) {
    CAPTURE(stack->name());
    for (std::uint32_t d = 0; d < stack->depth(); ++d) CHECK(stack->level(d).config().capacity == base);
    CHECK(stack->largest_level() == base);
  }
}

TEST_CASE("Graph: a user-defined policy is honoured") {
  // Only ever one channel per round, seeds first, at most 16 CEs per dispatch.
  FunctionPolicy seeds_first("seeds-first", [](const GraphView& view, std::vector<Dispatch>& out) {
    for (const auto& c : view.channels)
      if (c.ready > 0 && c.admissible > 0) {
        out.push_back({c.id, c.name == "seeds" ? 16u : c.admissible});
        return;
      }
  });
  Pipeline custom(100, 4096), greedy_run(100, 4096);
  RunOptions log{.record_dispatches = true};
  const auto sc = custom.g.run(seeds_first, log);
  Greedy greedy;
  const auto sg = greedy_run.g.run(greedy, log);
  custom.require_each_item_once();
  greedy_run.require_each_item_once();
  CHECK(sc.policy == "seeds-first");

  // Observed order under the custom policy: 7 rounds of seeds (16 x 6 + 4), then items.
  REQUIRE(sc.dispatch_log.size() >= 8);
  for (std::size_t i = 0; i < 7; ++i) {
    CHECK(sc.dispatch_log[i].channel == "seeds");
    CHECK(sc.dispatch_log[i].count == (i < 6 ? 16u : 4u));
  }
  for (std::size_t i = 7; i < sc.dispatch_log.size(); ++i) CHECK(sc.dispatch_log[i].channel == "items");
  // Greedy takes every seed at once.
  CHECK(sg.dispatch_log.front().channel == "seeds");
  CHECK(sg.dispatch_log.front().count == 100);
  CHECK(sg.rounds < sc.rounds);
}

TEST_CASE("Graph: a channel's own predicate decides when it is dispatched") {
  // The sink takes items only in batches of 400, or whatever is left once the splitter is idle.
  Pipeline p(300, 4096);  // 300 seeds -> 1,350 items
  p.items.set_predicate([](const ChannelView& c) { return c.ready >= 400 || c.producers_idle; });
  FunctionPolicy few_seeds("few-seeds", [](const GraphView& view, std::vector<Dispatch>& out) {
    for (const auto& c : view.channels)
      if (c.predicate) out.push_back({c.id, c.name == "seeds" ? 40u : c.admissible});
  });
  const auto stats = p.g.run(few_seeds, {.record_dispatches = true});
  p.require_each_item_once();
  std::uint64_t seeds_left = 300;
  bool saw_small_batch_while_busy = false;
  for (const auto& d : stats.dispatch_log) {
    if (d.channel == "seeds") seeds_left -= d.count;
    else if (d.count < 400 && seeds_left > 0) saw_small_batch_while_busy = true;
  }
  CHECK_FALSE(saw_small_batch_while_busy);
  CHECK(stats.ces_per_channel.at("items") == p.total);
}

TEST_CASE("Graph: malformed graphs are rejected before they run, naming the nodes") {
  auto problems = [](auto build) -> std::string {
    Graph g(runtime(), {.wg_size = 64});
    g.add_source(graph_kernels());
    try {
      build(g);
      g.validate();
    } catch (const GraphError& e) {
      return e.what();
    }
    return "valid";
  };
  CHECK(problems([](Graph& g) {
          auto& k = g.kernel<Item>("sink", "sink");
          make_edge(g.channel<Item>("items", 1024), k);
          g.channel<Item>("orphan", 1024);
        }).find("channel 'orphan' has no consumer") != std::string::npos);
  CHECK(problems([](Graph& g) { g.kernel<Item>("lonely", "sink"); }).find("kernel node 'lonely' has no input") !=
        std::string::npos);
  CHECK(problems([](Graph& g) { make_edge(g.channel<Seed>("seeds", 1024), g.kernel<Item>("sink", "sink")); })
            .find("kernel node 'sink' takes 4-byte CEs but its input 'seeds' holds 8-byte CEs") != std::string::npos);
  CHECK(problems([](Graph& g) {
          auto& seeds = g.channel<Seed>("seeds", 1024);
          auto& items = g.channel<Item>("items", 256);
          auto& split = g.kernel<Seed>("split", "split");
          make_edge(seeds, split);
          make_edge(split, items, Spawns{.max_per_item = 8});
          make_edge(items, g.kernel<Item>("sink", "sink"));
        }).find("channel 'items' (capacity 256, largest reservation 256) cannot hold one work-group's request "
                "from kernel node 'split': 64 work-items x 8 CEs = 512") != std::string::npos);
  CHECK(problems([](Graph& g) {
          g.channel<Item>("twin", 64);
          g.kernel<Item>("twin", "sink");
        }).find("duplicate node name 'twin'") != std::string::npos);
  CHECK(problems([](Graph& g) {
          auto& items = g.channel<Item>("items", 1024);
          make_edge(items, g.kernel<Item>("a", "sink"));
          make_edge(items, g.kernel<Item>("b", "sink"));
        }).find("'items' already feeds kernel node 'a'; it cannot also feed 'b'") != std::string::npos);
  CHECK(problems([](Graph& g) {
          auto& s = g.channel_stack<TreeNode>("tree", 1024);
          auto& k = g.kernel<TreeNode>("grow", "tree");
          make_edge(s, k);
          make_edge(k, s, Continuation{});
        }).find("kernel node 'grow' has a continuation port into 'tree', which is a task stack") != std::string::npos);
  // A graph that is fine validates, and every problem is listed at once.
  CHECK(problems([](Graph& g) {
          auto& items = g.channel<Item>("items", 1024);
          make_edge(items, g.kernel<Item>("sink", "sink"));
        }) == "valid");
  const auto many = problems([](Graph& g) {
    g.channel<Item>("orphan", 64);
    g.kernel<Item>("lonely", "sink");
  });
  CHECK(many.find("orphan") != std::string::npos);
  CHECK(many.find("lonely") != std::string::npos);
}

TEST_CASE("Graph: a graph that can make no progress stops with a diagnostic instead of hanging" * doctest::timeout(60)) {
  // Naive Fibonacci in a 64-CE channel: the breadth-first frontier fills it, and since its node
  // cannot yield, no dispatch can be admitted while every ready task may spawn two.
  Greedy greedy;
  try {
    workloads::fib_naive(runtime(), 20, greedy, {}, 64, 16);
    FAIL("the run should have stopped");
  } catch (const RunError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("no progress possible") != std::string::npos);
    CHECK(msg.find("channel 'fib_tasks'") != std::string::npos);
    CHECK(msg.find("blocked on port 0 into 'fib_tasks'") != std::string::npos);
  }

  // A policy that never dispatches is caught the same way.
  FunctionPolicy idle("idle", [](const GraphView&, std::vector<Dispatch>&) {});
  Pipeline p(10, 1024);
  const auto msg = run_error(p.g, idle);
  CHECK(msg.find("no progress possible") != std::string::npos);
  CHECK(msg.find("the policy dispatched nothing") != std::string::npos);
}

TEST_CASE("Graph: a body breaking its declared spawn limit is reported") {
  Graph g(runtime(), {.wg_size = 16});
  g.add_source(graph_kernels());
  auto& in = g.channel<Item>("in", 1024);
  auto& out = g.channel<Item>("out", 1024);
  auto& k = g.kernel<Item>("overspawn", "overspawn");
  make_edge(in, k);
  make_edge(k, out, Spawns{.max_per_item = 2});
  auto& sink = g.kernel<Item>("sink", "sink");
  make_edge(out, sink);
  SvmBuffer seen(runtime(), 16), errors(runtime(), 4);
  runtime().svm_fill_zero(seen.get(), 16);
  runtime().svm_fill_zero(errors.get(), 4);
  sink.set_args(SinkArgs{static_cast<std::uint32_t*>(seen.get()), static_cast<std::uint32_t*>(errors.get()), 4, 0})
      .uses(seen)
      .uses(errors);
  in.push(Item{1});
  Greedy greedy;
  const auto msg = run_error(g, greedy);
  CHECK(msg.find("kernel node 'overspawn' spawned more than the 2 CE(s) per item its edge on port 0 declares") !=
        std::string::npos);
}

TEST_CASE("Graph: DOT output and the Chrome trace describe the run") {
  Pipeline p(50, 1024);
  const auto dot = p.g.to_dot();
  CHECK(dot.find("digraph chanflow") != std::string::npos);
  CHECK(dot.find("\"seeds\" -> \"split\"") != std::string::npos);
  CHECK(dot.find("\"split\" -> \"items\" [label=\"port 0 'items': <= 8/item\"]") != std::string::npos);
  CHECK(dot.find("\"items\" -> \"sink\"") != std::string::npos);

  // A name of this process's own: ctest runs this suite in two tests at once (graph, checked_frees).
  const auto path = std::filesystem::temp_directory_path() / fmt::format("chanflow-test-trace-{}.json", ::getpid());
  Greedy greedy;
  const auto stats = p.g.run(greedy, {.trace_path = path.string()});
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  std::size_t kernel_spans = 0;
  std::set<std::string> rows;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") rows.insert(e.at("args").at("name").get<std::string>());
    if (e.at("ph") == "X" && e.at("tid").get<int>() > 0) ++kernel_spans;
  }
  CHECK(kernel_spans == stats.dispatches);
  CHECK(rows.count("kernel split") == 1);
  CHECK(rows.count("kernel sink") == 1);
  CHECK(rows.count("aggregator") == 1);
  // The idle share is what its definition says (aggregator time over the run's), from the two
  // times the run measured, and both are times the run spent.
  REQUIRE(stats.wall_ms > 0.0);
  CHECK(stats.aggregator_ms > 0.0);
  CHECK(stats.aggregator_ms <= stats.wall_ms);
  CHECK(stats.device_idle_on_aggregator == doctest::Approx(stats.aggregator_ms / stats.wall_ms));
  std::filesystem::remove(path);
}

}  // TEST_SUITE
