// Work-group tasks (CHANFLOW_GROUP_KERNEL_NODE): one CE per work-group, every work-item of the
// group running the body on it with local memory shared, the result returned by the leader into
// the parent's frame; and what the library refuses about them.
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <numeric>

using namespace chanflow;
using chanflow::test::dispatch_modes;
using chanflow::test::runtime;

namespace {

constexpr std::uint32_t kBlock = 1000;  // elements per block: not a multiple of any work-group size
constexpr std::uint32_t kFanout = 8;    // blocks a split task hands to work-group tasks at most

// sum(lo, hi): the blocks [lo, hi) of an array, split in halves down to kFanout blocks, each block
// summed by a work-group task (a tree reduction in local memory) returning into its parent's slot.
struct SplitTask {
  chanflow_task task;
  std::uint32_t lo, hi;
};
struct SplitCont {
  chanflow_frame frame;
  std::uint64_t slot[kFanout];
};
struct SumArgs {
  const std::uint64_t* data;
  std::uint32_t* visits;  // per block: work-items that ran it
};

// The CE types, the frame's node and the work-group task (no CHANFLOW_PORT: any graph may hold them).
constexpr const char* kCommon = R"CL(
#define FANOUT 8u
#define BLOCK 1000u
typedef struct { chanflow_task task; uint lo, hi; } SplitTask;
typedef struct { chanflow_frame frame; ulong slot[FANOUT]; } SplitCont;
typedef struct { __global const ulong* data; __global uint* visits; } SumArgs;

void split_post_sync(__global SplitCont* c, chanflow_ctx* ctx) {
  ulong sum = 0;
  for (uint i = 0; i < FANOUT; ++i) sum += c->slot[i];
  chanflow_return(ctx, sum);
}
CHANFLOW_CONTINUATION_NODE(split_sync, SplitCont, split_post_sync)

/* This work-item's strided part of block `lo`'s sum; each item counts a visit of the block. */
ulong block_part(__global const ulong* data, __global uint* visits, uint lo) {
  atomic_inc(&visits[lo]);
  ulong sum = 0;
  for (uint i = chanflow_local_id(); i < BLOCK; i += CHANFLOW_WG_SIZE) sum += data[(ulong)lo * BLOCK + i];
  return sum;
}

/* The whole work-group sums one block: strided partial sums, then a tree in local memory. */
typedef struct { ulong part[CHANFLOW_WG_SIZE]; } Partials;
void block_body(__global SplitTask* t, __local Partials* local_sums, chanflow_ctx* ctx) {
  __global const SumArgs* args = CHANFLOW_ARGS(ctx, SumArgs);
  const uint lid = chanflow_local_id();
  local_sums->part[lid] = block_part(args->data, args->visits, t->lo);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 1u; s < CHANFLOW_WG_SIZE; s *= 2u) {
    const ulong other = lid % (2u * s) == 0u && lid + s < CHANFLOW_WG_SIZE ? local_sums->part[lid + s] : 0ul;
    barrier(CLK_LOCAL_MEM_FENCE);
    local_sums->part[lid] += other;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  chanflow_return(ctx, local_sums->part[0]); /* the leader's value is the task's */
}
CHANFLOW_GROUP_KERNEL_NODE(block_sum, SplitTask, Partials, block_body)
)CL";

// Splits a range of blocks in halves, handing at most FANOUT blocks to work-group tasks.
constexpr const char* kSplit = R"CL(
void split_pre_sync(__global SplitTask* t, chanflow_ctx* ctx) {
  const SplitCont cont = {CHANFLOW_FRAME_INIT, {0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul, 0ul}};
  chanflow_spawn_continuation(ctx, cont);
  if (t->hi - t->lo <= FANOUT) {
    for (uint b = t->lo; b < t->hi; ++b) {
      const SplitTask block = {CHANFLOW_TASK_INIT, b, b + 1u};
      chanflow_spawn_child(ctx, CHANFLOW_PORT(split_spawn, blocks), block, b - t->lo);
    }
    return;
  }
  const uint mid = t->lo + (t->hi - t->lo) / 2u;
  const SplitTask left = {CHANFLOW_TASK_INIT, t->lo, mid}, right = {CHANFLOW_TASK_INIT, mid, t->hi};
  chanflow_spawn_child(ctx, CHANFLOW_PORT(split_spawn, split), left, 0u);
  chanflow_spawn_child(ctx, CHANFLOW_PORT(split_spawn, split), right, 1u);
}
CHANFLOW_YIELDING_KERNEL_NODE(split_spawn, SplitTask, split_pre_sync)
)CL";

