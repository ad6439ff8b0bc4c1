// Launch cost against exec-info SVM pointers. chanflow keeps that list short (channel storage
// comes from an arena, each kernel names only what it reaches) because NVIDIA's OpenCL was
// measured paying for every named pointer on every launch; this program re-measures it on any
// device.
#include "launch_bench.hpp"

#include "common/bench_common.hpp"
#include "chanflow_cli_sources.hpp"

#include <fmt/format.h>

namespace chanflow::bench {

nlohmann::json run_launch_bench(const Runtime& rt, const LaunchBenchOptions& o, std::FILE* table) {
  const auto program = rt.build({cli_cl::launch_bench_cl()}, "");
  const cl::Kernel kernel = rt.kernel(program, "chanflow_count_launch");
  SvmBuffer counter(rt, sizeof(std::uint32_t));
  set_arg_svm(kernel, 0, counter.get());
  constexpr std::size_t kGroup = 64, kGroups = 32;

  fmt::print(table, "Kernel launches on {} ({}), {} launches of {} work-items, median of {}\n", rt.caps().name,
             rt.caps().platform, o.launches, kGroup * kGroups, o.reps);
  fmt::print(table, "{:>12} {:>14} {:>14} {:>8}\n", "svm pointers", "enqueue us", "total us", "ok");
  nlohmann::json results = nlohmann::json::array();
  for (std::uint32_t n : o.svm_pointers) {
    // n separate allocations besides the counter, named in the kernel's exec info.
    std::vector<SvmBuffer> extra;
    std::vector<void*> named{counter.get()};
    for (std::uint32_t i = 0; i < n; ++i) {
      extra.emplace_back(rt, 1u << 16);
      named.push_back(extra.back().get());
    }
    set_indirect_svm(kernel, named);
    rt.svm_fill_zero(counter.get(), counter.size());
    launch(rt, kernel, kGroup * kGroups, kGroup, false);  // warm-up
    rt.finish();
    std::vector<double> enqueue_us, total_us;
    for (unsigned r = 0; r < o.reps; ++r) {
      const auto start = Clock::now();
      for (std::uint32_t i = 0; i < o.launches; ++i) launch(rt, kernel, kGroup * kGroups, kGroup, false);
      const double enqueued = ms_since(start);
      rt.finish();
      const double done = ms_since(start);
      enqueue_us.push_back(1e3 * enqueued / o.launches);
      total_us.push_back(1e3 * done / o.launches);
    }
    std::uint32_t ran = 0;
    rt.svm_read(&ran, counter.get(), sizeof ran);
    const bool correct = ran == 1 + std::uint64_t{o.reps} * o.launches;
    const Summary enq = summarize(enqueue_us), total = summarize(total_us);
    fmt::print(table, "{:>12} {:>14.2f} {:>14.2f} {:>8}\n", n, enq.median, total.median, correct ? "yes" : "NO");
    std::fflush(table);
    results.push_back({{"workload", "launch"}, {"impl", "chanflow"}, {"svm_pointers", n}, {"launches", o.launches},
                       {"reps", o.reps}, {"enqueue_us", enq.median}, {"median_us", total.median},
                       {"min_us", total.min}, {"max_us", total.max}, {"correct", correct}});
  }
  return results;
}

nlohmann::json run_memory_bench(const Runtime& rt, const LaunchBenchOptions& o, std::FILE* table) {
  const auto program = rt.build({cli_cl::launch_bench_cl()}, "");
  const cl::Kernel touch = rt.kernel(program, "chanflow_touch_pages");
  fmt::print(table, "\nSVM memory on {} ({}), median of {}: host ms to allocate, to enqueue a zero fill, until the "
             "fill is done, for a kernel writing each 4 KiB page, to free\n", rt.caps().name, rt.caps().platform, o.reps);
  fmt::print(table, "{:>8} {:>10} {:>12} {:>10} {:>10} {:>10} {:>8}\n", "MiB", "alloc ms", "fill enq ms", "filled ms",
             "touch ms", "free ms", "ok");
  nlohmann::json results = nlohmann::json::array();
  for (std::uint32_t mib : o.alloc_mib) {
    const std::size_t bytes = std::size_t{mib} << 20;
    if (rt.caps().max_alloc_bytes && bytes > rt.caps().max_alloc_bytes) continue;
    const std::uint64_t pages = bytes / 4096;
    std::vector<double> alloc, fill_enqueue, filled, touched, freed;
    bool correct = true;
    for (unsigned r = 0; r < o.reps; ++r) {
      auto start = Clock::now();
      SvmBuffer memory(rt, bytes, 128);  // the most OpenCL allows (its widest type)
      alloc.push_back(ms_since(start));
      start = Clock::now();
      rt.svm_fill_zero_async(memory.get(), bytes);
      fill_enqueue.push_back(ms_since(start));
      rt.finish();
      filled.push_back(ms_since(start));
      start = Clock::now();
      set_arg_svm(touch, 0, memory.get());
      set_arg(touch, 1, cl_ulong{pages});
      set_indirect_svm(touch, {memory.get()});
      launch(rt, touch, (pages + 255) / 256 * 256, 256, false);
      rt.finish();
      touched.push_back(ms_since(start));
      std::uint32_t last = 0;
      rt.svm_read(&last, static_cast<std::uint32_t*>(memory.get()) + (pages - 1) * 1024, sizeof last);
      correct = correct && last == pages;
      start = Clock::now();
      memory = SvmBuffer();
      rt.finish();
      freed.push_back(ms_since(start));
    }
    const auto a = summarize(alloc), fe = summarize(fill_enqueue), f = summarize(filled), t = summarize(touched),
               fr = summarize(freed);
    fmt::print(table, "{:>8} {:>10.3f} {:>12.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>8}\n", mib, a.median, fe.median,
               f.median, t.median, fr.median, correct ? "yes" : "NO");
    std::fflush(table);
    results.push_back({{"workload", "svm-memory"}, {"impl", "chanflow"}, {"mib", mib}, {"reps", o.reps},
                       {"alloc_ms", a.median}, {"fill_enqueue_ms", fe.median}, {"filled_ms", f.median},
                       {"touch_ms", t.median}, {"free_ms", fr.median}, {"correct", correct}});
  }
  return results;
}

nlohmann::json run_copy_bench(const Runtime& rt, const LaunchBenchOptions& o, std::FILE* table) {
  const std::uint32_t pieces = std::max(1u, o.copy_pieces);
  fmt::print(table, "\nReading {} SVM pieces back on {} ({}), median of {}: host us for all of them, each read "
             "blocking, queued behind one wait, or gathered on the device and read in one copy\n",
             pieces, rt.caps().name, rt.caps().platform, o.reps);
  fmt::print(table, "{:>10} {:>12} {:>12} {:>12} {:>8}\n", "bytes", "blocking us", "queued us", "gathered us", "ok");
  nlohmann::json results = nlohmann::json::array();
  for (std::uint32_t bytes : o.copy_bytes) {
    if (bytes == 0) continue;
    // The pieces in allocations of their own (as a header, counters and a census are), filled with
    // a pattern; the gather block in one more.
    std::vector<SvmBuffer> sources;
    std::vector<std::uint8_t> expected(std::size_t{pieces} * bytes);
    for (std::uint32_t p = 0; p < pieces; ++p) {
      sources.emplace_back(rt, bytes);
      for (std::uint32_t b = 0; b < bytes; ++b) expected[std::size_t{p} * bytes + b] = static_cast<std::uint8_t>(p * 31 + b);
      rt.svm_write(sources.back().get(), expected.data() + std::size_t{p} * bytes, bytes);
    }
    SvmBuffer gather(rt, std::size_t{pieces} * bytes);
    std::vector<std::uint8_t> host(expected.size());
    bool correct = true;
    auto check_host = [&] {
      correct = correct && host == expected;
      std::fill(host.begin(), host.end(), std::uint8_t{0});
    };
    std::vector<double> blocking, queued, gathered;
    for (unsigned r = 0; r <= o.reps; ++r) {  // the first round warms up, untimed
      rt.finish();
      auto start = Clock::now();
      for (std::uint32_t p = 0; p < pieces; ++p) rt.svm_read(host.data() + std::size_t{p} * bytes, sources[p].get(), bytes);
      const double b = ms_since(start);
      check_host();
      start = Clock::now();
      for (std::uint32_t p = 0; p < pieces; ++p)
        rt.svm_read_async(host.data() + std::size_t{p} * bytes, sources[p].get(), bytes);
      rt.finish();
      const double q = ms_since(start);
      check_host();
      start = Clock::now();
      for (std::uint32_t p = 0; p < pieces; ++p)
        rt.svm_copy_async(static_cast<std::uint8_t*>(gather.get()) + std::size_t{p} * bytes, sources[p].get(), bytes);
      rt.svm_read(host.data(), gather.get(), host.size());
      const double g = ms_since(start);
      check_host();
      rt.svm_fill_zero(gather.get(), gather.size());
      if (r == 0) continue;
      blocking.push_back(1e3 * b);
      queued.push_back(1e3 * q);
      gathered.push_back(1e3 * g);
    }
    const Summary b = summarize(blocking), q = summarize(queued), g = summarize(gathered);
    fmt::print(table, "{:>10} {:>12.1f} {:>12.1f} {:>12.1f} {:>8}\n", bytes, b.median, q.median, g.median,
               correct ? "yes" : "NO");
    std::fflush(table);
    results.push_back({{"workload", "svm-readback"}, {"impl", "chanflow"}, {"bytes", bytes}, {"pieces", pieces},
                       {"reps", o.reps}, {"blocking_us", b.median}, {"queued_us", q.median},
                       {"gathered_us", g.median}, {"correct", correct}});
  }
  return results;
}

}  // namespace chanflow::bench
