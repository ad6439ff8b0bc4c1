// A build without the GPU peers' libraries: their impls are not offered (gpu_peers.hpp).
#include "peers/gpu_peers.hpp"

namespace chanflow::workloads {

#ifndef CHANFLOW_HAVE_CLBLAST
bool have_clblast() noexcept { return false; }
#endif
#ifndef CHANFLOW_HAVE_BOOST_COMPUTE
bool have_boost_compute() noexcept { return false; }
#endif

}  // namespace chanflow::workloads
