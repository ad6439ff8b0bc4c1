// What the aggregator reports when a run cannot go on: device-side errors by node name, no
// progress (which channels hold work and why they are stuck), lost work, and end-of-run checks.
#include "aggregator.hpp"
#include "chanflow/device_heap.hpp"

#include <fmt/format.h>

namespace chanflow {

namespace {

std::string describe(const chanflow_status& s, const Graph& g) {
  const std::string node = s.node < g.kernels().size() ? g.kernels()[s.node]->name() : fmt::format("#{}", s.node);
  switch (s.code) {
    case CHANFLOW_ERR_CE_SIZE:
      return fmt::format("kernel node '{}': its body's CE type is {} bytes but its input channel holds {}-byte CEs",
                         node, s.extra, s.detail);
    case CHANFLOW_ERR_SPAWN_LIMIT:
      return fmt::format("kernel node '{}' spawned more than the {} CE(s) per item its edge on port {} declares",
                         node, s.extra, s.detail);
    case CHANFLOW_ERR_SPAWN_SIZE:
      return fmt::format("kernel node '{}' spawned a value whose size differs from port {}'s {}-byte CEs", node,
                         s.detail, s.extra);
    case CHANFLOW_ERR_BAD_PORT:
      return fmt::format("kernel node '{}' spawned on port {}, but it has {} output port(s)", node, s.detail, s.extra);
    case CHANFLOW_ERR_CHANNEL_FULL:
      return fmt::format("kernel node '{}': port {}'s channel refused a reservation the aggregator had admitted "
                         "(a non-yielding node; are other producers writing to it?)",
                         node, s.detail);
    case CHANFLOW_ERR_NODE_KIND:
      return s.extra ? fmt::format("kernel node '{}' is a CHANFLOW_CONTINUATION_NODE but its input is not a continuation stack", node)
                     : fmt::format("kernel node '{}' consumes a continuation stack: define its kernel with "
                                   "CHANFLOW_CONTINUATION_NODE", node);
    case CHANFLOW_ERR_NO_CONTINUATION:
      return fmt::format("kernel node '{}' spawned a child returning into its continuation (or the continuation "
                         "itself), but it has no Continuation port",
                         node);
    case CHANFLOW_ERR_SCRATCH:
      if (s.extra == 0)
        return fmt::format("kernel node '{}' took a task scratch block (chanflow_task_scratch) at level {}, but its "
                           "continuation stack has no frame scratch (set_frame_scratch with taken_by_tasks)",
                           node, s.detail);
      return fmt::format("kernel node '{}' found the frame scratch pool of level {} empty (all {} blocks taken): more "
                         "frames were live at that level than FrameScratch::max_frames allows",
                         node, s.detail, s.extra);
    case CHANFLOW_ERR_YIELD_SPACE:
      return fmt::format("kernel node '{}' wrote more restart contexts than its dispatch had items", node);
    case CHANFLOW_ERR_YIELD_STATE:
      return fmt::format("internal error: kernel node '{}' yielded at level {}, but its input has no yield state to "
                         "keep the task's spawns in",
                         node, s.detail);
    case CHANFLOW_ERR_GROUP_SPAWN:
      return fmt::format("kernel node '{}' is a work-group task, and a work-item other than its leader (work-item 0) "
                         "spawned on port {}: only the leader spawns",
                         node, s.detail);
    case CHANFLOW_ERR_HEAP_FULL: {
      const std::uint64_t bytes = (std::uint64_t{s.extra} << 32) | s.detail;
      const DeviceHeap* heap = g.heap();
      return fmt::format("kernel node '{}' asked the device heap for {} bytes, and the heap ({:.4g} MiB) had no "
                         "block left that large: raise its size (RunSettings::heap_bytes: CHANFLOW_HEAP, --heap with "
                         "chanflow run)",
                         node, bytes, heap ? static_cast<double>(heap->bytes()) / (1 << 20) : 0.0);
    }
    case CHANFLOW_ERR_HEAP_FREE:
      return fmt::format("kernel node '{}' freed {:#x}, which the device heap did not hand out or took back already "
                         "(freed twice, memory of the host, or a pointer into a block)",
                         node, (std::uint64_t{s.extra} << 32) | s.detail);
    case CHANFLOW_ERR_NO_HEAP:
      return fmt::format("kernel node '{}' allocated device memory, but its graph has no device heap (Graph::set_heap)",
                         node);
    case CHANFLOW_ERR_HELPER_STACK: {
      const auto& names = g.recursive_functions();
      const std::string function = s.extra < names.size() ? names[s.extra] : fmt::format("#{}", s.extra);
      const DeviceHeap* heap = g.heap();
      return fmt::format("kernel node '{}' ran '{}' {} calls deep, and the device heap ({:.4g} MiB), which holds the "
                         "older frames of its explicit stack (OpenCL C has no recursion), had no room for more: raise "
                         "the heap's size (RunSettings::heap_bytes: CHANFLOW_HEAP, --heap with chanflow run), or check "
                         "that '{}' reaches its base case",
                         node, function, s.detail, heap ? static_cast<double>(heap->bytes()) / (1 << 20) : 0.0, function);
    }
    default:
      return fmt::format("kernel node '{}': device error code {}", node, s.code);
  }
}

}  // namespace

void Aggregator::check_device_status() const {
  chanflow_status s{};
  rt_.svm_read(&s, status_.get(), sizeof s);
  check_status(s);
}

void Aggregator::check_status(const chanflow_status& s) const {
  if (s.code == CHANFLOW_ERR_ASSERT) {
    const auto& assertions = graph_.assertions();
    throw AssertionError(s.detail < assertions.size() ? assertions[s.detail]
                                                      : fmt::format("assertion #{} failed (the graph names none)", s.detail));
  }
  if (s.code == CHANFLOW_ERR_EXIT) throw ExitRequest(static_cast<int>(s.detail), s.extra != 0);
  if (s.code != CHANFLOW_ERR_NONE) throw RunError("device-side error: " + describe(s, graph_));
}

// Every task a sweep counted as resumable has run again by the end (an invariant: a count left
// over means a resumed task did not leave it, and within the run the planner and prepaying
// would have stopped charging continuation room at that level).
void Aggregator::check_resumable_counts() const {
  std::vector<std::uint32_t> counts(resumable_.size() / sizeof(std::uint32_t));
  rt_.svm_read(counts.data(), resumable_.get(), resumable_.size());
  check_resumable(counts);
}

void Aggregator::check_resumable(const std::vector<std::uint32_t>& counts) const {
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0)
      throw RunError(fmt::format("internal error: level {} of channel stack '{}' still counts {} resumable task(s) "
                                 "at the end of the run",
                                 i % CHANFLOW_SWEEP_MAX_LEVELS, graph_.stacks()[i / CHANFLOW_SWEEP_MAX_LEVELS]->name(),
                                 counts[i]));
}

