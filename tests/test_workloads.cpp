// The workloads (workloads/<name>/): every chanflow implementation correct at small sizes with
// generous capacities and with tiny ones (where tasks yield), under both policies and every
// dispatch mode the device allows; the baselines against the same references; size limits.
#include "chanflow/chanflow.hpp"
#include "common/workload.hpp"
#include "fib/fib.hpp"
#include "uts/uts.hpp"
#include "queens/queens.hpp"
#include "nqueens/nqueens.hpp"
#include "sort/sort.hpp"
#include "strassen/strassen.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace chanflow;
using chanflow::test::dispatch_modes;
using chanflow::test::runtime;

namespace {

struct SmallCase {
  const char* workload;
  std::uint64_t size;
  std::uint32_t tiny_capacity;  // one work-group's worst-case request per level (wg 16)
  bool yields_when_tiny;        // whether a level outgrows it
  // The same for chanflow-compiled (0: the same): its loops may spawn --max-loop-spawns children
  // (queens.c: 18, QUEENS_MAX), where the hand-built graph asks for n, and a cilk_for up to 32
  // leaves (strassen.c's sums, combination and base case).
  std::uint32_t compiled_tiny_capacity = 0;
};

// Work-groups of 16: fib spawns 2 children per task, queens up to n (10 here), sort 4. Sort 70,000
// at 64 CEs per level once failed: a yielding merge launched before a continuation admitted into
// the same level took its room; and under greedy with planned sweeps it stalled one run in three
// (ready frames left unswept after a stall), until the stall recovery swept continuations first.
constexpr std::uint32_t kWg = 16;
// Strassen at the workload's base case (64) recurses two levels at 256, one at 128; a task may
// spawn 8 data tasks on a GPU (bands of rows), 7 products on a CPU device.
const SmallCase kCases[] = {{"fib", 18, 2 * kWg, true},          {"queens", 10, 10 * kWg, true, 18 * kWg},
                            {"nqueens", 10, 10 * kWg, true, 18 * kWg},
                            {"sort", 70000, 4 * kWg, true},       {"sort-u64", 70000, 4 * kWg, true},
                            {"strassen", 256, 8 * kWg, false, 32 * kWg}, {"strassen-f64", 128, 8 * kWg, false},
                            {"uts", 20, 2 * kWg, true}};

}  // namespace

