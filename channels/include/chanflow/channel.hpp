// The host side of chanflow's channels: creation in SVM, host talloc/enq to seed CEs, one-transfer
// reads of every channel's counters, and in-order deallocation by the done counts.
#pragma once

#include "chanflow/channel_layout.h"
#include "chanflow/opencl.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chanflow {

/// A bad argument to a channel call (zero capacity, CE size 0, unknown channel ...).
class ChannelError : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// ChannelConfig::max_reservation's default, where the capacity is larger.
inline constexpr std::uint32_t kDefaultMaxReservation = 8192;

struct ChannelConfig {
  std::string name;
  std::uint32_t ce_bytes = 0;    ///< bytes per channel element; a multiple of 4, at most 64 KiB
  std::uint32_t capacity = 0;    ///< data-array elements; a multiple of done_group
  std::uint32_t done_group = 64; ///< adjacent elements sharing one done count (thesis: 64)
  /// Most CEs one talloc (one work-group's total) may reserve; 0 picks min(capacity, kDefaultMaxReservation).
  /// Costs that many spare CEs of memory, which keep a reservation contiguous when it wraps.
  std::uint32_t max_reservation = 0;
  /// Checked frees: a bit per slot, set by talloc and cleared by tfree, catches every tfree of a
  /// CE that is not allocated (one more atomic per CE in each). Off, deallocation catches only a
  /// done-count group freed more often than it had CEs. CHANFLOW_CHECK_FREES=1 turns it on for
  /// every channel.
  bool check_frees = false;
};

/// Every channel header of one runtime in one SVM array, so the aggregator reads all counters
/// in a single transfer (DESIGN.md decision 4).
class ChannelTable {
 public:
  explicit ChannelTable(const Runtime& runtime, std::uint32_t max_channels = 256);
  /// Waits for the queue: non-blocking copies read the host mirror and the deallocation list.
  ~ChannelTable();
  ChannelTable(const ChannelTable&) = delete;
  ChannelTable& operator=(const ChannelTable&) = delete;

  const Runtime& runtime() const noexcept { return runtime_; }
  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(mirror_.size()); }
  /// Channels the table can hold (its slots; a retired channel keeps its slot).
  std::uint32_t max_channels() const noexcept { return max_channels_; }

  /// Reads the headers of every channel in one transfer. No kernel may be writing them
  /// concurrently unless the caller accepts stale values.
  void refresh();
  /// Reads one channel's header.
  void refresh(std::uint32_t id);
  /// The bytes of every channel's header, from headers_allocation() on: what a copy made elsewhere
  /// (the device scheduler's gathered readback) takes for load_headers.
  std::size_t headers_bytes() const noexcept { return mirror_.size() * sizeof(chanflow_channel); }
  /// Takes `bytes` copied from the device's headers in place of refresh(); throws ChannelError
  /// unless they are `headers_bytes()` (a channel made since the copy was laid out).
  void load_headers(const void* from, std::size_t bytes);

  /// The header of channel `id` as of the last refresh. Throws ChannelError for an unknown id.
  const chanflow_channel& counters(std::uint32_t id) const;
  /// The device-side header (an SVM pointer) to pass to kernels.
  chanflow_channel* device_header(std::uint32_t id) const;
  /// The SVM allocation holding every header; kernels reaching headers indirectly need it.
  void* headers_allocation() const noexcept { return headers_.get(); }

  /// Enqueues in-order deallocation (channels/cl/deallocate.cl) of the given channels on the
  /// runtime's queue, after whatever kernels are already enqueued; the next refresh() sees the
  /// new heads. Throws ChannelError for an unknown id.
  void enqueue_deallocate(const std::vector<std::uint32_t>& ids);
  /// Throws ChannelError if a channel's deallocation found a CE freed twice (after refresh()).
  void check_errors() const;
  /// Every SVM allocation the table's channels live in (the headers and the storage arena's
  /// chunks), for clSetKernelExecInfo: a few pointers, however many channels there are.
  std::vector<void*> svm_allocations() const;
  /// `bytes` of SVM from the channels' storage arena, for state kept beside a channel's slots (a
  /// yielding consumer's yield state): kernels reach it without naming another allocation. Not
  /// zeroed; lives as long as the table.
  void* allocate_side_storage(std::size_t bytes) { return allocate_storage(bytes).first; }
  /// Bytes of the storage arena taken so far (channels' storage and side storage; the arena's
  /// chunks may hold up to as much again unused).
  std::size_t storage_used() const noexcept { return storage_used_; }
  /// `bytes` (a multiple of 128 is kept) of the table's control area, in the allocation that
  /// holds the headers, which every launch names already: small blocks a scheduler keeps for its
  /// launches (a status word, counters, environments) cost a launch no pointer of their own. Zeroed
  /// when the table is made; nullptr once the area (kControlBytes) has no room left.
  void* allocate_control(std::size_t bytes);
  static constexpr std::size_t kControlBytes = std::size_t{8} << 20;

 private:
  friend class Channel;
  std::uint32_t add(const chanflow_channel& header);
  void retire(std::uint32_t id);
  chanflow_channel& mirror(std::uint32_t id);
  void write_header(std::uint32_t id);
  void write_u64_field(std::uint32_t id, std::size_t offset);
  /// Storage for a channel: `bytes` from the arena, and the chunk holding them. Channels are
  /// carved out of a few large SVM allocations because NVIDIA's OpenCL charges every launch for
  /// each pointer named in clSetKernelExecInfo (scheduler/README.md, "What a launch costs"). A
  /// retired channel's space is reused only when the table goes.
  std::pair<void*, void*> allocate_storage(std::size_t bytes);

  const Runtime& runtime_;
  std::uint32_t max_channels_;
  SvmBuffer headers_;                       // the headers, then the control area
  std::size_t control_used_ = 0;
  std::vector<chanflow_channel> mirror_;
  std::vector<bool> live_;
  std::vector<SvmBuffer> chunks_;           // the storage arena, filled in order
  std::size_t chunk_used_ = 0;              // bytes used in the last chunk
  std::size_t storage_used_ = 0;            // bytes used in every chunk
  std::optional<cl::Kernel> deallocate_;
  SvmBuffer dealloc_list_;
  std::vector<std::uint64_t> dealloc_staging_;
  cl::Event dealloc_copy_;
  std::vector<void*> dealloc_svm_;  // what the kernel was last told it reaches
};