// Every frame gave its scratch block back (an invariant: a block still taken at quiescence
// belongs to a frame whose continuation never ran).
// Counted on the device (readback.cl): one launch and a read of a count per pool.
void Aggregator::check_scratch_released() {
  std::vector<std::uint32_t> taken;
  if (!queue_scratch_census(taken)) return;
  rt_.finish();
  check_scratch_census(taken);
}

bool Aggregator::queue_scratch_census(std::vector<std::uint32_t>& taken) {
  census_pools();
  taken.clear();
  if (census_pool_list_.empty()) return false;
  const std::size_t pools = census_pool_list_.size();
  ensure<std::uint64_t>(census_pools_, pools);
  ensure<std::uint32_t>(census_taken_, pools);
  rt_.svm_write_async(census_pools_.get(), census_pool_list_.data(), pools * sizeof(std::uint64_t));
  launch_readback(census_pools_.get(), 0, census_pools_.get(), pools, census_taken_.get());  // the census alone
  taken.assign(pools, 0u);
  rt_.svm_read_async(taken.data(), census_taken_.get(), pools * sizeof(std::uint32_t));  // after the launch
  return true;
}

void Aggregator::check_scratch_census(const std::vector<std::uint32_t>& taken) const {
  for (std::size_t i = 0; i < taken.size() && i < census_levels_.size(); ++i)
    if (taken[i] != 0)
      throw RunError(fmt::format("internal error: level {} of channel stack '{}' still has {} frame scratch block(s) "
                                 "taken at the end of the run",
                                 census_levels_[i].second, census_levels_[i].first->name(), taken[i]));
}

