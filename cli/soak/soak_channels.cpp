// chanflow soak channels: every CE through a channel under contention arrives exactly once.
#include "soak.hpp"

#include "common/bench_common.hpp"
#include "chanflow/channel.hpp"
#include "chanflow_cli_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>

namespace chanflow::soak {

namespace {

struct Config {
  std::uint32_t wg = 64, ce_bytes = 4, capacity = 0;
  std::uint32_t stride = 0;  // 0: a binary tree; else that many chains
  std::uint32_t limit = 0;  // CEs (ids 0 .. limit - 1)
};

struct Result {
  std::uint64_t rounds = 0, retries = 0, lost = 0, duplicated = 0, bad = 0, out_of_range = 0;
  double ms = 0;
};

std::uint32_t soak_mix(std::uint32_t id, std::uint32_t j) {
  std::uint32_t x = id * 0x9E3779B1u + j * 0x85EBCA77u + 0x27d4eb2fu;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

Result grow(const Runtime& rt, const cl::Program& program, const Config& c) {
  ChannelTable table(rt, 4);
  const std::uint32_t done_group = std::min<std::uint32_t>(64, c.capacity);
  Channel ch(table, {.name = "soak", .ce_bytes = c.ce_bytes, .capacity = c.capacity, .done_group = done_group});
  const cl::Kernel kernel = rt.kernel(program, "soak_expand");
  const std::uint32_t words = c.ce_bytes / 4, retry_capacity = c.capacity;
  SvmBuffer seen(rt, (std::size_t{c.limit} + 31) / 32 * 4), retry(rt, std::size_t{retry_capacity} * 4), counts(rt, 16);
  rt.svm_fill_zero(seen.get(), seen.size());
  rt.svm_fill_zero(counts.get(), counts.size());
  std::vector<void*> svm = ch.svm_allocations();
  svm.insert(svm.end(), {seen.get(), retry.get(), counts.get()});
  set_indirect_svm(kernel, svm);

  Result r;
  const auto start = bench::Clock::now();
  std::deque<std::uint32_t> pending;  // the roots: 0, or one per chain
  for (std::uint32_t root = 0; root < std::max(c.stride, 1u) && root < c.limit; ++root) pending.push_back(root);
  // A channel that stops moving is a failure, not a hang: every round consumes what is ready.
  const std::uint64_t round_limit = 8 * (std::uint64_t{c.limit} / c.wg + 1) + 10'000;
  for (; r.rounds < round_limit; ++r.rounds) {
    while (!pending.empty()) {  // the children of refused parents, produced by the host
      const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(pending.size(), ch.config().max_reservation));
      auto res = ch.talloc(n);
      if (!res) break;
      for (std::uint32_t k = 0; k < n; ++k) {
        auto* ce = reinterpret_cast<std::uint32_t*>(res->ces.data() + std::size_t{k} * c.ce_bytes);
        ce[0] = pending.front();
        for (std::uint32_t j = 1; j < words; ++j) ce[j] = soak_mix(ce[0], j);
        pending.pop_front();
      }
      ch.enq(std::move(*res));
    }
    table.refresh();
    const auto ready = ch.ready();
    if (ready.count == 0) {
      if (!pending.empty()) throw std::runtime_error("nothing ready, yet the host's CEs do not fit: space leaked");
      break;
    }
    // What is ready, as far as about a quarter more children than the free space takes: most
    // work-groups' reservations succeed, some are refused (all or nothing) and retried.
    const auto& h = ch.counters();
    const std::uint64_t free = c.capacity - (h.data_tail - h.data_head);
    const std::uint64_t children = c.stride ? 1 : 2;
    const auto count = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(ready.count, std::max<std::uint64_t>(c.wg, free * 5 / 4 / children)));
    set_arg_svm(kernel, 0, ch.device_ptr());
    set_arg(kernel, 1, cl_ulong{ready.begin});
    set_arg(kernel, 2, cl_uint{count});
    set_arg(kernel, 3, cl_uint{c.limit});
    set_arg(kernel, 4, cl_uint{c.stride});
    set_arg_svm(kernel, 5, seen.get());
    set_arg_svm(kernel, 6, retry.get());
    set_arg(kernel, 7, cl_uint{retry_capacity});
    set_arg_svm(kernel, 8, counts.get());
    launch(rt, kernel, (std::size_t{count} + c.wg - 1) / c.wg * c.wg, c.wg, false);
    ch.mark_dispatched(count);
    ch.deallocate();  // waits; in-order deallocation on the device, as the aggregator does it
    table.check_errors();
    std::uint32_t retries = 0;
    rt.svm_read(&retries, static_cast<std::uint32_t*>(counts.get()) + 2, 4);
    if (retries > retry_capacity) throw std::runtime_error("more refused parents than the retry list holds");
    if (retries > 0) {
      std::vector<std::uint32_t> parents(retries);
      rt.svm_read(parents.data(), retry.get(), std::size_t{retries} * 4);
      for (auto p : parents) {
        if (c.stride) pending.push_back(p + c.stride);  // the kernel refused it: p + stride < limit
        else
          for (std::uint32_t child = 2 * p + 1; child <= 2 * p + 2 && child < c.limit; ++child) pending.push_back(child);
      }
      r.retries += retries;
      const std::uint32_t zero = 0;
      rt.svm_write(static_cast<std::uint32_t*>(counts.get()) + 2, &zero, 4);
    }
  }
  r.ms = bench::ms_since(start);
  if (r.rounds >= round_limit) throw std::runtime_error(fmt::format("no end after {} rounds", round_limit));

