// chanflowc: compiles a Cilk program (OpenCilk's .c or Cilk-5's .cilk) into an executable whose
// Cilk functions run as channel-flow graphs on an OpenCL device, like `clang -fopencilk`.
//
//   chanflowc fib.c -o fib                  the executable
//   chanflowc app.c getoptions.c -o app     a program of several files (each translated alone)
//   chanflowc fib.c --emit=cl,cpp -o out/   the generated OpenCL C, graph C++, host C, types, DOT
//   chanflowc -O3 -c fib.c -o fib.o; chanflowc fib.o -lm -o fib    as a Makefile drives a C compiler
#include "chanflow/compiler.hpp"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>

namespace {

int usage(int status) {
  fmt::print(status ? stderr : stdout,
             "usage: chanflowc FILE.c|FILE.cilk|FILE.o... [-c] [-o OUTPUT] [--emit=cl,cpp,c,h,dot] [-I DIR] [-D NAME[=VALUE]]\n"
             "                 [-U NAME] [-include FILE] [-std=STD] [-O...] [-g] [-l LIB] [-L DIR] [-Wl,...]\n"
             "                 [--max-loop-spawns=N] [--helper-stack=N] [--serial-cutoff=N|auto|off] [-Rserial-form]\n"
             "                 [--elision] [--keep] [-v]\n"
             "  FILE...              the program's files: each is translated alone (a Cilk function spawns only\n"
             "                       functions of its own file); one holds main. Objects (.o, .a, .so) are linked\n"
             "  -o OUTPUT            the executable (default: the first input's stem); with --emit, a directory\n"
             "  -c                   compile each file into an object (FILE.o, or -o's for one file) to link later\n"
             "  -O..., -g, -std=STD  for the host code's C compiler (-std for chanflowc's front end too)\n"
             "  -l, -L, -Wl,..., -pthread   for the link\n"
             "  -W..., -f..., -m..., -pipe, -MD, -MMD, -MP   accepted and ignored (-fopencilk among them)\n"
             "  --emit=LIST          write the generated files instead of building: cl (kernel nodes), cpp (graph),\n"
             "                       c (host code), h (shared types), dot (the channel-flow graph)\n"
             "  --max-loop-spawns=N  children a loop spawns before it syncs, a batch at a time (default 32)\n"
             "  --helper-stack=N     a helper that calls itself keeps its newest N frames in private memory, older ones\n"
             "                       on the device heap (default 64, at least 2)\n"
             "  --serial-cutoff=N|auto|off\n"
             "                       granularity control: tasks at depth N and deeper (the root at 0) run their\n"
             "                       call serially in their work-item, where the function spawns and calls only\n"
             "                       itself and functions that can; auto (default): the runtime picks the depth\n"
             "                       each run (CHANFLOW_SERIAL_CUTOFF overrides either); off: every spawn a task\n"
             "  -Rserial-form        a remark at each Cilk function that spawns and has no serial form, saying why\n"
             "                       (its tasks spawn at every depth: the channel table bounds how deep it recurses)\n"
             "  --elision            build the serial elision instead (the keywords defined away; the reference)\n"
             "  --keep               keep the build directory and say where it is\n");
  return status;
}

// `--name=N` with lo <= N <= hi: N; another option: nothing. Out of range: says so and exits 2.
std::optional<unsigned> count_option(const std::string& a, const std::string& name, long lo, long hi) {
  if (a.rfind(name + "=", 0) != 0) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(a.c_str() + name.size() + 1, &end, 10);
  if (*end != '\0' || end == a.c_str() + name.size() + 1 || n < lo || n > hi) {
    fmt::print(stderr, "chanflowc: {} must be {} to {}{}\n", name, lo, hi, name == "--serial-cutoff" ? ", auto or off" : "");
    std::exit(2);
  }
  return static_cast<unsigned>(n);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) out.push_back(s.substr(start, comma - start));
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cc = chanflow::compiler;
  namespace fs = std::filesystem;
  cc::TranslateOptions options;
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::string> emit;
  std::vector<std::string> host_flags, link_inputs;
  bool keep = false, verbose = false, elision = false, compile_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (a.size() > std::strlen(flag) && a.compare(0, std::strlen(flag), flag) == 0) return a.substr(std::strlen(flag));
      if (i + 1 >= argc) {
        fmt::print(stderr, "chanflowc: {} needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    auto starts = [&](const char* prefix) { return a.rfind(prefix, 0) == 0; };
    auto object = [](const std::string& f) {
      const std::string ext = fs::path(f).extension().string();
      return ext == ".o" || ext == ".a" || ext == ".so" || f.find(".so.") != std::string::npos;
    };
    if (a == "-h" || a == "--help") return usage(0);
    if (a == "-c") compile_only = true;
    else if (a == "-U" || starts("-U")) options.clang_args.push_back("-U" + value("-U"));
    else if (a == "-include") options.clang_args.push_back("-include"), options.clang_args.push_back(value("-include"));
    else if (starts("-std=")) options.clang_args.push_back(a), host_flags.push_back(a);
    else if (starts("-O") || starts("-g")) host_flags.push_back(a);
    else if (a == "-l" || starts("-l")) link_inputs.push_back("-l" + value("-l"));
    else if (a == "-L" || starts("-L")) link_inputs.push_back("-L" + value("-L"));
    else if (starts("-Wl,") || a == "-pthread" || a == "-rdynamic") link_inputs.push_back(a);
    else if (a == "-MF" || a == "-MT" || a == "-MQ") value(a.c_str());  // dependency files: not written
    else if (starts("-W") || starts("-f") || starts("-m") || a == "-w" || a == "-pipe" || a == "-MD" || a == "-MMD" ||
             a == "-MP" || a == "-pedantic" || a == "-ansi")
      continue;  // the user's C compiler's: chanflowc reports its own diagnostics
    else if (starts("-o")) output = value("-o");
    else if (a.rfind("--emit=", 0) == 0) emit = split(a.substr(7));
    else if (a == "-I" || a.rfind("-I", 0) == 0) options.clang_args.push_back("-I" + value("-I"));
    else if (a == "-D" || a.rfind("-D", 0) == 0) options.clang_args.push_back("-D" + value("-D"));
    else if (const auto n = count_option(a, "--max-loop-spawns", 1, 4096)) options.max_loop_spawns = *n;
    else if (const auto n = count_option(a, "--helper-stack", 2, 65536)) options.helper_stack_frames = *n;
    else if (a == "--serial-cutoff=auto") options.serial_cutoff.reset(), options.serial_forms = true;
    else if (a == "--serial-cutoff=off") options.serial_forms = false;
    else if (const auto n = count_option(a, "--serial-cutoff", 0, 4096)) options.serial_cutoff = *n, options.serial_forms = true;
    else if (a == "-Rserial-form") options.remark_serial_forms = true;
    else if (a == "--keep") keep = true;
    else if (a == "--elision") elision = true;
    else if (a == "-v") verbose = true;
    else if (!a.empty() && a[0] == '-') {
      fmt::print(stderr, "chanflowc: unknown option '{}'\n", a);
      return usage(2);
    } else if (object(a)) link_inputs.push_back(a);
    else inputs.push_back(a);
  }
  if (inputs.empty() && link_inputs.empty()) return usage(2);
  if (compile_only && inputs.size() > 1 && !output.empty()) {
    fmt::print(stderr, "chanflowc: error: -o with -c names one object, but {} files were given\n", inputs.size());
    return 2;
  }
  std::map<std::string, std::string> by_stem;  // the generated files are named after the inputs
  for (const std::string& input : inputs) {
    if (!fs::exists(input)) {
      fmt::print(stderr, "chanflowc: error: no such file: '{}'\n", input);
      return 1;
    }
    const auto [it, fresh] = by_stem.emplace(fs::path(input).stem().string(), input);
    if (!fresh) {
      fmt::print(stderr, "chanflowc: error: '{}' and '{}' have the same name, which the generated files take\n",
                 it->second, input);
      return 1;
    }
  }
  if (inputs.empty()) {  // objects only: link them
    const fs::path work = fs::temp_directory_path() / fmt::format("chanflowc-link-{}", ::getpid());
    fs::create_directories(work);
    try {
      cc::build_executable({}, {.output = output.empty() ? "a.out" : output, .work_dir = work.string(), .keep = keep,
                                .verbose = verbose, .link_inputs = link_inputs});
    } catch (const cc::BuildError& e) {
      fmt::print(stderr, "chanflowc: error: {}\n", e.what());
      return 1;
    }
    if (!keep) fs::remove_all(work);
    return 0;
  }
  options.input = inputs.front();
  if (elision) {
    const std::string stem = fs::path(options.input).stem().string();
    const fs::path work = fs::temp_directory_path() / fmt::format("chanflowc-{}-{}", stem, ::getpid());
    try {
      cc::build_elision(inputs, options.clang_args,
                        {.output = output.empty() ? stem + ".elision" : output, .work_dir = work.string(), .verbose = verbose,
                         .link_inputs = link_inputs});
    } catch (const cc::BuildError& e) {
      fmt::print(stderr, "chanflowc: error: {}\n", e.what());
      return 1;
    }
    fs::remove_all(work);
    return 0;
  }
  // Each file alone: all of them, so that every file's diagnostics are reported at once.
  std::vector<cc::Translation> translations;
  bool failed = false;
  for (const std::string& input : inputs) {
    options.input = input;
    std::optional<cc::Translation> t = cc::translate(options);
    if (t) translations.push_back(std::move(*t));
    else failed = true;
  }
  if (failed) return 1;
  try {
    if (!emit.empty()) {
      for (const cc::Translation& t : translations)
        for (const std::string& path : cc::write_outputs(t, output.empty() ? "." : output, emit)) fmt::print("wrote {}\n", path);
      return 0;
    }
    if (compile_only) {  // an object per file, as cc -c makes
      for (const cc::Translation& t : translations) {
        const fs::path work = fs::temp_directory_path() / fmt::format("chanflowc-{}-{}", t.name, ::getpid());
        fs::create_directories(work);
        const std::string object = output.empty() ? t.name + ".o" : output;
        cc::build_object(t, {.output = object, .work_dir = work.string(), .keep = keep, .verbose = verbose,
                             .flags = options.clang_args, .host_flags = host_flags});
        if (keep) fmt::print(stderr, "chanflowc: the generated files are in {}\n", work.string());
        else fs::remove_all(work);
      }
      return 0;
    }
    const std::string& name = translations.front().name;
    if (output.empty()) output = name;
    const fs::path work = fs::temp_directory_path() / fmt::format("chanflowc-{}-{}", name, ::getpid());
    fs::create_directories(work);
    cc::build_executable(translations, {.output = output, .work_dir = work.string(), .keep = keep, .verbose = verbose,
                                        .flags = options.clang_args, .host_flags = host_flags,
                                        .link_inputs = link_inputs});
    if (keep) fmt::print(stderr, "chanflowc: the generated files are in {}\n", work.string());
    else fs::remove_all(work);
  } catch (const cc::BuildError& e) {
    fmt::print(stderr, "chanflowc: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
