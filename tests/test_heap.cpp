// The device heap (scheduler/cl/heap.cl): many work-groups allocating and freeing at once get
// blocks no one else holds, everything freed is reused, running out and bad frees fail the run by
// name, the host reads and frees what the device allocated, the C library's other memory
// functions (calloc, realloc, alloca, memcpy, memmove, memset) do what C says, and a block many
// tasks hold is freed by the last of them.
#include "chanflow/chanflow.hpp"
#include "chanflow/device_heap.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

constexpr std::uint32_t kItems = 8192;  // CEs, one work-item each: 128 work-groups of 64
constexpr std::uint32_t kPerItem = 4;   // blocks each item holds at once

// Item `id`'s k-th request: 8 to 1,000 bytes (the first 23 size classes), a multiple of 8.
std::uint64_t request_bytes(std::uint32_t id, std::uint32_t k) { return 8 + (id * 37u + k * 101u) % 125u * 8; }

constexpr const char* kChurn = R"CL(
typedef struct { __global ulong* blocks; __global uint* bad; } HeapArgs;
ulong request_bytes(uint id, uint k) { return 8ul + (ulong)((id * 37u + k * 101u) % 125u) * 8ul; }
ulong pattern(uint id, uint k, ulong i) { return ((ulong)id << 40) ^ ((ulong)k << 32) ^ (i * 2654435761ul); }

/* Takes kPerItem blocks and fills each with the item's pattern. */
void take_body(__global const uint* id, chanflow_ctx* ctx) {
  __global const HeapArgs* a = CHANFLOW_ARGS(ctx, HeapArgs);
  for (uint k = 0; k < 4u; ++k) {
    const ulong bytes = request_bytes(*id, k);
    __global ulong* p = (__global ulong*)chanflow_malloc(ctx->env, bytes);
    a->blocks[*id * 4u + k] = (ulong)p;
    if (p)
      for (ulong i = 0; i < bytes / 8ul; ++i) p[i] = pattern(*id, k, i);
  }
}
CHANFLOW_KERNEL_NODE(heap_take, uint, take_body)

/* Item `at` of one work-group's 64 checks each block of items 128·at to 128·at + 127 still holds
 * that item's pattern (another item given the same memory would have written its own), then
 * frees it: one work-group gives back what all of them took, as a frame is freed by its
 * continuation elsewhere than it was taken. */
void give_body(__global const uint* at, chanflow_ctx* ctx) {
  __global const HeapArgs* a = CHANFLOW_ARGS(ctx, HeapArgs);
  for (uint id = *at * 128u; id < *at * 128u + 128u; ++id)
    for (uint k = 0; k < 4u; ++k) {
      __global ulong* p = (__global ulong*)a->blocks[id * 4u + k];
      if (!p) continue;
      for (ulong i = 0; i < request_bytes(id, k) / 8ul; ++i)
        if (p[i] != pattern(id, k, i)) {
          atomic_inc(a->bad);
          break;
        }
      chanflow_free(ctx->env, p);
    }
}
CHANFLOW_KERNEL_NODE(heap_give, uint, give_body)

/* Frees the block it is handed twice. */
void twice_body(__global const uint* id, chanflow_ctx* ctx) {
  __global void* p = chanflow_malloc(ctx->env, 100ul + *id);
  chanflow_free(ctx->env, p);
  chanflow_free(ctx->env, p);
}
CHANFLOW_KERNEL_NODE(heap_twice, uint, twice_body)
)CL";

