// `chanflow bench channels`: CE throughput of the leader-level channel, the per-work-item
// baseline and tbb::concurrent_bounded_queue, every repetition checked for lost or duplicated CEs.
#include "channel_bench.hpp"

#include "common/bench_common.hpp"
#include "chanflow/channel.hpp"
#include "chanflow_cli_sources.hpp"

#include <fmt/format.h>
#include <tbb/concurrent_queue.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <array>
#include <cstring>

namespace chanflow::bench {

namespace {

struct Check {
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
};

// `ids` must be a permutation of 0..n-1; anything else is counted as lost or duplicated
// (a corrupt payload reads as id 0xffffffff, so it shows up as a loss).
Check check_ids(const std::vector<std::uint32_t>& ids, std::uint32_t n) {
  std::vector<std::uint8_t> seen(n, 0);
  Check c;
  for (auto id : ids) {
    if (id >= n) continue;
    if (seen[id]++) ++c.duplicated;
  }
  for (auto s : seen) c.lost += s == 0;
  return c;
}

struct DeviceResult {
  Summary ms;
  double atomics_per_ce = 0;
  Check check;
};

DeviceResult run_device(const Runtime& rt, const ChannelBenchOptions& o, bool leader,
                        std::uint32_t wg, std::uint32_t ce_bytes) {
  const std::uint32_t n = o.ces;
  ChannelTable table(rt, 4);
  Channel ch(table, {.name = "bench", .ce_bytes = ce_bytes, .capacity = n, .done_group = 64});
  SvmBuffer failed(rt, 4), out(rt, std::size_t{n} * 4);
  const std::string suffix = leader ? "_leader" : "_per_item";

  auto run_once = [&](const cl::Program& program) -> std::pair<double, Check> {
    auto produce = rt.kernel(program, ("produce" + suffix).c_str());
    auto consume = rt.kernel(program, ("consume" + suffix).c_str());
    for (auto* k : {&produce, &consume}) set_indirect_svm(*k, ch.svm_allocations());
    rt.svm_fill_zero(failed.get(), 4);
    table.refresh();
    const auto begin = ch.counters().ctrl_published;
    set_arg_svm(produce, 0, ch.device_ptr());
    set_arg(produce, 1, cl_uint{n});
    set_arg_svm(produce, 2, failed.get());
    set_arg_svm(consume, 0, ch.device_ptr());
    set_arg(consume, 1, cl_ulong{begin});
    set_arg(consume, 2, cl_uint{n});
    set_arg_svm(consume, 3, out.get());
    const std::size_t global = (n + wg - 1) / wg * wg;

    const auto start = Clock::now();
    launch(rt, produce, global, wg);
    launch(rt, consume, global, wg);
    rt.finish();
    const double ms = ms_since(start);

    // Aggregator bookkeeping, off the timed path: record the dispatch and free everything.
    table.refresh();
    std::uint32_t refused = 0;
    rt.svm_read(&refused, failed.get(), 4);
    if (refused != 0 || ch.ready().count != n)
      throw std::runtime_error(fmt::format("channel benchmark: {} reservations refused, {} ready of {}",
                                           refused, ch.ready().count, n));
    ch.mark_dispatched(n);
    ch.deallocate();
    std::vector<std::uint32_t> ids(n);
    rt.svm_read(ids.data(), out.get(), ids.size() * 4);
    return {ms, check_ids(ids, n)};
  };

  DeviceResult r;
  auto count = [&r](const Check& check) {
    r.check.lost += check.lost;
    r.check.duplicated += check.duplicated;
  };
  const auto timed = build_channel_program(rt, cli_cl::channel_bench_cl(), {.wg_size = wg});
  count(run_once(timed).second);  // warm-up (first launches pay for compilation and page faults), checked too
  std::vector<double> samples;
  for (unsigned rep = 0; rep < o.reps; ++rep) {
    auto [ms, check] = run_once(timed);
    samples.push_back(ms);
    count(check);
  }
  r.ms = summarize(samples);

  // A separate, untimed pass counts the global atomics the channel makes.
  const auto counting = build_channel_program(rt, cli_cl::channel_bench_cl(),
                                              {.wg_size = wg, .count_atomics = true});
  table.refresh();
  const auto before = ch.counters().atomic_ops;
  count(run_once(counting).second);
  table.refresh();
  r.atomics_per_ce = static_cast<double>(ch.counters().atomic_ops - before) / n;
  return r;
}

template <std::size_t Bytes>
std::pair<Summary, Check> run_tbb_queue(const ChannelBenchOptions& o) {
  struct Ce {
    std::array<std::uint32_t, Bytes / 4> words;
  };
  const std::uint32_t n = o.ces;
  tbb::concurrent_bounded_queue<Ce> queue;
  queue.set_capacity(n);
  std::vector<std::uint32_t> ids(n);
  Check total;
  std::vector<double> samples;
  for (unsigned rep = 0; rep <= o.reps; ++rep) {  // rep 0 warms up
    const auto start = Clock::now();
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, n, 1024), [&](const auto& range) {
      for (auto i = range.begin(); i != range.end(); ++i) {
        Ce ce{};
        ce.words[0] = i;
        for (std::size_t j = 1; j < ce.words.size(); ++j) ce.words[j] = i ^ static_cast<std::uint32_t>(j * 0x9E3779B9u);
        queue.push(ce);
      }
    });
    tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, n, 1024), [&](const auto& range) {
      for (auto i = range.begin(); i != range.end(); ++i) {
        Ce ce{};
        queue.pop(ce);
        bool ok = true;
        for (std::size_t j = 1; j < ce.words.size(); ++j) ok &= ce.words[j] == (ce.words[0] ^ static_cast<std::uint32_t>(j * 0x9E3779B9u));
        ids[i] = ok ? ce.words[0] : 0xffffffffu;
      }
    });
    const double ms = ms_since(start);
    const auto c = check_ids(ids, n);
    if (rep == 0) continue;
    samples.push_back(ms);
    total.lost += c.lost;
    total.duplicated += c.duplicated;
  }
  return {summarize(samples), total};
}

