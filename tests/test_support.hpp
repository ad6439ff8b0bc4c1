// Shared fixtures for the doctest suites: one OpenCL runtime on the default device, and a way to
// hold its queue so that a test can drop objects while commands they queued are still pending.
#pragma once

#include "chanflow/graph.hpp"
#include "chanflow/opencl.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace chanflow::test {

/// The runtime every suite shares (CHANFLOW_DEVICE picks another device; PoCL by default).
inline const Runtime& runtime() {
  static const Runtime rt;
  return rt;
}

/// Every way a stack is dispatched on this device: host-sized ranges, planned sweeps, and claimed
/// sweeps where Auto picks them (CPU devices). They are allowed on NVIDIA's GPUs too now, but slow
/// there (fib 30: 823 ms against 5.3 planned on an H100), so the suites leave them out on a GPU.
inline std::vector<Sweeps> dispatch_modes() {
  std::vector<Sweeps> modes{Sweeps::Off, Sweeps::Planned};
  if (claimed_sweeps_hold(runtime().caps()) && (runtime().caps().type & CL_DEVICE_TYPE_CPU))
    modes.push_back(Sweeps::Claimed);
  return modes;
}

/// Holds the runtime's in-order queue behind a user event: commands enqueued after construction
/// stay pending until a helper thread completes the event, `delay` later. Lifetime bugs (memory a
/// queued command reads freed before it runs) then show deterministically under AddressSanitizer
/// instead of once in a while.
class QueueStall {
 public:
  QueueStall(const Runtime& rt, std::chrono::milliseconds delay) {
    cl_int err = CL_SUCCESS;
    event_ = clCreateUserEvent(rt.context()(), &err);
    check(err, "clCreateUserEvent");
    check(clEnqueueMarkerWithWaitList(rt.queue()(), 1, &event_, nullptr), "clEnqueueMarkerWithWaitList");
    release_ = std::thread([this, delay] {
      std::this_thread::sleep_for(delay);
      clSetUserEventStatus(event_, CL_COMPLETE);
    });
  }
  ~QueueStall() {
    release_.join();
    clReleaseEvent(event_);
  }
  QueueStall(const QueueStall&) = delete;
  QueueStall& operator=(const QueueStall&) = delete;

 private:
  cl_event event_ = nullptr;
  std::thread release_;
};

/// While it lives, the notes of GPU builds (CHANFLOW_CACHE_DIR; opencl/src/build_notes.cpp) go to
/// a directory of its own, empty at first: a test of what a machine's first build does then holds
/// on a machine that ran the suites before. The setting is restored and the directory removed.
class FreshBuildNotes {
 public:
  FreshBuildNotes() {
    if (const char* saved = std::getenv("CHANFLOW_CACHE_DIR")) saved_ = saved;
    std::string dir = (std::filesystem::temp_directory_path() / "chanflow-notes-XXXXXX").string();
    if (!::mkdtemp(dir.data())) throw std::runtime_error("FreshBuildNotes: mkdtemp failed");
    dir_ = dir;
    ::setenv("CHANFLOW_CACHE_DIR", dir_.c_str(), 1);
  }
  ~FreshBuildNotes() {
    if (saved_) ::setenv("CHANFLOW_CACHE_DIR", saved_->c_str(), 1);
    else ::unsetenv("CHANFLOW_CACHE_DIR");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FreshBuildNotes(const FreshBuildNotes&) = delete;
  FreshBuildNotes& operator=(const FreshBuildNotes&) = delete;
  const std::string& dir() const noexcept { return dir_; }

 private:
  std::optional<std::string> saved_;
  std::string dir_;
};

}  // namespace chanflow::test
