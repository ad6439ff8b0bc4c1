// `chanflow run FILE.c [OTHER.c...] [options] [-- ARGS...]`: compile a Cilk program with chanflowc (cached by
// content hash) and run it in one step.
#pragma once

#include <string>

namespace chanflow::workloads {

/// Whether `argv` asks to run a Cilk source file (`run` followed by a .c or .cilk path).
bool is_cilk_file_run(int argc, char** argv);

/// The file form's usage and flags, as `chanflow run --help` shows them beside the workload form's.
std::string cilk_file_help();

/// Compiles (or finds in the cache) and execs the program; returns only on failure, with the exit status.
int run_cilk_file(int argc, char** argv);

}  // namespace chanflow::workloads
