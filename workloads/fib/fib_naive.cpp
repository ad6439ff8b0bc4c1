// Builds and runs the Figure 4-5 flow graph (compare it line by line with the thesis).
#include "fib.hpp"

#include "chanflow_workloads_sources.hpp"

namespace chanflow::workloads {

FibResult fib_naive(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                         const RunOptions& options, std::uint32_t capacity, std::uint32_t wg_size) {
  Graph g(runtime, {.wg_size = wg_size});
  g.add_source(std::string(workloads_cl::fib_naive_cl()));
  ChannelNode& ch = g.channel<FibObj>("fib_tasks", capacity);
  KernelNode& kern = g.kernel<FibObj>("fib", "fib_kernel");
  make_edge(ch, kern);
  make_edge(kern, ch, Spawns{.max_per_item = 2});  // port "fib_tasks": up to 2 CEs per CE

  SvmBuffer result(runtime, sizeof(std::uint32_t));
  runtime.svm_fill_zero(result.get(), result.size());
  kern.set_args(FibArgs{static_cast<std::uint32_t*>(result.get())}).uses(result);

  ch.push(FibObj{n});
  FibResult r;
  r.stats = g.run(policy, options);
  std::uint32_t value = 0;
  runtime.svm_read(&value, result.get(), sizeof value);
  r.value = value;
  return r;
}

std::uint64_t fib_serial(std::uint32_t n) {
  std::uint64_t a = 1, b = 1;  // fib(1), fib(2)
  for (std::uint32_t i = 3; i <= n; ++i) {
    const std::uint64_t c = a + b;
    a = b;
    b = c;
  }
  return n == 0 ? 0 : b;
}

}  // namespace chanflow::workloads
