// The OpenCL runtime layer: device discovery and choice, capability probe, builds, SVM.
#include "chanflow/opencl.hpp"

#include <CL/cl_ext.h>  // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
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

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string device_string(cl_device_id dev, cl_device_info what) {
  std::size_t size = 0;
  check(clGetDeviceInfo(dev, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(dev, what, size, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <class T>
T device_value(cl_device_id dev, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(dev, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t size = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(p, what, size, s.data(), nullptr), "clGetPlatformInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// OpenCL 3.0 devices list optional OpenCL C features by name; older ones do not answer.
std::vector<std::string> opencl_c_features(cl_device_id dev) {
  std::size_t size = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0)
    return {};
  std::vector<cl_name_version> features(size / sizeof(cl_name_version));
  if (clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_FEATURES, size, features.data(), nullptr) != CL_SUCCESS)
    return {};
  std::vector<std::string> names;
  for (const auto& f : features) names.emplace_back(f.name);
  return names;
}

struct FoundDevice {
  cl_device_id id;
  DeviceCaps caps;
};

DeviceCaps probe(cl_platform_id platform, cl_device_id dev, unsigned index) {
  DeviceCaps c;
  c.index = index;
  c.name = device_string(dev, CL_DEVICE_NAME);
  c.vendor = device_string(dev, CL_DEVICE_VENDOR);
  c.platform = platform_string(platform, CL_PLATFORM_NAME);
  c.version = device_string(dev, CL_DEVICE_VERSION);
  c.opencl_c_version = device_string(dev, CL_DEVICE_OPENCL_C_VERSION);
  c.driver_version = device_string(dev, CL_DRIVER_VERSION);
  c.type = device_value<cl_device_type>(dev, CL_DEVICE_TYPE);
  c.compute_units = device_value<cl_uint>(dev, CL_DEVICE_MAX_COMPUTE_UNITS);
  c.max_work_group_size = device_value<std::size_t>(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  c.address_bits = device_value<cl_uint>(dev, CL_DEVICE_ADDRESS_BITS);
  c.global_mem_bytes = device_value<cl_ulong>(dev, CL_DEVICE_GLOBAL_MEM_SIZE);
  c.max_alloc_bytes = device_value<cl_ulong>(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  c.local_mem_bytes = device_value<cl_ulong>(dev, CL_DEVICE_LOCAL_MEM_SIZE);

  std::istringstream ext(device_string(dev, CL_DEVICE_EXTENSIONS));
  for (std::string e; ext >> e;) c.extensions.push_back(e);

  cl_device_svm_capabilities svm = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, nullptr) == CL_SUCCESS) {
    c.svm_coarse = svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
    c.svm_fine_buffer = svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER;
    c.svm_fine_system = svm & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM;
    c.svm_atomics = svm & CL_DEVICE_SVM_ATOMICS;
  }
  if (c.has_extension("cl_nv_device_attribute_query")) {
    cl_uint major = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major, nullptr) == CL_SUCCESS)
      c.nv_compute_major = major;
  }
  c.int64_atomics = c.has_extension("cl_khr_int64_base_atomics");
  c.fp64 = c.has_extension("cl_khr_fp64");
  // Global floating-point atomic addition as cl_ext_float_atomics advertises it
  // (CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT / _DOUBLE_ with CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT;
  // Debian 12's cl_ext.h predates the extension). It counts only where its OpenCL C 2.0 form
  // builds: probed below.
  auto fp_add_advertised = [&](cl_device_info which) {
    constexpr cl_bitfield kGlobalAdd = 1 << 1;
    cl_bitfield caps = 0;
    return c.has_extension("cl_ext_float_atomics") &&
           clGetDeviceInfo(dev, which, sizeof caps, &caps, nullptr) == CL_SUCCESS && (caps & kGlobalAdd) != 0;
  };
  const bool fp32_add_advertised = fp_add_advertised(0x4231), fp64_add_advertised = c.fp64 && fp_add_advertised(0x4232);
  const auto features = opencl_c_features(dev);
  auto has_feature = [&](std::string_view f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  };
  c.subgroups = c.has_extension("cl_khr_subgroups") || has_feature("__opencl_c_subgroups");
  c.work_group_collectives = has_feature("__opencl_c_work_group_collective_functions") ||
                             c.opencl_c_version.starts_with("OpenCL C 2.");

  // The preferred multiple is a kernel property; ask it of a trivial kernel.
  c.preferred_work_group_multiple = 1;
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (err == CL_SUCCESS) {
    const char* src = "__kernel void chanflow_probe(__global int* p) { p[get_global_id(0)] = 0; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    if (err == CL_SUCCESS && clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) == CL_SUCCESS) {
      cl_kernel k = clCreateKernel(prog, "chanflow_probe", &err);
      if (err == CL_SUCCESS) {
        std::size_t m = 0;
        if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof(m), &m, nullptr) == CL_SUCCESS)
          c.preferred_work_group_multiple = m;
        clReleaseKernel(k);
      }
    }
    if (prog) clReleaseProgram(prog);
    const char* scan_src =
        "__kernel void chanflow_scan_probe(__global uint* p) {"
        "  p[get_global_id(0)] = work_group_scan_exclusive_add(p[get_global_id(0)]); }";
    cl_program scan = clCreateProgramWithSource(ctx, 1, &scan_src, nullptr, &err);
    if (err == CL_SUCCESS) {
      c.work_group_scan_builds =
          c.work_group_collectives ||
          clBuildProgram(scan, 1, &dev, "-cl-std=CL2.0", nullptr, nullptr) == CL_SUCCESS;
      clReleaseProgram(scan);
    }
    // Advertised floating-point atomic addition counts only if its OpenCL C 2.0 form builds
    // (NVIDIA's OpenCL advertises OpenCL C 1.2 and cl_ext_float_atomics).
    auto fp_add_builds = [&](const char* src) {
      cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
      const bool ok = err == CL_SUCCESS && clBuildProgram(p, 1, &dev, "-cl-std=CL2.0", nullptr, nullptr) == CL_SUCCESS;
      if (p) clReleaseProgram(p);
      return ok;
    };
    c.fp32_atomic_add = fp32_add_advertised && fp_add_builds(
        "__kernel void chanflow_fp_add_probe(__global float* p) { atomic_fetch_add_explicit("
        "(volatile __global atomic_float*)p, 1.0f, memory_order_relaxed, memory_scope_device); }");
    c.fp64_atomic_add = fp64_add_advertised && fp_add_builds(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "__kernel void chanflow_fp_add_probe(__global double* p) { atomic_fetch_add_explicit("
        "(volatile __global atomic_double*)p, 1.0, memory_order_relaxed, memory_scope_device); }");
    clReleaseContext(ctx);
  }
  return c;
}

