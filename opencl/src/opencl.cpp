// The OpenCL runtime layer: the runtime on a chosen device (devices.cpp finds it), builds, SVM.
#include "chanflow/opencl.hpp"

#include "devices.hpp"

#include <CL/cl_ext.h>  // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

namespace chanflow {

OpenCLError::OpenCLError(std::string call, cl_int code, std::string build_log)
    : std::runtime_error(build_log.empty()
                             ? fmt::format("{} failed: {} ({})", call, cl_error_name(code), code)
                             : fmt::format("{} failed: {} ({})\n--- build log ---\n{}", call,
                                           cl_error_name(code), code, build_log)),
      call_(std::move(call)),
      code_(code),
      build_log_(std::move(build_log)) {}


Runtime::Runtime(const DeviceSelection& selection) {
  const auto devices = discover();
  const auto& chosen = choose(devices, selection.spec);
  device_ = cl::Device(chosen.id, /*retainObject=*/true);
  caps_ = chosen.caps;
  if (const auto missing = caps_.missing_requirements(); !missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += "\n  - " + m;
    throw DeviceNotFound(fmt::format("device '{}' lacks what chanflow's channels need:{}",
                                     caps_.name, list));
  }
  cl_int err = CL_SUCCESS;
  cl_device_id id = chosen.id;
  context_ = cl::Context(clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err));
  check(err, "clCreateContext");
  // Kernel timestamps for traces (the aggregator's statistics use host clocks).
  profiling_ = selection.profiling;
  build_options_ = selection.build_options;
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                       profiling_ ? cl_queue_properties{CL_QUEUE_PROFILING_ENABLE} : 0, 0};
  queue_ = cl::CommandQueue(clCreateCommandQueueWithProperties(context_(), id, props, &err));
  check(err, "clCreateCommandQueueWithProperties");
  beside_ = cl::CommandQueue(clCreateCommandQueueWithProperties(context_(), id, nullptr, &err));
  check(err, "clCreateCommandQueueWithProperties (the second queue)");
}

// Writes a built program's device binary (PTX text on NVIDIA, an ELF on PoCL) for inspecting
// what the compiler made of the kernels' atomics and fences, and its sources; named by a hash of
// its sources and options.
static void dump_program_binary(const cl::Program& program, const std::string& dir, const std::string& key) {
  std::size_t size = 0;
  check(clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::vector<unsigned char> binary(size);
  unsigned char* ptr = binary.data();
  check(clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  const std::string stem = fmt::format("{}/program-{:016x}", dir, std::hash<std::string>{}(key));
  // Beside the binary, the sources as one file with the build options in its first line, so a
  // path built only for another device (the GPU's side of an #ifdef) can be compiled here too.
  const std::size_t end_of_options = key.find('\0');
  std::string source = "// options: " + key.substr(0, end_of_options) + '\n';
  for (std::size_t at = end_of_options + 1; at < key.size();) {
    const std::size_t next = key.find('\0', at);
    source.append(key, at, next - at).push_back('\n');
    at = next + 1;
  }
  for (const auto& [path, bytes] : {std::pair{stem + ".bin", std::string_view(reinterpret_cast<const char*>(binary.data()), binary.size())},
                                    std::pair{stem + ".cl", std::string_view(source)}}) {
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    } else {
      fmt::print(stderr, "chanflow: cannot write {} (CHANFLOW_DUMP_PROGRAMS)\n", path);
    }
  }
}

std::pair<std::string, std::string> Runtime::build_key(const std::vector<std::string_view>& sources,
                                                     const std::string& requested) const {
  // CHANFLOW_BUILD_OPTIONS: options the user adds to every build (a cilk_for's grain, say).
  std::string options = requested;
  if (!build_options_.empty()) options += ' ' + build_options_;
  if (const char* extra = std::getenv("CHANFLOW_BUILD_OPTIONS"); extra && *extra) options += std::string(" ") + extra;
  std::string key = options + '\0';
  for (auto s : sources) key.append(s).push_back('\0');
  return {std::move(options), std::move(key)};
}

cl::Program Runtime::build(const std::vector<std::string_view>& sources,
                           const std::string& requested) const {
  auto [options, key] = build_key(sources, requested);
  {
    const std::lock_guard lock(build_mutex_);
    if (auto it = builds_.find(key); it != builds_.end()) return it->second;
  }
  // Not under the lock: a build may take a minute (a device scheduler's, built in the background)
  // while the graph's own builds go on. Two threads building the same sources both build.
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lengths;
  for (auto s : sources) {
    ptrs.push_back(s.data());
    lengths.push_back(s.size());
  }
  cl_int err = CL_SUCCESS;
  cl::Program program(clCreateProgramWithSource(context_(), static_cast<cl_uint>(ptrs.size()),
                                                ptrs.data(), lengths.data(), &err));
  check(err, "clCreateProgramWithSource");
  cl_device_id id = device_();
  err = clBuildProgram(program(), 1, &id, options.c_str(), nullptr, nullptr);
  auto build_log = [&] {
    std::size_t size = 0;
    clGetProgramBuildInfo(program(), id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program(), id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  };
  if (err != CL_SUCCESS) throw OpenCLError(fmt::format("clBuildProgram (options: '{}')", options), err, build_log());
  // Warnings of a build that succeeded, for kernel authors (CHANFLOW_BUILD_LOG=1).
  if (const char* show = std::getenv("CHANFLOW_BUILD_LOG"); show && *show && *show != '0')
    if (const std::string log = build_log(); !log.empty()) fmt::print(stderr, "chanflow: build log:\n{}\n", log);
  if (const char* dir = std::getenv("CHANFLOW_DUMP_PROGRAMS")) dump_program_binary(program, dir, key);
  note_build(key);
  const std::lock_guard lock(build_mutex_);
  return builds_.emplace(std::move(key), program).first->second;
}

bool Runtime::built_before(const std::vector<std::string_view>& sources, const std::string& options) const {
  const std::string key = build_key(sources, options).second;
  {
    const std::lock_guard lock(build_mutex_);
    if (builds_.count(key)) return true;
  }
  return noted_build(key);
}

cl::Kernel Runtime::kernel(const cl::Program& program, const char* name) const {
  cl_int err = CL_SUCCESS;
  cl::Kernel k(clCreateKernel(program(), name, &err));
  if (err != CL_SUCCESS) throw OpenCLError(fmt::format("clCreateKernel('{}')", name), err);
  return k;
}

void Runtime::finish() const { check(clFinish(queue_()), "clFinish"); }

void Runtime::finish_beside() const { check(clFinish(beside_()), "clFinish (the second queue)"); }

void Runtime::finish_quietly() const noexcept {
  for (const cl::CommandQueue* q : {&beside_, &queue_}) {
    if (!(*q)()) continue;
    if (const cl_int err = clFinish((*q)()); err != CL_SUCCESS)
      fmt::print(stderr, "chanflow: clFinish failed while releasing resources: {}\n", cl_error_name(err));
  }
}

Runtime::~Runtime() { finish_quietly(); }

namespace {
// One SVM copy on `queue`, either way or within SVM, waiting for it or not.
void enqueue_svm_copy(const cl::CommandQueue& queue, bool blocking, void* dst, const void* src, std::size_t bytes,
                      const char* what) {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue(), blocking ? CL_TRUE : CL_FALSE, dst, src, bytes, 0, nullptr, nullptr), what);
}
}  // namespace

