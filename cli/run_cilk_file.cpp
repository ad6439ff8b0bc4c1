// `chanflow run FILE.c` (see run_cilk_file.hpp). The executable is cached under
// $XDG_CACHE_HOME/chanflow/programs (or ~/.cache/...), keyed by the sources' bytes and their own headers, the compile
// flags, chanflowc and this binary (which links the runtime the program links), so an unchanged
// program starts at once. The run flags are those of `chanflow run WORKLOAD`, in one RunSettings that
// reaches the program as the environment it reads back (RunSettings::environment, from_environment).
#include "run_cilk_file.hpp"

#include "flag_checks.hpp"
#include "run_flags.hpp"

#include "chanflow/device_set.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace chanflow::workloads {
namespace {

namespace fs = std::filesystem;

bool is_cilk_source(const std::string& s) {
  return s.size() > 2 && (s.ends_with(".c") || s.ends_with(".cilk"));
}

// FNV-1a: stable across runs and builds, which std::hash need not be.
std::uint64_t fnv1a(std::uint64_t h, const std::string& bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The program's own headers, as its #include lines reach them (#include "...": beside the including
// file, then in the -I directories; #include <...>: in the -I directories), recursively: what the
// cache key covers besides the sources. A header a macro names (#include HEADER) is not seen, nor
// are chanflow's own (<cilk/cilk.h>, whose changes come with a new chanflowc): --fresh builds again.
std::vector<fs::path> own_headers(const fs::path& source, const std::vector<std::string>& include_dirs) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*([<"])([^">]+)[">])re");
  std::vector<fs::path> found, pending{source};
  std::set<fs::path> seen{fs::weakly_canonical(source)};
  while (!pending.empty()) {
    const fs::path file = pending.back();
    pending.pop_back();
    std::istringstream text(read_all(file));
    for (std::string line; std::getline(text, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      std::vector<fs::path> places;
      if (m[1].str() == "\"") places.push_back(file.parent_path() / m[2].str());
      for (const std::string& d : include_dirs) places.push_back(fs::path(d) / m[2].str());
      for (const fs::path& p : places) {
        if (!fs::is_regular_file(p)) continue;
        if (seen.insert(fs::weakly_canonical(p)).second) {
          found.push_back(p);
          pending.push_back(p);
        }
        break;
      }
    }
  }
  return found;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

fs::path cache_root() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "chanflow" / "programs";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "chanflow" / "programs";
  return fs::temp_directory_path() / "chanflow-programs";
}

}  // namespace

bool is_cilk_file_run(int argc, char** argv) {
  // `run` with a .c or .cilk file among its own arguments (before `--`), wherever the options put it.
  bool seen_run = false;
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (!seen_run) seen_run = std::strcmp(argv[i], "run") == 0;
    else if (is_cilk_source(argv[i])) return true;
  }
  return false;
}

namespace {

// The file form's command line, made in one place for the run and for `chanflow run --help`.
struct CilkFileCommand {
  CLI::App app{"Compile a Cilk program with chanflowc (cached) and run it; its arguments go after --", "chanflow"};
  CLI::App* run = nullptr;
  std::string device;
  std::vector<std::string> sources;
  RunSettings settings;  // the environment's settings are the defaults the flags override
  bool stats = false, fresh = false;
  std::vector<std::string> includes, defines;  // for chanflowc
  unsigned helper_stack = 0;

  explicit CilkFileCommand(const RunSettings& defaults) : settings(defaults) {
    app.add_option("--device", device, "an OpenCL device: a platform or device name's part, or an index (chanflow "
                                       "devices); before or after `run`");
    app.fallthrough();  // `run` passes --device up to here, as `chanflow run WORKLOAD` does
    run = app.add_subcommand("run", "compile and run a Cilk program (FILE.c or FILE.cilk, and its other files)")->required();
    run->add_option("sources", sources, "the Cilk program: its files (one holds main), FILE.c or FILE.cilk")->required();
    cli::add_run_flags(*run, settings);
    run->add_option("--trace", settings.trace_path, "write a Chrome-trace JSON of each call's dispatches");
    run->add_flag("--fresh", fresh, "compile again, even if a program built from the same source is cached");
    run->add_flag("--stats", stats, "print the run's statistics at exit");
    run->add_option("-I", includes, "a directory of headers")->allow_extra_args(false);
    run->add_option("-D", defines, "a macro: NAME or NAME=VALUE")->allow_extra_args(false);
    run->add_option("--helper-stack", helper_stack, "frames of a helper that calls itself kept in private memory, "
                                                    "older ones on the device heap (chanflowc's --helper-stack; "
                                                    "default 64)")
        ->check(cli::whole_number(2, 65536));
  }
};

}  // namespace

