// Graph construction, edges and DOT output; run() hands over to the Aggregator (validation and the
// program build: validate.cpp).
#include "chanflow/graph.hpp"

#include "aggregator.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <sstream>
#include <string_view>

namespace chanflow {

// ---------------------------------------------------------------------------------------------
ChannelNode::ChannelNode(std::string name, ChannelTable& table, const ChannelConfig& config)
    : name_(std::move(name)), channel_(table, config) {}

void ChannelNode::push_bytes(const void* ce, std::size_t bytes) {
  if (bytes != ce_bytes())
    throw GraphError(fmt::format("channel '{}' holds {}-byte CEs; pushed a {}-byte value", name_,
                                 ce_bytes(), bytes));
  auto r = channel_.talloc(1);
  if (!r) throw GraphError(fmt::format("channel '{}' is full ({} CEs): cannot push from the host", name_, capacity()));
  std::memcpy(r->ces.data(), ce, bytes);
  channel_.enq(std::move(*r));
}

ChannelStackNode::ChannelStackNode(std::string name, ChannelTable& table, const ChannelConfig& config,
                                   StackKind kind)
    : name_(std::move(name)), kind_(kind), table_(table), config_(config) {
  level(0);  // validates the configuration at once
}

Channel& ChannelStackNode::level(std::uint32_t d) {
  if (d < levels_.size()) return levels_[d];
  const auto start = std::chrono::steady_clock::now();
  while (levels_.size() <= d) {
    if (table_.size() >= table_.max_channels())
      throw StackDepthError(fmt::format("channel stack '{}' cannot grow to level {}: the graph's {} channel-table slots "
                                        "are taken (every level of every stack takes one; GraphOptions::max_channels). "
                                        "A recursion this deep usually misses its base case.",
                                        name_, levels_.size(), table_.max_channels()),
                            name_, static_cast<std::uint32_t>(levels_.size()));
    ChannelConfig c = config_;
    c.name = fmt::format("{}[{}]", name_, levels_.size());
    c.capacity = capacity_of(static_cast<std::uint32_t>(levels_.size()));
    levels_.emplace_back(table_, c);
    if (scratch_) make_scratch_pool(static_cast<std::uint32_t>(levels_.size() - 1));
  }
  making_levels_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return levels_[d];
}

ChannelStackNode& ChannelStackNode::grow_levels(std::uint32_t fan_out, std::uint32_t most_per_level,
                                                std::uint64_t budget_bytes) {
  fan_out_ = fan_out;
  most_per_level_ = most_per_level;
  budget_bytes_ = budget_bytes;
  return *this;
}

std::uint32_t ChannelStackNode::capacity_of(std::uint32_t d) const {
  if (d < levels_.size()) return levels_[d].config().capacity;
  const std::uint64_t base = config_.capacity;
  if (fan_out_ < 2 || most_per_level_ <= base) return config_.capacity;
  std::uint64_t width = 1;  // fan_out^d, to the most a level may hold
  for (std::uint32_t k = 0; k < d && width < most_per_level_; ++k) width *= fan_out_;
  // Whole multiples of the first level's, so done-count groups divide every level alike.
  std::uint64_t c = std::max(base, std::min<std::uint64_t>(most_per_level_, width) + base - 1) / base * base;
  ChannelConfig at = config_;
  for (; c > base; c = std::max(base, c / 2 / base * base)) {
    at.capacity = static_cast<std::uint32_t>(c);
    if (table_.storage_used() + Channel::storage_bytes_for(at) <= budget_bytes_) break;
  }
  return static_cast<std::uint32_t>(c);
}

std::uint32_t ChannelStackNode::largest_level() const {
  std::uint32_t most = config_.capacity;
  for (const Channel& l : levels_) most = std::max(most, l.config().capacity);
  return most;
}

void ChannelStackNode::push_bytes(std::uint32_t d, const void* ce, std::size_t bytes) {
  if (bytes != ce_bytes())
    throw GraphError(fmt::format("channel stack '{}' holds {}-byte CEs; pushed a {}-byte value",
                                 name_, ce_bytes(), bytes));
  auto r = level(d).talloc(1);
  if (!r) throw GraphError(fmt::format("channel stack '{}' level {} is full: cannot push from the host", name_, d));
  std::memcpy(r->ces.data(), ce, bytes);
  level(d).enq(std::move(*r));
}

KernelNode::KernelNode(std::string name, std::string kernel_name, std::uint32_t input_ce_bytes,
                       std::uint32_t index)
    : name_(std::move(name)),
      kernel_name_(std::move(kernel_name)),
      input_ce_bytes_(input_ce_bytes),
      index_(index) {}

std::optional<std::uint32_t> KernelNode::continuation_port() const {
  if (!ports_.empty() && ports_.front().kind == PortKind::Continuation) return 0;
  return std::nullopt;
}

// The continuation goes first (flushed before the children that return into it); the other
// ports keep the order of their edges.
Port KernelNode::add_port(PortTarget target) {
  target.edge = edges_++;
  const std::uint32_t edge = target.edge;
  if (target.kind == PortKind::Continuation) ports_.insert(ports_.begin(), std::move(target));
  else ports_.push_back(std::move(target));
  together_.clear();  // numbered for other ports
  lay_out_staging();
  return Port(*this, edge);
}

const std::string& PortTarget::target_name() const {
  return std::visit([](auto* n) -> const std::string& { return n->name(); }, node);
}

const PortTarget& Port::target() const {
  for (const auto& p : node_->ports_)
    if (p.edge == edge_) return p;
  throw GraphError(fmt::format("kernel node '{}' has no edge #{}", node_->name(), edge_));
}

std::uint32_t Port::index() const { return static_cast<std::uint32_t>(&target() - node_->ports_.data()); }

const std::string& Port::name() const { return target().name; }

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Unknown: return "unknown";
    case NodeKind::Plain: return "plain";
    case NodeKind::Yielding: return "yielding";
    case NodeKind::Continuation: return "continuation";
    case NodeKind::Group: return "group";
  }
  return "?";
}

