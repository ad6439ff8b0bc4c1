// The OpenCL ICD loader's registry as a new user meets it: a GPU driver can be installed (NVIDIA's
// libnvidia-opencl.so.1 beside the CUDA driver, often in a container) while no file in the
// loader's vendors directory names it, and then the GPU is simply missing from every list.
#include "chanflow/opencl.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace chanflow {
namespace {

namespace fs = std::filesystem;

// Where the loader reads its registry: OCL_ICD_VENDORS (a directory, or one .icd file) or the default.
fs::path vendors_path() {
  if (const char* v = std::getenv("OCL_ICD_VENDORS"); v && *v) return v;
  return "/etc/OpenCL/vendors";
}

// Whether any registry entry names a library whose file name holds `library`.
bool registered(const std::string& library) {
  std::error_code ec;
  const fs::path at = vendors_path();
  std::vector<fs::path> files;
  if (fs::is_directory(at, ec)) {
    for (const auto& e : fs::directory_iterator(at, ec))
      if (e.path().extension() == ".icd") files.push_back(e.path());
  } else if (fs::is_regular_file(at, ec)) {
    files.push_back(at);
  }
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(library) != std::string::npos) return true;
  }
  return false;
}

// The driver library, where NVIDIA's installers and container runtimes put it.
std::optional<fs::path> find_library(const std::string& library) {
  std::vector<fs::path> dirs;
  if (const char* ld = std::getenv("LD_LIBRARY_PATH"); ld && *ld) {
    std::stringstream list(ld);
    for (std::string d; std::getline(list, d, ':');)
      if (!d.empty()) dirs.emplace_back(d);
  }
  for (const char* d : {"/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                        "/usr/lib64", "/usr/lib", "/usr/local/cuda/lib64"})
    dirs.emplace_back(d);
  std::error_code ec;
  for (const fs::path& d : dirs)
    if (fs::exists(d / library, ec)) return d / library;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unregistered_driver_hint(const std::vector<DeviceCaps>& listed) {
  // The loader may reach the driver without the registry (an OpenCL library of NVIDIA's own earlier
  // on the library path): what it lists is the answer, the registry only the likely cause.
  for (const DeviceCaps& d : listed)
    if (d.platform.find("NVIDIA") != std::string::npos || d.vendor.find("NVIDIA") != std::string::npos) return std::nullopt;
  const std::string library = "libnvidia-opencl.so.1";
  if (registered("libnvidia-opencl")) return std::nullopt;
  const auto found = find_library(library);
  if (!found) return std::nullopt;
  const fs::path vendors = vendors_path();
  const fs::path icd = fs::is_regular_file(vendors) ? vendors : vendors / "nvidia.icd";
  return fmt::format(
      "NVIDIA's OpenCL driver is installed ({}) but the OpenCL loader does not list it: no file in {} names it. "
      "Register it (as root), then run `chanflow devices` again:\n    echo {} > {}",
      found->string(), vendors.string(), found->string(), icd.string());
}

}  // namespace chanflow