// A work-group task whose work-items other than the leader spawn.
constexpr const char* kChatty = R"CL(
void chatty_body(__global SplitTask* t, __local Partials* unused, chanflow_ctx* ctx) {
  (void)unused;
  const SplitTask next = {CHANFLOW_TASK_INIT, t->lo, t->hi};
  if (chanflow_local_id() == 1u) chanflow_spawn(ctx, CHANFLOW_PORT(chatty, sink), next);
}
CHANFLOW_GROUP_KERNEL_NODE(chatty, SplitTask, Partials, chatty_body)
void sink_body(__global SplitTask* t, chanflow_ctx* ctx) { (void)t; (void)ctx; }
CHANFLOW_KERNEL_NODE(sink, SplitTask, sink_body)
)CL";

// The same sums by forwarding: a split node without a continuation hands its children its own
// return (chanflow_forward_children), and each block's work-group adds its sum into a total. A
// round that sweeps the splits may then sweep the blocks with them (GraphOptions::sweep_spawned).
constexpr const char* kForward = R"CL(
typedef struct { __global const ulong* data; __global uint* visits; __global ulong* total; } ForwardArgs;
void fblock_body(__global SplitTask* t, __local Partials* local_sums, chanflow_ctx* ctx) {
  __global const ForwardArgs* args = CHANFLOW_ARGS(ctx, ForwardArgs);
  const uint lid = chanflow_local_id();
  local_sums->part[lid] = block_part(args->data, args->visits, t->lo);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0u) {
    ulong all = 0;
    for (uint i = 0; i < CHANFLOW_WG_SIZE; ++i) all += local_sums->part[i];
    atom_add(args->total, all);
  }
}
CHANFLOW_GROUP_KERNEL_NODE(fblock_sum, SplitTask, Partials, fblock_body)
void fsplit_body(__global SplitTask* t, chanflow_ctx* ctx) {
  if (t->hi - t->lo <= FANOUT) {
    for (uint b = t->lo; b < t->hi; ++b) {
      const SplitTask block = {CHANFLOW_TASK_INIT, b, b + 1u};
      chanflow_spawn_void_child(ctx, CHANFLOW_PORT(fsplit, blocks), block);
    }
  } else {
    const uint mid = t->lo + (t->hi - t->lo) / 2u;
    const SplitTask left = {CHANFLOW_TASK_INIT, t->lo, mid}, right = {CHANFLOW_TASK_INIT, mid, t->hi};
    chanflow_spawn_void_child(ctx, CHANFLOW_PORT(fsplit, split), left);
    chanflow_spawn_void_child(ctx, CHANFLOW_PORT(fsplit, split), right);
  }
  chanflow_forward_children(ctx);
}
CHANFLOW_YIELDING_KERNEL_NODE(fsplit, SplitTask, fsplit_body)
)CL";

struct ForwardArgs {
  const std::uint64_t* data;
  std::uint32_t* visits;
  std::uint64_t* total;
};

// The split/sum graph over `blocks` blocks of `data`.
struct BlockSums {
  BlockSums(const SvmBuffer& data, const SvmBuffer& visits, const SvmBuffer& result, std::uint32_t capacity,
            std::uint32_t wg, Sweeps mode, Scheduler scheduler = Scheduler::Rounds)
      : graph(runtime(), {.wg_size = wg, .device_sweeps = mode, .scheduler = scheduler}) {
    graph.add_source(kCommon);
    graph.add_source(kSplit);
    auto& split = graph.channel_stack<SplitTask>("split", capacity);
    auto& blocks = graph.channel_stack<SplitTask>("blocks", capacity);
    auto& conts = graph.channel_stack<SplitCont>("split_cont", capacity, StackKind::Continuations);
    auto& spawn = graph.kernel<SplitTask>("split_spawn", "split_spawn");
    auto& sync = graph.kernel<SplitCont>("split_sync", "split_sync");
    auto& sum = graph.kernel<SplitTask>("block_sum", "block_sum");
    make_edge(split, spawn);
    make_edge(spawn, conts, Continuation{});
    make_edge(spawn, split, Children{.max_per_item = 2});
    make_edge(spawn, blocks, Children{.max_per_item = kFanout});
    make_edge(conts, sync);
    make_edge(blocks, sum);
    const SumArgs args{static_cast<const std::uint64_t*>(data.get()), static_cast<std::uint32_t*>(visits.get())};
    sum.set_args(args).uses(data).uses(visits);
    sync.uses(result);
    tasks = &split;
  }
  Graph graph;
  ChannelStackNode* tasks = nullptr;
};

