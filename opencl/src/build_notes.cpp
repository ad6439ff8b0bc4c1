// Notes of the GPU builds a machine has done (Runtime::built_before). A GPU driver caches what it
// builds (NVIDIA: ~/.nv/ComputeCache, keyed by the sources and options), so a program it has
// built once costs a lookup the next time: measured on an H100, the device scheduler's program
// for Sort took 53 s to build the first time and 0.5 s in the next process. The runtime cannot ask
// the driver's cache, so it keeps a note of its own per build: an empty file named by a hash of
// the device, its driver and the build's key. A note whose build the driver has since dropped
// costs one slow build, which writes it again.
#include "chanflow/opencl.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace chanflow {

namespace {

// FNV-1a, 64 bits: stable across processes and compilers (std::hash is not promised to be).
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::filesystem::path note_path(const DeviceCaps& caps, const std::string& key) {
  const std::string dir = build_notes_dir();
  if (dir.empty()) return {};
  std::uint64_t h = fnv1a(caps.name);
  h = fnv1a(caps.driver_version, h);
  h = fnv1a(caps.platform, h);
  h = fnv1a(key, h);
  return std::filesystem::path(dir) / "builds" / fmt::format("{:016x}", h);
}

}  // namespace

std::string build_notes_dir() {
  if (const char* dir = std::getenv("CHANFLOW_CACHE_DIR"); dir && *dir)
    return std::string_view(dir) == "off" ? std::string() : std::string(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/chanflow";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/chanflow";
  return {};
}

void Runtime::note_build(const std::string& key) const {
  if (caps_.type & CL_DEVICE_TYPE_CPU) return;  // PoCL keeps its own cache; it is not forecast
  const auto path = note_path(caps_, key);
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (!ec) std::ofstream(path).flush();  // a note that cannot be written only costs a forecast
}

bool Runtime::noted_build(const std::string& key) const {
  if (caps_.type & CL_DEVICE_TYPE_CPU) return false;
  const auto path = note_path(caps_, key);
  std::error_code ec;
  return !path.empty() && std::filesystem::exists(path, ec);
}

}  // namespace chanflow
