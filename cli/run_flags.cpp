// The flags of how chanflow runs (see run_flags.hpp).
#include "run_flags.hpp"

#include "flag_checks.hpp"

namespace chanflow::cli {
namespace {

// A flag's check: the value parses (`parse` throws std::invalid_argument saying why it does not).
template <class Parse>
CLI::Validator parses(Parse parse, const char* name) {
  return CLI::Validator(
      [parse](std::string& value) {
        try {
          parse(value);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      name);
}

}  // namespace

void add_run_flags(CLI::App& cmd, RunSettings& s) {
  cmd.add_option("--policy", s.policy, "levelized or greedy")
      ->check(CLI::IsMember({"greedy", "levelized"}))->capture_default_str();
  cmd.add_option("--capacity", s.capacity,
                 "CEs per channel or stack level (default: the workload's, sized to the device's memory on GPUs)")
      ->check(at_least_one());
  cmd.add_option("--wg", s.wg_size, "work-group size (default: the device's, 64 on CPUs and 256 on GPUs; 64 on GPUs for compiled Cilk programs with cilk_for loops)")
      ->check(at_least_one());
  cmd.add_option_function<std::string>(
         "--dispatch", [&s](const std::string& mode) { s.dispatch = sweeps_from_string(mode); },
         "claimed device sweeps (where the device orders stores at device scope), planned device sweeps, "
         "host-sized dispatches of each level (host), "
         "or auto (the default): claimed on CPU devices, planned elsewhere")
      ->check(CLI::IsMember({"auto", "claimed", "planned", "host"}));
  cmd.add_option_function<std::string>(
         "--scheduler", [&s](const std::string& where) { s.scheduler = scheduler_from_string(where); },
         "where the aggregator's loop runs: device (a persistent launch takes every channel's batches; needs "
         "device-scope ordering: NVIDIA from compute capability 7, or a CPU device of an x86-64 host; its first build "
         "grows with the graph's node bodies), rounds (the host launches each round), or auto (the default: on a GPU the "
         "device scheduler once its program is built beside the graph's, in the background on a machine's first run; "
         "rounds on CPU devices)")
      ->check(CLI::IsMember({"auto", "device", "rounds"}));
  cmd.add_option("--sweep-groups", s.sweep_groups, "work-groups per device sweep (0: chosen per round)")
      ->capture_default_str();
  cmd.add_option("--max-channels", s.max_channels,
                 "channel-table slots: every level of every stack takes one (a deeper recursion stops, saying so)")
      ->check(at_least_one())->capture_default_str();
  cmd.add_option_function<std::string>(
      "--heap", [&s](const std::string& size) { s.heap_bytes = parse_bytes("--heap", size); },
      "the device heap of a compiled program whose device code allocates (malloc, alloca): 256M by default")
      ->check(parses([](const std::string& size) { parse_bytes("--heap", size); }, "SIZE"));
  cmd.add_option("--devices", s.devices,
                 "run across several devices of one platform: all, indices (1,2), ranges (0-3) or a name part "
                 "(nvidia); `chanflow devices` lists them. A compiled Cilk program (CHANFLOW_DEVICES), and the chanflow "
                 "implementation of fib, queens, nqueens and uts (and uts's chanflow-static), sort and strassen")
      ->type_name("SPEC");
  cmd.add_flag("--quiet", s.quiet,
               "no progress line (one is drawn only where standard error is a terminal, for a run past 2 s)");
  cmd.add_option_function<std::string>(
         "--serial-cutoff", [&s](const std::string& v) { s.serial_cutoff = SerialCutoff::parse("--serial-cutoff", v); },
         "granularity control of compiled Cilk functions that have serial forms: tasks at this depth and deeper (the "
         "root at 0) run their call serially in their work-item; auto: the runtime picks the depth each run; off: every "
         "spawn a task; program (the default): the depth chanflowc was given, else auto")
      ->check(parses([](const std::string& v) { SerialCutoff::parse("--serial-cutoff", v); }, "DEPTH|auto|off|program"));
}

}  // namespace chanflow::cli