std::string cilk_file_help() {
  CilkFileCommand command{RunSettings{}};
  command.run->footer("The program's own arguments go after --: chanflow run prog.c --stats -- 30");
  return command.run->help("chanflow");
}

int run_cilk_file(int argc, char** argv) {
  // What follows `--` is the program's own.
  int ours = argc;
  std::vector<std::string> program_args;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      program_args.assign(argv + i + 1, argv + argc);
      ours = i;
      break;
    }
  RunSettings defaults;
  try {
    defaults = RunSettings::from_environment();
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "chanflow run: {}\n", e.what());
    return 1;
  }
  CilkFileCommand command{defaults};
  try {
    command.app.parse(ours, argv);
  } catch (const CLI::ParseError& e) {
    return command.app.exit(e);
  }
  const std::string& device = command.device;
  const std::vector<std::string>& sources = command.sources;
  const RunSettings& settings = command.settings;
  const std::vector<std::string>& includes = command.includes;
  const std::vector<std::string>& defines = command.defines;
  const bool stats = command.stats, fresh = command.fresh;
  const unsigned helper_stack = command.helper_stack;
  // Across devices (CHANFLOW_DEVICES): the set checked before anything compiles.
  if (!settings.devices.empty()) {
    if (!device.empty()) {
      fmt::print(stderr, "chanflow run: --device and --devices both given: --devices names every device of the run\n");
      return 2;
    }
    try {
      choose_devices(settings.devices, list_devices());
    } catch (const DeviceSetError& e) {
      fmt::print(stderr, "chanflow run: --devices {}: {}\n", settings.devices, e.what());
      return 2;
    }
  }
  std::vector<std::string> compile_flags;
  for (const std::string& d : includes) compile_flags.push_back("-I" + d);
  for (const std::string& d : defines) compile_flags.push_back("-D" + d);
  if (helper_stack) compile_flags.push_back(fmt::format("--helper-stack={}", helper_stack));
  for (const auto& [name, value] : settings.environment()) ::setenv(name.c_str(), value.c_str(), 1);
  if (!device.empty()) ::setenv("CHANFLOW_DEVICE", device.c_str(), 1);
  if (stats) ::setenv("CHANFLOW_STATS", "1", 1);
  for (const std::string& source : sources)
    if (!is_cilk_source(source)) {
      fmt::print(stderr, "chanflow run: '{}' is not a Cilk program's file (.c or .cilk); the program's own arguments go "
                         "after --\n", source);
      return 2;
    } else if (!fs::exists(source)) {
      fmt::print(stderr, "chanflow run: no such file: '{}'\n", source);
      return 1;
    }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path compiler = self.parent_path() / "chanflowc";
  if (!fs::exists(compiler)) {
    fmt::print(stderr, "chanflow run: chanflowc is not installed beside {} (build the compiler target)\n", self.string());
    return 1;
  }
  std::uint64_t key = 0xcbf29ce484222325ull;
  for (const std::string& source : sources) {
    key = fnv1a(key, source + '\0' + read_all(source));
    for (const fs::path& header : own_headers(source, includes)) key = fnv1a(key, header.string() + '\0' + read_all(header));
  }
  for (const std::string& f : compile_flags) key = fnv1a(key, f + '\0');
  // chanflowc, and the libraries the program links, which this binary links too (a new runtime
  // relinks it): a cached program built against an older chanflow is built again.
  for (const fs::path& tool : {compiler, self})
    key = fnv1a(key, fmt::format("{}:{}", fs::file_size(tool), fs::last_write_time(tool).time_since_epoch().count()));
  const fs::path dir = cache_root() / fmt::format("{:016x}", key);
  const std::string stem = fs::path(sources.front()).stem().string();
  const fs::path exe = dir / stem;
  if (fresh) fs::remove(exe);
  if (!fs::exists(exe)) {
    fs::create_directories(dir);
    const fs::path partial = dir / fmt::format(".{}.{}", stem, ::getpid());
    std::string command = shell_quote(compiler.string());
    for (const std::string& source : sources) command += " " + shell_quote(source);
    for (const std::string& f : compile_flags) command += " " + shell_quote(f);
    command += " -o " + shell_quote(partial.string());
    const int status = std::system(command.c_str());
    if (status != 0) return 1;  // chanflowc has said why
    fs::rename(partial, exe);   // atomic: a concurrent run sees the whole executable or none
  }
  std::vector<char*> args = {const_cast<char*>(exe.c_str())};
  for (std::string& a : program_args) args.push_back(a.data());
  args.push_back(nullptr);
  ::execv(exe.c_str(), args.data());
  fmt::print(stderr, "chanflow run: cannot run {}: {}\n", exe.string(), std::strerror(errno));
  return 1;
}

}  // namespace chanflow::workloads
