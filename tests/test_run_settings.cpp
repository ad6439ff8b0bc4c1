// One RunSettings from the command line to the graph: what it leaves to the device is filled in
// from what the device reports (a CPU keeps its measured sizes, a GPU grows the stacks within its
// memory), and it reaches a compiled program's process through the environment and back intact.
#include "chanflow/granularity.hpp"
#include "chanflow/run_settings.hpp"
#include "chanflow/run_stats.hpp"

#include <doctest/doctest.h>

#include <algorithm>
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

TEST_CASE("Settings reach a compiled program's process through the environment and come back the same") {
  // Every variable, defaults too: the process runs with exactly these settings.
  const auto defaults = RunSettings{}.environment();
  CHECK(defaults.size() == 10);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_CAPACITY", "0"}) == 1);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_DISPATCH", "auto"}) == 1);
  CHECK(std::count(defaults.begin(), defaults.end(), std::pair<std::string, std::string>{"CHANFLOW_SCHEDULER", "auto"}) == 1);
  const RunSettings s{.capacity = 2048, .wg_size = 32, .policy = "greedy", .dispatch = Sweeps::Planned,
                      .scheduler = Scheduler::Device, .sweep_groups = 7, .max_channels = 512, .trace_path = "t.json", .heap_bytes = 3 << 20,
                      .serial_cutoff = {.mode = SerialCutoff::Mode::Depth, .depth = 11}};
  const auto vars = s.environment();
  CHECK(vars.size() == 10);
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

TEST_CASE("Granularity control's choice: the first level that holds the tasks wanted, from the device's width, then each run's breadth") {
  // Before any run: as if the recursion doubled per level.
  SerialDepthChooser fib(4096);
  CHECK(fib.depth() == 12);
  CHECK(std::string(fib.basis()) == "the device's width");
  // A doubling recursion held 4,096 tasks at level 12: it stays.
  std::vector<std::uint64_t> doubling;
  for (std::uint32_t d = 0; d <= 12; ++d) doubling.push_back(std::uint64_t{1} << d);
  fib.learn(doubling);
  CHECK(fib.depth() == 12);
  CHECK(std::string(fib.basis()) == "the last run's breadth");
  // Ten children a task: level 4's 10,000 is the first to hold 4,096.
  SerialDepthChooser wide(4096);
  wide.learn({1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 1, 1, 1});
  CHECK(wide.depth() == 4);
  // A recursion still narrow at the depth goes on at its last level's growth (x1.5 from 210 tasks:
  // 7.3 levels more, so 8).
  SerialDepthChooser slow(4096);
  std::vector<std::uint64_t> growing = {1};
  for (std::uint32_t d = 1; d <= 12; ++d) growing.push_back(static_cast<std::uint64_t>(growing.back() * 1.5 + 0.5));
  slow.learn(growing);
  CHECK(slow.depth() == 20);
  // At most 8 levels further a run (x1.5 from level 30's ~190,000 tasks to 2^30: 21 more).
  SerialDepthChooser far(std::uint64_t{1} << 30);
  CHECK(far.depth() == 30);
  std::vector<std::uint64_t> thirty = {1};
  for (std::uint32_t d = 1; d <= 30; ++d) thirty.push_back(static_cast<std::uint64_t>(thirty.back() * 1.5 + 0.5));
  far.learn(thirty);
  CHECK(far.depth() == 38);
  // A recursion that ended above the depth (never cut): the first level that held the target.
  SerialDepthChooser shallow(4096);
  shallow.learn({1, 13, 130, 1000, 6000, 200});
  CHECK(shallow.depth() == 4);
  // One that never grows that wide: its widest level (here the root: nothing runs side by side).
  SerialDepthChooser chain(4096);
  chain.learn(std::vector<std::uint64_t>(20, 1));
  CHECK(chain.depth() == 0);
  // Nothing learned from a run that counted nothing.
  SerialDepthChooser none(64);
  none.learn({});
  CHECK(none.depth() == 6);
  CHECK(describe_serial_depth(kSerialOff, nullptr) == "off");
  CHECK(describe_serial_depth(7, nullptr) == "depth 7");
  CHECK(describe_serial_depth(6, &none) == "depth 6 (auto: about 64 tasks wanted, from the device's width)");
}

}  // TEST_SUITE