TEST_SUITE("workloads") {
  TEST_CASE("every chanflow implementation is correct with generous and tiny capacities, both policies, every dispatch mode") {
    for (const auto& c : kCases) {
      const auto& w = workloads::find_workload(c.workload);
      for (const char* policy : {"levelized", "greedy"})
        for (const Sweeps mode : dispatch_modes())
          for (const std::uint32_t capacity : {0u, c.tiny_capacity}) {
            for (const auto& impl : w.impls()) {
              if (impl.rfind("chanflow", 0) != 0) continue;
              // One channel (the naive Fibonacci, the tree search's graph): tiny cannot hold the tree.
              const bool one_channel = impl == "chanflow-naive" ||
                                       (std::string_view(c.workload) == "uts" && impl != "chanflow-compiled");
              if (one_channel && capacity != 0) continue;
              // Compiled Sort and Strassen under one policy here (the CI's time; soak_compiled runs
              // sort.c under both, and their graphs' shape is the compiler's, tested with fib.c's).
              if (impl == "chanflow-compiled" && std::string_view(policy) == "greedy" &&
                  (std::string_view(c.workload) == "sort" || std::string_view(c.workload) == "strassen"))
                continue;
              RunSettings s;
              s.policy = policy;
              s.capacity = impl == "chanflow-compiled" && capacity && c.compiled_tiny_capacity ? c.compiled_tiny_capacity
                                                                                               : capacity;
              s.wg_size = kWg;
              s.dispatch = mode;
              // Every spawn a task (granularity control off), so that tiny levels make tasks
              // yield; the next test runs the serial forms.
              s.serial_cutoff.mode = SerialCutoff::Mode::Off;
              auto instance = w.prepare(runtime(), c.size, 1, s);
              const std::string workload = c.workload, policy_name = policy, dispatch = to_string(mode);
              CAPTURE(workload);
              CAPTURE(impl);
              CAPTURE(policy_name);
              CAPTURE(dispatch);
              CAPTURE(capacity);
              const auto m = instance->run(impl);
              CHECK(m.correct);
              REQUIRE(m.stats);
              CHECK(m.stats->ces > 0);
              // Tiny levels make tasks yield under host dispatch (sweeps claim only what fits).
              // Not Sort where its sorts of at most 2,048 keys are work-group tasks (a GPU):
              // 70,000 keys then make at most 64 per-item tasks a level, which a 64-CE level
              // holds (its own test below runs that shape at tiny capacities).
              const bool sort_in_groups = std::string_view(c.workload).starts_with("sort") &&
                                          workloads::work_group_data(workloads::DataTasks::ForDevice, runtime().caps());
              if (c.yields_when_tiny && !sort_in_groups && !one_channel && capacity != 0 && mode == Sweeps::Off &&
                  (impl == "chanflow" || impl == "chanflow-compiled"))
                CHECK(m.stats->yields > 0);
            }
          }
    }
  }

  TEST_CASE("granularity control on and off give the same results, at generous and tiny capacities") {
    // The compiled workloads' Cilk functions that have serial forms run them from a fixed depth
    // (the root's, one below it, three below it) and from the runtime's choice, run after run
    // (its first guess, then what each run's breadth says).
    const SerialCutoff cutoffs[] = {{.mode = SerialCutoff::Mode::Depth, .depth = 0},
                                    {.mode = SerialCutoff::Mode::Depth, .depth = 1},
                                    {.mode = SerialCutoff::Mode::Depth, .depth = 3},
                                    {.mode = SerialCutoff::Mode::Auto}};
    for (const auto& c : kCases) {
      const auto& w = workloads::find_workload(c.workload);
      const auto impls = w.impls();
      if (std::find(impls.begin(), impls.end(), "chanflow-compiled") == impls.end()) continue;
      for (const std::uint32_t capacity : {0u, c.compiled_tiny_capacity ? c.compiled_tiny_capacity : c.tiny_capacity})
        for (const SerialCutoff& cutoff : cutoffs) {
          RunSettings s;
          s.capacity = capacity;
          s.wg_size = kWg;
          s.serial_cutoff = cutoff;
          auto instance = w.prepare(runtime(), c.size, 1, s);
          const std::string workload = c.workload, serial = cutoff.to_string();
          CAPTURE(workload);
          CAPTURE(capacity);
          CAPTURE(serial);
          for (int run = 0; run < (cutoff.mode == SerialCutoff::Mode::Auto ? 3 : 1); ++run) {
            const auto m = instance->run("chanflow-compiled");
            CHECK(m.correct);
            REQUIRE(m.stats);
            if (std::string_view(c.workload).starts_with("strassen")) {
              // strassen.c's functions run cilk_for loops: no serial forms, every spawn a task.
              CHECK(m.stats->serial_depth == kSerialOff);
            } else if (cutoff.mode == SerialCutoff::Mode::Depth) {
              CHECK(m.stats->serial_depth == cutoff.depth);
              // Fib and Queens have serial forms: no task of theirs is deeper than the depth.
              if (std::string_view(c.workload) == "fib" || std::string_view(c.workload).ends_with("queens"))
                CHECK(m.stats->max_level <= cutoff.depth);
            } else {
              CHECK(m.stats->serial_depth != kSerialOff);
            }
          }
        }
    }
  }

  TEST_CASE("the baselines compute what the serial elision does") {
    for (const auto& c : kCases) {
      const auto& w = workloads::find_workload(c.workload);
      auto instance = w.prepare(runtime(), c.size, 1, {});
      for (const auto& impl : w.impls())
        if (impl.rfind("chanflow", 0) != 0) {
          CAPTURE(impl);
          CHECK(instance->run(impl).correct);
        }
    }
    // The serial elisions themselves, against independent values.
    for (std::uint32_t n = 1; n <= 30; ++n) CHECK(static_cast<std::uint64_t>(fib(n)) == workloads::fib_serial(n));
    for (std::uint32_t n = 1; n <= 11; ++n) CHECK(static_cast<std::uint64_t>(queens_solutions(static_cast<int>(n))) == workloads::queens_known(n));
    CHECK(workloads::queens_tbb_fine(12) == 14200);
    for (std::uint32_t n = 1; n <= 12; ++n) CHECK(static_cast<std::uint64_t>(nqueens_solutions(static_cast<int>(n))) == workloads::queens_known(n));
    CHECK(workloads::nqueens_tbb_fine(12) == 14200);
    CHECK(workloads::nqueens_tbb_cutoff(12) == 14200);
    // The tree search's elision against a count by another walk (an explicit stack, from
    // uts_tree.h's functions); its tree pinned at one size, so a change to its shape is seen.
    for (const std::uint64_t seed : {1u, 2u, 77u})
      for (const std::uint32_t heavy : {1u, 20u, 300u}) {
        const unsigned long root = uts_root(seed);
        std::vector<std::pair<unsigned long, bool>> stack{{uts_child(root, 0), true}};  // (state, the heavy child)
        for (std::uint32_t i = 1; i < workloads::kUtsRootChildren; ++i) stack.emplace_back(uts_child(root, i), false);
        std::uint64_t nodes = 1;  // the root
        while (!stack.empty()) {
          const auto [at, heavy_child] = stack.back();
          stack.pop_back();
          ++nodes;
          const unsigned n = heavy_child ? heavy : uts_binomial_children(at);
          for (unsigned i = 0; i < n; ++i) stack.emplace_back(uts_child(at, i), false);
        }
        CAPTURE(seed);
        CAPTURE(heavy);
        CHECK(static_cast<std::uint64_t>(uts_tree(seed, heavy)) == nodes);
      }
    CHECK(uts_tree(1, 20) == 3513);
    // The sort elision sorts (its reference is std::sort on the same keys), down to one key.
    for (long n : {1L, 2L, 63L, 64L, 65L, 1000L, 4099L}) {
      std::vector<unsigned> keys(static_cast<std::size_t>(n)), tmp(keys.size());
      for (long i = 0; i < n; ++i) keys[static_cast<std::size_t>(i)] = static_cast<unsigned>((i * 7919) % 1013);
      auto expected = keys;
      std::sort(expected.begin(), expected.end());
      cilksort(keys.data(), tmp.data(), n);
      CHECK(keys == expected);
    }
    CHECK(workloads::queens_tbb_cutoff(12) == 14200);
  }

  TEST_CASE("strassen: deep recursion over small base cases, tiny capacities, both ways of combining") {
    // n = 128 down to 8×8 base cases: four levels, 2,401 base cases; at 8 CEs per work-item per
    // level (one work-group's request) the deeper levels overflow and tasks
    // yield under host dispatch.
    constexpr std::uint64_t n = 128;
    constexpr std::uint32_t base = 8;
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (auto& x : a) x = uniform(gen);
    for (auto& x : b) x = uniform(gen);
    std::vector<double> reference(n * n);
    workloads::gemm_reference<float, double>(n, a.data(), b.data(), reference.data());
    SvmBuffer as(runtime(), n * n * sizeof(float)), bs(runtime(), n * n * sizeof(float)), cs(runtime(), n * n * sizeof(float));
    runtime().svm_write(as.get(), a.data(), n * n * sizeof(float));
    runtime().svm_write(bs.get(), b.data(), n * n * sizeof(float));
    const double bound = workloads::strassen_error_bound(n, base, 0x1p-24);
    Levelized levelized;
    Greedy greedy;
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)})
      for (const Sweeps mode : dispatch_modes())
        for (const std::uint32_t capacity : {4096u, 8 * kWg})
          for (const auto combine : {workloads::StrassenCombine::Atomic, workloads::StrassenCombine::Join})
            for (const bool groups : {false, true}) {  // the data in the tasks, or in work-group tasks
              const std::string dispatch = to_string(mode);
              const bool atomic = combine == workloads::StrassenCombine::Atomic;
              CAPTURE(dispatch);
              CAPTURE(capacity);
              CAPTURE(atomic);
              CAPTURE(groups);
              runtime().svm_fill_zero(cs.get(), cs.size());
              const RunStats stats = workloads::strassen_cilk(
                  runtime(), as, bs, cs, n, workloads::Precision::F32, *policy,
                  {.capacity = capacity, .wg_size = kWg, .dispatch = mode}, {}, combine, base,
                  groups ? workloads::DataTasks::WorkGroup : workloads::DataTasks::InTasks);
              runtime().svm_read(c.data(), cs.get(), n * n * sizeof(float));
              double worst = 0;
              for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - reference[i]));
              CHECK(worst <= bound);  // max|A|, max|B| < 1
              // Tasks (400 internal, 2,401 base cases) and their frames. With the data in
              // work-group tasks (a GPU's way), also one band forming the factors of each of the
              // 57 frames above the base cases' parents, and one combining each frame's products
              // (all 400 joined, or the 399 that add into a parent); there each frame runs once per
              // sync: three times where it formed factors, else twice, once less for an
              // accumulating root.
              const std::uint64_t internal = 1 + 7 + 49 + 343, forming = 1 + 7 + 49;
              if (!groups) {
                CHECK(stats.ces == internal + 2401 + internal + stats.restarts);
              } else {
                const std::uint64_t combining = atomic ? internal - 1 : internal;
                const std::uint64_t frame_runs = 3 * forming + 2 * (internal - forming) - (atomic ? 1 : 0);
                CHECK(stats.ces == internal + 2401 + forming + combining + frame_runs + stats.restarts);
              }
              if (capacity != 4096u && mode == Sweeps::Off) CHECK(stats.yields > 0);
            }
  }

  TEST_CASE("strassen: orders at or below the base case (the root multiplies by the definition)") {
    for (const char* name : {"strassen", "strassen-f64"})
      for (std::uint64_t n : {1u, 2u, 4u, 64u}) {
        const auto& w = workloads::find_workload(name);
        auto instance = w.prepare(runtime(), n, 3, {});
        for (const auto& impl : w.impls()) {
          if (impl.rfind("tbb", 0) == 0) continue;  // the baselines' case runs them (and ThreadSanitizer skips it)
          const std::string workload = name;
          CAPTURE(workload);
          CAPTURE(n);
          CAPTURE(impl);
          CHECK(instance->run(impl).correct);
        }
      }
  }

  TEST_CASE("sort: small sorts and merges as work-group tasks or in work-items, tiny capacities, both key widths") {
    // 70,000 keys with duplicates (the workload's keys are distinct): cilksort's quarters reach
    // 2,048 keys (work-group sorts of a power of two and of less) and its merges 8,192 (work-group
    // merges of unequal halves) at several depths.
    std::mt19937_64 gen(11);
    constexpr std::uint64_t n = 70000;
    for (const std::uint32_t key_bytes : {4u, 8u})
      for (const auto data : {workloads::DataTasks::WorkGroup, workloads::DataTasks::InTasks})
        for (const Sweeps mode : dispatch_modes())
          for (const std::uint32_t capacity : {4096u, 4 * kWg}) {
            const bool groups = data == workloads::DataTasks::WorkGroup;
            const std::string dispatch = to_string(mode);
            CAPTURE(key_bytes);
            CAPTURE(groups);
            CAPTURE(dispatch);
            CAPTURE(capacity);
            std::vector<std::uint64_t> keys(n);
            for (auto& k : keys) k = gen() % 50000;  // duplicates
            if (key_bytes == 4)
              for (auto& k : keys) k &= 0xffffffffu;
            SvmBuffer data_svm(runtime(), n * key_bytes), tmp_svm(runtime(), n * key_bytes);
            std::vector<std::uint32_t> narrow(keys.begin(), keys.end());
            runtime().svm_write(data_svm.get(), key_bytes == 4 ? static_cast<const void*>(narrow.data()) : keys.data(),
                                n * key_bytes);
            Levelized levelized;
            const RunStats stats = workloads::sort_cilk(
                runtime(), data_svm, tmp_svm, n, levelized, {.capacity = capacity, .wg_size = kWg, .dispatch = mode},
                {}, {workloads::kSortBase, workloads::kMergeBase}, key_bytes, data).stats;
            std::sort(keys.begin(), keys.end());
            if (key_bytes == 4) {
              std::vector<std::uint32_t> out(n);
              runtime().svm_read(out.data(), data_svm.get(), n * key_bytes);
              CHECK(std::equal(out.begin(), out.end(), keys.begin()));
            } else {
              std::vector<std::uint64_t> out(n);
              runtime().svm_read(out.data(), data_svm.get(), n * key_bytes);
              CHECK(out == keys);
            }
            std::uint64_t block_tasks = 0;  // the work-group tasks' stacks, over their levels
            for (const auto& [name, ces] : stats.ces_per_channel)
              block_tasks += name.rfind("sort_block", 0) == 0 || name.rfind("merge_block", 0) == 0 ? ces : 0;
            CHECK((block_tasks > 0) == groups);
          }
  }

  TEST_CASE("queens: the base case's depth does not change the count") {
    Levelized levelized;
    for (std::uint32_t rows : {0u, 2u, 5u, 8u})
      CHECK(workloads::queens_cilk(runtime(), 8, levelized, {.capacity = 4096, .wg_size = kWg}, {}, rows).value == 92);
  }

  TEST_CASE("sizes are checked, with the limit named") {
    const auto& caps = runtime().caps();
    CHECK_THROWS_WITH_AS(workloads::find_workload("fib").check_size(0, caps, {}), "fib 0: n must be at least 1",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(workloads::find_workload("queens").check_size(19, caps, {}),
                         doctest::Contains("n must be 1 to 18"), std::invalid_argument);
    CHECK_NOTHROW(workloads::find_workload("fib").check_size(40, caps, {}));
    CHECK_THROWS_WITH_AS(workloads::find_workload("sort").check_size(0, caps, {}), doctest::Contains("at least 1 key"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(workloads::find_workload("strassen").check_size(96, caps, {}),
                         doctest::Contains("n must be a power of two"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(workloads::find_workload("strassen").check_size(1u << 15, caps, {}),
                         doctest::Contains("n is at most 16384"), std::invalid_argument);
    CHECK_NOTHROW(workloads::find_workload("strassen").check_size(512, caps, {}));
    CHECK_THROWS_WITH_AS(workloads::find_workload("nosuch"),
                         doctest::Contains("there are: fib, queens, nqueens, sort, sort-u64, strassen, strassen-f64, uts"), std::invalid_argument);
  }
}
