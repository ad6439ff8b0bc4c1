// Kernel nodes and their edges (part of the graph API, graph.hpp): the typed output ports
// (Spawns, Children, Continuation), a node's kind as its program says, its arguments and SVM
// uses, and what a work-item stages of its spawns (and a yielded task keeps).
#pragma once

#include "chanflow/opencl.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace chanflow {

class Aggregator;
class ChannelNode;
class ChannelStackNode;
class Graph;
class KernelNode;

/// What an output edge of a kernel node carries (typed ports: each kind says once where its CEs
/// go and what the library does with them). `name` is the port's name on the OpenCL C side,
/// CHANFLOW_PORT(kernel, name), and defaults to the target node's name.
/// Into a plain channel: up to max_per_item CEs per processed CE.
struct Spawns {
  std::uint32_t max_per_item = 1;
  std::string name;
};
/// Into a task stack, one level deeper than the CE being processed: child tasks
/// (chanflow_spawn_child points each at a result slot of this task's continuation).
struct Children {
  std::uint32_t max_per_item = 1;
  std::string name;
};
/// Into a continuation stack at the processed CE's own depth: the task's continuation frame
/// (chanflow_spawn_continuation, one per task). The library puts it first, at port 0, whatever
/// the order the edges were made in, so it is reserved before the children that return into it.
struct Continuation {
  std::string name;
};

enum class PortKind { Spawns, Children, Continuation };

/// Where an output port of a kernel node goes.
struct PortTarget {
  std::variant<ChannelNode*, ChannelStackNode*> node;
  PortKind kind = PortKind::Spawns;
  std::uint32_t max_per_item = 1;  ///< most CEs one work-item spawns on this port per CE
  std::string name;                ///< CHANFLOW_PORT(kernel, name) on the device
  std::uint32_t edge = 0;          ///< the order the edge was made in (Port's key)
  /// The target level relative to the processed CE's depth: +1 for children, 0 otherwise.
  int level_delta() const noexcept { return kind == PortKind::Children ? 1 : 0; }
  /// The target node's name.
  const std::string& target_name() const;
};

/// An output edge as make_edge returns it. Its index is the library's: the continuation is
/// port 0, the others follow in the order their edges were made.
class Port {
 public:
  std::uint32_t index() const;
  const std::string& name() const;
  KernelNode& node() const noexcept { return *node_; }

 private:
  friend class KernelNode;
  Port(KernelNode& node, std::uint32_t edge) : node_(&node), edge_(edge) {}
  const PortTarget& target() const;
  KernelNode* node_;
  std::uint32_t edge_;
};

/// How a kernel node's OpenCL C kernel was made; the library learns it from the built program
/// (each node macro leaves a marker), so it is never stated twice.
enum class NodeKind {
  Unknown,       ///< the program has not been built yet
  Plain,         ///< CHANFLOW_KERNEL_NODE: a full output is an error (admission prevents it)
  Yielding,      ///< CHANFLOW_YIELDING_KERNEL_NODE: a full output makes the work-group yield
  Continuation,  ///< CHANFLOW_CONTINUATION_NODE: consumes a continuation stack
  Group,         ///< CHANFLOW_GROUP_KERNEL_NODE: a work-group runs each CE (a task) together
};
const char* to_string(NodeKind kind);

/// An OpenCL C kernel made with one of the node macros, consuming one channel or channel stack
/// and producing into its output ports.
class KernelNode {
 public:
  const std::string& name() const noexcept { return name_; }
  const std::string& kernel_name() const noexcept { return kernel_name_; }
  std::uint32_t input_ce_bytes() const noexcept { return input_ce_bytes_; }
  /// Port i is the library's port index (continuation first).
  const std::vector<PortTarget>& ports() const noexcept { return ports_; }
  bool has_input() const noexcept { return !std::holds_alternative<std::monostate>(input_); }
  std::string input_name() const;
  /// CE size of the input channel or stack (0 without an input).
  std::uint32_t input_channel_ce_bytes() const;

