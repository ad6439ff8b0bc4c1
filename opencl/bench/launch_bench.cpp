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
  const auto program = rt.build({workloads_cl::launch_bench_cl()}, "");
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

}  // namespace chanflow::bench
