// chanflow soak graphs: random graphs under random policies, capacities, work-group sizes and
// dispatch modes; every run must end with the right result or an honest no-progress diagnostic.
#include "soak.hpp"

#include "common/bench_common.hpp"
#include "chanflow/chanflow.hpp"
#include "chanflow_cli_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

namespace chanflow::soak {

namespace {

struct SoakItem {
  std::uint32_t v, pad;
};
struct SoakArgs {
  std::uint64_t* sum;
};
struct SoakRange {
  chanflow_task task;
  std::uint32_t lo, hi, ways, pad;
};
struct SoakJoin {
  chanflow_frame frame;
  std::uint64_t part[4];
  std::uint32_t ways, pad;
};
struct SoakSeed {
  std::uint32_t lo, hi, ways, slot;
};
struct SoakSeedArgs {
  std::uint64_t* results;
};

std::uint32_t soak_step(std::uint32_t v) { return v * 2654435761u + 12345u; }
std::uint64_t range_sum(std::uint64_t lo, std::uint64_t hi) { return hi * (hi - 1) / 2 - (lo ? lo * (lo - 1) / 2 : 0); }
std::uint64_t fib(std::uint32_t n) {
  std::uint64_t a = 0, b = 1;
  for (std::uint32_t i = 0; i < n; ++i) std::tie(a, b) = std::pair(b, a + b);
  return a;
}

enum class Family { Pipeline, FanOutIn, Countdown, Recursion };
const char* name(Family f) {
  switch (f) {
    case Family::Pipeline: return "pipeline";
    case Family::FanOutIn: return "fan-out/in";
    case Family::Countdown: return "self-feeding";
    case Family::Recursion: return "recursion";
  }
  return "?";
}

/// A random policy a user might write: dispatches a random part of what is admissible, in a
/// random order, sometimes one channel twice in a round, and never nothing while it could go.
class RandomPolicy final : public SchedulingPolicy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  void decide(const GraphView& view, std::vector<Dispatch>& out) override {
    std::vector<const ChannelView*> open;
    for (const auto& c : view.channels)
      if (c.admissible > 0 || c.restartable > 0) open.push_back(&c);
    std::shuffle(open.begin(), open.end(), rng_);
    for (const ChannelView* c : open) {
      if (rng_() % 5 == 0 && !out.empty()) continue;  // skip some, but not all
      const std::uint64_t count = c->admissible ? 1 + rng_() % c->admissible : 0;
      out.push_back({c->id, count, c->restartable ? 1 + rng_() % c->restartable : 0});
      if (rng_() % 4 == 0) out.push_back({c->id, c->admissible, 0});  // the same channel again
    }
  }

 private:
  std::mt19937_64 rng_;
};

/// The random policy's device form, for the device scheduler: a hash of what a channel shows (its
/// ready CEs change as work-groups take and add) orders the channels at random, never scoring one
/// below zero (a channel with work always goes). Four seeds: graphs of a shape share programs.
std::string random_device_policy(std::uint64_t seed) {
  return fmt::format(R"CL(
int chanflow_user_policy_score(const chanflow_policy_view* v) {{
  ulong h = {}UL ^ (v->ready * 0x9e3779b97f4a7c15UL) ^ ((ulong)v->level << 32) ^ ((ulong)v->node << 48) ^ (v->free << 17);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdUL;
  h ^= h >> 33;
  return 1 + (int)(h % 1000UL);
}}
)CL",
                     0x2545f4914f6cdd1dull * (1 + seed % 4));
}

struct Config {
  Family family = Family::Pipeline;
  std::uint32_t wg = 64;
  Sweeps dispatch = Sweeps::Auto;
  std::string policy;
  std::uint32_t stages = 1, items = 0, ways = 2, seed_value = 0;
  std::vector<std::uint32_t> capacities;
  bool seeded_by_node = false;
  Scheduler scheduler = Scheduler::Auto;  // the soak's, not drawn

