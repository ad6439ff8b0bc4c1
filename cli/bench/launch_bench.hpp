// `chanflow bench launch`: what one kernel launch costs the host and the device, against the
// number of SVM allocations named in clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS).
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace chanflow::bench {

struct LaunchBenchOptions {
  std::vector<std::uint32_t> svm_pointers = {0, 1, 4, 16, 64, 256};
  std::uint32_t launches = 2000;  ///< per repetition
  unsigned reps = 5;
  /// SVM allocation sizes (MiB) for the memory table: allocating, clearing on the device,
  /// touching in a kernel, freeing (what making a channel-stack level costs).
  std::vector<std::uint32_t> alloc_mib = {1, 16, 64, 256};
  /// Sizes (bytes) of the pieces the copy table reads back, and how many of them.
  std::vector<std::uint32_t> copy_bytes = {16, 4096, 65536};
  std::uint32_t copy_pieces = 8;
};

/// Prints a table to `table` and returns the JSON result rows; every launch is checked to have run.
nlohmann::json run_launch_bench(const Runtime& runtime, const LaunchBenchOptions& options, std::FILE* table);
/// The memory table: per size, clSVMAlloc, an enqueued zero fill (host time to enqueue it, and
/// until it is done), a kernel writing one word per 4 KiB page, and the free; the words are checked.
nlohmann::json run_memory_bench(const Runtime& runtime, const LaunchBenchOptions& options, std::FILE* table);
/// The copy table: what the host pays to read `pieces` small SVM blocks back after a launch, per
/// size: each read blocking, all queued behind one wait, or gathered on the device (SVM-to-SVM
/// copies into one block) and read in one copy; every byte read is checked.
nlohmann::json run_copy_bench(const Runtime& runtime, const LaunchBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
