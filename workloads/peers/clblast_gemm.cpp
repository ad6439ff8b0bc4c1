// CLBlast's GEMM on chanflow's OpenCL device (gpu_peers.hpp).
#include "peers/gpu_peers.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

namespace chanflow::workloads {

bool have_clblast() noexcept { return true; }

template <class Real>
struct ClblastGemm<Real>::Buffers {
  cl::Buffer a, b, c;
};

template <class Real>
ClblastGemm<Real>::ClblastGemm(const Runtime& runtime, std::uint64_t n) : runtime_(runtime), n_(n) {
  const std::size_t bytes = n * n * sizeof(Real);
  buffers_ = std::make_unique<Buffers>(Buffers{cl::Buffer(runtime.context(), CL_MEM_READ_ONLY, bytes),
                                               cl::Buffer(runtime.context(), CL_MEM_READ_ONLY, bytes),
                                               cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes)});
}

template <class Real>
ClblastGemm<Real>::~ClblastGemm() = default;

template <class Real>
double ClblastGemm<Real>::run(const Real* a, const Real* b, Real* c) {
  const std::size_t bytes = n_ * n_ * sizeof(Real);
  cl::CommandQueue queue = runtime_.queue();
  queue.enqueueWriteBuffer(buffers_->a, CL_TRUE, 0, bytes, a);
  queue.enqueueWriteBuffer(buffers_->b, CL_TRUE, 0, bytes, b);
  cl_command_queue q = queue();
  const auto start = std::chrono::steady_clock::now();
  const clblast::StatusCode status = clblast::Gemm<Real>(
      clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, n_, n_, n_, Real{1},
      buffers_->a(), 0, n_, buffers_->b(), 0, n_, Real{0}, buffers_->c(), 0, n_, &q, nullptr);
  if (status != clblast::StatusCode::kSuccess)
    throw std::runtime_error(fmt::format("CLBlast's GEMM failed with status {}", static_cast<int>(status)));
  queue.finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  queue.enqueueReadBuffer(buffers_->c, CL_TRUE, 0, bytes, c);
  return ms;
}

template class ClblastGemm<float>;
template class ClblastGemm<double>;

}  // namespace chanflow::workloads
