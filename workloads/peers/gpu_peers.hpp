// The GPU's peers: libraries that do a workload's job on the same OpenCL device, as `--impl` rows
// beside chanflow (CLBlast's GEMM for Strassen, Boost.Compute's sort for Sort). Each is built only
// where its Debian package is present (libclblast-dev, libboost-dev); where it is not, its impl
// is not offered.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

namespace chanflow::workloads {

/// The peers' impl names, which run on the OpenCL device like chanflow's.
inline bool is_gpu_peer(std::string_view impl) noexcept { return impl == "clblast-gemm" || impl == "compute-sort"; }

/// Whether this build has CLBlast (impl clblast-gemm).
bool have_clblast() noexcept;
/// Whether this build has Boost.Compute (impl compute-sort).
bool have_boost_compute() noexcept;

/// c = a·b (n×n, row-major) by CLBlast's xGEMM on the runtime's device, in device buffers made
/// once. run() copies a and b in, times the GEMM to its completion, and copies c out: the time
/// returned (ms) is the GEMM's alone, like chanflow's, whose operands are already in SVM.
template <class Real>
class ClblastGemm {
 public:
  ClblastGemm(const Runtime& runtime, std::uint64_t n);
  ~ClblastGemm();
  double run(const Real* a, const Real* b, Real* c);

 private:
  struct Buffers;
  const Runtime& runtime_;
  std::uint64_t n_;
  std::unique_ptr<Buffers> buffers_;
};

/// Sorts n keys by Boost.Compute's sort on the runtime's device (its context and queue), in a
/// device vector made once; run() copies the keys in, times the sort to its completion, and
/// copies them back. Returns the sort's time (ms).
template <class Key>
class ComputeSort {
 public:
  ComputeSort(const Runtime& runtime, std::uint64_t n);
  ~ComputeSort();
  double run(Key* keys);

 private:
  struct Vector;
  const Runtime& runtime_;
  std::uint64_t n_;
  std::unique_ptr<Vector> vector_;
};

}  // namespace chanflow::workloads