// The forwarding graph (kForward).
struct ForwardSums {
  ForwardSums(const SvmBuffer& data, const SvmBuffer& visits, const SvmBuffer& total, Sweeps mode, bool spawned)
      : graph(runtime(), {.wg_size = 16, .device_sweeps = mode, .sweep_spawned = spawned, .scheduler = Scheduler::Rounds}) {
    graph.add_source(kCommon);
    graph.add_source(kForward);
    auto& split = graph.channel_stack<SplitTask>("split", 4096);
    auto& blocks = graph.channel_stack<SplitTask>("blocks", 4096);
    auto& spawn = graph.kernel<SplitTask>("fsplit", "fsplit");
    auto& sum = graph.kernel<SplitTask>("fblock_sum", "fblock_sum");
    make_edge(split, spawn);
    make_edge(spawn, split, Children{.max_per_item = 2});
    make_edge(spawn, blocks, Children{.max_per_item = kFanout});
    make_edge(blocks, sum);
    const ForwardArgs args{static_cast<const std::uint64_t*>(data.get()), static_cast<std::uint32_t*>(visits.get()),
                           static_cast<std::uint64_t*>(total.get())};
    sum.set_args(args).uses(data).uses(visits).uses(total);
    tasks = &split;
  }
  Graph graph;
  ChannelStackNode* tasks = nullptr;
};

// kBlocks blocks of consecutive values in SVM, a count of visits per block, and a result word:
// what both sum graphs read and write, and the checks of what they left.
struct Blocks {
  static constexpr std::uint32_t kBlocks = 300;
  explicit Blocks(std::uint64_t first) : values(std::size_t{kBlocks} * kBlock) {
    std::iota(values.begin(), values.end(), first);
    expected = std::accumulate(values.begin(), values.end(), std::uint64_t{0});
    runtime().svm_write(data.get(), values.data(), values.size() * sizeof(std::uint64_t));
  }
  void check(std::uint32_t wg) const {
    std::uint64_t sum = 0;
    runtime().svm_read(&sum, result.get(), sizeof sum);
    CHECK(sum == expected);
    std::vector<std::uint32_t> seen(kBlocks);
    runtime().svm_read(seen.data(), visits.get(), visits.size());
    CHECK(std::all_of(seen.begin(), seen.end(), [&](std::uint32_t v) { return v == wg; }));
  }
  std::vector<std::uint64_t> values;
  std::uint64_t expected = 0;
  SvmBuffer data{runtime(), std::size_t{kBlocks} * kBlock * sizeof(std::uint64_t)};
  SvmBuffer visits{runtime(), kBlocks * sizeof(std::uint32_t)};
  SvmBuffer result{runtime(), sizeof(std::uint64_t)};
};

}  // namespace

TEST_SUITE("group") {

TEST_CASE("A work-group task runs on every work-item of its group and returns into its parent's frame") {
  const Blocks in(7);
  Levelized levelized;
  Greedy greedy;
  for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)})
    for (const Sweeps mode : dispatch_modes())
      for (const std::uint32_t wg : {16u, 64u})
        for (const std::uint32_t capacity : {4096u, kFanout * wg}) {  // the smallest a work-group's request allows
          const std::string dispatch = to_string(mode);
          CAPTURE(dispatch);
          CAPTURE(wg);
          CAPTURE(capacity);
          BlockSums g(in.data, in.visits, in.result, capacity, wg, mode);
          for (int run = 0; run < 2; ++run) {  // a graph of work-group tasks runs again
            runtime().svm_fill_zero(in.visits.get(), in.visits.size());
            g.tasks->push(0, SplitTask{{reinterpret_cast<std::uint64_t>(in.result.get()), 0, 0, 0}, 0, Blocks::kBlocks});
            const RunStats stats = g.graph.run(*policy);
            in.check(wg);
            std::uint64_t block_tasks = 0;  // over the levels of the work-group tasks' stack
            for (const auto& [name, ces] : stats.ces_per_channel) block_tasks += name.rfind("blocks", 0) == 0 ? ces : 0;
            CHECK(block_tasks == Blocks::kBlocks);
          }
        }
}

