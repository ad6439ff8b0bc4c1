// The OpenCL runtime layer every part of chanflow stands on: device choice, a capability
// probe, RAII handles, program builds that carry their log, and errors that name the CL code.
#pragma once

#include <CL/opencl.hpp>

#include <cstddef>
#include <map>
#include <mutex>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chanflow {

/// The symbolic name of an OpenCL status code ("CL_OUT_OF_RESOURCES"), or "CL_<number>".
std::string cl_error_name(cl_int code);

/// An OpenCL call failed. `what()` names the call and the code; a failed program build also
/// carries the compiler's full log.
class OpenCLError : public std::runtime_error {
 public:
  OpenCLError(std::string call, cl_int code, std::string build_log = {});
  const std::string& call() const noexcept { return call_; }
  cl_int code() const noexcept { return code_; }
  const std::string& build_log() const noexcept { return build_log_; }

 private:
  std::string call_;
  cl_int code_;
  std::string build_log_;
};

/// Throws OpenCLError when `code` is not CL_SUCCESS. A function, not a macro, so the call it
/// checks is evaluated exactly once.
inline void check(cl_int code, const char* call) {
  if (code != CL_SUCCESS) throw OpenCLError(call, code);
}

/// No OpenCL platform or no matching device: a set-up problem, reported with what to do.
class DeviceNotFound : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the runtime needs to know about a device, probed once.
struct DeviceCaps {
  std::string name;
  std::string vendor;
  std::string platform;
  std::string version;           // CL_DEVICE_VERSION
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION
  std::string driver_version;
  cl_device_type type = 0;
  unsigned index = 0;  // position in list_devices()
  unsigned compute_units = 0;
  std::size_t max_work_group_size = 0;
  std::size_t preferred_work_group_multiple = 0;
  unsigned address_bits = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t max_alloc_bytes = 0;  ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t local_mem_bytes = 0;
  bool svm_coarse = false;
  bool svm_fine_buffer = false;
  bool svm_fine_system = false;
  bool svm_atomics = false;
  bool int64_atomics = false;
  bool subgroups = false;                  // cl_khr_subgroups or __opencl_c_subgroups
  bool work_group_collectives = false;     // advertised (__opencl_c_work_group_collective_functions)
  // Builds work_group_scan_exclusive_add under -cl-std=CL2.0. NVIDIA's OpenCL advertises
  // OpenCL C 1.2 yet builds (correctly) these collectives, so the probe asks the compiler.
  bool work_group_scan_builds = false;
  bool fp64 = false;  // cl_khr_fp64
  // Global atomic addition of float / double through cl_ext_float_atomics (advertised, with
  // CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT, and OpenCL C 2.0 or later for its atomic types);
  // otherwise kernels add with a compare-and-swap loop (scheduler/cl/scratch.cl).
  bool fp32_atomic_add = false;
  bool fp64_atomic_add = false;
  // An NVIDIA device's compute capability, major (cl_nv_device_attribute_query); 0 elsewhere.
  unsigned nv_compute_major = 0;
  std::vector<std::string> extensions;

  bool has_extension(std::string_view ext) const;
  std::string type_name() const;
  /// Missing capabilities that chanflow's channels need, empty if the device is usable.
  std::vector<std::string> missing_requirements() const;
};

/// Every device of every platform, in a stable order (platform, then device).
/// Throws DeviceNotFound naming the package to install if there is no platform at all.
std::vector<DeviceCaps> list_devices();

/// A GPU driver installed on this machine that the OpenCL ICD loader does not list (NVIDIA's
/// libnvidia-opencl.so.1 with no file in /etc/OpenCL/vendors, or $OCL_ICD_VENDORS, naming it):
/// what to run to register it; none where there is no such driver, or `listed` (what the loader
/// found) holds its devices already.
std::optional<std::string> unregistered_driver_hint(const std::vector<DeviceCaps>& listed);