std::pair<Summary, Check> run_tbb(const ChannelBenchOptions& o, std::uint32_t ce_bytes) {
  switch (ce_bytes) {
    case 4: return run_tbb_queue<4>(o);
    case 8: return run_tbb_queue<8>(o);
    case 16: return run_tbb_queue<16>(o);
    case 32: return run_tbb_queue<32>(o);
    case 64: return run_tbb_queue<64>(o);
    case 128: return run_tbb_queue<128>(o);
    case 256: return run_tbb_queue<256>(o);
  }
  throw std::invalid_argument(fmt::format("tbb_queue reference: CE size {} not one of 4, 8, 16, 32, 64, 128, 256", ce_bytes));
}

}  // namespace

nlohmann::json run_channel_bench(const Runtime& rt, const ChannelBenchOptions& o, std::FILE* table) {
  if (o.ces == 0 || o.ces % 64 != 0)
    throw std::invalid_argument(fmt::format("--ces must be a positive multiple of 64, got {}", o.ces));
  nlohmann::json results = nlohmann::json::array();
  fmt::print(table, "channel throughput on {} ({}), {} CEs per repetition, median of {}\n",
             rt.caps().name, rt.caps().platform, o.ces, o.reps);
  fmt::print(table, "{:<9} {:>4} {:>6} {:>10} {:>10} {:>11} {:>5} {:>5}\n", "variant", "wg", "bytes",
             "median ms", "M CE/s", "atomics/CE", "lost", "dup");
  auto row = [&](const std::string& variant, nlohmann::json wg_size, std::uint32_t bytes, const Summary& s,
                 nlohmann::json atomics, const Check& c, const std::string& device) {
    const double mces = o.ces / (s.median * 1e3);
    fmt::print(table, "{:<9} {:>4} {:>6} {:>10.3f} {:>10.1f} {:>11} {:>5} {:>5}\n", variant,
               wg_size.is_null() ? std::string("-") : wg_size.dump(), bytes, s.median, mces,
               atomics.is_null() ? std::string("-") : fmt::format("{:.3f}", atomics.get<double>()), c.lost,
               c.duplicated);
    std::fflush(table);
    results.push_back({{"variant", variant}, {"wg_size", wg_size}, {"ce_bytes", bytes},
                       {"mces_per_s", mces}, {"median_ms", s.median}, {"min_ms", s.min},
                       {"max_ms", s.max}, {"reps", o.reps}, {"ces", o.ces},
                       {"atomics_per_ce", atomics}, {"device", device}, {"lost", c.lost},
                       {"duplicated", c.duplicated}, {"correct", c.lost == 0 && c.duplicated == 0}});
  };
  for (std::uint32_t bytes : o.ce_bytes) {
    for (std::uint32_t wg : o.wg_sizes) {
      for (bool leader : {true, false}) {
        const auto r = run_device(rt, o, leader, wg, bytes);
        row(leader ? "leader" : "per_item", wg, bytes, r.ms, r.atomics_per_ce, r.check, rt.caps().name);
      }
    }
    const auto [s, c] = run_tbb(o, bytes);
    row("tbb_queue", nullptr, bytes, s, nullptr, c,
        fmt::format("host CPU, {} threads", tbb::this_task_arena::max_concurrency()));
  }
  return results;
}

}  // namespace chanflow::bench
