// Graph construction, edges, validation and DOT output; run() hands over to the Aggregator.
#include "chanflow/graph.hpp"

#include "aggregator.hpp"
#include "chanflow_scheduler_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cctype>
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
    levels_.emplace_back(table_, c);
    if (scratch_) make_scratch_pool(static_cast<std::uint32_t>(levels_.size() - 1));
  }
  making_levels_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
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
  auto config = node_channel_config(name, ce_bytes, capacity);
  config.check_frees = options_.check_frees;
  channels_.push_back(std::unique_ptr<ChannelNode>(new ChannelNode(std::move(name), table_, config)));
  return *channels_.back();
}

ChannelStackNode& Graph::channel_stack(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity_per_level,
                                      StackKind kind) {
  check_new_name(name);
  auto config = node_channel_config(name, ce_bytes, capacity_per_level);
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

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Each node macro leaves a marker kernel named after the node's kernel (see cl/node_macros.cl).
NodeKind kind_in(const std::set<std::string>& kernels, const std::string& name) {
  if (kernels.count(name + "__chanflow_plain_node")) return NodeKind::Plain;
  if (kernels.count(name + "__chanflow_yielding_node")) return NodeKind::Yielding;
  if (kernels.count(name + "__chanflow_continuation_node")) return NodeKind::Continuation;
  return NodeKind::Unknown;
}

}  // namespace

std::string Graph::port_defines(std::vector<std::string>& problems) const {
  // A kernel's port names and their indices, from the first node that runs it: a node sharing
  // the kernel must have the same list, or CHANFLOW_PORT(kernel, x) would name another node's port.
  std::map<std::string, std::pair<const KernelNode*, std::vector<std::string>>> layout;
  for (const auto& k : kernels_) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    bool usable = is_identifier(k->kernel_name());  // else reported as a kernel problem
    for (const auto& port : k->ports()) {
      if (!is_identifier(port.name)) {
        problems.push_back(fmt::format("kernel node '{}': port name '{}' (to '{}') is not an OpenCL C identifier; "
                                       "give the edge a .name",
                                       k->name(), port.name, port.target_name()));
        usable = false;
      } else if (!seen.insert(port.name).second) {
        problems.push_back(fmt::format("kernel node '{}' has two ports named '{}'; give the edges distinct .name values",
                                       k->name(), port.name));
        usable = false;
      }
      names.push_back(port.name);
    }
    if (!usable) continue;
    auto [it, fresh] = layout.emplace(k->kernel_name(), std::pair(k.get(), names));
    if (!fresh && it->second.second != names)
      problems.push_back(fmt::format("kernel '{}' runs in nodes '{}' (ports {}) and '{}' (ports {}); nodes sharing a "
                                     "kernel need the same port names in the same order",
                                     k->kernel_name(), it->second.first->name(), fmt::join(it->second.second, ", "),
                                     k->name(), fmt::join(names, ", ")));
  }
  std::string out = "/* Port indices by name, generated by the graph: CHANFLOW_PORT(kernel, port). */\n";
  for (const auto& [kernel, entry] : layout)
    for (std::size_t p = 0; p < entry.second.size(); ++p)
      out += fmt::format("#define chanflow_port__{}__{} {}u\n", kernel, entry.second[p], p);
  return out;
}