// On a CPU device whose SVM may be fine-grained, SVM is the host's memory: its buffers are
// allocated fine-grained (SvmBuffer), and a blocking copy, once the queue has finished what came
// before it (a synchronisation point, after which the host may touch fine-grained memory), is a
// plain copy in place. On PoCL 3.1 each queued copy is a round trip through its worker threads
// (a condition variable's wake and wait, ~10-20 us on the 2-core VM), and a compiled call made
// 16 of them.
namespace {
bool svm_in_place(const DeviceCaps& caps) { return (caps.type & CL_DEVICE_TYPE_CPU) != 0 && caps.svm_fine_buffer; }

// A blocking copy made in place where the device allows it (above); false: it must be queued.
bool copied_in_place(const Runtime& rt, void* dst, const void* src, std::size_t bytes) {
  if (!svm_in_place(rt.caps())) return false;
  rt.finish();
  if (bytes > 0) std::memcpy(dst, src, bytes);
  return true;
}
}  // namespace

void Runtime::svm_write(void* svm_dst, const void* host_src, std::size_t bytes) const {
  if (copied_in_place(*this, svm_dst, host_src, bytes)) return;
  enqueue_svm_copy(queue_, true, svm_dst, host_src, bytes, "clEnqueueSVMMemcpy (host to SVM)");
}

void Runtime::svm_write_async(void* svm_dst, const void* host_src, std::size_t bytes) const {
  enqueue_svm_copy(queue_, false, svm_dst, host_src, bytes, "clEnqueueSVMMemcpy (host to SVM, non-blocking)");
}

void Runtime::svm_read(void* host_dst, const void* svm_src, std::size_t bytes) const {
  if (copied_in_place(*this, host_dst, svm_src, bytes)) return;
  enqueue_svm_copy(queue_, true, host_dst, svm_src, bytes, "clEnqueueSVMMemcpy (SVM to host)");
}

