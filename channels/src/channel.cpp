// Host side of the channel: SVM storage, host producers, counters, in-order deallocation.
#include "chanflow/channel.hpp"

#include "chanflow_channels_sources.hpp"
#include "channel_words.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace chanflow {

using detail::ctrl_entry;
using detail::live_words;

namespace {

constexpr std::size_t kAlign = 128;

std::size_t align_up(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct StorageLayout {
  std::size_t ctrl_offset = 0;
  std::size_t done_offset = 0;
  std::size_t live_offset = 0;  // checked frees' bitmap (empty unless check_frees)
  std::size_t data_offset = 0;
  std::size_t bytes = 0;
};

bool check_frees_from_environment() {
  const char* v = std::getenv("CHANFLOW_CHECK_FREES");
  return v && *v && *v != '0';
}

// What a config left at 0 gets (ChannelConfig::max_reservation).
ChannelConfig with_defaults(ChannelConfig c) {
  if (c.max_reservation == 0) c.max_reservation = std::min(c.capacity, kDefaultMaxReservation);
  return c;
}

StorageLayout layout_for(const ChannelConfig& c) {
  StorageLayout l;
  l.ctrl_offset = 0;
  l.done_offset = align_up(l.ctrl_offset + std::size_t{2} * c.capacity * sizeof(std::uint64_t));
  l.live_offset = align_up(l.done_offset + std::size_t{c.capacity / c.done_group} * sizeof(std::uint32_t));
  l.data_offset = align_up(l.live_offset + (c.check_frees ? live_words(c) * sizeof(std::uint32_t) : 0));
  l.bytes = align_up(l.data_offset + (std::size_t{c.capacity} + c.max_reservation) * c.ce_bytes);
  return l;
}

void validate(const ChannelConfig& c) {
  const auto who = c.name.empty() ? std::string("channel") : fmt::format("channel '{}'", c.name);
  if (c.ce_bytes == 0) throw ChannelError(who + ": CE size must be at least 4 bytes, got 0");
  if (c.ce_bytes % 4 != 0 || c.ce_bytes > 65536)
    throw ChannelError(fmt::format("{}: CE size must be a multiple of 4 bytes up to 65536, got {}",
                                   who, c.ce_bytes));
  if (c.capacity == 0) throw ChannelError(who + ": capacity must be at least one CE, got 0");
  if (c.capacity > (1u << 30))
    throw ChannelError(fmt::format("{}: capacity {} exceeds the limit of 2^30 CEs", who, c.capacity));
  if (c.done_group == 0) throw ChannelError(who + ": done-count group size must be at least 1");
  if (c.capacity % c.done_group != 0)
    throw ChannelError(fmt::format(
        "{}: capacity {} is not a multiple of the done-count group size {} (in-order "
        "deallocation frees whole groups)",
        who, c.capacity, c.done_group));
  if (c.max_reservation > c.capacity)
    throw ChannelError(fmt::format("{}: max_reservation {} exceeds the capacity {}", who,
                                   c.max_reservation, c.capacity));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
ChannelTable::ChannelTable(const Runtime& runtime, std::uint32_t max_channels)
    : runtime_(runtime), max_channels_(max_channels) {
  if (max_channels == 0) throw ChannelError("a channel table needs room for at least one channel");
  headers_ = SvmBuffer(runtime, align_up(std::size_t{max_channels} * sizeof(chanflow_channel)) + kControlBytes);
  // Never reallocated: non-blocking copies to the device read header fields from it.
  mirror_.reserve(max_channels);
  // Made now rather than in a timed run (the build itself is cached by the runtime).
  const auto program = runtime.build({channels_cl::channel_layout_h(), channels_cl::deallocate_cl()}, "");
  deallocate_ = runtime.kernel(program, "chanflow_deallocate");
  runtime.svm_fill_zero(headers_.get(), headers_.size());
}

ChannelTable::~ChannelTable() { runtime_.finish_quietly(); }

std::uint32_t ChannelTable::add(const chanflow_channel& header) {
  if (mirror_.size() >= max_channels_)
    throw ChannelError(fmt::format("channel table is full ({} channels)", max_channels_));
  const auto id = static_cast<std::uint32_t>(mirror_.size());
  mirror_.push_back(header);
  mirror_.back().id = id;
  live_.push_back(true);
  write_header(id);
  return id;
}

void ChannelTable::retire(std::uint32_t id) { live_.at(id) = false; }

std::pair<void*, void*> ChannelTable::allocate_storage(std::size_t bytes) {
  // A new chunk is as large as all before it (4 MiB first, at most the device's largest
  // allocation), so the arena doubles: a launch names O(log) chunks however large the graph grows
  // (NVIDIA's OpenCL charges every launch for each named allocation; scheduler/README.md, "What a
  // launch costs"), at the price of at most half the arena allocated ahead of use. Chunks capped
  // at 256 MiB made compiled Strassen 2048's 15.6 GB of channels 62 chunks. A channel larger
  // than the next chunk gets one of its own size.
  constexpr std::size_t kFirstChunk = 4u << 20;
  if (chunks_.empty() || chunk_used_ + bytes > chunks_.back().size()) {
    std::size_t next = 0;
    for (const auto& c : chunks_) next += c.size();
    next = std::max(next, kFirstChunk);
    if (const std::uint64_t device_max = runtime_.caps().max_alloc_bytes; device_max > 0)
      next = static_cast<std::size_t>(std::min<std::uint64_t>(next, device_max));
    chunks_.emplace_back(runtime_, std::max(next, align_up(bytes)), kAlign);
    chunk_used_ = 0;
  }
  void* at = static_cast<std::byte*>(chunks_.back().get()) + chunk_used_;
  chunk_used_ += align_up(bytes);
  storage_used_ += align_up(bytes);
  return {at, chunks_.back().get()};
}

void* ChannelTable::allocate_control(std::size_t bytes) {
  const std::size_t at = align_up(std::size_t{max_channels_} * sizeof(chanflow_channel)) + control_used_;
  if (align_up(bytes) > kControlBytes - control_used_) return nullptr;
  control_used_ += align_up(bytes);
  return static_cast<std::byte*>(headers_.get()) + at;
}

std::vector<void*> ChannelTable::svm_allocations() const {
  std::vector<void*> all{headers_.get()};
  for (const auto& c : chunks_) all.push_back(c.get());
  return all;
}

void ChannelTable::enqueue_deallocate(const std::vector<std::uint32_t>& ids) {
  if (ids.empty()) return;
  std::vector<std::uint64_t> headers;
  for (auto id : ids) headers.push_back(reinterpret_cast<std::uint64_t>(device_header(id)));
  // The same list as last time (a chain of passes over the same channels) is already on the
  // device: no copy, and above all no wait, which would stall the host until the previous
  // pass had run and make every chained pass a host round trip.
  if (headers != dealloc_staging_) {
    // The previous list's copy must be done before its host staging is refilled (the kernel
    // that read it is ordered before the next copy by the in-order queue).
    if (dealloc_copy_()) {
      cl_int status = CL_COMPLETE;
      check(clGetEventInfo(dealloc_copy_(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
            "clGetEventInfo (deallocation list)");
      if (status != CL_COMPLETE) check(clWaitForEvents(1, &dealloc_copy_()), "clWaitForEvents (deallocation list)");
    }
    dealloc_staging_ = std::move(headers);
    const std::size_t bytes = dealloc_staging_.size() * sizeof(std::uint64_t);
    // A larger list: the old one is freed behind the launches that read it (SvmBuffer).
    if (dealloc_list_.size() < bytes) dealloc_list_ = SvmBuffer(runtime_, std::max<std::size_t>(bytes, 4096) * 2);
    cl_event copied = nullptr;
    check(clEnqueueSVMMemcpy(runtime_.queue()(), CL_FALSE, dealloc_list_.get(), dealloc_staging_.data(), bytes, 0,
                             nullptr, &copied),
          "clEnqueueSVMMemcpy (deallocation list)");
    dealloc_copy_ = cl::Event(copied);
  }
  std::vector<void*> svm = svm_allocations();
  svm.push_back(dealloc_list_.get());
  if (svm != dealloc_svm_) {  // only when channels or the list moved: the call is not free
    set_indirect_svm(*deallocate_, svm);
    dealloc_svm_ = std::move(svm);
  }
  set_arg_svm(*deallocate_, 0, dealloc_list_.get());
  set_arg(*deallocate_, 1, static_cast<cl_uint>(ids.size()));
  constexpr std::size_t width = 64;  // work-items per channel
  launch(runtime_, *deallocate_, ids.size() * width, width, /*want_event=*/false);
}

void ChannelTable::check_errors() const {
  for (std::uint32_t id = 0; id < mirror_.size(); ++id) {
    if (!live_[id] || mirror_[id].errors == 0) continue;
    const std::uint64_t e = mirror_[id].errors;
    std::string what;
    if (e & CHANFLOW_CHANNEL_ERR_NOT_LIVE)
      what += "; tfree of a CE that was not allocated (freed twice, or never reserved)";
    if (e & CHANFLOW_CHANNEL_ERR_OVERFREE)
      what += mirror_[id].live ? "; a done-count group was freed more often than it had CEs"
                               : "; a done-count group was freed more often than it had CEs: a CE was freed twice "
                                 "(with ChannelConfig::check_frees or CHANFLOW_CHECK_FREES=1 every such tfree is "
                                 "caught, also one that a live CE of the same group hides)";
    if (e & CHANFLOW_CHANNEL_ERR_REALLOCATED) what += "; talloc handed out a slot that was still allocated";
    throw ChannelError(fmt::format("channel {}{}", id, what));
  }
}

chanflow_channel& ChannelTable::mirror(std::uint32_t id) {
  return const_cast<chanflow_channel&>(counters(id));
}

const chanflow_channel& ChannelTable::counters(std::uint32_t id) const {
  if (id >= mirror_.size() || !live_[id])
    throw ChannelError(fmt::format("unknown channel id {} (the table holds {} channel(s){})", id,
                                   mirror_.size(), id < mirror_.size() ? "; this one was destroyed" : ""));
  return mirror_[id];
}

chanflow_channel* ChannelTable::device_header(std::uint32_t id) const {
  (void)counters(id);  // validates id
  return static_cast<chanflow_channel*>(headers_.get()) + id;
}

void ChannelTable::refresh() {
  runtime_.svm_read(mirror_.data(), headers_.get(), mirror_.size() * sizeof(chanflow_channel));
}

void ChannelTable::load_headers(const void* from, std::size_t bytes) {
  if (bytes != headers_bytes())
    throw ChannelError(fmt::format("a copy of {} bytes of channel headers, where the table has {} (a channel made "
                                   "since the copy was laid out)",
                                   bytes, headers_bytes()));
  std::memcpy(mirror_.data(), from, bytes);
}

void ChannelTable::refresh(std::uint32_t id) {
  runtime_.svm_read(&mirror(id), device_header(id), sizeof(chanflow_channel));
}

// Non-blocking: the mirror is never reallocated, and a later change to it goes to the device
// behind this copy (write_u64_field) or comes from it after (refresh, blocking).
void ChannelTable::write_header(std::uint32_t id) {
  runtime_.svm_write_async(device_header(id), &mirror(id), sizeof(chanflow_channel));
}

void ChannelTable::write_u64_field(std::uint32_t id, std::size_t offset) {
  auto* dst = reinterpret_cast<std::byte*>(device_header(id)) + offset;
  const auto* src = reinterpret_cast<const std::byte*>(&mirror(id)) + offset;
  runtime_.svm_write_async(dst, src, sizeof(std::uint64_t));
}

// ---------------------------------------------------------------------------------------------
std::size_t Channel::storage_bytes_for(const ChannelConfig& config) { return layout_for(with_defaults(config)).bytes; }

Channel::Channel(ChannelTable& table, ChannelConfig config) : table_(table), config_(std::move(config)) {
  validate(config_);
  config_ = with_defaults(std::move(config_));
  config_.check_frees = config_.check_frees || check_frees_from_environment();
  const auto layout = layout_for(config_);
  const Runtime& rt = table.runtime();
  const auto [storage, chunk] = table.allocate_storage(layout.bytes);
  chunk_ = chunk;
  storage_bytes_ = layout.bytes;
  // Zeroed control entries carry tag 0, which no lap uses, so nothing looks ready. Cleared on the
  // device behind the commands already queued: making a level costs the host no wait.
  rt.svm_fill_zero_async(storage, layout.data_offset);
  auto* base = static_cast<std::byte*>(storage);
  ctrl_ = reinterpret_cast<std::uint64_t*>(base + layout.ctrl_offset);
  done_ = reinterpret_cast<std::uint32_t*>(base + layout.done_offset);
  data_ = base + layout.data_offset;

  chanflow_channel h{};
  h.data = reinterpret_cast<std::uint64_t>(data_);
  h.ctrl = reinterpret_cast<std::uint64_t>(ctrl_);
  h.done = reinterpret_cast<std::uint64_t>(done_);
  if (config_.check_frees) {
    live_ = reinterpret_cast<std::uint32_t*>(base + layout.live_offset);
    h.live = reinterpret_cast<std::uint64_t>(live_);
  }
  h.capacity = config_.capacity;
  h.ce_bytes = config_.ce_bytes;
  h.ctrl_capacity = 2 * config_.capacity;
  h.done_group = config_.done_group;
  h.max_reservation = config_.max_reservation;
  h.data_free = config_.capacity;
  id_ = table.add(h);
}

Channel::~Channel() { table_.retire(id_); }

std::vector<void*> Channel::svm_allocations() const {
  return {chunk_, table_.headers_allocation()};
}

std::optional<Channel::HostReservation> Channel::talloc(std::uint32_t n) {
  table_.refresh(id_);
  const std::optional<std::uint32_t> index = reserve(n);
  if (!index) return std::nullopt;
  HostReservation r;
  r.index = *index;
  r.n = n;
  r.ces.resize(std::size_t{n} * config_.ce_bytes);
  return r;
}

std::optional<std::uint32_t> Channel::reserve(std::uint32_t n) {
  auto& h = table_.mirror(id_);
  const auto free = static_cast<std::int64_t>(h.data_free);
  if (n > h.max_reservation || free < static_cast<std::int64_t>(n)) {
    h.oversized_requests += n > h.max_reservation;
    ++h.failed_reservations;
    table_.write_u64_field(id_, offsetof(chanflow_channel, failed_reservations));
    table_.write_u64_field(id_, offsetof(chanflow_channel, oversized_requests));
    return std::nullopt;
  }
  const auto index = static_cast<std::uint32_t>(h.data_tail % config_.capacity);
  if (live_) mark_live(index, n);
  h.data_free -= n;
  h.data_tail += n;
  table_.write_u64_field(id_, offsetof(chanflow_channel, data_free));
  table_.write_u64_field(id_, offsetof(chanflow_channel, data_tail));
  return index;
}

void Channel::enq(HostReservation&& r) {
  if (r.ces.size() != std::size_t{r.n} * config_.ce_bytes)
    throw ChannelError(fmt::format("channel '{}': enq of a reservation whose buffer was resized",
                                   config_.name));
  if (r.n == 0) return;
  table_.refresh(id_);
  publish(r.index, r.n, r.ces.data());
  r.n = 0;
  r.ces.clear();
}

std::uint32_t Channel::put(std::span<const std::byte> ces) {
  const std::uint32_t bytes = config_.ce_bytes;
  if (ces.size() % bytes != 0)
    throw ChannelError(fmt::format("channel '{}': put of {} bytes, not whole CEs of {}", config_.name, ces.size(), bytes));
  table_.refresh(id_);
  const auto& h = table_.mirror(id_);
  const auto room = std::max<std::int64_t>(static_cast<std::int64_t>(h.data_free), 0);
  const auto n = static_cast<std::uint32_t>(
      std::min<std::uint64_t>({ces.size() / bytes, h.max_reservation, static_cast<std::uint64_t>(room)}));
  if (n == 0) return 0;
  const std::optional<std::uint32_t> index = reserve(n);  // fits: n is within both bounds
  if (!index) return 0;
  publish(*index, n, ces.data());
  return n;
}

void Channel::publish(std::uint32_t index, std::uint32_t n, const std::byte* ces) {
  const Runtime& rt = table_.runtime();
  auto& h = table_.mirror(id_);
  rt.svm_write(data_ + std::size_t{index} * config_.ce_bytes, ces, std::size_t{n} * config_.ce_bytes);

  const std::uint32_t ccap = h.ctrl_capacity;
  std::vector<std::uint64_t> entries(n);
  for (std::uint32_t k = 0; k < n; ++k) entries[k] = ctrl_entry(h.ctrl_reserve_tail + k, ccap, index + k);
  // The entries may wrap around the control array: at most two copies.
  const auto first = static_cast<std::uint32_t>(h.ctrl_reserve_tail % ccap);
  const std::uint32_t before_wrap = std::min(n, ccap - first);
  rt.svm_write(ctrl_ + first, entries.data(), before_wrap * sizeof(std::uint64_t));
  rt.svm_write(ctrl_, entries.data() + before_wrap, (n - before_wrap) * sizeof(std::uint64_t));

  h.ctrl_reserve_tail += n;
  h.ctrl_published += n;
  table_.write_u64_field(id_, offsetof(chanflow_channel, ctrl_reserve_tail));
  table_.write_u64_field(id_, offsetof(chanflow_channel, ctrl_published));
}

// The host's talloc sets its slots' bits as the device's does (read, set, write back).
void Channel::mark_live(std::uint32_t first_slot, std::uint32_t n) {
  const Runtime& rt = table_.runtime();
  std::vector<std::uint32_t> bits(live_words(config_));
  rt.svm_read(bits.data(), live_, bits.size() * sizeof(std::uint32_t));
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t slot = (first_slot + k) % config_.capacity;
    bits[slot / 32] |= 1u << (slot % 32);
  }
  rt.svm_write(live_, bits.data(), bits.size() * sizeof(std::uint32_t));
}

Channel::Range Channel::ready() const {
  const auto& h = counters();
  return {h.ctrl_head, h.ctrl_published - h.ctrl_head};
}

void Channel::mark_dispatched(std::uint64_t count) {
  auto& h = table_.mirror(id_);
  if (count > h.ctrl_published - h.ctrl_head)
    throw ChannelError(fmt::format("channel '{}': dispatching {} CEs but only {} are ready",
                                   config_.name, count, h.ctrl_published - h.ctrl_head));
  h.ctrl_head += count;
  table_.write_u64_field(id_, offsetof(chanflow_channel, ctrl_head));
}

std::uint64_t Channel::deallocate() {
  table_.refresh(id_);
  const std::uint64_t before = table_.counters(id_).data_free;
  table_.enqueue_deallocate({id_});
  table_.refresh(id_);
  table_.check_errors();
  return table_.counters(id_).data_free - before;
}

std::uint64_t Channel::freed_unreclaimed() {
  table_.refresh(id_);
  const auto& h = table_.counters(id_);
  if (h.data_tail == h.data_head) return 0;
  const std::uint32_t groups = config_.capacity / config_.done_group;
  std::vector<std::uint32_t> done(groups);
  table_.runtime().svm_read(done.data(), done_, groups * sizeof(std::uint32_t));
  std::uint64_t freed = 0;
  // The live window starts on a group boundary (deallocation keeps data_head there).
  for (std::uint64_t pos = h.data_head; pos < h.data_tail; pos += config_.done_group)
    freed += done[(pos % config_.capacity) / config_.done_group];
  return freed;
}

std::vector<std::byte> Channel::read_ce(std::uint32_t index) const {
  if (index >= config_.capacity + config_.max_reservation)
    throw ChannelError(fmt::format("channel '{}': CE index {} is outside its data array ({} + {} spare)",
                                   config_.name, index, config_.capacity, config_.max_reservation));
  std::vector<std::byte> out(config_.ce_bytes);
  table_.runtime().svm_read(out.data(), data_ + std::size_t{index} * config_.ce_bytes, out.size());
  return out;
}

// ---------------------------------------------------------------------------------------------
std::string_view to_string(ScanPath path) {
  switch (path) {
    case ScanPath::Auto: return "auto";
    case ScanPath::Sequential: return "sequential";
    case ScanPath::HillisSteele: return "hillis-steele";
    case ScanPath::Collective: return "collective";
  }
  return "?";
}

ScanPath resolve_scan_path(const Runtime& runtime, ScanPath requested) {
  if (requested != ScanPath::Auto) return requested;
  const auto& caps = runtime.caps();
  if (caps.type & CL_DEVICE_TYPE_CPU) return ScanPath::Sequential;
  return caps.work_group_scan_builds ? ScanPath::Collective : ScanPath::HillisSteele;
}

DeviceOrder device_order(const DeviceCaps& caps) {
  // NVIDIA's GPUs since Volta (compute capability 7, sm_70) have PTX's .release and .acquire at
  // .gpu scope; an older one (or one that does not say) gets none: its programs must not
  // hold the instructions at all, or they would not build.
  if ((caps.type & CL_DEVICE_TYPE_GPU) && caps.vendor.find("NVIDIA") != std::string::npos && caps.nv_compute_major >= 7)
    return DeviceOrder::Ptx;
#if defined(__x86_64__)
  if (caps.type & CL_DEVICE_TYPE_CPU) return DeviceOrder::Tso;  // a CPU device runs on this host
#endif
  return DeviceOrder::None;
}

const char* to_string(DeviceOrder order) {
  switch (order) {
    case DeviceOrder::Ptx: return "PTX release/acquire at GPU scope";
    case DeviceOrder::Tso: return "x86-64 store order (TSO)";
    case DeviceOrder::None: break;
  }
  return "none";
}

cl::Program build_channel_program(const Runtime& runtime, std::string_view user_source,
                                  const ChannelProgramOptions& options) {
  return build_channel_program(runtime, std::vector<std::string_view>{user_source}, options);
}

namespace {

// The sources and options of a channel program: the channel's device API, then the user's.
std::pair<std::vector<std::string_view>, std::string> channel_program_parts(
    const Runtime& runtime, const std::vector<std::string_view>& user_sources, const ChannelProgramOptions& options) {
  const auto wg = options.wg_size;
  if (wg == 0 || wg > runtime.caps().max_work_group_size)
    throw ChannelError(fmt::format("work-group size {} is not supported by '{}' (1..{})", wg,
                                   runtime.caps().name, runtime.caps().max_work_group_size));
  std::string opts = fmt::format("-DCHANFLOW_WG_SIZE={}", wg);
  switch (resolve_scan_path(runtime, options.scan)) {
    case ScanPath::Sequential: opts += " -DCHANFLOW_SCAN_SEQUENTIAL"; break;
    case ScanPath::Collective: opts += " -DCHANFLOW_SCAN_COLLECTIVE -cl-std=CL2.0"; break;
    default: break;
  }
  if (options.count_atomics) opts += " -DCHANFLOW_COUNT_ATOMICS";
  switch (device_order(runtime.caps())) {
    case DeviceOrder::Ptx: opts += " -DCHANFLOW_ORDER_PTX"; break;
    case DeviceOrder::Tso: opts += " -DCHANFLOW_ORDER_TSO"; break;
    case DeviceOrder::None: break;
  }
  if (!options.extra.empty()) opts += " " + options.extra;
  std::vector<std::string_view> sources{channels_cl::channel_layout_h(), channels_cl::order_cl(),
                                        channels_cl::reserve_cl(), channels_cl::channel_cl(),
                                        channels_cl::channel_per_item_cl()};
  sources.insert(sources.end(), user_sources.begin(), user_sources.end());
  return {std::move(sources), std::move(opts)};
}

}  // namespace

cl::Program build_channel_program(const Runtime& runtime, const std::vector<std::string_view>& user_sources,
                                  const ChannelProgramOptions& options) {
  const auto [sources, opts] = channel_program_parts(runtime, user_sources, options);
  return runtime.build(sources, opts);
}

bool channel_program_built_before(const Runtime& runtime, const std::vector<std::string_view>& user_sources,
                                  const ChannelProgramOptions& options) {
  const auto [sources, opts] = channel_program_parts(runtime, user_sources, options);
  return runtime.built_before(sources, opts);
}

}  // namespace chanflow
