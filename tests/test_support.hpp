// Shared fixtures for the doctest suites: one OpenCL runtime on the default device.
#pragma once

#include "chanflow/opencl.hpp"

namespace chanflow::test {

/// The runtime every suite shares (CHANFLOW_DEVICE picks another device; PoCL by default).
inline const Runtime& runtime() {
  static const Runtime rt;
  return rt;
}

}  // namespace chanflow::test
