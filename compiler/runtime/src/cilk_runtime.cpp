// The runtime of compiled Cilk programs (see cilk_runtime.hpp and cilk_host.h): one device per
// process, main's heap as SVM, and per Cilk function a graph built by its first call and run
// again by the next ones.
#include "chanflow/cilk_runtime.hpp"

#include "chanflow/cilk_host.h"
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

// The device and the heap main allocates from. The heap's blocks are coarse-grain SVM: mapped for
// the host between calls, unmapped while a graph runs (where the device lacks fine-grain SVM).
class Process {
 public:
  static Process& get() {
    static Process process;
    return process;
  }

  void use(const Runtime& runtime, const RunSettings& settings, Capacity capacity) {
    std::lock_guard lock(mutex_);
    const RunSettings resolved = settings.for_device(runtime.caps());
    capacity_fixed_ = settings.capacity != 0 && capacity == Capacity::Exactly;
    wg_asked_ = settings.wg_size != 0;
    if (external_ != &runtime || settings_ != resolved) {  // built for another device or shape
      kept_.clear();
      if (external_ != &runtime) {
        device_heap_.reset();
        heap_for_host_ = false;
      }
    }
    external_ = &runtime;
    settings_ = resolved;
    map_for_host_ = !runtime.caps().svm_fine_buffer;
    totals_.device = runtime.caps().name;
  }

