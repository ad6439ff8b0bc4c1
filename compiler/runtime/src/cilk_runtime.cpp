// The runtime of compiled Cilk programs (see cilk_runtime.hpp and cilk_host.h): one device per
// process or a set of them (CHANFLOW_DEVICES), main's heap as SVM on the first, and per Cilk
// function a graph built by its first call and run again by the next ones (a copy per device).
#include "chanflow/cilk_runtime.hpp"

#include "chanflow/cilk_host.h"
#include "chanflow/device_set.hpp"
#include "chanflow/work_router.hpp"
#include "host_blocks.hpp"
#include "process.hpp"
#include "run_report.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#undef malloc
#undef calloc
#undef realloc
#undef free

namespace chanflow::cilk {
namespace {

std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

[[noreturn]] void fail(const std::string& message) {
  fmt::print(stderr, "chanflow: {}\n", message);
  std::exit(1);
}

// The devices and the heap main allocates from. The heap's blocks are coarse-grain SVM of the
// first device: mapped for the host between calls, unmapped while a graph runs (where the device
// lacks fine-grain SVM). Across devices (CHANFLOW_DEVICES), each call runs a copy of its graph per
// device and a router moves the tasks of functions whose tasks carry no address (chanflowc says
// which: ProgramGraph::movable) to devices that run dry; what main allocates, and the globals it
// shares with device code, are the first device's, where every other task stays.
class Process {
 public:
  static Process& get() {
    static Process process;
    return process;
  }

  void use(const Runtime& runtime, const RunSettings& settings, Capacity capacity) { use(runtime, nullptr, settings, capacity); }
  void use(const DeviceSet& set, const RunSettings& settings, Capacity capacity) {
    use(set.runtime(0), &set, settings, capacity);
  }
  void use(const Runtime& runtime, const DeviceSet* set, RunSettings settings, Capacity capacity) {
    std::lock_guard lock(mutex_);
    if (set != external_set_) kept_.clear();
    external_set_ = set;
    const RunSettings resolved = settings.for_device(runtime.caps());
    capacity_fixed_ = settings.capacity != 0 && capacity == Capacity::Exactly;
    wg_asked_ = settings.wg_size != 0;
    if (external_ != &runtime || settings_ != resolved) {  // built for another device or shape
      kept_.clear();
      if (external_ != &runtime) {
        device_heap_.reset();
        other_heaps_.clear();
        heap_for_host_ = false;
      }
    }
    external_ = &runtime;
    settings_ = resolved;
    heap_.set_mapped(!runtime.caps().svm_fine_buffer);
    totals_.device = runtime.caps().name;
  }

  void forget(const Runtime& runtime) {
    std::lock_guard lock(mutex_);
    if (external_ == &runtime) {
      kept_.clear();
      device_heap_.reset();
      other_heaps_.clear();
      external_set_ = nullptr;
      heap_for_host_ = false;
      external_buffers_.clear();
      external_ = nullptr;
    }
  }

  void uses(const SvmBuffer& buffer) {
    std::lock_guard lock(mutex_);
    if (std::find(external_buffers_.begin(), external_buffers_.end(), &buffer) == external_buffers_.end())
      external_buffers_.push_back(&buffer);
  }

  RunStats last_stats() {
    std::lock_guard lock(mutex_);
    return last_;
  }
  DeviceRunStats last_across() {
    std::lock_guard lock(mutex_);
    return last_across_;
  }