/// Where Runtime::build leaves its notes of GPU builds: $CHANFLOW_CACHE_DIR, else
/// $XDG_CACHE_HOME/chanflow, else $HOME/.cache/chanflow; empty (no notes) where none is set or
/// CHANFLOW_CACHE_DIR is "off".
std::string build_notes_dir();

/// Which device to use: `spec` is an index into list_devices() or a case-insensitive
/// substring of the device, vendor or platform name. An empty spec falls back to the
/// CHANFLOW_DEVICE environment variable, then to PoCL's CPU device, then to the first device.
struct DeviceSelection {
  std::string spec;
  /// Kernel timestamps (CL_QUEUE_PROFILING_ENABLE), which traces need. Off saves work per
  /// launch in some drivers; the benchmarks run without it.
  bool profiling = true;
  /// Options added to every build this runtime makes (before CHANFLOW_BUILD_OPTIONS): a device
  /// set gives each PoCL device a define of its own (multidevice/device_set.cpp says why).
  std::string build_options;
};

/// A chosen device with its context and in-order queue. Owns every OpenCL handle it makes.
class Runtime {
 public:
  explicit Runtime(const DeviceSelection& selection = {});

  const DeviceCaps& caps() const noexcept { return caps_; }
  const cl::Context& context() const noexcept { return context_; }
  const cl::Device& device() const noexcept { return device_; }
  const cl::CommandQueue& queue() const noexcept { return queue_; }
  /// Whether the queue records kernel timestamps (DeviceSelection::profiling).
  bool profiling() const noexcept { return profiling_; }

  /// Builds a program from sources concatenated in order. On failure throws OpenCLError whose
  /// build_log() holds the compiler output. Successful builds are kept for the runtime's life,
  /// so building the same sources with the same options again is a lookup.
  /// Safe to call from several threads; the build itself runs outside the runtime's lock.
  cl::Program build(const std::vector<std::string_view>& sources, const std::string& options) const;
  /// Whether these sources were built with these options before, by this runtime or (on a GPU)
  /// by any process of this machine on this device and driver. A GPU driver keeps what it built
  /// in a cache of its own (NVIDIA's in ~/.nv/ComputeCache): a build it has seen costs a lookup
  /// where the first took a minute. build() leaves a note of each build of a non-CPU device in
  /// build_notes_dir(); the driver may have dropped the build since, so this is a forecast.
  bool built_before(const std::vector<std::string_view>& sources, const std::string& options) const;
  cl::Kernel kernel(const cl::Program& program, const char* name) const;

  /// Blocks until the queue is empty.
  void finish() const;

  // Copies between host memory and SVM (blocking). Valid for coarse-grain SVM.
  void svm_write(void* svm_dst, const void* host_src, std::size_t bytes) const;
  void svm_read(void* host_dst, const void* svm_src, std::size_t bytes) const;
  void svm_fill_zero(void* svm_dst, std::size_t bytes) const;
  /// Maps `bytes` of coarse-grain SVM from `svm` for the host to read and write in place
  /// (blocking) until svm_unmap(svm); no kernel may use it meanwhile.
  void svm_map(void* svm, std::size_t bytes) const;
  /// Gives what svm_map mapped back to the device, and waits for the queue.
  void svm_unmap(void* svm) const;
  /// Non-blocking host-to-SVM copy, ordered before later commands of the in-order queue. The
  /// caller keeps `host_src` alive and unchanged until the next blocking call or finish(), also
  /// when it unwinds from an exception: an owner of such staging waits in its destructor
  /// (finish_quietly()).
  void svm_write_async(void* svm_dst, const void* host_src, std::size_t bytes) const;
  /// Non-blocking SVM-to-host copy, ordered after the commands queued before it: `host_dst` holds
  /// the data once the queue finishes (finish() or a blocking call), and is not to be touched
  /// before, also when the caller unwinds from an exception (as for svm_write_async).
  void svm_read_async(void* host_dst, const void* svm_src, std::size_t bytes) const;
  /// Non-blocking SVM-to-SVM copy, ordered like the others (on a GPU a copy in its memory, with
  /// no host staging).
  void svm_copy_async(void* svm_dst, const void* svm_src, std::size_t bytes) const;
  /// Non-blocking fill with zeros, ordered before later commands: the device clears the memory
  /// (on a GPU at its memory's bandwidth) while the host goes on.
  void svm_fill_zero_async(void* svm_dst, std::size_t bytes) const;
  /// Non-blocking SVM-to-host copy on the runtime's second in-order queue, which runs beside the
  /// first: each direction of a GPU's link has a copy engine of its own (`chanflow bench
  /// transfers`: 55 GB/s either way, 101 both at once on an H200 with pinned memory). Ordered after
  /// nothing on the first queue: the caller has finished what wrote `svm_src`. Returns the copy's
  /// event, which any host thread may wait for (a queue of another context cannot).
  cl::Event svm_read_beside(void* host_dst, const void* svm_src, std::size_t bytes) const;
  /// Blocks until the second queue is empty.
  void finish_beside() const;
  /// finish() for destructors: waits for both queues, reporting (not throwing) a failure.
  void finish_quietly() const noexcept;