std::vector<FoundDevice> discover() {
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || count == 0)
    throw DeviceNotFound(
        "no OpenCL platform found. Install one: on Debian 12, `apt-get install pocl-opencl-icd "
        "ocl-icd-libopencl1` (PoCL, OpenCL on the CPU), or a GPU vendor's OpenCL driver; "
        "./run.sh installs PoCL for you.");
  check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<FoundDevice> found;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err == CL_DEVICE_NOT_FOUND || n == 0) continue;
    check(err, "clGetDeviceIDs");
    std::vector<cl_device_id> devs(n);
    check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr), "clGetDeviceIDs");
    for (cl_device_id d : devs)
      found.push_back({d, probe(p, d, static_cast<unsigned>(found.size()))});
  }
  if (found.empty())
    throw DeviceNotFound("OpenCL platforms exist but none has a device; install pocl-opencl-icd");
  return found;
}

const FoundDevice& choose(const std::vector<FoundDevice>& devices, std::string spec) {
  if (spec.empty()) {
    if (const char* env = std::getenv("CHANFLOW_DEVICE")) spec = env;
  }
  if (spec.empty()) {
    for (const auto& d : devices)
      if (d.caps.platform.find("Portable Computing Language") != std::string::npos &&
          (d.caps.type & CL_DEVICE_TYPE_CPU))
        return d;
    return devices.front();
  }
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto i = std::stoul(spec);
    if (i < devices.size()) return devices[i];
    throw DeviceNotFound(fmt::format("device index {} is out of range: {} device(s) found "
                                     "(see `chanflow devices`)",
                                     i, devices.size()));
  }
  const auto needle = lower(spec);
  for (const auto& d : devices) {
    const auto hay = lower(d.caps.name + " " + d.caps.vendor + " " + d.caps.platform + " " +
                           d.caps.type_name());
    if (hay.find(needle) != std::string::npos) return d;
  }
  std::string names;
  for (const auto& d : devices) names += fmt::format("\n  [{}] {} ({})", d.caps.index, d.caps.name, d.caps.platform);
  throw DeviceNotFound(fmt::format("no OpenCL device matches '{}'. Devices:{}", spec, names));
}

}  // namespace