std::vector<std::uint64_t> Aggregator::fingerprint() const {
  std::vector<std::uint64_t> f;
  f.reserve(watched_.size() * 5);
  for (const Watched& s : watched_) {
    const auto& h = s.channel->counters();
    f.insert(f.end(), {h.data_head, h.data_tail, h.ctrl_head, h.ctrl_published, s.blocked.size()});
  }
  return f;
}

void Aggregator::no_progress(Stall why) const {
  std::string msg = fmt::format("no progress possible: work remains but no dispatch can be made (policy '{}'):",
                                policy_->name());
  for (const auto& v : views_) {
    if (v.ready == 0 && v.blocked == 0) continue;
    const Watched& w = watched_[v.id];
    const auto& h = w.channel->counters();
    msg += fmt::format("\n  - channel '{}': {} ready, {} blocked context(s), consumer '{}' [control head {}, published "
                       "{}, reserved {}; data head {}, tail {}, free {}]",
                       v.name, v.ready, v.blocked, v.consumer, h.ctrl_head, h.ctrl_published, h.ctrl_reserve_tail,
                       h.data_head, h.data_tail, static_cast<std::int64_t>(h.data_free));
    if (v.ready > 0 && v.admissible == 0) {
      for (std::uint32_t p = 0; p < w.consumer->ports().size(); ++p) {
        const auto& port = w.consumer->ports()[p];
        const std::int64_t free = port_free(port, w.level);
        if (free < static_cast<std::int64_t>(port.max_per_item))
          msg += fmt::format("; blocked on port {} into '{}' (depth {}), which has {} free slot(s) but needs {} per CE",
                             p, port.target_name(), w.level + port.level_delta(), std::max<std::int64_t>(free, 0),
                             port.max_per_item);
      }
    } else if (v.blocked > 0 && v.restartable == 0) {
      const auto& b = w.blocked.front();
      const auto& port = w.consumer->ports()[b.port];
      msg += fmt::format("; yielded work-groups wait on port {} into '{}' (depth {}), which has {} free slot(s), "
                         "less than one work-group's request ({})",
                         b.port, port.target_name(), w.level + port.level_delta(),
                         std::max<std::int64_t>(port_free(port, w.level), 0), std::uint64_t{wg_} * port.max_per_item);
    } else {
      switch (why) {
        case Stall::SweepsFinishedNothing:
          msg += fmt::format("; {} admissible, but two device sweeps in a row finished none of it", v.admissible);
          break;
        case Stall::NothingChanged:
          msg += fmt::format("; {} admissible and {} restartable, but {} rounds in a row changed no channel (every "
                             "dispatch was refused or yielded again)",
                             v.admissible, v.restartable, kUnchangedRounds);
          break;
        case Stall::NothingDispatchable:
          msg += fmt::format("; {} admissible and {} restartable, but the policy dispatched nothing", v.admissible,
                             v.restartable);
          break;
      }
    }
  }
  // What holds the space the blocked ports wait for: CEs allocated that are not ready (frames
  // waiting for children, CEs reserved and never published, or dequeued and never freed).
  for (const Watched& w : watched_) {
    const auto& h = w.channel->counters();
    if (h.ctrl_published != h.ctrl_head || !w.blocked.empty() || h.data_tail == h.data_head) continue;
    msg += fmt::format("\n  - channel '{}': {} CE(s) allocated, none ready [control head {}, published {}, reserved {}; "
                       "data head {}, tail {}, free {}]",
                       w.channel->config().name, h.data_tail - h.data_head, h.ctrl_head, h.ctrl_published, h.ctrl_reserve_tail,
                       h.data_head, h.data_tail, static_cast<std::int64_t>(h.data_free));
  }
  throw RunError(msg);
}

// Quiescent, yet CEs are still allocated: reserved and never enqueued, or dequeued and never
// freed. With join counters this is a continuation frame whose children never all returned.
void Aggregator::lost_work() const {
  check_device_status();
  std::string msg = "the run went quiet with CEs still allocated (they would never run):";
  for (const Watched& s : watched_) {
    const auto& h = s.channel->counters();
    if (h.data_tail == h.data_head) continue;
    msg += fmt::format("\n  - channel '{}': {} CE(s) allocated, none ready", s.channel->config().name,
                       h.data_tail - h.data_head);
    if (s.stack && s.stack->kind() == StackKind::Continuations)
      msg += " (continuation frames whose children did not all return: does every task reach its return?)";
  }
  throw RunError(msg);
}

}  // namespace chanflow