// One item's run through the C library's other functions; results in `out` (see the test).
constexpr const char* kLibrary = R"CL(
typedef struct { __global ulong* out; __global ulong* host_block; } LibArgs;
void library_body(__global const uint* id, chanflow_ctx* ctx) {
  __global ulong* out = CHANFLOW_ARGS(ctx, LibArgs)->out;
  __global const chanflow_node_env* env = ctx->env;
  /* calloc: zeroed, even where the block was used before */
  __global uchar* used = (__global uchar*)chanflow_malloc(env, 200);
  for (uint i = 0; i < 200u; ++i) used[i] = 0xab;
  chanflow_free(env, used);
  __global uchar* z = (__global uchar*)chanflow_calloc(env, 50, 4);
  ulong sum = 0;
  for (uint i = 0; i < 200u; ++i) sum += z[i];
  out[0] = sum;
  /* realloc: a larger block keeps the contents */
  for (uint i = 0; i < 200u; ++i) z[i] = (uchar)i;
  __global uchar* r = (__global uchar*)chanflow_realloc(env, z, 5000);
  ulong same = 0;
  for (uint i = 0; i < 200u; ++i) same += r[i] == (uchar)i;
  out[1] = same;
  /* memcpy between address spaces, memmove with overlap, memset */
  uchar priv[24];
  for (uint i = 0; i < 24u; ++i) priv[i] = (uchar)(100 + i);
  chanflow_memcpy_gp(r, priv, 24);
  chanflow_memmove_gg(r + 4, r, 16);     /* overlapping, forwards */
  chanflow_memset_g(r + 20, 7, 4);
  uchar back[24];
  chanflow_memcpy_pg(back, r, 24);
  ulong packed = 0;
  for (uint i = 0; i < 8u; ++i) packed = packed << 8 | back[i * 3u];
  out[2] = packed;
  /* alloca: released together */
  ulong chain = 0;
  for (uint i = 0; i < 5u; ++i) ((__global uint*)chanflow_alloca(env, &chain, 64u * (i + 1u)))[0] = i;
  out[3] = chain != 0ul;
  chanflow_release_allocas(env, chain);
  /* handed to the host: stays readable and freeable there */
  __global ulong* keep = (__global ulong*)chanflow_malloc(env, 64);
  for (uint i = 0; i < 8u; ++i) keep[i] = 1000u + i;
  *CHANFLOW_ARGS(ctx, LibArgs)->host_block = (ulong)keep;
  chanflow_free(env, r);
}
CHANFLOW_KERNEL_NODE(heap_library, uint, library_body)
)CL";

struct HeapArgs {
  std::uint64_t* blocks;
  std::uint32_t* bad;
};

// A graph of one kernel node over a channel of item ids.
struct ItemGraph {
  ItemGraph(const char* source, const char* kernel, DeviceHeap* heap, Scheduler scheduler = Scheduler::Auto)
      : graph(runtime(), {.wg_size = 64, .scheduler = scheduler}) {
    graph.add_source(source);
    auto& in = graph.channel<std::uint32_t>("items", kItems);
    node = &graph.kernel<std::uint32_t>(kernel, kernel);
    make_edge(in, *node);
    items = &in;
    if (heap) graph.set_heap(*heap);
  }
  void run(std::uint32_t count) {
    auto r = items->channel().talloc(count);  // one host reservation for all of them
    REQUIRE(r);
    for (std::uint32_t id = 0; id < count; ++id) std::memcpy(r->ces.data() + id * sizeof id, &id, sizeof id);
    items->channel().enq(std::move(*r));
    Greedy policy;
    graph.run(policy);
  }
  Graph graph;
  ChannelNode* items = nullptr;
  KernelNode* node = nullptr;
};

// What a run that must fail says.
template <class F>
std::string run_error(F&& run) {
  try {
    run();
  } catch (const RunError& e) {
    return e.what();
  }
  return "(the run did not fail)";
}

// Arena bytes one round of take_body needs: every block's header and payload.
std::uint64_t round_bytes() {
  std::uint64_t bytes = 0;
  for (std::uint32_t id = 0; id < kItems; ++id)
    for (std::uint32_t k = 0; k < kPerItem; ++k)
      bytes += CHANFLOW_HEAP_UNIT + chanflow_heap_class_bytes(chanflow_heap_class_of(request_bytes(id, k)));
  return bytes;
}

}  // namespace