std::uint32_t KernelNode::input_channel_ce_bytes() const {
  if (auto* c = std::get_if<ChannelNode*>(&input_)) return (*c)->ce_bytes();
  if (auto* s = std::get_if<ChannelStackNode*>(&input_)) return (*s)->ce_bytes();
  return 0;
}

std::string KernelNode::input_name() const {
  if (auto* c = std::get_if<ChannelNode*>(&input_)) return (*c)->name();
  if (auto* s = std::get_if<ChannelStackNode*>(&input_)) return (*s)->name();
  return {};
}

// ---------------------------------------------------------------------------------------------
namespace {

template <class Node>
void connect_input(Node& source, KernelNode& kernel, std::variant<std::monostate, ChannelNode*, ChannelStackNode*>& input,
                   KernelNode*& consumer) {
  if (consumer != nullptr && consumer != &kernel)
    throw GraphError(fmt::format("'{}' already feeds kernel node '{}'; it cannot also feed '{}': "
                                 "each channel is processed by exactly one kernel node",
                                 source.name(), consumer->name(), kernel.name()));
  if (!std::holds_alternative<std::monostate>(input))
    throw GraphError(fmt::format("kernel node '{}' already consumes '{}'; a kernel node has exactly one input",
                                 kernel.name(), kernel.input_name()));
  input = &source;
  consumer = &kernel;
}

// The thesis' done-count group of 64, or the largest divisor of the capacity below it, so any
// capacity a user gives is valid.
ChannelConfig node_channel_config(const std::string& name, std::uint32_t ce_bytes, std::uint32_t capacity) {
  ChannelConfig config{.name = name, .ce_bytes = ce_bytes, .capacity = capacity};
  config.done_group = std::min<std::uint32_t>(64, std::max<std::uint32_t>(capacity, 1));
  while (capacity % config.done_group != 0) --config.done_group;
  return config;
}

}  // namespace

void make_edge(ChannelNode& channel, KernelNode& kernel) {
  connect_input(channel, kernel, kernel.input_, channel.consumer_);
}

void make_edge(ChannelStackNode& stack, KernelNode& kernel) {
  connect_input(stack, kernel, kernel.input_, stack.consumer_);
}

Port make_edge(KernelNode& kernel, ChannelNode& channel, Spawns spawns) {
  return kernel.add_port({.node = &channel, .kind = PortKind::Spawns, .max_per_item = spawns.max_per_item,
                          .name = spawns.name.empty() ? channel.name() : std::move(spawns.name)});
}

