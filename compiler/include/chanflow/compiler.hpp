// chanflowc as a library: translate a Cilk source into a channel-flow program (OpenCL C kernel
// nodes, the C++ that builds their graph, and the host C that calls it), then build it into an
// executable with the system compilers. No Clang type crosses this interface.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace chanflow::compiler {

struct TranslateOptions {
  std::string input;                    ///< a .c (OpenCilk keywords) or .cilk (Cilk-5) file
  std::vector<std::string> clang_args;  ///< extra front-end arguments (-I, -D)
  /// Most children that the loops of one Cilk function may spawn before a sync (the frame's
  /// result slots and each port's spawn limit). Spawns outside loops are counted exactly.
  unsigned max_loop_spawns = 32;
  /// Most activations of a helper that calls itself (compiled onto an explicit stack of this many
  /// frames in private memory); a deeper recursion stops the run with an error naming the helper.
  unsigned helper_stack_frames = 64;
  /// Granularity control: a Cilk function that spawns and calls only itself and functions with
  /// serial forms gets a serial form (a helper on an explicit stack of helper_stack_frames
  /// activations), and its tasks at the run's serial depth or deeper (the root is at 0) run their
  /// whole call as that form, in their work-item. The depth is chosen per run by the runtime
  /// (CHANFLOW_SERIAL_CUTOFF, else serial_cutoff, else its own choice from the device's width and
  /// the breadth the last run reached). Off (--serial-cutoff=off): no forms, every spawn a task.
  bool serial_forms = true;
  /// The program's own cut-off depth (--serial-cutoff=N); nullopt: the runtime chooses (auto).
  std::optional<unsigned> serial_cutoff;
  /// -Rserial-form: a remark at each Cilk function that spawns and gets no serial form, saying why.
  bool remark_serial_forms = false;
  /// The input's text, read from `text` instead of the file `input` names (which need not
  /// exist; its name still says .c or .cilk): the fuzz target's way in.
  std::optional<std::string> text;
  /// Report nothing (the fuzz target): the result still says whether the input was accepted.
  bool quiet = false;
};

/// The generated program: four texts, compiled together into one executable.
struct Translation {
  std::string name;       ///< the input's stem (fib for fib.c)
  std::string source;     ///< the input's path (its headers are found beside it)
  std::string types_h;    ///< CE and user types, valid C, C++ and OpenCL C: <name>.types.h
  std::string device_cl;  ///< the kernel nodes: <name>.cl
  std::string graph_cpp;  ///< the graph and the entry points main calls: <name>.graph.cpp
  std::string host_c;     ///< the user's source with its Cilk functions replaced by entry stubs: <name>.host.c
  std::string dot;        ///< the channel-flow graph in Graphviz DOT: <name>.dot
};

/// Parses and lowers `options.input`. Problems in the user's code are printed as Clang
/// diagnostics (file:line:col) on standard error; returns nullopt if there was an error.
std::optional<Translation> translate(const TranslateOptions& options);

/// A failure of the build step (a missing compiler, a failed link): one message for the user.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BuildOptions {
  std::string output;     ///< the executable to write
  std::string work_dir;   ///< where the generated files and objects go
  bool keep = false;      ///< keep work_dir afterwards
  bool verbose = false;   ///< print each command
  /// The -I and -D options the translation was given: the host code is the user's file and needs
  /// the same macros and headers.
  std::vector<std::string> flags;
  /// For the host code's compiler only (-O2 unless one is given): -O, -g, -std.
  std::vector<std::string> host_flags;
  /// Linked with the program: objects and archives given as inputs (a `chanflowc -c` object, a
  /// plain C one), and -l, -L, -Wl, -pthread, in the order given.
  std::vector<std::string> link_inputs;
};

/// Writes the generated files of a program's files (each translated alone; one holds main, a file
/// without Cilk functions is host code only; their stems differ) into build.work_dir, compiles
/// them and links them into one executable against the chanflow this compiler belongs to (its
/// build tree, or its installed prefix). Each file's host code finds the headers it includes with
/// "..." beside its source, as the source did.
void build_executable(const std::vector<Translation>& translations, const BuildOptions& build);

/// `chanflowc -c`: one file's host code and graph compiled into one relocatable object at
/// build.output, which a later chanflowc links as an input (as `cc -c` does for `cc`).
void build_object(const Translation& translation, const BuildOptions& build);

/// Builds the serial elision of a program's files (the Cilk keywords defined away by
/// <cilk/cilk.h>, or <cilk/cilk5.h> where one is a .cilk file) with the system C compiler into
/// build.output: the reference a compiled program's output is compared with. `flags` are -I and
/// -D options for the compiler.
void build_elision(const std::vector<std::string>& inputs, const std::vector<std::string>& flags,
                   const BuildOptions& build);

/// Writes one generated text per file into `dir` (--emit): which is cl, cpp, c, h or dot.
std::vector<std::string> write_outputs(const Translation& translation, const std::string& dir,
                                       const std::vector<std::string>& which);

}  // namespace chanflow::compiler