// In the device_scheduler suite (its megakernel takes PoCL ~30 s to build; the group suite runs thrice).
TEST_CASE("The device scheduler runs work-group tasks beside per-item ones: the same sums, every block once" *
          doctest::timeout(600) * doctest::test_suite("device_scheduler")) {
  if (!device_scheduler_holds(runtime().caps())) return;  // refused there: test_device_scheduler.cpp
  const Blocks in(11);
  Levelized levelized;
  Greedy greedy;
  for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)})
    for (const std::uint32_t capacity : {4096u, kFanout * 16u}) {  // at the smallest, levels fill within a launch
      CAPTURE(policy->name());
      CAPTURE(capacity);
      BlockSums g(in.data, in.visits, in.result, capacity, 16, Sweeps::Auto, Scheduler::Device);
      for (int run = 0; run < 2; ++run) {
        runtime().svm_fill_zero(in.visits.get(), in.visits.size());
        g.tasks->push(0, SplitTask{{reinterpret_cast<std::uint64_t>(in.result.get()), 0, 0, 0}, 0, Blocks::kBlocks});
        const RunStats stats = g.graph.run(*policy);
        in.check(16);
        CHECK(stats.scheduler == "device");
        CHECK(stats.device_scheduler.batches > 0);
        CHECK(stats.yields == 0);  // every batch prepaid its outputs
      }
    }
}

TEST_CASE("A round that sweeps a forwarding node sweeps the stack it spawns into too: the same sums, fewer rounds") {
  const Blocks in(3);
  Levelized levelized;
  for (const Sweeps mode : dispatch_modes()) {
    const std::string dispatch = to_string(mode);
    CAPTURE(dispatch);
    std::uint32_t rounds[2] = {0, 0};
    for (const bool spawned : {false, true}) {
      CAPTURE(spawned);
      ForwardSums g(in.data, in.visits, in.result, mode, spawned);
      for (int run = 0; run < 2; ++run) {
        runtime().svm_fill_zero(in.visits.get(), in.visits.size());
        runtime().svm_fill_zero(in.result.get(), in.result.size());
        g.tasks->push(0, SplitTask{{0, 0, 0, 0}, 0, Blocks::kBlocks});
        rounds[spawned] = g.graph.run(levelized).rounds;
        in.check(16);
      }
    }
    // Planned sweeps chain the blocks behind the splits that spawn them; with host-sized
    // dispatches there is nothing to chain.
    if (mode == Sweeps::Planned) CHECK(rounds[1] < rounds[0]);
    if (mode == Sweeps::Off) CHECK(rounds[1] == rounds[0]);
  }
}

TEST_CASE("A work-group task's node kind is read from its program, and what it cannot do is refused") {
  {
    Graph g(runtime(), {.wg_size = 16});
    g.add_source(kCommon);
    auto& blocks = g.channel_stack<SplitTask>("blocks", 1024);
    auto& conts = g.channel_stack<SplitCont>("split_cont", 1024, StackKind::Continuations);
    auto& sum = g.kernel<SplitTask>("block_sum", "block_sum");
    auto& sync = g.kernel<SplitCont>("split_sync", "split_sync");
    make_edge(blocks, sum);
    make_edge(sum, conts, Continuation{});
    make_edge(conts, sync);
    CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("a work-group task (CHANFLOW_GROUP_KERNEL_NODE) never yields"),
                         GraphError);
    CHECK(sum.kind() == NodeKind::Group);
  }
  {
    Graph g(runtime(), {.wg_size = 16});
    g.add_source(kCommon);
    auto& in = g.channel<std::uint32_t>("words", 1024);
    auto& sum = g.kernel<std::uint32_t>("block_sum", "block_sum");
    make_edge(in, sum);
    CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("work-group task kernel node 'block_sum' takes 4-byte CEs"),
                         GraphError);
  }
}

TEST_CASE("Only a work-group task's leader spawns: another work-item's spawn fails the run, by name") {
  Graph g(runtime(), {.wg_size = 16});
  g.add_source(kCommon);
  g.add_source(kChatty);
  auto& in = g.channel<SplitTask>("in", 1024);
  auto& out = g.channel<SplitTask>("spawned", 1024);
  auto& chatty = g.kernel<SplitTask>("chatty", "chatty");
  auto& sink = g.kernel<SplitTask>("sink", "sink");
  make_edge(in, chatty);
  make_edge(chatty, out, Spawns{.max_per_item = 1, .name = "sink"});
  make_edge(out, sink);
  for (std::uint32_t i = 0; i < 3; ++i) in.push(SplitTask{{0, 0, 0, 0}, i, i});
  Levelized levelized;
  CHECK_THROWS_WITH_AS(g.run(levelized), doctest::Contains("kernel node 'chatty' is a work-group task, and a work-item other than its leader"),
                       RunError);
}

}  // TEST_SUITE