TEST_SUITE("heap") {

TEST_CASE("Size classes: each request gets the smallest class that holds it, at most a quarter wasted") {
  for (std::uint64_t bytes : {1ull, 16ull, 17ull, 64ull, 65ull, 100ull, 1000ull, 4097ull, 68ull << 20, 5ull << 30}) {
    CAPTURE(bytes);
    const std::uint32_t c = chanflow_heap_class_of(bytes);
    REQUIRE(c < CHANFLOW_HEAP_CLASSES);
    CHECK(chanflow_heap_class_bytes(c) >= bytes);
    if (c > 0) CHECK(chanflow_heap_class_bytes(c - 1) < bytes);
    CHECK(chanflow_heap_class_bytes(c) % CHANFLOW_HEAP_UNIT == 0);
    if (bytes > 64) CHECK(chanflow_heap_class_bytes(c) <= bytes + bytes / 4);
  }
  CHECK(chanflow_heap_class_of(std::uint64_t{1} << 40) == CHANFLOW_HEAP_CLASSES);  // larger than any class
}

TEST_CASE("Work-groups allocating and freeing at once: no block handed out twice, everything freed reused") {
  // Room for one round and a quarter: the second and third rounds must reuse freed blocks. And
  // room for four rounds: blocks freed by other work-groups than took them are reused before the
  // arena grows (fresh units are pages to touch on a CPU device), so it stays within a quarter of
  // one round's (an allocation tries a few lists, CHANFLOW_HEAP_PROBE, before fresh units).
  const std::uint64_t need = round_bytes();
  for (const std::uint64_t bytes : {need + need / 4, 4 * need}) {
  CAPTURE(bytes);
  DeviceHeap heap(runtime(), bytes);
  SvmBuffer blocks(runtime(), std::size_t{kItems} * kPerItem * sizeof(std::uint64_t));
  SvmBuffer bad(runtime(), sizeof(std::uint32_t));
  runtime().svm_fill_zero(bad.get(), bad.size());
  const HeapArgs args{static_cast<std::uint64_t*>(blocks.get()), static_cast<std::uint32_t*>(bad.get())};
  ItemGraph take(kChurn, "heap_take", &heap), give(kChurn, "heap_give", &heap);
  take.node->set_args(args).uses(blocks);
  give.node->set_args(args).uses(blocks).uses(bad);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    take.run(kItems);
    std::vector<std::uint64_t> got(std::size_t{kItems} * kPerItem);
    runtime().svm_read(got.data(), blocks.get(), blocks.size());
    // Every request met, inside the arena, no two blocks overlapping.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    for (std::uint32_t id = 0; id < kItems; ++id)
      for (std::uint32_t k = 0; k < kPerItem; ++k) {
        const std::uint64_t p = got[id * kPerItem + k];
        REQUIRE(heap.contains(reinterpret_cast<void*>(p)));
        spans.emplace_back(p, p + request_bytes(id, k));
      }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) REQUIRE(spans[i - 1].second + CHANFLOW_HEAP_UNIT <= spans[i].first);
    if (round == 0) CHECK(heap.high_water_bytes() <= need + need / 4);
    CHECK(heap.live_blocks() == std::uint64_t{kItems} * kPerItem);
    give.run(kItems / 128);
    std::uint32_t mismatches = 1;
    runtime().svm_read(&mismatches, bad.get(), sizeof mismatches);
    CHECK(mismatches == 0);
    CHECK(heap.live_blocks() == 0);
  }
  CHECK(heap.high_water_bytes() <= need + need / 4);
  }
}

TEST_CASE("Running out fails the run by name, with the request and the heap's size; a double free too") {
  SvmBuffer blocks(runtime(), std::size_t{kItems} * kPerItem * sizeof(std::uint64_t));
  const HeapArgs args{static_cast<std::uint64_t*>(blocks.get()), nullptr};
  {
    DeviceHeap heap(runtime(), round_bytes() / 2);
    ItemGraph take(kChurn, "heap_take", &heap);
    take.node->set_args(args).uses(blocks);
    const std::string error = run_error([&] { take.run(kItems); });
    CHECK_MESSAGE(error.find("kernel node 'heap_take' asked the device heap for") != std::string::npos, error);
    CHECK_MESSAGE(error.find("raise its size (RunSettings::heap_bytes: CHANFLOW_HEAP, --heap") != std::string::npos, error);
  }
  {
    DeviceHeap heap(runtime(), 1 << 20);
    ItemGraph twice(kChurn, "heap_twice", &heap);
    const std::string error = run_error([&] { twice.run(64); });
    CHECK_MESSAGE(error.find("kernel node 'heap_twice' freed 0x") != std::string::npos, error);
    CHECK_MESSAGE(error.find("took back already") != std::string::npos, error);
  }
  {
    ItemGraph take(kChurn, "heap_take", nullptr);
    take.node->set_args(args).uses(blocks);
    CHECK_THROWS_WITH_AS(take.run(1), doctest::Contains("its graph has no device heap (Graph::set_heap)"), RunError);
  }
}

constexpr const char* kHolders = R"CL(
typedef struct { __global ulong* block; uint holders; uint counted; } HoldArgs;
/* Item 0 takes a block held by one task (or not counted) and hands it to `holders - 1` more. */
void hold_take_body(__global const uint* id, chanflow_ctx* ctx) {
  __global const HoldArgs* a = CHANFLOW_ARGS(ctx, HoldArgs);
  if (*id != 0u) return;
  __global uint* b = (__global uint*)chanflow_malloc(ctx->env, 64);
  b[0] = a->counted ? 1u : 0u;
  chanflow_caps_hold(b, (long)a->holders - 1);
  *a->block = (ulong)b;
}
CHANFLOW_KERNEL_NODE(hold_take, uint, hold_take_body)
/* Every item is one holder letting go. */
void hold_release_body(__global const uint* id, chanflow_ctx* ctx) {
  (void)id;
  __global const HoldArgs* a = CHANFLOW_ARGS(ctx, HoldArgs);
  chanflow_caps_release(ctx->env, (__global const void*)*a->block);
}
CHANFLOW_KERNEL_NODE(hold_release, uint, hold_release_body)
)CL";

