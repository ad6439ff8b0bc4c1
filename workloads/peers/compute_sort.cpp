// Boost.Compute's sort on chanflow's OpenCL device (gpu_peers.hpp).
#include "peers/gpu_peers.hpp"

#include <boost/compute/algorithm/copy.hpp>
#include <boost/compute/algorithm/sort.hpp>
#include <boost/compute/command_queue.hpp>
#include <boost/compute/container/vector.hpp>

#include <chrono>

namespace chanflow::workloads {

bool have_boost_compute() noexcept { return true; }

namespace compute = boost::compute;

template <class Key>
struct ComputeSort<Key>::Vector {
  compute::context context;
  compute::command_queue queue;
  compute::vector<Key> keys;
};

template <class Key>
ComputeSort<Key>::ComputeSort(const Runtime& runtime, std::uint64_t n) : runtime_(runtime), n_(n) {
  compute::context context(runtime.context()(), true);  // retained: the runtime keeps its own
  compute::command_queue queue(runtime.queue()(), true);
  vector_ = std::make_unique<Vector>(Vector{context, queue, compute::vector<Key>(n, context)});
}

template <class Key>
ComputeSort<Key>::~ComputeSort() = default;

template <class Key>
double ComputeSort<Key>::run(Key* keys) {
  compute::copy(keys, keys + n_, vector_->keys.begin(), vector_->queue);
  vector_->queue.finish();
  const auto start = std::chrono::steady_clock::now();
  compute::sort(vector_->keys.begin(), vector_->keys.end(), vector_->queue);
  vector_->queue.finish();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  compute::copy(vector_->keys.begin(), vector_->keys.end(), keys, vector_->queue);
  return ms;
}

template class ComputeSort<std::uint32_t>;
template class ComputeSort<std::uint64_t>;

}  // namespace chanflow::workloads