  std::string describe() const {
    return fmt::format("{} (stages/ports {}, items {}, ways {}, value {}{}), wg {}, policy {}, dispatch {}, "
                       "scheduler {}, capacities {}",
                       name(family), stages, items, ways, seed_value, seeded_by_node ? ", seeded by a node" : "", wg,
                       policy, to_string(dispatch), to_string(scheduler), fmt::join(capacities, "/"));
  }
};

struct Outcome {
  bool ok = false;
  bool stuck = false;  // an honest no-progress diagnostic
  std::string detail;
  RunStats stats;
};

// At least one work-group's request (wg x per_item), rounded to the done-count group.
std::uint32_t draw_capacity(std::mt19937_64& rng, std::uint32_t wg, std::uint32_t per_item) {
  const std::uint32_t request = wg * per_item;
  const std::uint32_t pick = rng() % 4;
  const std::uint32_t c = pick == 0 ? request : pick == 1 ? request * (2 + rng() % 6) : pick == 2 ? 4096 : 1u << 16;
  return std::max(c, request);
}

Config draw(std::mt19937_64& rng, const Runtime& rt, bool claimable) {
  Config c;
  c.family = static_cast<Family>(rng() % 4);
  std::vector<std::uint32_t> wgs;
  for (std::uint32_t wg : {16u, 32u, 64u})
    if (wg <= rt.caps().max_work_group_size) wgs.push_back(wg);
  c.wg = wgs[rng() % wgs.size()];
  std::vector<Sweeps> modes{Sweeps::Auto, Sweeps::Planned, Sweeps::Off};
  if (claimable) modes.push_back(Sweeps::Claimed);
  c.dispatch = modes[rng() % modes.size()];
  c.policy = std::array<const char*, 3>{"greedy", "levelized", "random"}[rng() % 3];
  switch (c.family) {
    case Family::Pipeline:
      c.stages = 1 + rng() % 4;
      c.items = 1 + rng() % 20000;
      for (std::uint32_t s = 0; s <= c.stages; ++s) c.capacities.push_back(draw_capacity(rng, c.wg, 1));
      break;
    case Family::FanOutIn:
      c.stages = 2 + rng() % 3;  // ports
      c.items = 1 + rng() % 10000;
      c.capacities.push_back(draw_capacity(rng, c.wg, 1));  // sources
      for (std::uint32_t p = 0; p < c.stages; ++p) c.capacities.push_back(draw_capacity(rng, c.wg, 1));
      c.capacities.push_back(draw_capacity(rng, c.wg, 1));  // the join channel
      break;
    case Family::Countdown:
      c.items = 1 + rng() % 64;
      c.seed_value = 2 + rng() % 16;
      c.capacities.push_back(draw_capacity(rng, c.wg, 2));
      break;
    case Family::Recursion:
      c.items = 1 + rng() % 64;  // roots
      c.ways = 2 + rng() % 3;
      c.seed_value = 1 + rng() % 5000;  // range length
      c.seeded_by_node = rng() % 2;
      c.capacities.push_back(draw_capacity(rng, c.wg, c.ways));  // per level, both stacks
      if (c.seeded_by_node) c.capacities.push_back(draw_capacity(rng, c.wg, 1));
      break;
  }
  return c;
}