void Graph::validate() {
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
    if (!is_identifier(k->kernel_name()))
      problems.push_back(fmt::format("kernel node '{}' names kernel '{}', which is not an OpenCL C identifier",
                                     k->name(), k->kernel_name()));
    if (k->ports().size() > CHANFLOW_MAX_PORTS)
      problems.push_back(fmt::format("kernel node '{}' has {} output ports; at most {} are supported", k->name(),
                                     k->ports().size(), CHANFLOW_MAX_PORTS));
    const auto continuations = std::count_if(k->ports().begin(), k->ports().end(),
                                             [](const PortTarget& p) { return p.kind == PortKind::Continuation; });
    if (continuations > 1)
      problems.push_back(fmt::format("kernel node '{}' has {} continuation ports; a task has at most one continuation",
                                     k->name(), continuations));
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
        problems.push_back(fmt::format("kernel node '{}' port '{}' (to '{}') declares 0 CEs per item", k->name(), port.name, target));
      if (request > max_reservation)
        problems.push_back(fmt::format(
            "channel '{}' (capacity {}, largest reservation {}) cannot hold one work-group's request from "
            "kernel node '{}': {} work-items x {} CEs = {}",
            target, capacity, max_reservation, k->name(), wg, port.max_per_item, request));
      const auto* stack = std::get_if<ChannelStackNode*>(&port.node);
      if (port.kind == PortKind::Children && (*stack)->kind() != StackKind::Tasks)
        problems.push_back(fmt::format("kernel node '{}' spawns children into '{}', a continuation stack; children go "
                                       "into a task stack",
                                       k->name(), target));
      if (port.kind == PortKind::Continuation && (*stack)->kind() != StackKind::Continuations)
        problems.push_back(fmt::format("kernel node '{}' has a continuation port into '{}', which is a task stack; make "
                                       "it with StackKind::Continuations",
                                       k->name(), target));
    }
  }
  if (kernels_.empty()) problems.emplace_back("the graph has no kernel node");
  if (sources_.empty()) problems.emplace_back("the graph has no OpenCL C source (Graph::add_source)");
  port_defines(problems);

  // What each node's kernel is, from the program (a failed build throws with its log).
  if (!kernels_.empty() && !sources_.empty()) {
    const cl::Program* built = nullptr;
    try {
      built = &program();
    } catch (const OpenCLError& e) {
      if (problems.empty()) throw;  // the build log is the whole story
      // The problems found so far may be why it does not build: report them with the log.
      std::string msg = "malformed channel-flow graph:";
      for (const auto& p : problems) msg += "\n  - " + p;
      throw GraphError(fmt::format("{}\n  - and its program does not build: {}\n{}", msg, e.what(), e.build_log()));
    }
    std::set<std::string> defined;
    std::istringstream names(built->getInfo<CL_PROGRAM_KERNEL_NAMES>());
    for (std::string name; std::getline(names, name, ';');) defined.insert(name);
    for (const auto& k : kernels_) {
      k->kind_ = kind_in(defined, k->kernel_name());
      const bool from_frames = k->has_input() && std::holds_alternative<ChannelStackNode*>(k->input_) &&
                               std::get<ChannelStackNode*>(k->input_)->kind() == StackKind::Continuations;
      if (k->kind_ == NodeKind::Unknown) {
        problems.push_back(defined.count(k->kernel_name())
                               ? fmt::format("kernel node '{}': kernel '{}' was not made with a node macro "
                                             "(CHANFLOW_KERNEL_NODE, CHANFLOW_YIELDING_KERNEL_NODE or "
                                             "CHANFLOW_CONTINUATION_NODE)",
                                             k->name(), k->kernel_name())
                               : fmt::format("kernel node '{}' runs kernel '{}', which the graph's sources do not define",
                                             k->name(), k->kernel_name()));
        continue;
      }
      if (k->kind_ == NodeKind::Yielding && k->input_ce_bytes() < sizeof(chanflow_task))
        problems.push_back(fmt::format("yielding kernel node '{}' takes {}-byte CEs; its CE type must start with "
                                       "chanflow_task ({} bytes)",
                                       k->name(), k->input_ce_bytes(), sizeof(chanflow_task)));
      if (from_frames && k->kind_ != NodeKind::Continuation)
        problems.push_back(fmt::format("kernel node '{}' consumes the continuation stack '{}': define its kernel with "
                                       "CHANFLOW_CONTINUATION_NODE",
                                       k->name(), k->input_name()));
      if (!from_frames && k->kind_ == NodeKind::Continuation && k->has_input())
        problems.push_back(fmt::format("kernel node '{}' is a CHANFLOW_CONTINUATION_NODE but its input '{}' is not a "
                                       "continuation stack",
                                       k->name(), k->input_name()));
      if (k->continuation_port() && k->kind_ == NodeKind::Plain)
        problems.push_back(fmt::format("kernel node '{}' has a continuation port, but a CHANFLOW_KERNEL_NODE cannot "
                                       "make a frame ready: use CHANFLOW_YIELDING_KERNEL_NODE",
                                       k->name()));
    }
  }
  if (!problems.empty()) {
    std::string msg = "malformed channel-flow graph:";
    for (const auto& p : problems) msg += "\n  - " + p;
    throw GraphError(msg);
  }
  // Where a yielded task keeps what it has not flushed (scheduler/cl/yield.cl).
  for (const auto& k : kernels_) {
    if (!k->is_yielding()) continue;
    if (auto* c = std::get_if<ChannelNode*>(&k->input_)) (*c)->set_yield_state(k->yield_state_bytes());
    if (auto* st = std::get_if<ChannelStackNode*>(&k->input_)) (*st)->set_yield_state(k->yield_state_bytes());
  }
}

