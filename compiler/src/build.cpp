// The build step: the generated files on disk, compiled with the system C and C++ compilers and
// linked against the chanflow this compiler belongs to. A failure is one BuildError naming the
// step, with the head of the tool's output and where the rest is, never a wall of template errors.
#include "chanflow/compiler.hpp"
#include "compiler_config.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace chanflow::compiler {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw BuildError(fmt::format("cannot write {}", path.string()));
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string head(const fs::path& log, int lines) {
  std::ifstream in(log);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out += "  " + line + "\n";
  return out;
}

// Runs `command`, its output into `log`; throws naming `what` if it fails.
void run_step(const std::string& what, const std::string& command, const fs::path& log, const BuildOptions& build) {
  if (build.verbose) fmt::print(stderr, "{}\n", command);
  const int status = std::system((command + " > " + quote(log.string()) + " 2>&1").c_str());
  if (status == 0) return;
  throw BuildError(fmt::format("{} failed (exit status {}); the first lines of its output:\n{}the whole output: {}",
                               what, WIFEXITED(status) ? WEXITSTATUS(status) : status, head(log, 12), log.string()));
}

// $CC or $CXX, unless unset or chanflowc itself (a Makefile run as `make CC=chanflowc` exports
// it to the commands it runs).
std::string tool(const char* env, const char* fallback) {
  const char* v = std::getenv(env);
  if (!v || !*v || fs::path(v).filename() == "chanflowc") return fallback;
  return v;
}

void require_tool(const std::string& name) {
  if (std::system(("command -v " + quote(name) + " > /dev/null 2>&1").c_str()) != 0)
    throw BuildError(fmt::format("cannot build the program: no '{}' on PATH (install gcc and g++, or set CC and CXX)", name));
}

}  // namespace

std::vector<std::string> write_outputs(const Translation& t, const std::string& dir, const std::vector<std::string>& which) {
  fs::create_directories(dir);
  std::vector<std::string> written;
  for (const std::string& w : which) {
    std::pair<std::string, const std::string*> file;
    if (w == "cl") file = {t.name + ".cl", &t.device_cl};
    else if (w == "cpp") file = {t.name + ".graph.cpp", &t.graph_cpp};
    else if (w == "c") file = {t.name + ".host.c", &t.host_c};
    else if (w == "h") file = {t.name + ".types.h", &t.types_h};
    else if (w == "dot") file = {t.name + ".dot", &t.dot};
    else throw BuildError(fmt::format("--emit={}: not one of cl, cpp, c, h, dot", w));
    const fs::path path = fs::path(dir) / file.first;
    write_file(path, *file.second);
    written.push_back(path.string());
  }
  return written;
}

namespace {

// A file's host code and graph compiled in build.work_dir: their two objects.
std::pair<fs::path, fs::path> compile_translation(const Translation& t, const BuildOptions& build) {
  const fs::path dir = build.work_dir;
  const std::string cc = tool("CC", "cc"), cxx = tool("CXX", "c++");
  require_tool(cc);
  require_tool(cxx);
  std::string includes = " -I" + quote(dir.string());
  for (const std::string& d : config::include_dirs()) includes += " -I" + quote(d);
  std::string user_flags;
  for (const std::string& f : build.flags) user_flags += " " + quote(f);
  std::string host_options = " -std=gnu11 -O2";
  for (const std::string& f : build.host_flags) host_options += " " + quote(f);  // the last -O and -std win
  std::string defines;
  for (const char* d : config::kDefinitions) defines += std::string(" ") + d;
  write_outputs(t, dir.string(), {"cl", "cpp", "c", "h", "dot"});
  // The host code is the user's file written elsewhere: its "..." headers are beside the source.
  const std::string host_flags = " -iquote " + quote(fs::absolute(t.source).parent_path().string()) + user_flags;
  const fs::path host_o = dir / (t.name + ".host.o"), graph_o = dir / (t.name + ".graph.o");
  run_step(fmt::format("the C compiler ({}) on the host code {}", cc, (dir / (t.name + ".host.c")).string()),
           fmt::format("{}{} -w{}{} -c {} -o {}", cc, host_options, host_flags, includes,
                       quote((dir / (t.name + ".host.c")).string()), quote(host_o.string())),
           dir / (t.name + ".host.log"), build);
  run_step(fmt::format("the C++ compiler ({}) on the generated graph {}", cxx, (dir / (t.name + ".graph.cpp")).string()),
           fmt::format("{} -std=c++20 -O2{}{} -c {} -o {}", cxx, defines, includes,
                       quote((dir / (t.name + ".graph.cpp")).string()), quote(graph_o.string())),
           dir / (t.name + ".graph.log"), build);
  return {host_o, graph_o};
}

}  // namespace

void build_executable(const std::vector<Translation>& translations, const BuildOptions& build) {
  const fs::path dir = build.work_dir;
  const std::string cxx = tool("CXX", "c++");
  require_tool(cxx);
  std::string objects;
  for (const Translation& t : translations) {
    const auto [host_o, graph_o] = compile_translation(t, build);
    objects += " " + quote(host_o.string()) + " " + quote(graph_o.string());
  }
  for (const std::string& input : build.link_inputs) objects += " " + quote(input);
  std::string libs;
  for (const std::string& l : config::link_libraries()) libs += " " + (l[0] == '-' ? l : quote(l));
  run_step(fmt::format("linking {}", build.output), fmt::format("{}{} -o {}{}", cxx, objects, quote(build.output), libs),
           dir / "link.log", build);
}

void build_object(const Translation& translation, const BuildOptions& build) {
  const auto [host_o, graph_o] = compile_translation(translation, build);
  const std::string cxx = tool("CXX", "c++");
  run_step(fmt::format("combining {}'s objects into {}", translation.source, build.output),
           fmt::format("{} -r -nostdlib {} {} -o {}", cxx, quote(host_o.string()), quote(graph_o.string()), quote(build.output)),
           fs::path(build.work_dir) / "object.log", build);
}

void build_elision(const std::vector<std::string>& inputs, const std::vector<std::string>& flags,
                   const BuildOptions& build) {
  const std::string cc = tool("CC", "cc");
  require_tool(cc);
  std::string options;
  for (const std::string& d : config::include_dirs()) options += " -I" + quote(d);
  for (const std::string& f : flags) options += " " + quote(f);
  std::string sources;
  bool cilk5 = false;
  for (const std::string& input : inputs) {
    sources += " " + quote(input);
    cilk5 = cilk5 || fs::path(input).extension() == ".cilk";
  }
  if (cilk5) options += " -include cilk/cilk5.h -x c";
  std::string link = cilk5 ? " -x none" : "";
  for (const std::string& l : build.link_inputs) link += " " + quote(l);
  fs::create_directories(build.work_dir);
  run_step(fmt::format("the C compiler ({}) on the serial elision of {}", cc, inputs.front()),
           fmt::format("{} -std=gnu11 -O1 -w{}{}{} -o {}", cc, options, sources, link, quote(build.output)),
           fs::path(build.work_dir) / "elision.log", build);
}

}  // namespace chanflow::compiler
