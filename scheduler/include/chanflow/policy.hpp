// Scheduling policies: what the aggregator asks, each round, which channels to dispatch and how
// many of their ready CEs (thesis 4.1.1, 4.5.2). Users write their own against GraphView.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chanflow {

/// One concrete channel (a channel node, or one level of a channel stack) as the aggregator
/// saw it at the start of a round, with nothing in flight (rounds are run to completion: the
/// aggregator reads the counters once the round's kernels have finished). Read-only to policies.
struct ChannelView {
  std::uint32_t id = 0;          ///< index into GraphView::channels
  std::string_view name;         ///< "fib" or, for a stack level, "cont[3]"
  std::string_view consumer;     ///< the kernel node that processes it
  bool in_stack = false;         ///< a level of a channel stack
  std::uint32_t level = 0;       ///< recursion depth (0 for plain channels)
  std::uint64_t ready = 0;       ///< CEs ready to dispatch
  std::uint64_t capacity = 0;
  std::uint64_t free = 0;        ///< unreserved slots
  std::uint64_t blocked = 0;     ///< restart contexts of this channel's CEs (yielded work-groups)
  std::uint64_t restartable = 0; ///< of those, how many may be restarted now (their output has room)
  std::uint64_t admissible = 0;  ///< most ready CEs a dispatch may take now (0 when an output is full)
  bool continuation = false;     ///< a level of a continuation stack
  bool producers_idle = false;   ///< no channel whose consumer feeds this one holds work
  bool predicate = false;        ///< the channel's predicate, see ChannelPredicate
};

/// A channel's predicate (thesis 4.1.1): may the aggregator dispatch it now? The default is "a
/// work-group's worth of ready CEs, or any once its producers are idle"; and when no channel
/// passes that (a channel feeding itself never has idle producers), any ready CEs. A predicate
/// set on a node replaces the default for its channels and is never relaxed.
using ChannelPredicate = std::function<bool(const ChannelView&)>;

struct GraphView {
  std::span<const ChannelView> channels;
  std::uint64_t round = 0;
  std::uint32_t wg_size = 0;
  std::uint32_t max_level = 0;  ///< deepest level holding ready CEs or blocked contexts
};

/// "Dispatch `count` ready CEs of channel `channel` and restart up to `restarts` of its
/// blocked contexts" (the aggregator clamps both to what is admissible / restartable, in the
/// order given, charging each dispatch's worst-case spawns before the next is admitted). A
/// channel may appear more than once in a round: its ranges are taken one after the other and
/// go out as one launch.
struct Dispatch {
  std::uint32_t channel = 0;
  std::uint64_t count = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t restarts = std::numeric_limits<std::uint64_t>::max();
};

/// A scheduling policy. decide() is called once per round with every channel's state and
/// appends the dispatches to make; appending none while work is ready is reported by the
/// aggregator as no progress.
class SchedulingPolicy {
 public:
  /// How a policy runs on the device scheduler (scheduler/cl/schedule.cl): as one of the built-in
  /// device policies, as OpenCL C of its own, or not at all (a host policy keeps the rounds).
  struct DeviceForm {
    enum class Kind { None, Levelized, Greedy, Source } kind = Kind::None;
    /// Kind::Source: OpenCL C defining `int chanflow_user_policy_score(const chanflow_policy_view* v)`.
    std::string source;
  };
  virtual ~SchedulingPolicy() = default;
  virtual std::string name() const = 0;
  virtual void decide(const GraphView& view, std::vector<Dispatch>& out) = 0;
  virtual DeviceForm device_form() const { return {}; }
};

/// Dispatches every channel whose predicate holds, all its admissible CEs.
class Greedy final : public SchedulingPolicy {
 public:
  std::string name() const override { return "greedy"; }
  void decide(const GraphView& view, std::vector<Dispatch>& out) override;
  /// On the device: the channel with the fullest batch first (chanflow_greedy_score).
  DeviceForm device_form() const override { return {DeviceForm::Kind::Greedy, {}}; }
};

/// Levelization (thesis 4.3.2): stack levels are offered space deepest first (restarts
/// included), so work deeper in the recursion, which frees space, always goes first (4.3.3);
/// shallower levels take what is left. A continuation stack only ever holds frames whose
/// children have all returned (join counters), so its levels need no gating and go in the same
/// order. Plain channels are dispatched as Greedy does.
class Levelized final : public SchedulingPolicy {
 public:
  std::string name() const override { return "levelized"; }
  void decide(const GraphView& view, std::vector<Dispatch>& out) override;
  /// On the device: the deepest level first, a continuation level before a task level of the
  /// same depth, channel nodes last (chanflow_levelized_score).
  DeviceForm device_form() const override { return {DeviceForm::Kind::Levelized, {}}; }
};

/// A policy written for the device scheduler: OpenCL C that scores a channel holding ready CEs,
///   int chanflow_user_policy_score(const chanflow_policy_view* v)
/// (node_layout.h: ready, free, level, in_stack, continuation, node, group_ces), compiled into the
/// scheduler kernel with the graph's program. Each work-group takes its next batch from the
/// channel scoring highest whose outputs can take the batch's spawns; a score below 0 skips the
/// channel. With a host form (`fallback`) it also runs where the device scheduler cannot (the
/// rounds); without one, such a run is refused before it starts.
class DevicePolicy final : public SchedulingPolicy {
 public:
  using Decide = std::function<void(const GraphView&, std::vector<Dispatch>&)>;
  DevicePolicy(std::string name, std::string source, Decide fallback = {})
      : name_(std::move(name)), source_(std::move(source)), fallback_(std::move(fallback)) {}
  std::string name() const override { return name_; }
  void decide(const GraphView& view, std::vector<Dispatch>& out) override;
  DeviceForm device_form() const override { return {DeviceForm::Kind::Source, source_}; }
  bool has_host_form() const noexcept { return static_cast<bool>(fallback_); }

 private:
  std::string name_, source_;
  Decide fallback_;
};

/// A policy from a callable, for policies that need no state of their own.
class FunctionPolicy final : public SchedulingPolicy {
 public:
  using Decide = std::function<void(const GraphView&, std::vector<Dispatch>&)>;
  FunctionPolicy(std::string name, Decide decide) : name_(std::move(name)), decide_(std::move(decide)) {}
  std::string name() const override { return name_; }
  void decide(const GraphView& view, std::vector<Dispatch>& out) override { decide_(view, out); }

 private:
  std::string name_;
  Decide decide_;
};

}  // namespace chanflow