Port make_edge(KernelNode& kernel, ChannelStackNode& stack, Children children) {
  return kernel.add_port({.node = &stack, .kind = PortKind::Children, .max_per_item = children.max_per_item,
                          .name = children.name.empty() ? stack.name() : std::move(children.name)});
}

Port make_edge(KernelNode& kernel, ChannelStackNode& stack, Continuation continuation) {
  return kernel.add_port({.node = &stack, .kind = PortKind::Continuation, .max_per_item = 1,
                          .name = continuation.name.empty() ? stack.name() : std::move(continuation.name)});
}

namespace {

// The one of `all` that to_string names `name`; std::invalid_argument naming `what` and the
// choices for any other.
template <class E>
E named(std::string_view name, std::initializer_list<E> all, const char* what) {
  std::string choices;
  std::size_t i = 0;
  for (const E e : all) {
    if (name == to_string(e)) return e;
    choices += i == 0 ? "" : i + 1 == all.size() ? " or " : ", ";
    choices += to_string(e);
    ++i;
  }
  throw std::invalid_argument(fmt::format("unknown {} '{}' ({})", what, name, choices));
}

// An option left at Auto set from environment variable `var`, where it is set; a GraphError
// naming the variable where its value names nothing.
template <class E>
void from_environment(E& option, const char* var, E (*parse)(std::string_view)) {
  const char* value = std::getenv(var);
  if (!value || !*value || option != E::Auto) return;
  try {
    option = parse(value);
  } catch (const std::invalid_argument& e) {
    throw GraphError(fmt::format("{}={}: {}", var, value, e.what()));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
Graph::Graph(const Runtime& runtime, GraphOptions options)
    : runtime_(runtime), options_(options), table_(runtime, options.max_channels) {
  if (options_.wg_size == 0 || options_.wg_size > runtime.caps().max_work_group_size)
    throw GraphError(fmt::format("work-group size {} is not supported by '{}' (1..{})", options_.wg_size,
                                 runtime.caps().name, runtime.caps().max_work_group_size));
  // The environment decides for a graph that leaves these to Auto (as for a compiled program).
  from_environment(options_.scheduler, "CHANFLOW_SCHEDULER", scheduler_from_string);
  from_environment(options_.spawn_staging, "CHANFLOW_SPAWN_STAGING", spawn_staging_from_string);
}

Graph::~Graph() { finish_scheduler_build(); }

void Graph::check_new_name(const std::string& name) const {
  if (name.empty()) throw GraphError("a node needs a name");
  auto taken = [&](const auto& nodes) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n->name() == name; });
  };
  if (taken(channels_) || taken(stacks_) || taken(kernels_))
    throw GraphError(fmt::format("duplicate node name '{}': node names must be unique", name));
}

ChannelNode& Graph::channel(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity) {
  check_new_name(name);
  auto config = node_channel_config(name, ce_bytes, capacity);
  config.check_frees = options_.check_frees;
  channels_.push_back(std::unique_ptr<ChannelNode>(new ChannelNode(std::move(name), table_, config)));
  return *channels_.back();
}

ChannelStackNode& Graph::channel_stack(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity_per_level,
                                      StackKind kind, std::uint32_t max_reservation) {
  check_new_name(name);
  auto config = node_channel_config(name, ce_bytes, capacity_per_level);
  config.max_reservation = max_reservation;
  config.check_frees = options_.check_frees;
  stacks_.push_back(std::unique_ptr<ChannelStackNode>(new ChannelStackNode(std::move(name), table_, config, kind)));
  return *stacks_.back();
}

KernelNode& Graph::kernel(std::string name, std::string kernel_name, std::uint32_t input_ce_bytes) {
  check_new_name(name);
  kernels_.push_back(std::unique_ptr<KernelNode>(new KernelNode(
      std::move(name), std::move(kernel_name), input_ce_bytes, static_cast<std::uint32_t>(kernels_.size()))));
  program_.reset();
  return *kernels_.back();
}

void Graph::add_source(std::string source) {
  sources_.push_back(std::move(source));
  program_.reset();
}

const char* to_string(Sweeps sweeps) {
  switch (sweeps) {
    case Sweeps::Auto: return "auto";
    case Sweeps::Claimed: return "claimed";
    case Sweeps::Planned: return "planned";
    case Sweeps::Off: return "host";
  }
  return "?";
}

