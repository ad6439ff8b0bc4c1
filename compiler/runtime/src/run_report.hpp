// What a compiled program tells its user about its calls (cilk_runtime.cpp's Process): the totals
// CHANFLOW_STATS=1 prints at exit and where tasks resumed.
#pragma once

#include "chanflow/chanflow.hpp"
#include "chanflow/cilk_runtime.hpp"
#include "chanflow/work_router.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace chanflow::cilk {

// Statistics over every call of the process, printed at exit with CHANFLOW_STATS=1.
struct Totals {
  std::uint64_t calls = 0, rounds = 0, dispatches = 0, ces = 0, yields = 0, restarts = 0;
  std::uint64_t device_scheduled = 0;  // calls whose graph ran on the device scheduler
  std::uint64_t first_runs = 0;        // calls that were their graph's first run
  double first_runs_ms = 0;            // their wall time (kernel compiles included)
  double wall_ms = 0, aggregator_ms = 0;
  std::uint32_t max_level = 0;
  std::uint64_t channel_bytes = 0;  // the most channel memory (stack levels, yield state) one call's graph held
  std::uint64_t live_bytes = 0;     // the most CE bytes allocated at once in one call
  std::uint32_t channels = 0;       // the most concrete channels (stack levels one each) one call's graph had
  std::uint32_t stack_capacity = 0; // the most CEs a level of any stack holds (ProgramGraph, sized for the device)
  std::string device;
  std::map<std::string, std::uint64_t> restarts_per_port;  // "F__spawn:port", as RunStats names them
  std::uint64_t serial_tasks = 0;  // tasks that ran their call serially (granularity control)
  std::string serial_depth;        // how the last call's serial depth was set (describe_serial_depth); empty: no forms
  // Across devices (CHANFLOW_DEVICES): what each device did over every call, and, for the last
  // call's function, whose tasks may move and why the others stay.
  struct Device {
    std::string name;
    std::uint64_t ces = 0;
    DeviceTraffic traffic;
  };
  std::vector<Device> devices;
  std::vector<std::string> movable;
  std::vector<std::pair<std::string, std::string>> staying;
  void add(const RunStats& call);            // one call's run (across devices: DeviceRunStats::total)
  void add(const DeviceRunStats& across);    // each device's part of it
};

// What CHANFLOW_STATS=1 prints at exit: the totals, the settings the calls ran with (`wg_used`:
// the last graph's work-group size), the device heap (of the first device; null: none).
void print_totals(const Totals& t, const RunSettings& s, std::uint32_t wg_used, const DeviceHeap* heap);

// A device-side error in the program's words: its kernel nodes F__spawn and F__sync are Cilk
// function F ("kernel node 'fib__spawn' asked the device heap ..." names 'fib').
std::string in_program_words(std::string message);

// A stack that could not grow, in the program's words: which Cilk function recursed how deep,
// and the setting that raises the limit.
std::string depth_message(const StackDepthError& e, std::uint32_t max_channels);

// What a run of a compiled function's graph says of granularity control: the tasks per level (every
// task stack summed, level 0 first) and how many ran their call serially (at `depth` or deeper, of
// a function with a serial form).
struct TaskBreadth {
  std::vector<std::uint64_t> per_level;
  std::uint64_t serial = 0;
};
TaskBreadth task_breadth(const ProgramGraph& program, std::uint32_t depth, const RunStats& stats);

// Where tasks resumed, in the program's words: F__spawn's port F_cont is its frame, any other
// port the stack of a function it spawns ("fib: 12 before its frame, 131 at its spawns of fib").
std::string describe_restarts(const std::map<std::string, std::uint64_t>& per_port);

}  // namespace chanflow::cilk
