// The `chanflow` command line: list devices, run benchmark programs.
#include "../bench/bench_common.hpp"
#include "../bench/channels/channel_bench.hpp"
#include "chanflow/channel.hpp"
#include "chanflow/opencl.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

namespace {

using namespace chanflow;

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string mib(std::uint64_t bytes) { return fmt::format("{:.0f} MiB", bytes / 1048576.0); }

int list_devices_command() {
  const auto devices = list_devices();
  for (const auto& d : devices) {
    fmt::print("[{}] {}\n", d.index, d.name);
    fmt::print("    platform:            {}\n", d.platform);
    fmt::print("    type / vendor:       {} / {}\n", d.type_name(), d.vendor);
    fmt::print("    version:             {} ({}), driver {}\n", d.version, d.opencl_c_version, d.driver_version);
    fmt::print("    compute units:       {}\n", d.compute_units);
    fmt::print("    work-group size:     max {}, preferred multiple {}\n", d.max_work_group_size,
               d.preferred_work_group_multiple);
    fmt::print("    memory:              global {}, local {} KiB\n", mib(d.global_mem_bytes), d.local_mem_bytes / 1024);
    fmt::print("    SVM:                 coarse {}, fine buffer {}, fine system {}, atomics {}\n",
               yes_no(d.svm_coarse), yes_no(d.svm_fine_buffer), yes_no(d.svm_fine_system), yes_no(d.svm_atomics));
    fmt::print("    64-bit atomics:      {}\n", yes_no(d.int64_atomics));
    fmt::print("    sub-groups:          {}\n", yes_no(d.subgroups));
    fmt::print("    work-group scan:     advertised {}, builds under CL2.0 {}\n", yes_no(d.work_group_collectives),
               yes_no(d.work_group_scan_builds));
    const auto missing = d.missing_requirements();
    fmt::print("    usable by chanflow:  {}\n",
               missing.empty() ? std::string("yes") : "no (lacks " + fmt::format("{}", fmt::join(missing, ", ")) + ")");
  }
  return 0;
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path));
  out << j.dump(2) << '\n';
  if (!out) throw std::runtime_error(fmt::format("error writing '{}'", path));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chanflow: fine-grain task parallelism through channels on OpenCL devices"};
  app.require_subcommand(1);
  std::string device;
  app.add_option("--device", device,
                 "OpenCL device: index from `chanflow devices` or a name substring "
                 "(default: $CHANFLOW_DEVICE, else PoCL's CPU device)");

  auto* devices_cmd = app.add_subcommand("devices", "list every OpenCL device and its capabilities");

  auto* bench_cmd = app.add_subcommand("bench", "benchmark programs (each result checked before it is timed)");
  bench_cmd->require_subcommand(1);
  auto* bench_channels = bench_cmd->add_subcommand("channels", "CE throughput: leader-level vs per-work-item vs TBB queue");
  bench::ChannelBenchOptions channel_opts;
  std::string json_path;
  bench_channels->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_channels->add_option("--ces", channel_opts.ces, "CEs per repetition (multiple of 64)")->capture_default_str();
  bench_channels->add_option("--reps", channel_opts.reps, "timed repetitions")->capture_default_str()->check(CLI::PositiveNumber);
  bench_channels->add_option("--wg", channel_opts.wg_sizes, "work-group sizes, comma-separated")->delimiter(',')->capture_default_str();
  bench_channels->add_option("--ce-bytes", channel_opts.ce_bytes, "CE sizes in bytes, comma-separated")->delimiter(',')->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  try {
    if (*devices_cmd) return list_devices_command();
    if (*bench_channels) {
      const Runtime rt(DeviceSelection{device});
      const auto rows = bench::run_channel_bench(rt, channel_opts, stdout);
      if (!json_path.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"device", rt.caps().name},
                               {"benchmark", "channels"}, {"results", rows}});
        fmt::print("wrote {}\n", json_path);
      }
      for (const auto& r : rows)
        if (r["lost"].get<std::uint64_t>() != 0 || r["duplicated"].get<std::uint64_t>() != 0) {
          fmt::print(stderr, "error: a variant lost or duplicated CEs (see the table)\n");
          return 1;
        }
      return 0;
    }
  } catch (const OpenCLError& e) {
    fmt::print(stderr, "chanflow: OpenCL error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "chanflow: {}\n", e.what());
    return 1;
  }
  return 0;
}