const char* to_string(Scheduler scheduler) {
  switch (scheduler) {
    case Scheduler::Auto: return "auto";
    case Scheduler::Device: return "device";
    case Scheduler::Rounds: return "rounds";
  }
  return "?";
}

const char* to_string(SpawnStaging staging) {
  switch (staging) {
    case SpawnStaging::Auto: return "auto";
    case SpawnStaging::Private: return "private";
    case SpawnStaging::Local: return "local";
  }
  return "?";
}

SpawnStaging spawn_staging_from_string(std::string_view name) {
  return named(name, {SpawnStaging::Auto, SpawnStaging::Private, SpawnStaging::Local}, "spawn staging");
}

Scheduler scheduler_from_string(std::string_view name) {
  return named(name, {Scheduler::Auto, Scheduler::Device, Scheduler::Rounds}, "scheduler");
}

Sweeps sweeps_from_string(std::string_view name) {
  return named(name, {Sweeps::Auto, Sweeps::Claimed, Sweeps::Planned, Sweeps::Off}, "dispatch");
}

RunStats Graph::run(SchedulingPolicy& policy, const RunOptions& options) {
  if (!unfinished_.empty())
    throw RunError(fmt::format("this graph's last run did not finish ({}): its channels may still hold CEs; make a "
                               "new Graph to run again",
                               unfinished_));
  // A device policy's OpenCL C is part of the program (the scheduler kernel calls it).
  const auto form = policy.device_form();
  if (form.kind == SchedulingPolicy::DeviceForm::Kind::Source) {
    device_policy_ = form.source;
    const auto* device_only = dynamic_cast<const DevicePolicy*>(&policy);
    device_policy_only_ = device_only && !device_only->has_host_form();
  }
  validate();
  // The aggregator, its kernels and pools outlive a run; a graph whose program was rebuilt (edges
  // added since) gets a new one.
  const cl::Program& built = program();
  if (!aggregator_ || aggregator_->program()() != built()) aggregator_ = std::make_unique<Aggregator>(*this, built);
  aggregator_->start_run(policy, options);  // nothing has changed on the device if this throws
  ++runs_;
  start_scheduler_build(0);  // a graph's second run
  try {
    RunStats stats = aggregator_->run();
    start_scheduler_build(stats.wall_ms);  // a run worth moving to the device scheduler
    return stats;
  } catch (const std::exception& e) {
    unfinished_ = e.what();
    throw;
  }
}

RunStats Graph::run() {
  Greedy greedy;
  return run(greedy);
}

std::string Graph::to_dot() const {
  std::ostringstream out;
  out << "digraph chanflow {\n  rankdir=LR;\n";
  for (const auto& c : channels_)
    out << fmt::format("  \"{}\" [shape=box, label=\"{}\\n{} B x {}\"];\n", c->name(), c->name(), c->ce_bytes(), c->capacity());
  for (const auto& s : stacks_)
    out << fmt::format("  \"{}\" [shape=box3d, style=dashed, label=\"{}\\n{} stack: {} B x {} per level\"];\n",
                       s->name(), s->name(), s->kind() == StackKind::Continuations ? "continuation" : "task",
                       s->ce_bytes(), s->capacity_per_level());
  for (const auto& k : kernels_) {
    out << fmt::format("  \"{}\" [shape=ellipse, label=\"{}\\n{}(){}\"];\n", k->name(), k->name(), k->kernel_name(),
                       k->kind() == NodeKind::Unknown ? "" : std::string(" ") + to_string(k->kind()));
    if (k->has_input()) out << fmt::format("  \"{}\" -> \"{}\";\n", k->input_name(), k->name());
    for (std::size_t p = 0; p < k->ports().size(); ++p) {
      const auto& port = k->ports()[p];
      const std::string& target = port.target_name();
      std::string label = fmt::format("port {} '{}': <= {}/item", p, port.name, port.max_per_item);
      if (port.kind == PortKind::Children) label += ", children (depth+1)";
      if (port.kind == PortKind::Continuation) label += ", continuation (same depth)";
      out << fmt::format("  \"{}\" -> \"{}\" [label=\"{}\"];\n", k->name(), target, label);
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace chanflow