/// A lock-free multi-producer/multi-consumer channel in SVM (thesis 4.1.2).
/// Device code uses the collective talloc/enq/deq/tfree of channels/cl/channel.cl; the host
/// seeds CEs through talloc/enq below and plays the aggregator's part (ready ranges,
/// dispatch bookkeeping, deallocation). Host calls are made while no kernel uses the channel.
class Channel {
 public:
  Channel(ChannelTable& table, ChannelConfig config);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  std::uint32_t id() const noexcept { return id_; }
  const ChannelConfig& config() const noexcept { return config_; }
  /// The header to pass to kernels (clSetKernelArgSVMPointer).
  chanflow_channel* device_ptr() const { return table_.device_header(id_); }
  /// SVM allocations reached through the header's pointers, for clSetKernelExecInfo.
  std::vector<void*> svm_allocations() const;
  /// Bytes of device memory this channel holds (data, control and done-count arrays).
  std::size_t footprint_bytes() const noexcept { return storage_bytes_; }
  /// The storage a channel of `config` takes (control entries, done counts, CEs).
  static std::size_t storage_bytes_for(const ChannelConfig& config);

  /// A host reservation: fill `ces` (n * ce_bytes bytes), then pass it to enq().
  struct HostReservation {
    std::vector<std::byte> ces;
    std::uint32_t index = 0;  ///< physical data-array index of the first CE
    std::uint32_t n = 0;
  };
  /// Reserves n CEs, all or nothing: std::nullopt if they do not fit.
  std::optional<HostReservation> talloc(std::uint32_t n);
  /// Writes the CEs into the channel and makes them ready.
  void enq(HostReservation&& reservation);
  /// talloc and enq at once, straight from `ces` (whole CEs, in order): reserves as many of them
  /// as fit in one reservation (at most max_reservation and the free slots), writes and publishes
  /// them, and returns how many (0: the channel is full). No copy of the CEs is made on the way.
  std::uint32_t put(std::span<const std::byte> ces);

  /// Counters as of the table's last refresh.
  const chanflow_channel& counters() const { return table_.counters(id_); }
  /// Ready CEs as control positions [begin, begin + count), from the last refresh.
  struct Range {
    std::uint64_t begin = 0;
    std::uint64_t count = 0;
  };
  Range ready() const;
  /// Records that the first `count` ready CEs were handed to a dispatch (advances ctrl_head).
  void mark_dispatched(std::uint64_t count);
  /// Frees, in allocation order, every done-count group whose CEs are all done (on the device,
  /// see ChannelTable::enqueue_deallocate), waits, and returns the number of slots freed.
  std::uint64_t deallocate();
  /// CEs freed (tfree) but not yet deallocated because their done-count group still holds
  /// others: in-order deallocation keeps their slots until the whole group is done. With no
  /// kernel running, every allocated CE is ready, dispatched-and-held (a yielded task), or one
  /// of these. Reads the done counts of the live window (one transfer).
  std::uint64_t freed_unreclaimed();