const cl::Program& Graph::program() {
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
  std::string extra = fmt::format("-DCHANFLOW_SPAWN_WORDS={} -DCHANFLOW_STAGED_CES={}", spawn_words, staged_ces);
  // Floating-point atomic addition: the device's own where it has one (scratch.cl).
  const auto& caps = runtime_.caps();
  if (caps.fp32_atomic_add) extra += " -DCHANFLOW_NATIVE_FP32_ATOMIC_ADD";
  if (caps.fp64_atomic_add) extra += " -DCHANFLOW_NATIVE_FP64_ATOMIC_ADD";
  if (caps.fp32_atomic_add || caps.fp64_atomic_add) extra += " -cl-std=CL2.0";  // for atomic_float and atomic_double
  std::vector<std::string> ignored;  // validate() reports them
  std::string defines = port_defines(ignored);
  // Built again when edges changed what the program is built with (names or staging sizes).
  if (program_ && defines == port_defines_ && extra == build_extra_) return *program_;
  port_defines_ = std::move(defines);
  build_extra_ = extra;
  // The kernel-node convention, one concern per file, in dependency order; then the ports' names.
  std::vector<std::string_view> sources{scheduler_cl::node_layout_h(), scheduler_cl::spawn_cl(),
                                        scheduler_cl::scratch_cl(),    scheduler_cl::flush_cl(),      scheduler_cl::join_cl(),
                                        scheduler_cl::yield_cl(),      scheduler_cl::sweep_cl(),
                                        scheduler_cl::plan_cl(),       scheduler_cl::node_macros_cl(),
                                        port_defines_};
  for (const auto& s : sources_) sources.push_back(s);
  try {
    program_.reset();
    program_ = build_channel_program(runtime_, sources,
                                     {.wg_size = options_.wg_size, .scan = options_.scan, .extra = build_extra_});
  } catch (const OpenCLError& e) {
    if (e.build_log().find("chanflow_port__") == std::string::npos) throw;
    throw OpenCLError(e.call() + " (a CHANFLOW_PORT(kernel, port) names a port that no node of this graph running "
                                 "that kernel has: a port is named by its edge's .name, by default the target node's "
                                 "name; every kernel using CHANFLOW_PORT needs its node in the graph)",
                      e.code(), e.build_log());
  }
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
  if (!unfinished_.empty())
    throw RunError(fmt::format("this graph's last run did not finish ({}): its channels may still hold CEs; make a "
                               "new Graph to run again",
                               unfinished_));
  validate();
  // The aggregator, its kernels and pools outlive a run; a graph whose program was rebuilt (edges
  // added since) gets a new one.
  const cl::Program& built = program();
  if (!aggregator_ || aggregator_->program()() != built()) aggregator_ = std::make_unique<Aggregator>(*this, built);
  aggregator_->start_run(policy, options);  // nothing has changed on the device if this throws
  try {
    return aggregator_->run();
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
