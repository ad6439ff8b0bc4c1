// One RunSettings from the command line to the graph: what it leaves to the device is filled in
// from what the device reports (a CPU keeps its measured sizes, a GPU grows the stacks within its
// memory), and it reaches a compiled program's process through the environment and back intact.
#include "chanflow/cilk_runtime.hpp"
#include "chanflow/granularity.hpp"
#include "chanflow/run_settings.hpp"
#include "chanflow/run_stats.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <map>
#include <cstdlib>
#include <string>

using namespace chanflow;

namespace {

DeviceCaps cpu_caps() {
  DeviceCaps c;
  c.type = CL_DEVICE_TYPE_CPU;
  c.compute_units = 2;
  c.max_work_group_size = 4096;
  c.global_mem_bytes = 8ull << 30;
  return c;
}

// An H100 as NVIDIA's OpenCL reports it.
DeviceCaps gpu_caps() {
  DeviceCaps c;
  c.type = CL_DEVICE_TYPE_GPU;
  c.compute_units = 132;
  c.max_work_group_size = 1024;
  c.global_mem_bytes = 80ull << 30;
  return c;
}

// Sets the environment's CHANFLOW_* variables for one scope, and unsets them after.
struct Environment {
  explicit Environment(const std::vector<std::pair<std::string, std::string>>& vars) : vars_(vars) {
    for (const auto& [name, value] : vars_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const auto& [name, value] : vars_) ::unsetenv(name.c_str());
  }
  std::vector<std::pair<std::string, std::string>> vars_;
};

}  // namespace