  /// Reads back the CE at physical data-array index `index` (< capacity + max_reservation),
  /// as found in a control entry (for tests and tools; one transfer each).
  std::vector<std::byte> read_ce(std::uint32_t index) const;

  // Work that moves between devices (multidevice/; channel_handoff.cpp), host calls as above.
  /// Takes the first ready CEs, up to `max` of them and as long as `may_go` accepts each (in
  /// order; none: all may go): marks them dispatched, frees them, and returns them packed
  /// (size / ce_bytes CEs, in order). Nothing else of the channel changes.
  std::vector<std::byte> take_ready(std::uint32_t max,
                                    const std::function<bool(std::span<const std::byte>)>& may_go = {});
  /// Writes a reservation's CEs without making them ready: frames that a device's enq_at (the
  /// last child returning into one) or the host's enq_at publishes later.
  void place(HostReservation&& reservation);
  /// Makes the CE at physical index `index`, reserved and placed earlier, ready: the host's
  /// chanflow_enq_at.
  void enq_at(std::uint32_t index);
  /// The device address of the CE at physical index `index` (a frame's address, its result slots').
  std::uint64_t ce_address(std::uint32_t index) const;

 private:
  void mark_live(std::uint32_t first_slot, std::uint32_t n);
  /// The host's reservation of n slots at data_tail (the mirror refreshed by the caller): the
  /// first slot's index, or nothing, counted as a failed reservation, where they do not fit.
  std::optional<std::uint32_t> reserve(std::uint32_t n);
  /// Writes n CEs into the slots from `index` on and publishes them (the mirror refreshed).
  void publish(std::uint32_t index, std::uint32_t n, const std::byte* ces);

  ChannelTable& table_;
  ChannelConfig config_;
  std::uint32_t id_ = 0;
  void* chunk_ = nullptr;  // the table's arena chunk holding this channel's storage
  std::size_t storage_bytes_ = 0;
  std::uint64_t* ctrl_ = nullptr;
  std::uint32_t* done_ = nullptr;
  std::uint32_t* live_ = nullptr;  // checked frees' bitmap, or null
  std::byte* data_ = nullptr;
};

/// How the work-group scan inside talloc is computed (identical results; speed differs).
enum class ScanPath { Auto, Sequential, HillisSteele, Collective };
std::string_view to_string(ScanPath path);

struct ChannelProgramOptions {
  std::uint32_t wg_size = 64;
  ScanPath scan = ScanPath::Auto;
  bool count_atomics = false;  ///< count global atomics into chanflow_channel::atomic_ops
  std::string extra;           ///< more build options
};

/// The scan path Auto resolves to on this device: sequential on CPUs, collective where it
/// builds, Hillis-Steele otherwise.
ScanPath resolve_scan_path(const Runtime& runtime, ScanPath requested);

/// How the work-groups of one launch may order what they hand each other (`cl/order.cl`:
/// chanflow_store_release, chanflow_load_acquire): PTX's device-scope release and acquire on
/// NVIDIA, x86-64's store order on a CPU device of an x86-64 host, or none promised.
enum class DeviceOrder { Ptx, Tso, None };
DeviceOrder device_order(const DeviceCaps& caps);
const char* to_string(DeviceOrder order);

/// Builds `user_source` after the channel's device API (layout, reservation, talloc/enq/deq/
/// tfree, the per-work-item baseline and device-scope ordering), with CHANFLOW_WG_SIZE =
/// options.wg_size and the device's CHANFLOW_ORDER_* (device_order).
cl::Program build_channel_program(const Runtime& runtime, std::string_view user_source,
                                  const ChannelProgramOptions& options);
/// The same with several sources, concatenated in order after the channel's API.
cl::Program build_channel_program(const Runtime& runtime, const std::vector<std::string_view>& user_sources,
                                  const ChannelProgramOptions& options);
/// Whether build_channel_program with these arguments was built before (Runtime::built_before):
/// on a GPU, whether its build is likely a lookup in the driver's cache.
bool channel_program_built_before(const Runtime& runtime, const std::vector<std::string_view>& user_sources,
                                  const ChannelProgramOptions& options);

}  // namespace chanflow