void Runtime::svm_map(void* svm, std::size_t bytes) const {
  const cl_int err = clEnqueueSVMMap(queue_(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, svm, bytes, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMMap", err);
}

void Runtime::svm_unmap(void* svm) const {
  const cl_int err = clEnqueueSVMUnmap(queue_(), svm, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMUnmap", err);
  finish();
}

void Runtime::svm_read_async(void* host_dst, const void* svm_src, std::size_t bytes) const {
  enqueue_svm_copy(queue_, false, host_dst, svm_src, bytes, "clEnqueueSVMMemcpy (SVM to host, non-blocking)");
}

cl::Event Runtime::svm_read_beside(void* host_dst, const void* svm_src, std::size_t bytes) const {
  cl_event done = nullptr;
  check(clEnqueueSVMMemcpy(beside_(), CL_FALSE, host_dst, svm_src, bytes, 0, nullptr, &done),
        "clEnqueueSVMMemcpy (SVM to host, on the second queue)");
  return cl::Event(done);
}

void Runtime::svm_copy_async(void* svm_dst, const void* svm_src, std::size_t bytes) const {
  enqueue_svm_copy(queue_, false, svm_dst, svm_src, bytes, "clEnqueueSVMMemcpy (SVM to SVM, non-blocking)");
}

void Runtime::svm_fill_zero(void* svm_dst, std::size_t bytes) const {
  if (bytes == 0) return;
  svm_fill_zero_async(svm_dst, bytes);
  finish();
}

void Runtime::svm_fill_zero_async(void* svm_dst, std::size_t bytes) const {
  if (bytes == 0) return;
  // Four-byte words where the size allows: drivers fill wider patterns faster.
  const cl_uint zero = 0;
  const std::size_t pattern = bytes % 4 == 0 && reinterpret_cast<std::uintptr_t>(svm_dst) % 4 == 0 ? 4 : 1;
  check(clEnqueueSVMMemFill(queue_(), svm_dst, &zero, pattern, bytes, 0, nullptr, nullptr), "clEnqueueSVMMemFill");
}

SvmBuffer::SvmBuffer(const Runtime& runtime, std::size_t bytes, std::size_t alignment)
    : context_(runtime.context()()), queue_(runtime.queue()()), bytes_(bytes) {
  const cl_svm_mem_flags fine = svm_in_place(runtime.caps()) ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0;
  ptr_ = clSVMAlloc(context_, CL_MEM_READ_WRITE | fine, bytes, static_cast<cl_uint>(alignment));
  if (ptr_ == nullptr)
    throw OpenCLError(fmt::format("clSVMAlloc({} bytes)", bytes), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  clRetainContext(context_);
  clRetainCommandQueue(queue_);
}

SvmBuffer::SvmBuffer(SvmBuffer&& other) noexcept
    : context_(other.context_), queue_(other.queue_), ptr_(other.ptr_), bytes_(other.bytes_) {
  other.context_ = nullptr;
  other.queue_ = nullptr;
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

SvmBuffer& SvmBuffer::operator=(SvmBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    std::swap(context_, other.context_);
    std::swap(queue_, other.queue_);
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
  }
  return *this;
}

SvmBuffer::~SvmBuffer() { reset(); }

void SvmBuffer::reset() noexcept {
  // Freed behind every command already queued (in order): a copy or kernel still using the
  // allocation finishes first. Where the driver refuses the enqueued free, wait, then free.
  if (ptr_ && clEnqueueSVMFree(queue_, 1, &ptr_, nullptr, nullptr, 0, nullptr, nullptr) == CL_SUCCESS) {
    clFlush(queue_);
  } else if (ptr_) {
    clFinish(queue_);
    clSVMFree(context_, ptr_);
  }
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
  queue_ = nullptr;
  context_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

void set_arg(const cl::Kernel& kernel, cl_uint index, std::size_t size, const void* value) {
  const cl_int err = clSetKernelArg(kernel(), index, size, value);
  if (err != CL_SUCCESS)
    throw OpenCLError(fmt::format("clSetKernelArg('{}', {})",
                                  kernel.getInfo<CL_KERNEL_FUNCTION_NAME>(), index),
                      err);
}

void set_arg_svm(const cl::Kernel& kernel, cl_uint index, const void* svm_ptr) {
  const cl_int err = clSetKernelArgSVMPointer(kernel(), index, svm_ptr);
  if (err != CL_SUCCESS)
    throw OpenCLError(fmt::format("clSetKernelArgSVMPointer('{}', {})",
                                  kernel.getInfo<CL_KERNEL_FUNCTION_NAME>(), index),
                      err);
}

void set_indirect_svm(const cl::Kernel& kernel, const std::vector<void*>& pointers) {
  std::vector<void*> named;
  std::copy_if(pointers.begin(), pointers.end(), std::back_inserter(named), [](void* p) { return p != nullptr; });
  check(clSetKernelExecInfo(kernel(), CL_KERNEL_EXEC_INFO_SVM_PTRS, named.size() * sizeof(void*), named.data()),
        "clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS)");
}

cl::Event launch(const Runtime& runtime, const cl::Kernel& kernel, std::size_t global,
                 std::size_t local, bool want_event) {
  cl_event ev = nullptr;
  const cl_int err = clEnqueueNDRangeKernel(runtime.queue()(), kernel(), 1, nullptr, &global,
                                            &local, 0, nullptr, want_event ? &ev : nullptr);
  if (err != CL_SUCCESS)
    throw OpenCLError(fmt::format("clEnqueueNDRangeKernel('{}', global={}, local={})",
                                  kernel.getInfo<CL_KERNEL_FUNCTION_NAME>(), global, local),
                      err);
  return ev ? cl::Event(ev) : cl::Event();
}

}  // namespace chanflow