Outcome run_config(const Runtime& rt, const Config& c, std::uint64_t policy_seed) {
  // Checked frees: a CE run twice and another never run could otherwise leave the same sum.
  Graph g(rt, {.wg_size = c.wg, .check_frees = true, .device_sweeps = c.dispatch, .scheduler = c.scheduler});
  g.add_source(std::string(cli_cl::soak_graphs_cl()));
  SvmBuffer sum(rt, 8);
  rt.svm_fill_zero(sum.get(), 8);
  auto* sum_ptr = static_cast<std::uint64_t*>(sum.get());
  std::uint64_t expected = 0;
  SvmBuffer results;
  std::vector<std::uint64_t> expected_results;
  ChannelNode* countdown = nullptr;  // the self-feeding channel, to check a deadlock is honest

  switch (c.family) {
    case Family::Pipeline: {
      std::vector<ChannelNode*> ch;
      for (std::uint32_t s = 0; s <= c.stages; ++s) ch.push_back(&g.channel<SoakItem>(fmt::format("ch{}", s), c.capacities[s]));
      for (std::uint32_t s = 0; s < c.stages; ++s) {
        auto& k = g.kernel<SoakItem>(fmt::format("stage{}", s), "soak_stage");
        make_edge(*ch[s], k);
        make_edge(k, *ch[s + 1], Spawns{.name = "out"});  // one name: graphs of a shape share a program
      }
      auto& sink = g.kernel<SoakItem>("sink", "soak_sink");
      make_edge(*ch[c.stages], sink);
      sink.set_args(SoakArgs{sum_ptr}).uses(sum);
      for (std::uint32_t i = 0; i < c.items && i < c.capacities[0]; ++i) {
        ch[0]->push(SoakItem{i * 7919u, 0});
        std::uint32_t v = i * 7919u;
        for (std::uint32_t s = 0; s < c.stages; ++s) v = soak_step(v);
        expected += v;
      }
      break;
    }
    case Family::FanOutIn: {
      auto& sources = g.channel<SoakItem>("sources", c.capacities[0]);
      auto& fan = g.kernel<SoakItem>("fanout", "soak_fanout");
      auto& join = g.channel<SoakItem>("join", c.capacities.back());
      make_edge(sources, fan);
      for (std::uint32_t p = 0; p < c.stages; ++p) {
        auto& branch = g.channel<SoakItem>(fmt::format("branch{}", p), c.capacities[1 + p]);
        make_edge(fan, branch, Spawns{.name = fmt::format("p{}", p)});
        auto& stage = g.kernel<SoakItem>(fmt::format("stage{}", p), "soak_stage");
        make_edge(branch, stage);
        make_edge(stage, join, Spawns{.name = "out"});  // fan-in: every branch feeds the join channel
      }
      auto& sink = g.kernel<SoakItem>("sink", "soak_sink");
      make_edge(join, sink);
      sink.set_args(SoakArgs{sum_ptr}).uses(sum);
      for (std::uint32_t i = 0; i < c.items && i < c.capacities[0]; ++i) {
        sources.push(SoakItem{i * 104729u, 0});
        for (std::uint32_t p = 0; p < c.stages; ++p) expected += soak_step(i * 104729u + 1000003u * p);
      }
      break;
    }
    case Family::Countdown: {
      auto& ch = g.channel<SoakItem>("countdown", c.capacities[0]);
      countdown = &ch;
      auto& k = g.kernel<SoakItem>("count", "soak_countdown");
      make_edge(ch, k);
      make_edge(k, ch, Spawns{.max_per_item = 2, .name = "out"});
      k.set_args(SoakArgs{sum_ptr}).uses(sum);
      for (std::uint32_t i = 0; i < c.items && i < c.capacities[0]; ++i) {
        const std::uint32_t v = c.seed_value - i % 3;
        ch.push(SoakItem{v, 0});
        expected += fib(v + 1);
      }
      break;
    }
    case Family::Recursion: {
      auto& tasks = g.channel_stack<SoakRange>("ranges", c.capacities[0]);
      auto& conts = g.channel_stack<SoakJoin>("joins", c.capacities[0], StackKind::Continuations);
      auto& split = g.kernel<SoakRange>("split", "soak_split");
      auto& joiner = g.kernel<SoakJoin>("join", "soak_join");
      make_edge(tasks, split);
      make_edge(split, tasks, Children{.max_per_item = c.ways});
      make_edge(split, conts, Continuation{});
      make_edge(conts, joiner);
      results = SvmBuffer(rt, std::size_t{c.items} * 8);
      auto* slot = static_cast<std::uint64_t*>(results.get());
      const std::vector<std::uint64_t> unwritten(c.items, ~std::uint64_t{0});  // no range sums to this
      rt.svm_write(slot, unwritten.data(), results.size());
      split.uses(results);
      joiner.uses(results);
      ChannelNode* seeds = nullptr;
      if (c.seeded_by_node) {
        seeds = &g.channel<SoakSeed>("seeds", c.capacities[1]);
        auto& seeder = g.kernel<SoakSeed>("seeder", "soak_seed");
        make_edge(*seeds, seeder);
        make_edge(seeder, tasks, Children{});
        seeder.set_args(SoakSeedArgs{slot}).uses(results);
      }
      const std::uint32_t roots = std::min(c.items, std::min(c.capacities[0], c.seeded_by_node ? c.capacities[1] : ~0u));
      for (std::uint32_t i = 0; i < roots; ++i) {
        const std::uint32_t lo = 1 + i * 13, hi = lo + c.seed_value + i % 7;
        if (seeds) seeds->push(SoakSeed{lo, hi, c.ways, i});
        else tasks.push(0, SoakRange{{reinterpret_cast<std::uint64_t>(slot + i), 0, 0, 0}, lo, hi, c.ways, 0});
        expected_results.push_back(range_sum(lo, hi));
      }
      break;
    }
  }

  Greedy greedy;
  Levelized levelized;
  RandomPolicy host_random(policy_seed);
  DevicePolicy random("random", random_device_policy(policy_seed),
                      [&host_random](const GraphView& view, std::vector<Dispatch>& out) { host_random.decide(view, out); });
  SchedulingPolicy& policy = c.policy == "greedy" ? static_cast<SchedulingPolicy&>(greedy)
                             : c.policy == "levelized" ? static_cast<SchedulingPolicy&>(levelized)
                                                       : random;
  Outcome o;
  try {
    o.stats = g.run(policy, {.max_rounds = 2'000'000});
  } catch (const RunError& e) {
    const std::string msg = e.what();
    // Honest: bounded channels full of work that must spawn more before anything is freed: a
    // self-feeding node that cannot yield, or (host-sized dispatches under a policy that does
    // not serve the deepest levels first) frames whose children find no room below them.
    // Pipelines and fan-out/in always drain; so does recursion under levelized policies or
    // device sweeps (deepest first, thesis 4.3.3).
    const bool may_stick = c.family == Family::Countdown ||
                           (c.family == Family::Recursion && c.policy != "levelized" && c.dispatch == Sweeps::Off);
    o.stuck = may_stick && msg.find("no progress possible") != std::string::npos &&
              msg.find("free slot(s)") != std::string::npos;
    if (o.stuck && countdown) {
      // Honest only if nothing leaked: every allocated CE is ready, or freed and held by
      // in-order deallocation until the rest of its done-count group is done.
      Channel& ch = countdown->channel();
      const std::uint64_t freed = ch.freed_unreclaimed();
      const auto& h = ch.counters();
      const std::uint64_t allocated = h.data_tail - h.data_head, ready = h.ctrl_published - h.ctrl_head;
      o.stuck = allocated == ready + freed;
      o.detail = o.stuck ? msg
                         : fmt::format("{} (and {} CEs allocated, {} ready, {} freed: {} unaccounted for)", msg,
                                       allocated, ready, freed, allocated - ready - freed);
      return o;
    }
    o.detail = msg;
    return o;
  }
  if (c.family == Family::Recursion) {
    std::vector<std::uint64_t> got(expected_results.size());
    rt.svm_read(got.data(), results.get(), got.size() * 8);
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != expected_results[i]) {
        o.detail = fmt::format("root {}: {} instead of {}", i, got[i], expected_results[i]);
        return o;
      }
  } else {
    std::uint64_t got = 0;
    rt.svm_read(&got, sum.get(), 8);
    if (got != expected) {
      o.detail = fmt::format("sum {} instead of {}", got, expected);
      return o;
    }
  }
  o.ok = true;
  return o;
}

