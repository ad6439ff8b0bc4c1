// The flags that say how chanflow runs, the same for `chanflow run WORKLOAD`, `chanflow bench` and
// `chanflow run FILE.c`: each fills a field of one RunSettings.
#pragma once

#include "chanflow/run_settings.hpp"

#include <CLI/CLI.hpp>

namespace chanflow::cli {

/// --policy, --capacity, --wg, --dispatch, --scheduler, --sweep-groups, --max-channels, --heap, --quiet
/// and --serial-cutoff on `cmd`, into `s`.
void add_run_flags(CLI::App& cmd, RunSettings& s);

}  // namespace chanflow::cli