  /// Waits for the queue: no command may outlive the runtime's host-side state.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

 private:
  cl::Device device_;
  DeviceCaps caps_;
  cl::Context context_;
  cl::CommandQueue queue_;
  cl::CommandQueue beside_;  // the second queue (svm_read_beside)
  bool profiling_ = true;
  std::string build_options_;  // DeviceSelection::build_options
  // The options a build uses (the caller's and CHANFLOW_BUILD_OPTIONS) and its key: options, sources.
  std::pair<std::string, std::string> build_key(const std::vector<std::string_view>& sources,
                                                const std::string& requested) const;
  // Notes of builds this machine did (build_notes.cpp): one empty file per build, named by a hash
  // of the device, its driver and the key.
  void note_build(const std::string& key) const;
  bool noted_build(const std::string& key) const;
  mutable std::mutex build_mutex_;
  mutable std::map<std::string, cl::Program> builds_;  // key: options, then the sources
};

/// A coarse-grain SVM allocation: one pointer valid on host and device, which may be stored
/// inside other SVM structures. Released when the object dies by clEnqueueSVMFree on the
/// runtime's in-order queue, so commands already queued that use it (a copy, a kernel) finish
/// first: dropping a buffer never waits, and never frees memory a queued command still reads.
class SvmBuffer {
 public:
  SvmBuffer() = default;
  SvmBuffer(const Runtime& runtime, std::size_t bytes, std::size_t alignment = 128);
  SvmBuffer(SvmBuffer&& other) noexcept;
  SvmBuffer& operator=(SvmBuffer&& other) noexcept;
  SvmBuffer(const SvmBuffer&) = delete;
  SvmBuffer& operator=(const SvmBuffer&) = delete;
  ~SvmBuffer();

  void* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }

 private:
  void reset() noexcept;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Sets a kernel argument, naming the kernel and argument index on failure.
void set_arg(const cl::Kernel& kernel, cl_uint index, std::size_t size, const void* value);
void set_arg_svm(const cl::Kernel& kernel, cl_uint index, const void* svm_ptr);
template <class T>
void set_arg(const cl::Kernel& kernel, cl_uint index, const T& value) {
  set_arg(kernel, index, sizeof(T), &value);
}
/// Declares the SVM allocations a kernel reaches through pointers stored inside other SVM
/// structures (required for coarse-grain SVM by the OpenCL 2.0+ specification). Null entries
/// (an allocation a caller does not have) are left out.
void set_indirect_svm(const cl::Kernel& kernel, const std::vector<void*>& pointers);

/// Enqueues a 1-D NDRange of `global` work-items in groups of `local`; returns its event, or an
/// empty one when `want_event` is false (an event costs the driver work per launch).
cl::Event launch(const Runtime& runtime, const cl::Kernel& kernel, std::size_t global, std::size_t local,
                 bool want_event = true);

}  // namespace chanflow