/// Turns a hang into a failure that names the configuration: exits the process.
class Watchdog {
 public:
  explicit Watchdog(double seconds) : limit_(seconds), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void arm(std::string what) {
    std::lock_guard lock(mutex_);
    what_ = std::move(what);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(limit_));
    armed_ = true;
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!done_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
          std::chrono::steady_clock::now() >= deadline_) {
        fmt::print(stderr, "chanflow soak graphs: HANG: {} did not finish within {:.0f} s\n", what_, limit_);
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }
  double limit_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, armed_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace

nlohmann::json run_graph_soak(const Runtime& rt, const GraphSoakOptions& o, std::FILE* out) {
  const bool claimable = claimed_sweeps_hold(rt.caps());
  Watchdog watchdog(o.timeout_s);
  nlohmann::json rows = nlohmann::json::array();
  std::uint32_t ok = 0, stuck = 0, failed = 0;
  std::map<std::string, std::uint32_t> per_family;
  const auto start = bench::Clock::now();
  fmt::print(out, "graph soak on {} ({}), seed {}: configurations {} .. {}\n", rt.caps().name, rt.caps().platform,
             o.seed, o.first, o.first + o.configs - 1);
  for (std::uint32_t i = o.first; i < o.first + o.configs; ++i) {
    // Each configuration has its own generator: one can be run again alone (--first i --configs 1).
    std::seed_seq seq{o.seed, std::uint64_t{i}};
    std::mt19937_64 rng(seq);
    Config c = draw(rng, rt, claimable);
    c.scheduler = o.scheduler;
    const std::string what = fmt::format("configuration {} (seed {}): {}", i, o.seed, c.describe());
    watchdog.arm(what);
    const auto t0 = bench::Clock::now();
    Outcome r;
    try {
      r = run_config(rt, c, rng());
    } catch (const std::exception& e) {
      r.detail = e.what();
    }
    watchdog.disarm();
    const double ms = bench::ms_since(t0);
    const char* verdict = r.ok ? "ok" : r.stuck ? "no progress (capacity)" : "FAILED";
    ok += r.ok;
    stuck += r.stuck;
    failed += !r.ok && !r.stuck;
    ++per_family[name(c.family)];
    if (!r.ok && !r.stuck)
      fmt::print(out, "FAILED {}\n  {}\n  reproduce: chanflow soak graphs --seed {} --first {} --configs 1\n", what,
                 r.detail, o.seed, i);
    else
      fmt::print(out, "{:>5} {:<24} {:>8.1f} ms  {:>6} rounds  {:>5} yields  {}\n", i, verdict, ms, r.stats.rounds,
                 r.stats.yields, c.describe());
    std::fflush(out);
    rows.push_back({{"config", i}, {"family", name(c.family)}, {"description", c.describe()}, {"verdict", verdict},
                    {"ms", ms}, {"rounds", r.stats.rounds}, {"yields", r.stats.yields}, {"detail", r.detail}});
  }
  const double seconds = bench::ms_since(start) / 1e3;
  fmt::print(out, "{} configurations in {:.1f} s: {} correct, {} ended with a capacity no-progress diagnostic, {} failed, "
                  "0 hangs\n",
             o.configs, seconds, ok, stuck, failed);
  return {{"seed", o.seed}, {"first", o.first}, {"runs", rows},
          {"totals", {{"configurations", o.configs}, {"correct", ok}, {"no_progress", stuck}, {"failed", failed},
                      {"hangs", 0}, {"seconds", seconds}, {"per_family", per_family}}}};
}

}  // namespace chanflow::soak
