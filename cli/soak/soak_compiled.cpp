// `chanflow soak compiled`: Cilk programs compiled with chanflowc, each run under randomly drawn
// capacities, work-group sizes, policies, dispatch modes and serial cut-offs, its output compared with its serial
// elision's. A run must print what the elision prints and exit as it does, or be refused before it
// runs by the one diagnostic the runtime documents for settings too small for a program (a
// channel that cannot hold one work-group's request); anything else (a wrong output, another
// exit status, any other error, a crash, a hang) fails the soak.
#include "soak.hpp"

#include "chanflow/run_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace chanflow::soak {
namespace {

namespace fs = std::filesystem;

struct Program {
  fs::path source;
  std::vector<std::string> args;
  fs::path executable, elision;
  std::string expected;  // the elision's output
  int expected_status = 0;  // and exit status
};

struct Outcome {
  int status = 0;       // exit status, or -signal, or 124 (timed out)
  bool timed_out = false;
  std::string out, err;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `argv` with `env` added, its output into files under `dir`; kills it past `timeout_s`.
Outcome run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& dir,
            double timeout_s) {
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  std::fflush(nullptr);  // nothing buffered is printed twice
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) std::_Exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      o.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.status = o.timed_out ? 124 : WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  o.out = read_file(out);
  o.err = read_file(err);
  return o;
}

std::vector<Program> read_manifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) throw std::invalid_argument(fmt::format("cannot read the program list '{}'", manifest.string()));
  std::vector<Program> programs;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string path;
    if (!(words >> path) || path[0] == '#') continue;
    Program p{manifest.parent_path() / path, {}, {}, {}, {}};
    for (std::string a; words >> a;) p.args.push_back(a);
    if (!fs::exists(p.source)) throw std::invalid_argument(fmt::format("{}: no such program '{}'", manifest.string(), path));
    programs.push_back(std::move(p));
  }
  if (programs.empty()) throw std::invalid_argument(fmt::format("'{}' lists no programs", manifest.string()));
  return programs;
}

// The settings' refusal, as the runtime words it before a run (scheduler/src/validate.cpp, a
// compiled program's `chanflow: ` line): a malformed graph every problem of which is a channel
// too small for one work-group's request. Its reason, numbers taken out; empty if `err` is not
// exactly that (another problem, another error, or none).
std::string refusal_of(const std::string& err) {
  // Across devices the device whose graph was refused is named first.
  static const std::string kLead = "chanflow: malformed channel-flow graph:";
  static const std::regex kLeadLine(R"(chanflow: (device [0-9]+ \(.*\): )?malformed channel-flow graph:\s*)");
  static const std::string kProblem = "cannot hold one work-group's request";
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line) && !std::regex_match(line, kLeadLine)) {
  }
  if (!std::regex_match(line, kLeadLine)) return {};
  std::string first;
  while (std::getline(lines, line) && line.rfind("  - ", 0) == 0) {
    if (line.find(kProblem) == std::string::npos) return {};  // another problem: the compiler's or the runtime's
    if (first.empty()) first = line;
  }
  if (first.empty()) return {};
  std::string reason;
  for (char c : kLead + first) {
    const bool digit = c >= '0' && c <= '9';
    if (!digit) reason += c;
    else if (reason.empty() || reason.back() != '#') reason += '#';
  }
  return reason.size() > 150 ? reason.substr(0, 150) + "..." : reason;
}

// A run's first `chanflow: ` line (and a graph's first problem), or empty if the run said nothing.
std::string message_of(const std::string& err) {
  std::istringstream lines(err);
  std::string first, line;
  while (std::getline(lines, line))
    if (line.rfind("chanflow", 0) == 0) {
      first = line;
      if (std::getline(lines, line) && line.find(" - ") != std::string::npos) first += line;  // a graph's first problem
      break;
    }
  return first;
}

// The number written before `word` in a compiled program's statistics ("143 yields"), or 0.
std::uint64_t count_before(const std::string& text, const std::string& word) {
  const std::size_t at = text.find(" " + word);
  if (at == std::string::npos) return 0;
  std::size_t begin = at;
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  return begin == at ? 0 : std::stoull(text.substr(begin, at - begin));
}

}  // namespace