// A block several tasks read (a compiled cilk_for's, held by its leaves and parts): the holders
// let go at once, and only the last frees it, once; a block not counted is never freed by them.
TEST_CASE("A block held by many tasks is freed by the last of them to let go, once") {
  DeviceHeap heap(runtime(), 1 << 20);
  SvmBuffer block(runtime(), sizeof(std::uint64_t));
  struct HoldArgs {
    std::uint64_t* block;
    std::uint32_t holders, counted;
  } args{static_cast<std::uint64_t*>(block.get()), kItems, 1};
  ItemGraph take(kHolders, "hold_take", &heap), release(kHolders, "hold_release", &heap);
  take.node->set_args(args).uses(block);
  release.node->set_args(args).uses(block);
  take.run(1);
  REQUIRE(heap.live_blocks() == 1);
  release.run(kItems - 1);  // all but one let go, thousands at once
  CHECK(heap.live_blocks() == 1);
  release.run(1);
  CHECK(heap.live_blocks() == 0);
  args.counted = 0;  // main's blocks: in SVM, not counted, never freed by a holder
  take.node->set_args(args);
  release.node->set_args(args);
  take.run(1);
  release.run(kItems);
  CHECK(heap.live_blocks() == 1);
}

TEST_CASE("calloc, realloc, alloca, memcpy, memmove and memset; a block the device allocated is the host's to read and free") {
  DeviceHeap heap(runtime(), 1 << 20);
  SvmBuffer out(runtime(), 4 * sizeof(std::uint64_t)), host_block(runtime(), sizeof(std::uint64_t));
  struct LibArgs {
    std::uint64_t* out;
    std::uint64_t* host_block;
  } args{static_cast<std::uint64_t*>(out.get()), static_cast<std::uint64_t*>(host_block.get())};
  // In rounds, so that the one item runs at one global id every time: a block goes back to the
  // shard of the item that took it (heap.cl), and the device scheduler's work-groups (a GPU's
  // Auto) claim the item in any order, so a second run there may start on another shard's lists.
  ItemGraph library(kLibrary, "heap_library", &heap, Scheduler::Rounds);
  library.node->set_args(args).uses(out).uses(host_block);
  library.run(1);
  std::uint64_t got[4] = {};
  runtime().svm_read(got, out.get(), sizeof got);
  CHECK(got[0] == 0);    // calloc zeroed a block that held 0xab
  CHECK(got[1] == 200);  // realloc kept all 200 bytes
  // r = 100..123, then r[4..20) = old r[0..16) = 100..115, then r[20..24) = 7: every third byte.
  const std::uint8_t expect[24] = {100, 101, 102, 103, 100, 101, 102, 103, 104, 105, 106, 107,
                                   108, 109, 110, 111, 112, 113, 114, 115, 7,   7,   7,   7};
  std::uint64_t packed = 0;
  for (int i = 0; i < 8; ++i) packed = packed << 8 | expect[i * 3];
  CHECK(got[2] == packed);
  CHECK(got[3] == 1);
  std::uint64_t kept = 0;
  runtime().svm_read(&kept, host_block.get(), sizeof kept);
  auto* block = reinterpret_cast<std::uint64_t*>(kept);
  REQUIRE(heap.contains(block));
  CHECK(heap.live_blocks() == 1);  // the library freed everything else it took
  heap.map();
  CHECK(heap.usable_size(block) == 64);
  CHECK(block[0] == 1000);
  CHECK(block[7] == 1007);
  heap.free(block);
  CHECK(heap.live_blocks() == 0);
  CHECK(heap.usable_size(block) == 0);
  CHECK_THROWS_WITH_AS(heap.free(block), doctest::Contains("given back already"), std::invalid_argument);
  heap.unmap();
  // Mapped with nothing live (the header alone), the block is still known as given back.
  heap.map();
  CHECK(heap.usable_size(block) == 0);
  CHECK_THROWS_WITH_AS(heap.free(block), doctest::Contains("given back already"), std::invalid_argument);
  heap.unmap();
  // Everything this run took is free again: the next one, on the same shard, reuses it all.
  const std::uint64_t high_water = heap.high_water_bytes();
  library.run(1);
  runtime().svm_read(&kept, host_block.get(), sizeof kept);
  heap.map();
  heap.free(reinterpret_cast<void*>(kept));
  heap.unmap();
  CHECK(heap.high_water_bytes() == high_water);
}

}  // TEST_SUITE