  /// The argument block the body reads through CHANFLOW_ARGS (a trivially copyable struct
  /// laid out like its OpenCL C twin; SVM pointers inside it are valid on the device).
  template <class Args>
  KernelNode& set_args(const Args& args) {
    static_assert(std::is_trivially_copyable_v<Args>);
    args_.resize(sizeof(Args));
    std::memcpy(args_.data(), &args, sizeof(Args));
    return *this;
  }
  /// The same, from bytes (an argument block whose size is known at run time).
  KernelNode& set_arg_bytes(const void* bytes, std::size_t size) {
    args_.resize(size);
    std::memcpy(args_.data(), bytes, size);
    return *this;
  }
  /// Declares an SVM allocation the body reaches through a pointer in its arguments or in its
  /// CEs (a root task's result slot, say). Per kernel: each node's launches name only its own
  /// (NVIDIA's OpenCL charges every launch for each one), so an allocation that two kernels
  /// reach is declared on both.
  KernelNode& uses(const SvmBuffer& buffer) {
    svm_uses_.push_back(buffer.get());
    return *this;
  }
  /// Forgets what uses() declared: a graph run again over other allocations (a heap whose blocks
  /// come and go between runs) declares them anew.
  KernelNode& clear_uses() {
    svm_uses_.clear();
    return *this;
  }
  /// The node macro its kernel was made with (Unknown until the graph's program is built:
  /// Graph::validate() or run()).
  NodeKind kind() const noexcept { return kind_; }
  bool is_yielding() const noexcept { return kind_ == NodeKind::Yielding; }
  /// CEs one work-group of `wg_size` work-items takes: one for a work-group task node, else one
  /// per work-item.
  std::uint32_t ces_per_group(std::uint32_t wg_size) const noexcept {
    return kind_ == NodeKind::Group ? 1 : wg_size;
  }
  /// The port into a continuation stack (always 0), if the node has one.
  std::optional<std::uint32_t> continuation_port() const;
  /// Bytes a yielded task of this node keeps per slot of its input (its records on every port,
  /// their counts and its task scratch block; scheduler/cl/yield.cl lays them out).
  std::uint32_t yield_state_bytes() const;
  /// Which ports one run of the body may spawn on together: `together[p]` has bit q set if port
  /// p and port q may both get CEs from one work-item's run (every port with itself). Ports that
  /// never do share their place in the work-item's private staging and in the yield state (a
  /// compiled Cilk function's loops and spawns separated by syncs). Without it, every pair may.
  /// Ports are numbered as ports() (at most 32); a body that spawns on two ports declared apart
  /// overwrites one's CEs with the other's.
  KernelNode& spawns_together(std::vector<std::uint32_t> together);
  /// Where each port's staged CEs start in a work-item's staging, in 32-bit words, and the words
  /// the widest run needs: ports that may spawn together follow each other, others overlap.
  /// Laid out when a port is added (which forgets spawns_together: every pair may again) or
  /// spawns_together is called, not per launch.
  const std::vector<std::uint32_t>& staging_offsets() const noexcept { return staging_at_; }
  std::uint32_t staging_words() const noexcept { return staging_words_; }

 private:
  friend class Graph;
  friend class Aggregator;
  friend class Port;
  friend void make_edge(ChannelNode&, KernelNode&);
  friend void make_edge(ChannelStackNode&, KernelNode&);
  friend Port make_edge(KernelNode&, ChannelNode&, Spawns);
  friend Port make_edge(KernelNode&, ChannelStackNode&, Children);
  friend Port make_edge(KernelNode&, ChannelStackNode&, Continuation);
  KernelNode(std::string name, std::string kernel_name, std::uint32_t input_ce_bytes, std::uint32_t index);
  Port add_port(PortTarget target);
  std::string name_;
  std::string kernel_name_;
  std::uint32_t input_ce_bytes_;
  std::uint32_t index_;
  std::variant<std::monostate, ChannelNode*, ChannelStackNode*> input_;
  std::vector<PortTarget> ports_;
  void lay_out_staging();
  std::vector<std::uint32_t> together_;  // spawns_together's; empty: every pair
  std::vector<std::uint32_t> staging_at_;
  std::uint32_t staging_words_ = 0;
  std::uint32_t edges_ = 0;
  std::vector<std::byte> args_;
  std::vector<void*> svm_uses_;
  NodeKind kind_ = NodeKind::Unknown;
};

/// Input edge: `kernel` processes every CE of `channel`.
void make_edge(ChannelNode& channel, KernelNode& kernel);
void make_edge(ChannelStackNode& stack, KernelNode& kernel);
/// Output edges: a new port of `kernel` (see Spawns, Children, Continuation).
Port make_edge(KernelNode& kernel, ChannelNode& channel, Spawns spawns = {});
Port make_edge(KernelNode& kernel, ChannelStackNode& stack, Children children);
Port make_edge(KernelNode& kernel, ChannelStackNode& stack, Continuation continuation);

}  // namespace chanflow
