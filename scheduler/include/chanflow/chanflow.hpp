// chanflow's umbrella header: the OpenCL runtime, channels, the graph API and policies.
#pragma once

#include "chanflow/channel.hpp"
#include "chanflow/device_heap.hpp"
#include "chanflow/graph.hpp"
#include "chanflow/granularity.hpp"
#include "chanflow/opencl.hpp"
#include "chanflow/policy.hpp"
#include "chanflow/run_settings.hpp"
#include "chanflow/sizing.hpp"