nlohmann::json run_compiled_soak(const CompiledSoakOptions& options, std::FILE* out) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path chanflowc = self.parent_path() / "chanflowc";
  if (!fs::exists(chanflowc))
    throw std::runtime_error(fmt::format("chanflowc is not installed beside {} (build the compiler target)", self.string()));
  std::vector<Program> programs = read_manifest(options.manifest);
  const fs::path work = fs::temp_directory_path() / fmt::format("chanflow-soak-compiled-{}", ::getpid());
  fs::create_directories(work);
  // Each program compiled once, both ways, and its elision run once: the expected output.
  for (Program& p : programs) {
    const std::string stem = p.source.stem().string();
    p.executable = work / stem;
    p.elision = work / (stem + ".elision");
    for (const auto& [what, argv] :
         {std::pair{"chanflowc", std::vector<std::string>{chanflowc, p.source, "-o", p.executable}},
          std::pair{"the serial elision", std::vector<std::string>{chanflowc, "--elision", p.source, "-o", p.elision}}}) {
      const Outcome built = run(argv, {}, work, 600);
      if (built.status != 0)
        throw std::runtime_error(fmt::format("{} failed on {}:\n{}{}", what, p.source.string(), built.out, built.err));
    }
    std::vector<std::string> argv{p.elision};
    argv.insert(argv.end(), p.args.begin(), p.args.end());
    const Outcome reference = run(argv, {}, work, 600);
    if (reference.status < 0 || reference.timed_out)
      throw std::runtime_error(fmt::format("the serial elision of {} failed: {}", p.source.string(), reference.err));
    p.expected = reference.out;
    p.expected_status = reference.status;
  }
  static const char* const kPolicies[] = {"levelized", "greedy"};
  static const char* const kDispatch[] = {"auto", "claimed", "planned", "host"};
  static const std::uint32_t kWg[] = {2, 4, 8, 16, 32, 64};
  static const std::uint32_t kPerGroup[] = {2, 3, 4, 8, 32, 64};  // capacity in work-groups' worth of CEs
  // Granularity control: off a third of the time (every spawn a task: the most yields), else the
  // runtime's choice or a fixed depth (from the root: the whole call in one work-item).
  static const char* const kSerial[] = {"off", "off", "auto", "0", "2", "5"};
  std::uint64_t correct = 0, refused = 0, wrong = 0, errors = 0, crashed = 0, hung = 0, yields = 0, resumed = 0;
  std::map<std::string, std::uint64_t> refusals;
  nlohmann::json failures = nlohmann::json::array();
  for (std::uint32_t i = options.first; i < options.first + options.configs; ++i) {
    std::mt19937_64 rng(options.seed * 0x9e3779b97f4a7c15ull + i);
    const Program& p = programs[i % programs.size()];
    const std::uint32_t wg = kWg[rng() % 6];
    const std::uint32_t capacity = rng() % 4 == 0 ? (rng() % 2 ? 1024u : 4096u) : wg * kPerGroup[rng() % 6];
    const char* policy = kPolicies[rng() % 2];
    const char* dispatch = kDispatch[rng() % 4];
    const char* serial = kSerial[rng() % 6];
    // Drawn last: the other draws stay as they were without devices.
    const std::uint32_t devices =
        options.most_devices > 1 && rng() % 4 == 0 ? 2 + static_cast<std::uint32_t>(rng() % (options.most_devices - 1)) : 1;
    const RunSettings settings{.capacity = capacity, .wg_size = wg, .policy = policy, .dispatch = sweeps_from_string(dispatch),
                               .scheduler = scheduler_from_string(options.scheduler),
                               .serial_cutoff = SerialCutoff::parse("serial", serial),
                               .devices = devices > 1 ? fmt::format("0-{}", devices - 1) : std::string()};
    std::vector<std::string> env{"CHANFLOW_STATS=1"};
    for (const auto& [name, value] : settings.environment()) env.push_back(name + "=" + value);
    std::vector<std::string> argv{p.executable};
    argv.insert(argv.end(), p.args.begin(), p.args.end());
    const Outcome o = run(argv, env, work, options.timeout_s);
    const std::string config = fmt::format("[{}] {}{} | capacity {} wg {} {} {} serial {}{}{}", i, p.source.filename().string(),
                                           fmt::format("{}{}", p.args.empty() ? "" : " ", fmt::join(p.args, " ")),
                                           capacity, wg, policy, dispatch, serial,
                                           devices > 1 ? fmt::format(" devices {}", devices) : "",
                                           options.scheduler != "auto" ? " scheduler " + options.scheduler : "");
    std::string verdict;
    const bool so_far = p.expected.compare(0, o.out.size(), o.out) == 0;  // what it printed, the elision printed first
    if (o.timed_out) {
      ++hung;
      verdict = fmt::format("HANG (killed after {} s)", options.timeout_s);
    } else if (o.status < 0) {
      ++crashed;
      verdict = fmt::format("CRASH (signal {})", -o.status);
    } else if (o.status == p.expected_status && o.out == p.expected) {
      ++correct;
      yields += count_before(o.err, "yields");
      const std::uint64_t r = count_before(o.err, "restarts");
      resumed += r;
      verdict = fmt::format("correct ({} yields, {} resumed)", count_before(o.err, "yields"), r);
    } else if (o.status == 1 && so_far && !refusal_of(o.err).empty()) {  // its output right until it was refused
      ++refused;
      ++refusals[refusal_of(o.err)];
      verdict = "refused: " + message_of(o.err);
    } else if (o.status != p.expected_status && !message_of(o.err).empty() && so_far) {
      ++errors;  // stopped with another error, its output so far right
      verdict = fmt::format("ERROR (exit {}): {}", o.status, message_of(o.err));
    } else {
      ++wrong;
      verdict = fmt::format("WRONG (exit {}, the elision's {}): expected\n{}got\n{}{}", o.status, p.expected_status,
                            p.expected, o.out, o.err);
    }
    if (verdict.rfind("correct", 0) != 0 && verdict.rfind("refused", 0) != 0)
      failures.push_back({{"config", config}, {"verdict", verdict}, {"rerun", fmt::format("--first {} --configs 1", i)}});
    fmt::print(out, "{} -> {}\n", config, verdict);
    std::fflush(out);
  }
  fs::remove_all(work);
  fmt::print(out, "\n{} configurations over {} programs: {} correct ({} yields, {} tasks resumed), {} refused before the "
                  "run (settings too small), {} wrong, {} stopped by another error, {} crashed, {} hung\n",
             options.configs, programs.size(), correct, yields, resumed, refused, wrong, errors, crashed, hung);
  for (const auto& [reason, n] : refusals) fmt::print(out, "  refused {}x: {}\n", n, reason);
  return {{"totals",
           {{"configs", options.configs}, {"programs", programs.size()}, {"correct", correct}, {"refused", refused},
            {"wrong", wrong}, {"errors", errors}, {"crashed", crashed}, {"hung", hung}, {"yields", yields},
            {"resumed", resumed}, {"failed", wrong + errors + crashed + hung}}},
          {"refusals", refusals},
          {"failures", failures}};
}

}  // namespace chanflow::soak