  const Runtime& runtime() {
    if (external_) return *external_;
    std::call_once(once_, [this] {
      try {
        settings_ = RunSettings::from_environment();
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      try {
        if (!settings_.devices.empty()) {
          set_ = std::make_unique<DeviceSet>(settings_.devices, !settings_.trace_path.empty());
        } else {
          runtime_ = std::make_unique<Runtime>(DeviceSelection{.profiling = !settings_.trace_path.empty()});
        }
      } catch (const DeviceSetError& e) {
        fail(fmt::format("CHANFLOW_DEVICES={}: {}", settings_.devices, e.what()));
      } catch (const std::exception& e) {
        fail(fmt::format("cannot open the OpenCL device{}: {}", set_ ? "s" : "", e.what()));
      }
      if (set_) runtime_ptr_ = &set_->runtime(0);
      else runtime_ptr_ = runtime_.get();
      heap_.set_mapped(!runtime_ptr_->caps().svm_fine_buffer);
      totals_.device = set_ ? set_->describe() : runtime_ptr_->caps().name;
      // A compiled program's stacks have no footprint to size them by: 4,096 CEs per level unless
      // asked (StackFootprint's CPU capacity), or a work-group's request where that is more
      // (ProgramGraph::spawns_per_item), grown on a GPU per stack until the channel table fills
      // the device's budget (device_stack_capacity), and the device's work-group size.
      capacity_fixed_ = settings_.capacity != 0;
      wg_asked_ = settings_.wg_size != 0;
      settings_ = settings_.for_device(runtime_ptr_->caps());
      if (env_string("CHANFLOW_STATS", "") == "1") std::atexit([] { Process::get().print_stats(); });
    });
    return *runtime_ptr_;
  }

  // The set of devices calls run on (the embedding program's, or CHANFLOW_DEVICES'), if any.
  const DeviceSet* device_set() const { return external_ ? external_set_ : set_.get(); }

  // The devices calls run on, the first the host's (main's heap, the globals' cells, the root).
  std::vector<const Runtime*> devices() {
    const Runtime& first = runtime();
    const DeviceSet* set = device_set();
    if (!set) return {&first};
    std::vector<const Runtime*> out;
    for (std::size_t d = 0; d < set->size(); ++d) out.push_back(&set->runtime(d));
    return out;
  }

  // A block of SVM, or null (errno ENOMEM) where the device cannot give it, as C's malloc says.
  void* allocate(std::size_t bytes) {
    const Runtime& rt = runtime();
    std::lock_guard lock(mutex_);
    return heap_.allocate(rt, bytes);
  }

  // The block's size, or 0 if `p` is not from this heap or the device heap.
  std::size_t size_of(void* p) {
    std::lock_guard lock(mutex_);
    if (device_heap_ && device_heap_->contains(p)) return device_heap_->usable_size(p);
    return heap_.size_of(p);
  }

  bool in_device_heap(void* p) {
    std::lock_guard lock(mutex_);
    return device_heap_ && device_heap_->contains(p);
  }

  bool release(void* p) {
    std::lock_guard lock(mutex_);
    if (device_heap_ && device_heap_->contains(p)) {  // allocated on the device, handed to the host
      try {
        device_heap_->free(p);
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      return true;
    }
    return heap_.release(runtime(), p);
  }

  std::uint64_t call(BuildFunction build, const char* root_stack, const void* task, std::size_t task_bytes,
                     ProgramTraits traits) {
    const Runtime& rt = runtime();
    std::unique_lock lock(mutex_);
    if (traits.prints && !external_) std::fflush(stdout);  // what host code printed comes before what device code prints
    // An embedding program (chanflow bench) reports failures itself; a compiled program says why and exits.
    try {
      return run(rt, build, root_stack, task, task_bytes, traits.loop_leaves);
    } catch (const ExitRequest& e) {  // as C's exit ends the process: its handlers run, streams flushed
      if (external_) throw;
      lock.unlock();  // the handlers (--stats) come back here
      if (e.aborts()) std::abort();
      std::exit(e.status());
    } catch (const AssertionError& e) {  // as C's assert says it, and ends the process as it does
      if (external_) throw;
      std::fflush(stdout);
      fmt::print(stderr, "{}: {}\n", program_invocation_short_name, e.what());
      std::abort();
    } catch (const StackDepthError& e) {
      if (external_) throw;
      fail(depth_message(e, settings_.max_channels));
    } catch (const OpenCLError& e) {
      if (external_) throw;
      fail(fmt::format("OpenCL error: {}", e.what()));
    } catch (const std::exception& e) {
      if (external_) throw;
      fail(in_program_words(e.what()));
    }
  }

 private:
  // One device's copy of a compiled function's graph.
  struct Copy {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<ProgramGraph> program;
    ChannelStackNode* root = nullptr;
  };
  // A compiled function's graph, built by its first call and run again by the next ones (its
  // channels, levels and kernels reused: Graph::run), a copy per device, with the slot the root
  // returns into (on the first device) and, across devices, the router.
  struct Kept {
    std::vector<Copy> copies;
    std::unique_ptr<WorkRouter> router;  // after copies: destroyed before the graphs it runs
    SvmBuffer result;
    std::optional<SerialDepthChooser> chooser;  // granularity control left to the runtime
    bool ran = false;  // a graph's first run builds its levels and compiles its kernels (PoCL: at their first launches)
  };

  // The serial depth of a run of `k`'s graph (RunOptions::serial_depth), and the chooser that
  // picked it, if the runtime did: across devices, one depth for every device, chosen for all of
  // their work-items.
  std::pair<std::uint32_t, SerialDepthChooser*> serial_depth(const std::vector<const Runtime*>& devices, Kept& k) {
    const ProgramGraph& p = *k.copies.front().program;
    const bool by_depth = !p.serial_functions().empty();
    if (!by_depth && p.serial_conditions().empty()) return {kSerialOff, nullptr};
    SerialCutoff cutoff = settings_.serial_cutoff;
    if (cutoff.mode == SerialCutoff::Mode::Program)
      cutoff = p.compiled_serial_depth() ? SerialCutoff{.mode = SerialCutoff::Mode::Depth, .depth = *p.compiled_serial_depth()}
                                         : SerialCutoff{.mode = SerialCutoff::Mode::Auto};
    switch (cutoff.mode) {
      case SerialCutoff::Mode::Off: return {kSerialOff, nullptr};
      case SerialCutoff::Mode::Depth: return {cutoff.depth, nullptr};
      default: break;
    }
    if (!by_depth) return {0, nullptr};  // only functions with conditions of their own: on
    if (!k.chooser) {
      std::uint64_t target = 0;
      for (const Runtime* rt : devices) target += serial_target(rt->caps());
      k.chooser.emplace(target);
    }
    return {k.chooser->depth(), &*k.chooser};
  }

  // What a run says of granularity control: the tasks per level (every task stack summed) the
  // chooser learns from, and the tasks that ran their call serially (at the depth or deeper, of a
  // function with a serial form).
  void learn_granularity(Kept& k, std::uint32_t depth, SerialDepthChooser* chooser, const RunStats& stats) {
    const ProgramGraph& program = *k.copies.front().program;
    if (program.serial_functions().empty()) return;
    totals_.serial_depth = describe_serial_depth(depth, chooser);
    if (depth == kSerialOff) return;
    const TaskBreadth breadth = task_breadth(program, depth, stats);
    totals_.serial_tasks += breadth.serial;
    // The run's time without making stack levels (a first visit to a depth makes them).
    if (chooser) chooser->learn(breadth.per_level, stats.wall_ms - stats.host.levels_ms);
  }

  Kept& kept(const std::vector<const Runtime*>& devices, BuildFunction build, const char* root_stack, bool loop_leaves) {
    auto [it, fresh] = kept_.try_emplace({build, root_stack});
    Kept& k = it->second;
    if (!fresh) return k;
    try {
      // A program with cilk_for leaves (work-group tasks whose items share a loop's iterations)
      // runs groups of at most CHANFLOW_LOOP_WG_GPU items unless a size was asked for: a loop
      // shorter than the group leaves the rest idle.
      GraphOptions options = settings_.graph_options();
      if (loop_leaves && !wg_asked_) options.wg_size = std::min<std::uint32_t>(options.wg_size, CHANFLOW_LOOP_WG_GPU);
      wg_used_ = options.wg_size;
      std::vector<DeviceGraph> graphs;
      for (std::size_t d = 0; d < devices.size(); ++d) {
        Copy& c = k.copies.emplace_back();
        c.graph = std::make_unique<Graph>(*devices[d], options);
        c.program = std::make_unique<ProgramGraph>(*c.graph, settings_.capacity, capacity_fixed_);
        build(*c.program);
        c.program->size_levels();
        if (c.program->wants_heap()) c.graph->set_heap(device_heap(*devices[d], d, c.program->heap_for_host()));
        for (ChannelStackNode* s : stacks_of(*c.program, root_stack)) c.root = s;
        graphs.push_back({c.graph.get(), c.program->movable()});
      }
      if (devices.size() > 1) k.router = std::make_unique<WorkRouter>(std::move(graphs));
      k.result = SvmBuffer(*devices.front(), sizeof(std::uint64_t));
    } catch (...) {
      kept_.erase(it);
      throw;
    }
    return k;
  }

  // The device heap of the program's calls on device `d`, made by the first that allocates on the
  // device. Once a graph whose device code allocates (`for_host`) has the first device's, it is
  // mapped for the host between calls (a block the device allocated is the host's to read and
  // free); spilled stack frames alone never reach the host, and a call pays no map and unmap for
  // them. The other devices' heaps are theirs alone: a block one allocates stays in the subtree
  // of the task that moved there (its function returns no address).
  DeviceHeap& device_heap(const Runtime& rt, std::size_t d, bool for_host) {
    if (d > 0) {
      if (other_heaps_.size() < d) other_heaps_.resize(d);
      if (!other_heaps_[d - 1]) other_heaps_[d - 1] = std::make_unique<DeviceHeap>(rt, settings_.heap_bytes);
      return *other_heaps_[d - 1];
    }
    if (!device_heap_) device_heap_ = std::make_unique<DeviceHeap>(rt, settings_.heap_bytes);
    if (for_host && !heap_for_host_) {
      heap_for_host_ = true;
      device_heap_->map();
    }
    return *device_heap_;
  }
  void map_device_heap() {
    if (heap_for_host_) device_heap_->map();
  }
  void unmap_device_heap() {
    if (heap_for_host_) device_heap_->unmap();
  }

  std::uint64_t run(const Runtime& rt, BuildFunction build, const char* root_stack, const void* task,
                    std::size_t task_bytes, bool loop_leaves) {
    const std::vector<const Runtime*> on = devices();
    Kept& k = kept(on, build, root_stack, loop_leaves);
    rt.svm_fill_zero_async(k.result.get(), k.result.size());
    const std::vector<void*>& globals = k.copies.front().program->shared_globals();
    for (std::size_t d = 0; d < k.copies.size(); ++d)
      for (KernelNode* node : k.copies[d].program->kernels()) {  // the heap as it is now
        if (!globals.empty()) node->set_arg_bytes(globals.data(), globals.size() * sizeof(void*));
        node->clear_uses();
        if (d > 0) continue;  // what the host allocated is the first device's: no task reaching it moves
        node->uses(k.result);
        heap_.each([node](const SvmBuffer& block) { node->uses(block); });
        for (const SvmBuffer* buffer : external_buffers_) node->uses(*buffer);
      }
    std::vector<std::byte> root_task(task_bytes);
    std::memcpy(root_task.data(), task, task_bytes);
    const std::uint64_t slot = reinterpret_cast<std::uint64_t>(k.result.get());
    std::memcpy(root_task.data(), &slot, sizeof slot);  // chanflow_task::ret: the root returns here
    k.copies.front().root->push_bytes(0, root_task.data(), root_task.size());

    const auto [serial_depth_now, chooser] = serial_depth(on, k);

    heap_.lend(rt);
    unmap_device_heap();
    RunStats stats;
    DeviceRunStats across;
    try {
      RunOptions options = settings_.run_options(root_stack);
      options.serial_depth = serial_depth_now;
      if (k.router) {
        across = k.router->run([this] { return settings_.make_policy(); }, options);
        stats = across.total();
      } else {
        stats = k.copies.front().graph->run(*settings_.make_policy(), options);
        if (device_set())  // a set of one device: its run is the set's
          across = {.runs = {stats}, .traffic = {DeviceTraffic{}}, .wall_ms = stats.wall_ms};
      }
    } catch (...) {
      kept_.erase({build, root_stack});  // a graph whose run threw does not run again
      heap_.take_back(rt);
      map_device_heap();
      throw;
    }
    heap_.take_back(rt);
    map_device_heap();
    std::uint64_t value = 0;
    rt.svm_read(&value, k.result.get(), sizeof value);
    totals_.add(stats);
    for (const Copy& c : k.copies)  // levels a run made may be larger than the first (ProgramGraph::size_levels)
      for (const ChannelStackNode* s : c.program->stacks())
        totals_.stack_capacity = std::max(totals_.stack_capacity, s->largest_level());
    if (k.router) {
      if (totals_.devices.empty())
        for (const Runtime* d : on) totals_.devices.push_back({.name = d->caps().name});
      totals_.add(across);
      totals_.movable = k.copies.front().program->movable();
      totals_.staying = k.copies.front().program->staying();
    }
    if (!k.ran) {
      ++totals_.first_runs;
      totals_.first_runs_ms += stats.wall_ms;
      k.ran = true;
    }
    learn_granularity(k, serial_depth_now, chooser, stats);
    last_ = stats;
    last_.serial_searching = chooser && !chooser->settled();
    last_across_ = std::move(across);
    return value;
  }

  static std::vector<ChannelStackNode*> stacks_of(ProgramGraph& program, const char* name) {
    std::vector<ChannelStackNode*> out;
    for (ChannelStackNode* s : program.stacks())
      if (s->name() == name) out.push_back(s);
    if (out.empty()) fail(fmt::format("internal error: the graph has no stack '{}'", name));
    return out;
  }

  void print_stats() const { print_totals(totals_, settings_, wg_used_, device_heap_.get()); }

  std::once_flag once_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<DeviceSet> set_;         // CHANFLOW_DEVICES: the devices (runtime_ then unused)
  const Runtime* runtime_ptr_ = nullptr;   // runtime_, or set_'s first device
  const Runtime* external_ = nullptr;  // use(): the embedding program's device
  const DeviceSet* external_set_ = nullptr;  // use(): the embedding program's devices, external_ the first
  RunSettings settings_;
  RunStats last_;
  DeviceRunStats last_across_;  // across devices: each device's part of the last call
  bool capacity_fixed_ = false;  // the capacity was asked for, not left to the device
  bool wg_asked_ = false;        // so was the work-group size
  std::uint32_t wg_used_ = 0;    // the last graph's work-group size
  std::recursive_mutex mutex_;
  HostBlocks heap_;  // main's blocks: destroyed before runtime_ (declared after it)
  std::unique_ptr<DeviceHeap> device_heap_;  // the same
  std::vector<std::unique_ptr<DeviceHeap>> other_heaps_;  // across devices: the second's on
  bool heap_for_host_ = false;               // mapped between calls: some graph's device code allocates
  std::vector<const SvmBuffer*> external_buffers_;  // uses(): the embedding program's
  std::map<std::pair<BuildFunction, std::string>, Kept> kept_;  // the same
  Totals totals_;
};

}  // namespace

std::uint64_t call(BuildFunction build, const char* root_stack, const void* task, std::size_t task_bytes,
                   ProgramTraits traits) {
  return Process::get().call(build, root_stack, task, task_bytes, traits);
}

void use(const Runtime& runtime, const RunSettings& settings, Capacity capacity) {
  Process::get().use(runtime, settings, capacity);
}

void use(const DeviceSet& devices, const RunSettings& settings, Capacity capacity) {
  Process::get().use(devices, settings, capacity);
}

void forget(const Runtime& runtime) { Process::get().forget(runtime); }

void uses(const SvmBuffer& buffer) { Process::get().uses(buffer); }

RunStats last_stats() { return Process::get().last_stats(); }

DeviceRunStats last_across() { return Process::get().last_across(); }

RunSettings settings_for(const RunSettings& asked, const DeviceCaps& caps, const StackFootprint& footprint) {
  RunSettings s = asked.for_device(caps, footprint);
  s.wg_size = asked.wg_size;
  return s;
}

void* process::allocate(std::size_t bytes) { return Process::get().allocate(bytes); }
std::size_t process::size_of(void* p) { return Process::get().size_of(p); }
bool process::in_device_heap(void* p) { return Process::get().in_device_heap(p); }
bool process::release(void* p) { return Process::get().release(p); }
bool process::cpu_device() { return cpu_shaped(Process::get().runtime().caps()); }

}  // namespace chanflow::cilk

