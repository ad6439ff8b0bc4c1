// How a graph runs, as its user says it: one type from the command line (`chanflow run`,
// `chanflow bench`), or a compiled program's environment, down to the graph. Capacity and
// work-group size may be left to the device (0), which for_device() fills in for a graph whose
// stacks take a known footprint; graph_options() is what the Graph itself is built with.
#pragma once

#include "chanflow/graph.hpp"
#include "chanflow/policy.hpp"
#include "chanflow/sizing.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chanflow {

/// Granularity control of compiled Cilk programs (CHANFLOW_SERIAL_CUTOFF, --serial-cutoff): the
/// stack level from which the tasks of a Cilk function with a serial form run their whole call
/// in their work-item (RunOptions::serial_depth).
struct SerialCutoff {
  enum class Mode : std::uint8_t {
    Program,  ///< as the program was compiled (chanflowc --serial-cutoff=N), else Auto
    Auto,     ///< the runtime picks the depth each run (cilk::SerialDepthChooser)
    Off,      ///< every spawn goes through a channel
    Depth,    ///< from `depth` on
  };
  Mode mode = Mode::Program;
  std::uint32_t depth = 0;
  bool operator==(const SerialCutoff&) const = default;
  /// "program", "auto", "off" or the depth.
  std::string to_string() const;
  /// The inverse; std::invalid_argument naming `what` and the values it may take otherwise.
  static SerialCutoff parse(std::string_view what, std::string_view value);
};

struct RunSettings {
  std::uint32_t capacity = 0;        ///< CEs per channel or stack level; 0: sized to the device
  std::uint32_t wg_size = 0;         ///< work-items per work-group; 0: the device's (device_sizing)
  std::string policy = "levelized";  ///< "levelized" or "greedy" (make_policy)
  Sweeps dispatch = Sweeps::Auto;    ///< GraphOptions::device_sweeps
  Scheduler scheduler = Scheduler::Auto;  ///< GraphOptions::scheduler
  std::uint32_t sweep_groups = 0;    ///< GraphOptions::sweep_groups
  bool sweep_room_check = true;      ///< GraphOptions::sweep_room_check
  std::uint32_t max_channels = 1024; ///< GraphOptions::max_channels: a stack level takes one
  /// Create every level a run can reach before it starts, so a timed run does not pay for
  /// making levels; otherwise levels grow on demand.
  bool preallocate_levels = false;
  std::string trace_path;  ///< a Chrome trace of each run (RunOptions::trace_path), if set
  /// Bytes of the device heap (DeviceHeap) a compiled program whose device code allocates gets.
  std::uint64_t heap_bytes = std::uint64_t{256} << 20;
  SerialCutoff serial_cutoff;  ///< granularity control of compiled Cilk programs
  /// No progress line for long runs (RunOptions::progress_label); it is only ever drawn on a
  /// terminal's standard error.
  bool quiet = false;
  /// The devices a run spans (a device set's spec: all, 1,2, 0-3, nvidia; multidevice/); empty:
  /// the one device the runtime has.
  std::string devices;

  bool operator==(const RunSettings&) const = default;

  /// These settings with the capacity and work-group size a graph whose stacks take `footprint`
  /// gets on `caps` where they were left to the device: stack_capacity() (no wider than the
  /// footprint's widest level), and the device's work-group size (at most the footprint's
  /// max_wg). Settings already given stay.
  RunSettings for_device(const DeviceCaps& caps, const StackFootprint& footprint = {}) const;
  /// The options a Graph is built with (wg_size must have been given or filled in).
  GraphOptions graph_options() const;
  /// The options of one run under these settings: the trace, and a progress line naming the
  /// run with `what` unless quiet.
  RunOptions run_options(std::string what) const;
  /// A new policy object of the name in `policy`.
  std::unique_ptr<SchedulingPolicy> make_policy() const;

  /// The environment that carries these settings to a compiled program's process (as
  /// `chanflow run FILE.c` starts it): CHANFLOW_CAPACITY, _WG (0: the device's), _POLICY,
  /// _DISPATCH, _SCHEDULER, _SWEEP_GROUPS, _MAX_CHANNELS, _HEAP (bytes), _TRACE (empty: none),
  /// _SERIAL_CUTOFF (program, auto, off or a depth), _QUIET (0 or 1), every one of them, so that
  /// the process runs with exactly these settings whatever environment it inherits.
  std::vector<std::pair<std::string, std::string>> environment() const;
  /// The settings that environment carries (the defaults where a variable is unset or empty);
  /// std::invalid_argument naming the variable and what it may be, for a value that is not.
  static RunSettings from_environment();
};

/// A size in bytes as a user writes it: digits, with an optional K, M or G (binary: 64M is
/// 64 MiB; "KiB", "MB" and lower case too). std::invalid_argument naming `what` otherwise.
std::uint64_t parse_bytes(std::string_view what, std::string_view value);

/// The policy called `name` ("levelized" or "greedy"); std::invalid_argument naming those otherwise.
std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name);

}  // namespace chanflow
