// Graph construction, edges, validation and DOT output; run() hands over to the Aggregator.
#include "chanflow/graph.hpp"

#include "aggregator.hpp"
#include "chanflow_scheduler_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

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
  while (levels_.size() <= d) {
    ChannelConfig c = config_;
    c.name = fmt::format("{}[{}]", name_, levels_.size());
    levels_.emplace_back(table_, c);
  }
  return levels_[d];
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
  for (std::uint32_t p = 0; p < ports_.size(); ++p)
    if (auto* s = std::get_if<ChannelStackNode*>(&ports_[p].node);
        s && (*s)->kind() == StackKind::Continuations && ports_[p].level_delta == 0)
      return p;
  return std::nullopt;
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

void make_edge(KernelNode& kernel, ChannelNode& channel, std::uint32_t max_per_item) {
  kernel.ports_.push_back({&channel, 0, max_per_item});
}

void make_edge(KernelNode& kernel, ChannelStackNode& stack, int level_delta, std::uint32_t max_per_item) {
  kernel.ports_.push_back({&stack, level_delta, max_per_item});
}

// ---------------------------------------------------------------------------------------------
Graph::Graph(const Runtime& runtime, GraphOptions options)
    : runtime_(runtime), options_(options), table_(runtime, options.max_channels) {
  if (options_.wg_size == 0 || options_.wg_size > runtime.caps().max_work_group_size)
    throw GraphError(fmt::format("work-group size {} is not supported by '{}' (1..{})", options_.wg_size,
                                 runtime.caps().name, runtime.caps().max_work_group_size));
}

Graph::~Graph() = default;

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
  const auto config = node_channel_config(name, ce_bytes, capacity);
  channels_.push_back(std::unique_ptr<ChannelNode>(new ChannelNode(std::move(name), table_, config)));
  return *channels_.back();
}

