// `chanflow run FILE.c` (see run_cilk_file.hpp). The executable is cached under
// $XDG_CACHE_HOME/chanflow/programs (or ~/.cache/...), keyed by the source's bytes, the compile
// flags, chanflowc and this binary (which links the runtime the program links), so an unchanged
// program starts at once. The run options become the environment variables a compiled program
// reads (compiler/runtime/cilk_runtime.hpp).
#include "run_cilk_file.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

fs::path cache_root() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "chanflow" / "programs";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "chanflow" / "programs";
  return fs::temp_directory_path() / "chanflow-programs";
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "chanflow run: {}\nusage: chanflow run FILE.c|FILE.cilk [--device D] [--capacity N] [--wg N] "
                     "[--policy levelized|greedy] [--dispatch auto|claimed|planned|host] [--max-channels N] "
                     "[--trace FILE] [--stats] "
                     "[-I DIR] [-D NAME[=VALUE]] [-- ARGS...]\n",
             message);
  return 2;
}

}  // namespace

bool is_cilk_file_run(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "run") == 0) return is_cilk_source(argv[i + 1]);
    if (std::strcmp(argv[i], "--device") == 0) ++i;  // its value
  }
  return false;
}

int run_cilk_file(int argc, char** argv) {
  // Run options map to the compiled program's environment; -I/-D go to chanflowc.
  static const std::map<std::string, const char*> env_of = {
      {"--device", "CHANFLOW_DEVICE"},   {"--capacity", "CHANFLOW_CAPACITY"}, {"--wg", "CHANFLOW_WG"},
      {"--policy", "CHANFLOW_POLICY"},   {"--dispatch", "CHANFLOW_DISPATCH"}, {"--trace", "CHANFLOW_TRACE"},
      {"--max-channels", "CHANFLOW_MAX_CHANNELS"}};
  std::string source;
  std::vector<std::string> compile_flags, program_args;
  bool seen_run = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      program_args.assign(argv + i + 1, argv + argc);
      break;
    }
    if (!seen_run && a == "run") {
      seen_run = true;
    } else if (env_of.count(a)) {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      ::setenv(env_of.at(a), argv[++i], 1);
    } else if (a == "--stats") {
      ::setenv("CHANFLOW_STATS", "1", 1);
    } else if (a == "-I" || a == "-D") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      compile_flags.push_back(a + argv[++i]);
    } else if (a.rfind("-I", 0) == 0 || a.rfind("-D", 0) == 0) {
      compile_flags.push_back(a);
    } else if (seen_run && source.empty() && is_cilk_source(a)) {
      source = a;
    } else {
      return usage_error(fmt::format("unexpected '{}' (the program's own arguments go after --)", a));
    }
  }
  if (!fs::exists(source)) {
    fmt::print(stderr, "chanflow run: no such file: '{}'\n", source);
    return 1;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path compiler = self.parent_path() / "chanflowc";
  if (!fs::exists(compiler)) {
    fmt::print(stderr, "chanflow run: chanflowc is not installed beside {} (build the compiler target)\n", self.string());
    return 1;
  }
  std::uint64_t key = fnv1a(0xcbf29ce484222325ull, read_all(source));
  for (const std::string& f : compile_flags) key = fnv1a(key, f + '\0');
  // chanflowc, and the libraries the program links, which this binary links too (a new runtime
  // relinks it): a cached program built against an older chanflow is built again.
  for (const fs::path& tool : {compiler, self})
    key = fnv1a(key, fmt::format("{}:{}", fs::file_size(tool), fs::last_write_time(tool).time_since_epoch().count()));
  const fs::path dir = cache_root() / fmt::format("{:016x}", key);
  const fs::path exe = dir / fs::path(source).stem();
  if (!fs::exists(exe)) {
    fs::create_directories(dir);
    const fs::path partial = dir / fmt::format(".{}.{}", fs::path(source).stem().string(), ::getpid());
    std::string command = fmt::format("'{}' '{}' -o '{}'", compiler.string(), source, partial.string());
    for (const std::string& f : compile_flags) command += " '" + f + "'";
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