bool DeviceCaps::has_extension(std::string_view ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::string DeviceCaps::type_name() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

std::vector<std::string> DeviceCaps::missing_requirements() const {
  std::vector<std::string> missing;
  if (!svm_coarse) missing.emplace_back("coarse-grain SVM (OpenCL 2.0 shared virtual memory)");
  if (!int64_atomics) missing.emplace_back("64-bit atomics (cl_khr_int64_base_atomics)");
  if (address_bits != 64) missing.emplace_back("64-bit device addresses");
  return missing;
}

std::vector<DeviceCaps> list_devices() {
  std::vector<DeviceCaps> out;
  for (auto& d : discover()) out.push_back(std::move(d.caps));
  return out;
}

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
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                       profiling_ ? cl_queue_properties{CL_QUEUE_PROFILING_ENABLE} : 0, 0};
  queue_ = cl::CommandQueue(clCreateCommandQueueWithProperties(context_(), id, props, &err));
  check(err, "clCreateCommandQueueWithProperties");
}

// Writes a built program's device binary (PTX text on NVIDIA, an ELF on PoCL) for inspecting
// what the compiler made of the kernels' atomics and fences; named by a hash of its sources.
static void dump_program_binary(const cl::Program& program, const std::string& dir, const std::string& key) {
  std::size_t size = 0;
  check(clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::vector<unsigned char> binary(size);
  unsigned char* ptr = binary.data();
  check(clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  const std::string path = fmt::format("{}/program-{:016x}.bin", dir, std::hash<std::string>{}(key));
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(binary.data(), 1, binary.size(), f);
    std::fclose(f);
  } else {
    fmt::print(stderr, "chanflow: cannot write {} (CHANFLOW_DUMP_PROGRAMS)\n", path);
  }
}

std::pair<std::string, std::string> Runtime::build_key(const std::vector<std::string_view>& sources,
                                                     const std::string& requested) const {
  // CHANFLOW_BUILD_OPTIONS: options the user adds to every build (a cilk_for's grain, say).
  std::string options = requested;
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

void Runtime::finish_quietly() const noexcept {
  if (!queue_()) return;
  if (const cl_int err = clFinish(queue_()); err != CL_SUCCESS)
    fmt::print(stderr, "chanflow: clFinish failed while releasing resources: {}\n", cl_error_name(err));
}

Runtime::~Runtime() { finish_quietly(); }

void Runtime::svm_write(void* svm_dst, const void* host_src, std::size_t bytes) const {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue_(), CL_TRUE, svm_dst, host_src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (host to SVM)");
}

void Runtime::svm_write_async(void* svm_dst, const void* host_src, std::size_t bytes) const {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue_(), CL_FALSE, svm_dst, host_src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (host to SVM, non-blocking)");
}

void Runtime::svm_read(void* host_dst, const void* svm_src, std::size_t bytes) const {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue_(), CL_TRUE, host_dst, svm_src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (SVM to host)");
}

void Runtime::svm_read_async(void* host_dst, const void* svm_src, std::size_t bytes) const {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue_(), CL_FALSE, host_dst, svm_src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (SVM to host, non-blocking)");
}

void Runtime::svm_copy_async(void* svm_dst, const void* svm_src, std::size_t bytes) const {
  if (bytes == 0) return;
  check(clEnqueueSVMMemcpy(queue_(), CL_FALSE, svm_dst, svm_src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (SVM to SVM, non-blocking)");
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
  ptr_ = clSVMAlloc(context_, CL_MEM_READ_WRITE, bytes, static_cast<cl_uint>(alignment));
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