TEST_SUITE("settings") {

TEST_CASE("What a run leaves to the device: a CPU keeps its sizes, a GPU grows the stacks within its memory") {
  const StackFootprint fib{.bytes_per_slot = 128, .levels = 32, .cpu_capacity = 4096};
  const RunSettings cpu = RunSettings{}.for_device(cpu_caps(), fib);
  CHECK(cpu.capacity == 4096);
  CHECK(cpu.wg_size == 64);

  const RunSettings gpu = RunSettings{}.for_device(gpu_caps(), fib);
  CHECK(gpu.wg_size == 256);
  CHECK(gpu.capacity == (1u << 20));  // 4 x 132 x 2,048 resident items allow 2^20; memory does too
  // Memory bounds it: 2^17 slots of 128 bytes on 32 levels is 1/16 of 8 GiB.
  DeviceCaps small = gpu_caps();
  small.global_mem_bytes = 8ull << 30;
  CHECK(RunSettings{}.for_device(small, fib).capacity == (1u << 17));
  // No wider than the widest level; no wider work-groups than the footprint asks.
  CHECK(RunSettings{}.for_device(gpu_caps(), {.bytes_per_slot = 128, .levels = 32, .cpu_capacity = 4096,
                                              .max_width = 10'000}).capacity == 16384);
  CHECK(RunSettings{}.for_device(gpu_caps(), {.bytes_per_slot = 128, .max_wg = 64}).wg_size == 64);
  // An unknown footprint keeps the CPU capacity everywhere (a compiled program's stacks).
  CHECK(RunSettings{}.for_device(gpu_caps()).capacity == 4096);
  // What was asked for stays.
  const RunSettings asked = RunSettings{.capacity = 300, .wg_size = 16}.for_device(gpu_caps(), fib);
  CHECK(asked.capacity == 300);
  CHECK(asked.wg_size == 16);
  CHECK(asked.graph_options().wg_size == 16);
  CHECK_THROWS_AS(RunSettings{}.graph_options(), std::logic_error);
}

TEST_CASE("A compiled program's stacks left to the device: a GPU's fill the channel table within its budget, a CPU's keep 4,096") {
  // fib's task CE (48 bytes) and a control pair per slot, over a table of 1,024 slots: 2^16 slots
  // of 64 bytes on every slot is 4 GiB, within an H100's budget (80 GiB / 16); 2^17 is not.
  CHECK(cilk::device_stack_capacity(gpu_caps(), 48, 1024, 4096) == (1u << 16));
  CHECK(cilk::device_stack_capacity(cpu_caps(), 48, 1024, 4096) == 4096);
  DeviceCaps small = gpu_caps();
  small.global_mem_bytes = 8ull << 30;
  CHECK(cilk::device_stack_capacity(small, 48, 1024, 4096) == 8192);
  // A smaller table leaves each slot more; never past 4x the resident work-items (2^20 here).
  CHECK(cilk::device_stack_capacity(gpu_caps(), 48, 64, 4096) == (1u << 20));
  // Large CEs keep the floor, and a floor above the budget's size (a work-group's request) stays.
  CHECK(cilk::device_stack_capacity(gpu_caps(), 64 * 1024, 1024, 4096) == 4096);
  CHECK(cilk::device_stack_capacity(small, 48, 1024, 16384) == 16384);
  // Whatever the CE, the whole table fits the budget unless the floor alone does not.
  for (const std::size_t ce : {8, 40, 48, 200, 1000, 5000}) {
    const std::uint64_t c = cilk::device_stack_capacity(gpu_caps(), ce, 1024, 4096);
    CHECK((c == 4096 || c * (ce + StackFootprint::kControlBytes) * 1024 <= gpu_caps().global_mem_bytes / 16));
  }
}

TEST_CASE("Settings reach a compiled program's process through the environment and come back the same") {
  // Every variable, defaults too: the process runs with exactly these settings.
  const auto defaults = RunSettings{}.environment();
  CHECK(defaults.size() == 12);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_CAPACITY", "0"}) == 1);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_DISPATCH", "auto"}) == 1);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_SCHEDULER", "auto"}) == 1);
  const RunSettings s{.capacity = 2048, .wg_size = 32, .policy = "greedy", .dispatch = Sweeps::Planned,
                      .scheduler = Scheduler::Device, .sweep_groups = 7, .max_channels = 512, .trace_path = "t.json", .heap_bytes = 3 << 20,
                      .serial_cutoff = {.mode = SerialCutoff::Mode::Depth, .depth = 11}, .quiet = true, .devices = "0-2"};
  const auto vars = s.environment();
  CHECK(vars.size() == 12);
  CHECK(std::count(vars.begin(), vars.end(), std::pair<std::string, std::string>{"CHANFLOW_DEVICES", "0-2"}) == 1);
  RunSettings back;
  {
    const Environment env(vars);
    back = RunSettings::from_environment();
  }
  CHECK(back.capacity == 2048);
  CHECK(back.wg_size == 32);
  CHECK(back.policy == "greedy");
  CHECK(back.dispatch == Sweeps::Planned);
  CHECK(back.scheduler == Scheduler::Device);
  CHECK(back.sweep_groups == 7);
  CHECK(back.max_channels == 512);
  CHECK(back.trace_path == "t.json");
  CHECK(back.heap_bytes == 3 << 20);
  CHECK(back.serial_cutoff == SerialCutoff{.mode = SerialCutoff::Mode::Depth, .depth = 11});
  CHECK(back.quiet);
  CHECK(RunSettings::from_environment().environment() == defaults);  // unset again: the defaults
  {  // and the defaults' environment reads back as the defaults (0: the device's)
    const Environment env(defaults);
    CHECK(RunSettings::from_environment().environment() == defaults);
  }
}

TEST_CASE("A setting the environment gets wrong is refused by its name, with what it may be") {
  const auto refused = [](const char* name, const char* value) {
    const Environment env(std::vector<std::pair<std::string, std::string>>{{name, value}});
    std::string message;
    try {
      RunSettings::from_environment();
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    return message;
  };
  CHECK(refused("CHANFLOW_CAPACITY", "-4") == "CHANFLOW_CAPACITY=-4 is not a non-negative 32-bit number");
  CHECK(refused("CHANFLOW_WG", "64k") == "CHANFLOW_WG=64k is not a non-negative 32-bit number");
  CHECK(refused("CHANFLOW_MAX_CHANNELS", "0") == "CHANFLOW_MAX_CHANNELS=0 is not a positive 32-bit number");
  CHECK(refused("CHANFLOW_MAX_CHANNELS", "99999999999") == "CHANFLOW_MAX_CHANNELS=99999999999 is not a positive 32-bit number");
  CHECK(refused("CHANFLOW_POLICY", "fifo") == "CHANFLOW_POLICY=fifo is not a policy (levelized or greedy)");
  CHECK(refused("CHANFLOW_DISPATCH", "sideways") ==
        "CHANFLOW_DISPATCH=sideways is not a dispatch mode (auto, claimed, planned or host)");
  CHECK(refused("CHANFLOW_SWEEP_GROUPS", "0").empty());  // 0: chosen per round
  CHECK(refused("CHANFLOW_HEAP", "lots") == "CHANFLOW_HEAP=lots is not a size (bytes, or with K, M or G: 512M, 2G)");
  CHECK(refused("CHANFLOW_HEAP", "12T") == "CHANFLOW_HEAP=12T is not a size (bytes, or with K, M or G: 512M, 2G)");
  CHECK(refused("CHANFLOW_SERIAL_CUTOFF", "deep") ==
        "CHANFLOW_SERIAL_CUTOFF=deep is not a serial cut-off (a depth, auto, off or program)");
  CHECK(refused("CHANFLOW_QUIET", "yes") == "CHANFLOW_QUIET=yes is not 0 or 1");
  for (const char* cutoff : {"program", "auto", "off", "0", "12"})
    CHECK(SerialCutoff::parse("--serial-cutoff", cutoff).to_string() == cutoff);
  CHECK(parse_bytes("--heap", "512M") == std::uint64_t{512} << 20);
  CHECK(parse_bytes("--heap", "2GiB") == std::uint64_t{2} << 30);
  CHECK(parse_bytes("--heap", "64kb") == 64 << 10);
  CHECK(parse_bytes("--heap", "1000") == 1000);
  CHECK_THROWS_AS(parse_bytes("--heap", "0"), std::invalid_argument);
  CHECK(make_policy("greedy")->name() == std::string("greedy"));
  CHECK_THROWS_WITH_AS(make_policy("fifo"), "no policy 'fifo' (there are: levelized, greedy)", std::invalid_argument);
}

namespace {

// Granularity control's choice over runs of a recursion whose call tree holds full[d] tasks at
// level d, a run at depth d taking time(d) (any depth past the tree's last level: time(size)),
// until it settles: the depths run, in order.
std::vector<std::uint32_t> settle(SerialDepthChooser& chooser, const std::vector<std::uint64_t>& full,
                                  const std::function<double(std::uint32_t)>& time) {
  std::vector<std::uint32_t> runs;
  for (int i = 0; i < 24 && !chooser.settled(); ++i) {
    const std::uint32_t d = chooser.depth();
    runs.push_back(d);
    const std::size_t levels = std::min<std::size_t>(d + 1, full.size());
    chooser.learn(std::vector<std::uint64_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(levels)),
                  time(std::min<std::uint32_t>(d, static_cast<std::uint32_t>(full.size()))));
  }
  return runs;
}

// The call tree of fib(n), level by level.
std::vector<std::uint64_t> fib_levels(int n) {
  std::vector<std::map<int, std::uint64_t>> at(1, std::map<int, std::uint64_t>{{n, 1}});
  while (!at.back().empty()) {
    std::map<int, std::uint64_t> next;
    for (const auto& [k, count] : at.back())
      if (k >= 2) next[k - 1] += count, next[k - 2] += count;
    at.push_back(next);
  }
  std::vector<std::uint64_t> levels;
  for (std::size_t d = 0; d + 1 < at.size(); ++d) {
    std::uint64_t sum = 0;
    for (const auto& [k, count] : at[d]) sum += count;
    levels.push_back(sum);
  }
  return levels;
}

// A measured curve: the table's times, and slower everywhere else.
std::function<double(std::uint32_t)> curve(std::map<std::uint32_t, double> ms, double elsewhere) {
  return [ms = std::move(ms), elsewhere](std::uint32_t d) { return ms.count(d) ? ms.at(d) : elsewhere; };
}

}  // namespace

TEST_CASE("Granularity control's choice: the device's width, then the first run's breadth, then the fastest by measured time") {
  // Before any run: as if the recursion doubled per level.
  CHECK(SerialDepthChooser(4096).depth() == 12);
  CHECK(SerialDepthChooser(540672).depth() == 20);  // an H100's target
  CHECK(SerialDepthChooser(64).basis() == "from the device's width");
  // The second run: the first level that held the target in the first.
  const auto second = [](std::uint64_t target, const std::vector<std::uint64_t>& tasks) {
    SerialDepthChooser c(target);
    c.learn(tasks, 1.0);
    return c.depth();
  };
  std::vector<std::uint64_t> tripling = {1};
  for (std::uint32_t d = 1; d <= 12; ++d) tripling.push_back(tripling.back() * 3);
  CHECK(second(1000, tripling) == 7);  // 2,187 tasks
  CHECK(second(4096, {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 1, 1, 1}) == 4);
  // ... beyond the first run's depth by its last level's growth (x1.5 from 210 tasks: 7.3 levels,
  // so 8), at most 8 levels further.
  std::vector<std::uint64_t> growing = {1};
  for (std::uint32_t d = 1; d <= 12; ++d) growing.push_back(static_cast<std::uint64_t>(growing.back() * 1.5 + 0.5));
  CHECK(second(4096, growing) == 20);
  std::vector<std::uint64_t> thirty = {1};
  for (std::uint32_t d = 1; d <= 30; ++d) thirty.push_back(static_cast<std::uint64_t>(thirty.back() * 1.5 + 0.5));
  CHECK(second(std::uint64_t{1} << 30, thirty) == 38);
  // ... or the widest level of a recursion never that wide (a chain: the root).
  CHECK(second(4096, {1, 13, 130, 1000, 3000, 200}) == 4);
  CHECK(second(4096, std::vector<std::uint64_t>(20, 1)) == 0);

  // Then the search by measured time, on the H100's curves (chanflow bench, 2026-11-27,
  // workloads/results/h100-2026-11-27/granularity-first-search): fib 40 fastest from 20, fib 30
  // from 15, Queens 15 uncut.
  SerialDepthChooser fib40(540672);
  std::vector<std::uint64_t> fib40_levels;
  for (std::uint32_t d = 0; d <= 39; ++d) fib40_levels.push_back(d <= 20 ? std::uint64_t{1} << d : 1);  // only the top matters
  const auto runs40 = settle(fib40, fib40_levels, curve({{16, 33.2}, {18, 15.2}, {19, 11.3}, {20, 9.87}, {21, 17.8}, {22, 41.1}}, 100));
  CHECK(fib40.settled());
  CHECK(fib40.depth() == 20);
  // 19 is within 1.25x of 20: both run once more.
  CHECK(runs40 == std::vector<std::uint32_t>{20, 20, 18, 22, 19, 21, 19, 20});
  CHECK(fib40.basis() == "settled: the fastest of 8 runs' depths");

  // One slow sample does not decide: 19's first run was slow (as in a search on the H100,
  // 2026-11-27: 8.98 ms, then 6.2-7.0 in runs of its own), its second is not.
  SerialDepthChooser noisy(540672);
  int runs_at_19 = 0;
  const auto fib40_now = curve({{18, 9.1}, {19, 6.6}, {20, 7.8}, {21, 16.1}, {22, 47.6}}, 100);
  settle(noisy, fib40_levels, [&](std::uint32_t d) { return d == 19 && runs_at_19++ == 0 ? 8.98 : fib40_now(d); });
  CHECK(noisy.settled());
  CHECK(noisy.depth() == 19);

  // The first run's time (its first touch of every level) does not hold the search above.
  SerialDepthChooser fib30(540672);
  bool first = true;
  settle(fib30, fib_levels(30), [&, rest = curve({{12, 2.42}, {13, 1.79}, {14, 1.61}, {15, 1.33}, {16, 1.49}, {17, 1.71}, {18, 2.21}, {20, 3.23}}, 5.0)](std::uint32_t d) {
    return std::exchange(first, false) ? 30.0 : rest(d);
  });
  CHECK(fib30.settled());
  CHECK(fib30.depth() == 15);
  SerialDepthChooser fib30b(540672);
  settle(fib30b, fib_levels(30),
         curve({{12, 2.42}, {13, 1.79}, {14, 1.61}, {15, 1.33}, {16, 1.49}, {17, 1.71}, {18, 2.21}, {20, 3.23}}, 5.0));
  CHECK(fib30b.settled());
  CHECK(fib30b.depth() == 15);

  // Settled, it stays through a slow run or a fast one; two runs in a row far off its time are
  // another input: fib 40's calls after fib 30's open the search again, and it settles on 19.
  const auto at = [](SerialDepthChooser& c, const std::vector<std::uint64_t>& full, double ms) {
    const std::size_t levels = std::min<std::size_t>(c.depth() + 1, full.size());
    c.learn(std::vector<std::uint64_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(levels)), ms);
  };
  for (const double ms : {4.0, 1.4, 0.5, 1.3, 4.0, 0.6}) {
    at(fib30, fib_levels(30), ms);
    CHECK(fib30.settled() == (ms > 1.0 && ms < 2.0));  // in doubt after a run far off
    CHECK(fib30.depth() == 15);
  }
  at(fib30, fib40_levels, 9.5);
  CHECK_FALSE(fib30.settled());
  CHECK(fib30.basis() == "settled, in doubt: the last run took over twice its time");
  CHECK(fib30.depth() == 15);
  at(fib30, fib40_levels, 9.4);
  CHECK_FALSE(fib30.settled());
  CHECK(fib30.basis() == "from the breadth of a run unlike the settled ones");
  CHECK(fib30.depth() == 20);  // fib 40's level 20 holds the target
  settle(fib30, fib40_levels, fib40_now);
  CHECK(fib30.settled());
  CHECK(fib30.depth() == 19);
  // ... and fib 30's again, far faster: back to 15.
  at(fib30, fib_levels(30), 1.2);
  at(fib30, fib_levels(30), 1.3);
  CHECK_FALSE(fib30.settled());
  settle(fib30, fib_levels(30),
         curve({{12, 2.42}, {13, 1.79}, {14, 1.61}, {15, 1.33}, {16, 1.49}, {17, 1.71}, {18, 2.21}, {20, 3.23}}, 5.0));
  CHECK(fib30.depth() == 15);

  // Queens: every cut is slower than none (its recursion ends at level 8 here): depth 9, uncut.
  SerialDepthChooser queens(540672);
  const std::vector<std::uint64_t> queens_levels = {1, 15, 182, 1920, 15000, 90000, 420000, 1500000, 4000000};
  const auto runs_q = settle(queens, queens_levels, curve({{9, 179}, {8, 216}, {7, 284}, {6, 338}, {5, 475}}, 1500));
  CHECK(queens.settled());
  CHECK(queens.depth() == 9);
  CHECK(runs_q.size() <= 8);

  CHECK(describe_serial_depth(kSerialOff, nullptr) == "off");
  CHECK(describe_serial_depth(7, nullptr) == "depth 7");
  CHECK(describe_serial_depth(6, &queens) == "depth 6 (auto, settled: the fastest of " + std::to_string(runs_q.size()) +
                                                 " runs' depths; 540672 tasks wanted)");
}

}  // TEST_SUITE
