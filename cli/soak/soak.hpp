// Soak programs (`chanflow soak channels|graphs`): long randomized runs that check every result
// and report what they covered. Not benchmarks: nothing here is timed against anything.
#pragma once

#include "chanflow/graph.hpp"
#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace chanflow::soak {

struct ChannelSoakOptions {
  std::uint64_t ces = 100'000'000;  ///< CEs through channels in all, over randomly drawn configurations
  std::uint64_t seed = 1;
};

/// Grows heap-numbered CE trees through single channels (consumers and producers in the same
/// launches, capacities from one work-group's request to 2^20, wrap-around), every id checked
/// to arrive exactly once with its payload. Returns the per-configuration rows and totals; the
/// totals' "lost", "duplicated" and "bad_payloads" are 0 in a passing run.
nlohmann::json run_channel_soak(const Runtime& runtime, const ChannelSoakOptions& options, std::FILE* out);

struct GraphSoakOptions {
  std::uint32_t configs = 50;
  std::uint64_t seed = 1;
  std::uint32_t first = 0;  ///< index of the first configuration (to run one again alone)
  double timeout_s = 120;  ///< per configuration: past it the watchdog fails the run, naming the seed
  Scheduler scheduler = Scheduler::Auto;  ///< every configuration's (CHANFLOW_SCHEDULER decides for Auto)
};

/// Runs randomly drawn graphs (pipelines, fan-out/fan-in, self-feeding channels, recursive
/// stacks with continuations) under random policies, capacities, work-group sizes and dispatch
/// modes. Each graph computes something checkable: every run must end with the right result or
/// with a no-progress diagnostic where capacity truly cannot take the work.
nlohmann::json run_graph_soak(const Runtime& runtime, const GraphSoakOptions& options, std::FILE* out);

struct CompiledSoakOptions {
  std::string manifest;     ///< the programs: a line per program, its path (relative to the list) and arguments
  std::uint32_t configs = 50;
  std::uint64_t seed = 1;
  std::uint32_t first = 0;  ///< index of the first configuration (to run one again alone)
  double timeout_s = 120;   ///< per run: past it the run is killed and counts as a hang
  /// Above 1: a quarter of the runs go across 2 to this many devices (CHANFLOW_DEVICES=0-K).
  std::uint32_t most_devices = 1;
  /// Every run's scheduler (CHANFLOW_SCHEDULER): "auto", "device" or "rounds".
  std::string scheduler = "auto";
};

/// Compiles each listed Cilk program with chanflowc (found beside this executable) and as its
/// serial elision, then runs them under randomly drawn capacities (from two work-groups' requests
/// up), work-group sizes, policies, dispatch modes and device counts: every run must print what the elision prints,
/// or stop with a diagnostic (counted by kind). The totals' "failed" (wrong, crashed, hung) is 0 in
/// a passing run.
nlohmann::json run_compiled_soak(const CompiledSoakOptions& options, std::FILE* out);

}  // namespace chanflow::soak
