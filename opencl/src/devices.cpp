// Device discovery and choice, and the capability probe: what `chanflow devices` lists and what
// Runtime opens.
#include "devices.hpp"

#include <CL/cl_ext.h>  // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>

namespace chanflow {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A string a clGet*Info call answers, without its terminator and trailing blanks.
template <class Id, class Info>
std::string info_string(cl_int (*get)(Id, Info, std::size_t, void*, std::size_t*), Id id, Info what, const char* call) {
  std::size_t size = 0;
  check(get(id, what, 0, nullptr, &size), call);
  std::string s(size, '\0');
  check(get(id, what, size, s.data(), nullptr), call);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string device_string(cl_device_id dev, cl_device_info what) {
  return info_string(clGetDeviceInfo, dev, what, "clGetDeviceInfo");
}

template <class T>
T device_value(cl_device_id dev, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(dev, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  return info_string(clGetPlatformInfo, p, what, "clGetPlatformInfo");
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

}  // namespace

namespace {

std::vector<FoundDevice> discover_now() {
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || count == 0)
    throw DeviceNotFound(
        "no OpenCL platform found. Install one: on Debian 12, `apt-get install pocl-opencl-icd "
        "ocl-icd-libopencl1` (PoCL, OpenCL on the CPU), or a GPU vendor's OpenCL driver; "
        "./run.sh installs PoCL for you." +
        [] { const auto hint = unregistered_driver_hint({}); return hint ? "\n" + *hint : std::string(); }());
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

}  // namespace

std::vector<FoundDevice> discover() {
  // Once per process: the probe builds several programs on every device (seconds on PoCL as four
  // devices), and a device set opens a Runtime per device, each of which looks its device up.
  // A failed discovery is not kept: the next call tries again and says why again.
  static std::mutex mutex;
  static std::optional<std::vector<FoundDevice>> found;
  const std::lock_guard lock(mutex);
  if (!found) found = discover_now();
  return *found;
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
  std::vector<DeviceCaps> listed;
  for (const auto& d : devices) listed.push_back(d.caps);
  const auto hint = unregistered_driver_hint(listed);
  throw DeviceNotFound(
      fmt::format("no OpenCL device matches '{}'. Devices:{}{}", spec, names, hint ? "\n" + *hint : std::string()));
}

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

}  // namespace chanflow