ChannelStackNode& Graph::channel_stack(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity_per_level,
                                      StackKind kind) {
  check_new_name(name);
  const auto config = node_channel_config(name, ce_bytes, capacity_per_level);
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

void Graph::validate() const {
  std::vector<std::string> problems;
  const std::uint32_t wg = options_.wg_size;
  for (const auto& c : channels_)
    if (!c->consumer())
      problems.push_back(fmt::format("channel '{}' has no consumer: connect it to the kernel node that processes it", c->name()));
  for (const auto& s : stacks_) {
    if (!s->consumer())
      problems.push_back(fmt::format("channel stack '{}' has no consumer: connect it to the kernel node that processes it", s->name()));
    if (s->kind() == StackKind::Continuations && s->ce_bytes() < sizeof(chanflow_frame))
      problems.push_back(fmt::format("continuation stack '{}' holds {}-byte CEs; a continuation CE must start with "
                                     "chanflow_frame ({} bytes)",
                                     s->name(), s->ce_bytes(), sizeof(chanflow_frame)));
  }
  for (const auto& k : kernels_) {
    if (!k->has_input()) {
      problems.push_back(fmt::format("kernel node '{}' has no input: make an edge from the channel it consumes", k->name()));
    } else {
      const std::uint32_t in_bytes = k->input_channel_ce_bytes();
      if (in_bytes != k->input_ce_bytes())
        problems.push_back(fmt::format("kernel node '{}' takes {}-byte CEs but its input '{}' holds {}-byte CEs",
                                       k->name(), k->input_ce_bytes(), k->input_name(), in_bytes));
    }
    if (k->kernel_name().empty()) problems.push_back(fmt::format("kernel node '{}' names no kernel", k->name()));
    if (k->ports().size() > CHANFLOW_MAX_PORTS)
      problems.push_back(fmt::format("kernel node '{}' has {} output ports; at most {} are supported", k->name(),
                                     k->ports().size(), CHANFLOW_MAX_PORTS));
    if (k->is_yielding() && k->input_ce_bytes() < sizeof(chanflow_task))
      problems.push_back(fmt::format("yielding kernel node '{}' takes {}-byte CEs; its CE type must start with "
                                     "chanflow_task ({} bytes)",
                                     k->name(), k->input_ce_bytes(), sizeof(chanflow_task)));
    std::size_t continuation_ports = 0;
    for (const auto& port : k->ports())
      if (auto* s = std::get_if<ChannelStackNode*>(&port.node);
          s && (*s)->kind() == StackKind::Continuations && port.level_delta == 0) {
        ++continuation_ports;
        if (port.max_per_item != 1)
          problems.push_back(fmt::format("kernel node '{}' may spawn {} continuations per task into '{}'; a task "
                                         "has one (max_per_item 1)",
                                         k->name(), port.max_per_item, (*s)->name()));
      }
    if (continuation_ports > 1)
      problems.push_back(fmt::format("kernel node '{}' has {} ports into continuation stacks at its own depth; "
                                     "a task has at most one continuation",
                                     k->name(), continuation_ports));
    for (std::size_t p = 0; p < k->ports().size(); ++p) {
      const auto& port = k->ports()[p];
      const auto [target, capacity, max_reservation] = std::visit(
          [](auto* n) -> std::tuple<std::string, std::uint32_t, std::uint32_t> {
            if constexpr (std::is_same_v<decltype(n), ChannelNode*>)
              return {n->name(), n->capacity(), n->channel().config().max_reservation};
            else
              return {n->name(), n->capacity_per_level(), n->level(0).config().max_reservation};
          },
          port.node);
      const auto request = std::uint64_t{wg} * port.max_per_item;
      if (port.max_per_item == 0)
        problems.push_back(fmt::format("kernel node '{}' port {} (to '{}') declares 0 CEs per item", k->name(), p, target));
      if (request > max_reservation)
        problems.push_back(fmt::format(
            "channel '{}' (capacity {}, largest reservation {}) cannot hold one work-group's request from "
            "kernel node '{}': {} work-items x {} CEs = {}",
            target, capacity, max_reservation, k->name(), wg, port.max_per_item, request));
      const bool into_stack = std::holds_alternative<ChannelStackNode*>(port.node);
      if (into_stack && port.level_delta != 0 && port.level_delta != 1)
        problems.push_back(fmt::format("kernel node '{}' port {} targets level delta {} of '{}'; only 0 "
                                       "(same depth) and +1 (children) are supported",
                                       k->name(), p, port.level_delta, target));
      if (!into_stack && port.level_delta != 0)
        problems.push_back(fmt::format("kernel node '{}' port {} gives a level to the plain channel '{}'", k->name(), p, target));
    }
  }
  if (kernels_.empty()) problems.emplace_back("the graph has no kernel node");
  if (sources_.empty()) problems.emplace_back("the graph has no OpenCL C source (Graph::add_source)");
  if (!problems.empty()) {
    std::string msg = "malformed channel-flow graph:";
    for (const auto& p : problems) msg += "\n  - " + p;
    throw GraphError(msg);
  }
}

const cl::Program& Graph::program() {
  if (program_) return *program_;
  // Private staging is sized for the widest node: every port's declared spawns per item.
  std::uint32_t spawn_words = 1, staged_ces = 1;
  for (const auto& k : kernels_) {
    std::uint32_t words = 0, ces = 0;
    for (const auto& port : k->ports()) {
      words += port.max_per_item * std::visit([](auto* n) { return n->ce_bytes(); }, port.node) / 4;
      ces += port.max_per_item;
    }
    spawn_words = std::max(spawn_words, words);
    staged_ces = std::max(staged_ces, ces);
  }
  std::vector<std::string_view> sources{scheduler_cl::node_layout_h(), scheduler_cl::kernel_node_cl()};
  for (const auto& s : sources_) sources.push_back(s);
  program_ = build_channel_program(runtime_, sources,
                                   {.wg_size = options_.wg_size,
                                    .scan = options_.scan,
                                    .extra = fmt::format("-DCHANFLOW_SPAWN_WORDS={} -DCHANFLOW_STAGED_CES={}",
                                                         spawn_words, staged_ces)});
  return *program_;
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

Sweeps sweeps_from_string(std::string_view name) {
  for (Sweeps s : {Sweeps::Auto, Sweeps::Claimed, Sweeps::Planned, Sweeps::Off})
    if (name == to_string(s)) return s;
  throw std::invalid_argument(fmt::format("unknown dispatch '{}' (auto, claimed, planned or host)", name));
}

RunStats Graph::run(SchedulingPolicy& policy, const RunOptions& options) {
  validate();
  Aggregator aggregator(*this, policy, options);
  return aggregator.run();
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
                       k->is_yielding() ? " yields" : "");
    if (k->has_input()) out << fmt::format("  \"{}\" -> \"{}\";\n", k->input_name(), k->name());
    for (std::size_t p = 0; p < k->ports().size(); ++p) {
      const auto& port = k->ports()[p];
      const std::string target = std::visit([](auto* n) { return n->name(); }, port.node);
      std::string label = fmt::format("port {}: <= {}/item", p, port.max_per_item);
      if (std::holds_alternative<ChannelStackNode*>(port.node))
        label += port.level_delta ? ", depth+1" : ", same depth";
      out << fmt::format("  \"{}\" -> \"{}\" [label=\"{}\"];\n", k->name(), target, label);
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace chanflow