  std::vector<std::uint32_t> bits(seen.size() / 4);
  rt.svm_read(bits.data(), seen.get(), seen.size());
  std::uint64_t arrived = 0;
  for (auto w : bits) arrived += std::popcount(w);
  std::uint32_t cnt[4];
  rt.svm_read(cnt, counts.get(), sizeof cnt);
  r.lost = c.limit - arrived;
  r.bad = cnt[0];
  r.duplicated = cnt[1];
  r.out_of_range = cnt[3];
  table.refresh();
  const auto& h = ch.counters();
  if (h.data_head != h.data_tail || h.data_free != c.capacity)
    throw std::runtime_error(fmt::format("the drained channel holds {} CEs and {} of {} credits", h.data_tail - h.data_head,
                                         static_cast<std::int64_t>(h.data_free), c.capacity));
  return r;
}

}  // namespace

nlohmann::json run_channel_soak(const Runtime& rt, const ChannelSoakOptions& o, std::FILE* out) {
  std::mt19937_64 rng(o.seed);
  std::vector<std::uint32_t> wgs;
  for (std::uint32_t wg : {16u, 64u, 256u})
    if (wg <= rt.caps().max_work_group_size) wgs.push_back(wg);
  std::map<std::uint32_t, cl::Program> programs;
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t total = 0, lost = 0, duplicated = 0, bad = 0, configs = 0;
  const auto start = bench::Clock::now();
  fmt::print(out, "channel soak on {} ({}), seed {}: {} CEs\n", rt.caps().name, rt.caps().platform, o.seed, o.ces);
  fmt::print(out, "{:>4} {:>6} {:>4} {:>6} {:>9} {:>12} {:>8} {:>9} {:>8} {:>6} {:>5} {:>5} {:>9}\n", "cfg", "shape",
             "wg", "bytes", "capacity", "CEs", "laps", "rounds", "retried", "lost", "dup", "bad", "ms");
  while (total < o.ces) {
    Config c;
    c.wg = wgs[rng() % wgs.size()];
    c.ce_bytes = std::array<std::uint32_t, 3>{4, 16, 64}[rng() % 3];
    // From one work-group's request (two children per item) up to 2^20 CEs.
    const std::uint32_t request = 2 * c.wg;
    const std::uint32_t choice = rng() % 5;
    c.capacity = choice == 0 ? request : choice == 1 ? request * (2 + rng() % 7) : choice == 2 ? 1u << 14 : choice == 3 ? 1u << 17 : 1u << 20;
    c.capacity = (c.capacity + 63) / 64 * 64;
    // Trees (two CEs per reservation, breadth first) fill the channel within a few rounds and then
    // move only what its free space takes, leaves last: they get four channels' worth. Chains
    // carry the bulk: 5/8 of the capacity of them, so each round some reservations are refused
    // and retried.
    const bool tree = configs % 2 == 1;  // every soak covers both shapes
    c.stride = tree ? 0 : std::max<std::uint32_t>(c.capacity / 8 * 5, 1);
    const std::uint64_t rounds = tree ? 4 : c.capacity < 4096 ? 2000 : 20000;
    const std::uint64_t budget = std::min<std::uint64_t>(std::uint64_t{c.capacity} * rounds, 1u << 30);
    c.limit = static_cast<std::uint32_t>(std::max<std::uint64_t>(std::min(o.ces - total, budget), 1));
    auto it = programs.find(c.wg);
    if (it == programs.end())
      it = programs.emplace(c.wg, build_channel_program(rt, cli_cl::soak_channels_cl(), {.wg_size = c.wg})).first;
    Result r;
    try {
      r = grow(rt, it->second, c);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("channel soak, seed {}, configuration {} (wg {}, {}-byte CEs, capacity {}, {} "
                                           "CEs): {}",
                                           o.seed, configs, c.wg, c.ce_bytes, c.capacity, c.limit, e.what()));
    }
    const double laps = double(c.limit) / c.capacity;
    fmt::print(out, "{:>4} {:>6} {:>4} {:>6} {:>9} {:>12} {:>8.1f} {:>9} {:>8} {:>6} {:>5} {:>5} {:>9.1f}\n", configs,
               c.stride ? "chains" : "tree", c.wg,
               c.ce_bytes, c.capacity, c.limit, laps, r.rounds, r.retries, r.lost, r.duplicated, r.bad + r.out_of_range,
               r.ms);
    std::fflush(out);
    rows.push_back({{"shape", c.stride ? "chains" : "tree"}, {"wg", c.wg}, {"ce_bytes", c.ce_bytes}, {"capacity", c.capacity}, {"ces", c.limit},
                    {"laps", laps}, {"rounds", r.rounds}, {"retried_parents", r.retries}, {"lost", r.lost},
                    {"duplicated", r.duplicated}, {"bad_payloads", r.bad + r.out_of_range}, {"ms", r.ms}});
    total += c.limit;
    lost += r.lost;
    duplicated += r.duplicated;
    bad += r.bad + r.out_of_range;
    ++configs;
  }
  const double seconds = bench::ms_since(start) / 1e3;
  fmt::print(out, "{} CEs in {} configurations, {:.1f} s: {} lost, {} duplicated, {} bad payloads\n", total, configs,
             seconds, lost, duplicated, bad);
  return {{"seed", o.seed}, {"configs", rows},
          {"totals", {{"ces", total}, {"configurations", configs}, {"seconds", seconds}, {"lost", lost},
                      {"duplicated", duplicated}, {"bad_payloads", bad}}}};
}

}  // namespace chanflow::soak