  void forget(const Runtime& runtime) {
    std::lock_guard lock(mutex_);
    if (external_ == &runtime) {
      kept_.clear();
      device_heap_.reset();
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

  const Runtime& runtime() {
    if (external_) return *external_;
    std::call_once(once_, [this] {
      try {
        settings_ = RunSettings::from_environment();
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      try {
        runtime_ = std::make_unique<Runtime>(DeviceSelection{.profiling = !settings_.trace_path.empty()});
      } catch (const std::exception& e) {
        fail(fmt::format("cannot open the OpenCL device: {}", e.what()));
      }
      map_for_host_ = !runtime_->caps().svm_fine_buffer;
      totals_.device = runtime_->caps().name;
      // A compiled program's stacks have no footprint to size them by: 4,096 CEs per level unless
      // asked (StackFootprint's CPU capacity), or a work-group's request where that is more
      // (ProgramGraph::spawns_per_item), and the device's work-group size.
      capacity_fixed_ = settings_.capacity != 0;
      wg_asked_ = settings_.wg_size != 0;
      settings_ = settings_.for_device(runtime_->caps());
      if (env_string("CHANFLOW_STATS", "") == "1") std::atexit([] { Process::get().print_stats(); });
    });
    return *runtime_;
  }

  // A block of SVM, or null (errno ENOMEM) where the device cannot give it, as C's malloc says.
  void* allocate(std::size_t bytes) {
    const Runtime& rt = runtime();
    std::lock_guard lock(mutex_);
    std::optional<SvmBuffer> block;
    try {
      block.emplace(rt, bytes ? bytes : 1, 64);
      if (map_for_host_) map(block->get(), block->size());
    } catch (const OpenCLError&) {
      errno = ENOMEM;
      return nullptr;
    }
    void* p = block->get();
    heap_.emplace(p, std::move(*block));
    return p;
  }

  // The block's size, or 0 if `p` is not from this heap or the device heap.
  std::size_t size_of(void* p) {
    std::lock_guard lock(mutex_);
    if (device_heap_ && device_heap_->contains(p)) return device_heap_->usable_size(p);
    auto it = heap_.find(p);
    return it == heap_.end() ? 0 : it->second.size();
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
    auto it = heap_.find(p);
    if (it == heap_.end()) return false;
    if (map_for_host_) unmap(p);
    heap_.erase(it);
    return true;
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
      fail(depth_message(e));
    } catch (const OpenCLError& e) {
      if (external_) throw;
      fail(fmt::format("OpenCL error: {}", e.what()));
    } catch (const std::exception& e) {
      if (external_) throw;
      fail(in_program_words(e.what()));
    }
  }

 private:
  // A compiled function's graph, built by its first call and run again by the next ones (its
  // channels, levels and kernels reused: Graph::run), with the slot the root returns into.
  struct Kept {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<ProgramGraph> program;
    ChannelStackNode* root = nullptr;
    SvmBuffer result;
    std::optional<SerialDepthChooser> chooser;  // granularity control left to the runtime
    bool ran = false;  // a graph's first run builds its levels and compiles its kernels (PoCL: at their first launches)
  };

  // The serial depth of a run of `k`'s graph (RunOptions::serial_depth), and the chooser that
  // picked it, if the runtime did.
  std::pair<std::uint32_t, SerialDepthChooser*> serial_depth(const Runtime& rt, Kept& k) {
    const ProgramGraph& p = *k.program;
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
    if (!k.chooser) k.chooser.emplace(serial_target(rt.caps()));
    return {k.chooser->depth(), &*k.chooser};
  }

  // What a run says of granularity control: the tasks per level (every task stack summed) the
  // chooser learns from, and the tasks that ran their call serially (at the depth or deeper, of a
  // function with a serial form).
  void learn_granularity(Kept& k, std::uint32_t depth, SerialDepthChooser* chooser, const RunStats& stats) {
    if (k.program->serial_functions().empty()) return;
    totals_.serial_depth = describe_serial_depth(depth, chooser);
    if (depth == kSerialOff) return;
    const TaskBreadth breadth = task_breadth(*k.program, depth, stats);
    totals_.serial_tasks += breadth.serial;
    // The run's time without making stack levels (a first visit to a depth makes them).
    if (chooser) chooser->learn(breadth.per_level, stats.wall_ms - stats.host.levels_ms);
  }

  Kept& kept(const Runtime& rt, BuildFunction build, const char* root_stack, bool loop_leaves) {
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
      k.graph = std::make_unique<Graph>(rt, options);
      k.program = std::make_unique<ProgramGraph>(*k.graph, settings_.capacity, capacity_fixed_);
      build(*k.program);
      if (k.program->wants_heap()) k.graph->set_heap(device_heap(rt, k.program->heap_for_host()));
      for (ChannelStackNode* s : stacks_of(*k.program, root_stack)) k.root = s;
      k.result = SvmBuffer(rt, sizeof(std::uint64_t));
    } catch (...) {
      kept_.erase(it);
      throw;
    }
    return k;
  }

  // The device heap of the program's calls, made by the first that allocates on the device. Once
  // a graph whose device code allocates (`for_host`) has it, it is mapped for the host between
  // calls (a block the device allocated is the host's to read and free); spilled stack frames
  // alone never reach the host, and a call pays no map and unmap for them.
  DeviceHeap& device_heap(const Runtime& rt, bool for_host) {
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
    Kept& k = kept(rt, build, root_stack, loop_leaves);
    Graph& graph = *k.graph;
    rt.svm_fill_zero_async(k.result.get(), k.result.size());
    const std::vector<void*>& globals = k.program->shared_globals();
    for (KernelNode* node : k.program->kernels()) {  // the heap as it is now
      if (!globals.empty()) node->set_arg_bytes(globals.data(), globals.size() * sizeof(void*));
      node->clear_uses().uses(k.result);
      for (auto& [p, block] : heap_) node->uses(block);
      for (const SvmBuffer* buffer : external_buffers_) node->uses(*buffer);
    }
    std::vector<std::byte> root_task(task_bytes);
    std::memcpy(root_task.data(), task, task_bytes);
    const std::uint64_t slot = reinterpret_cast<std::uint64_t>(k.result.get());
    std::memcpy(root_task.data(), &slot, sizeof slot);  // chanflow_task::ret: the root returns here
    k.root->push_bytes(0, root_task.data(), root_task.size());

    const std::unique_ptr<SchedulingPolicy> policy = settings_.make_policy();
    const auto [serial_depth_now, chooser] = serial_depth(rt, k);

    if (map_for_host_)
      for (auto& [p, block] : heap_) unmap(p);
    unmap_device_heap();
    RunStats stats;
    try {
      RunOptions options = settings_.run_options(root_stack);
      options.serial_depth = serial_depth_now;
      stats = graph.run(*policy, options);
    } catch (...) {
      kept_.erase({build, root_stack});  // a graph whose run threw does not run again
      if (map_for_host_)
        for (auto& [p, block] : heap_) map(p, block.size());
      map_device_heap();
      throw;
    }
    if (map_for_host_)
      for (auto& [p, block] : heap_) map(p, block.size());
    map_device_heap();
    std::uint64_t value = 0;
    rt.svm_read(&value, k.result.get(), sizeof value);
    add(stats);
    if (!k.ran) {
      ++totals_.first_runs;
      totals_.first_runs_ms += stats.wall_ms;
      k.ran = true;
    }
    learn_granularity(k, serial_depth_now, chooser, stats);
    last_ = stats;
    last_.serial_searching = chooser && !chooser->settled();
    return value;
  }

  // A device-side error in the program's words: its kernel nodes F__spawn and F__sync are Cilk
  // function F ("kernel node 'fib__spawn' asked the device heap ..." names 'fib').
  static std::string in_program_words(std::string message) {
    const std::string node = "kernel node '";
    for (std::size_t at = message.find(node); at != std::string::npos; at = message.find(node, at + 1)) {
      const std::size_t end = message.find('\'', at + node.size());
      if (end == std::string::npos) break;
      std::string name = message.substr(at + node.size(), end - at - node.size());
      for (const char* suffix : {"__spawn", "__sync"})
        if (name.ends_with(suffix)) {
          name.erase(name.size() - std::strlen(suffix));
          message.replace(at, end - at, "Cilk function '" + name);
          break;
        }
    }
    return message;
  }

  // A stack that could not grow, in the program's words: which Cilk function recursed how deep,
  // and the setting that raises the limit.
  std::string depth_message(const StackDepthError& e) const {
    std::string function = e.stack();
    if (function.size() > 5 && function.ends_with("_cont")) function.erase(function.size() - 5);
    return fmt::format("Cilk function '{}' recursed {} levels deep, as deep as this run can go: every level of "
                       "every Cilk function's stacks takes one of the run's {} channel-table slots. Does '{}' "
                       "miss a base case? If the recursion is meant to be this deep, raise "
                       "CHANFLOW_MAX_CHANNELS (--max-channels with chanflow run).",
                       function, e.level(), settings_.max_channels, function);
  }

  static std::vector<ChannelStackNode*> stacks_of(ProgramGraph& program, const char* name) {
    std::vector<ChannelStackNode*> out;
    for (ChannelStackNode* s : program.stacks())
      if (s->name() == name) out.push_back(s);
    if (out.empty()) fail(fmt::format("internal error: the graph has no stack '{}'", name));
    return out;
  }

  void map(void* p, std::size_t bytes) {
    const cl_int err = clEnqueueSVMMap(runtime_->queue()(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, p, bytes, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMMap", err);
  }
  void unmap(void* p) {
    const cl_int err = clEnqueueSVMUnmap(runtime_->queue()(), p, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMUnmap", err);
    runtime_->finish();
  }

  void add(const RunStats& s) {
    ++totals_.calls;
    if (s.scheduler == "device") ++totals_.device_scheduled;
    totals_.rounds += s.rounds;
    totals_.dispatches += s.dispatches;
    totals_.ces += s.ces;
    totals_.yields += s.yields;
    totals_.restarts += s.restarts;
    for (const auto& [port, count] : s.restarts_per_port) totals_.restarts_per_port[port] += count;
    totals_.wall_ms += s.wall_ms;
    totals_.aggregator_ms += s.aggregator_ms;
    totals_.max_level = std::max(totals_.max_level, s.max_level);
    totals_.channel_bytes = std::max(totals_.channel_bytes, s.peak_channel_bytes);
    totals_.live_bytes = std::max(totals_.live_bytes, s.peak_live_bytes);
    totals_.channels = std::max(totals_.channels, s.channels);
  }

  void print_stats() const {
    const Totals& t = totals_;
    if (t.calls == 0) return;
    fmt::print(stderr,
               "chanflow: {} graph run(s) on {} ({} on the device scheduler): {:.2f} ms, {} rounds, {} dispatches, {} CEs "
               "(tasks and frames), {} yields, {} restarts, deepest level {}, device idle on the aggregator {:.0f}%\n",
               t.calls, t.device, t.device_scheduled, t.wall_ms, t.rounds, t.dispatches, t.ces, t.yields, t.restarts, t.max_level,
               t.wall_ms > 0 ? 100.0 * t.aggregator_ms / t.wall_ms : 0.0);
    fmt::print(stderr, "chanflow: of these, {} first run(s) of a graph took {:.2f} ms: a first run also makes its "
               "levels and compiles its kernels (PoCL at their first launches; later runs and processes reuse them)\n",
               t.first_runs, t.first_runs_ms);
    const RunSettings& s = settings_;
    fmt::print(stderr, "chanflow: settings: {} CEs per stack level, work-groups of {}, {} policy, {} dispatch, {} channel-table slots\n",
               s.capacity, wg_used_ ? wg_used_ : s.wg_size, s.policy, to_string(s.dispatch), s.max_channels);
    fmt::print(stderr, "chanflow: device memory: channels {:.1f} MiB in {} stack levels and channels at most, {:.1f} KiB of "
                       "CEs live at most\n",
               static_cast<double>(t.channel_bytes) / (1 << 20), t.channels, static_cast<double>(t.live_bytes) / 1024);
    if (device_heap_)
      fmt::print(stderr, "chanflow: device heap: {:.1f} MiB of {:.0f} MiB used at most (CHANFLOW_HEAP, --heap), {} block(s) live at exit\n",
                 static_cast<double>(device_heap_->high_water_bytes()) / (1 << 20),
                 static_cast<double>(device_heap_->bytes()) / (1 << 20), device_heap_->live_blocks());
    if (!t.serial_depth.empty())
      fmt::print(stderr, "chanflow: granularity control: serial {} in the last call; {} task(s) ran their call serially "
                         "in their work-item\n", t.serial_depth, t.serial_tasks);
    // A resumed task continues its flush with the spawns it recorded: its statements ran once.
    if (t.restarts)
      fmt::print(stderr, "chanflow: tasks resumed where they yielded (their bodies not run again): {}\n",
                 describe_restarts(t.restarts_per_port));
  }

  std::once_flag once_;
  std::unique_ptr<Runtime> runtime_;
  const Runtime* external_ = nullptr;  // use(): the embedding program's device
  RunSettings settings_;
  RunStats last_;
  bool map_for_host_ = false;
  bool capacity_fixed_ = false;  // the capacity was asked for, not left to the device
  bool wg_asked_ = false;        // so was the work-group size
  std::uint32_t wg_used_ = 0;    // the last graph's work-group size
  std::recursive_mutex mutex_;
  std::map<void*, SvmBuffer> heap_;  // destroyed before runtime_ (declared after it)
  std::unique_ptr<DeviceHeap> device_heap_;  // the same
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

void forget(const Runtime& runtime) { Process::get().forget(runtime); }

void uses(const SvmBuffer& buffer) { Process::get().uses(buffer); }

RunStats last_stats() { return Process::get().last_stats(); }

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

