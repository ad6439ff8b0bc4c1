/* The memory layout of a chanflow channel, declared once for host C++ and OpenCL C.
 * See thesis section 4.1.2 (Figure 4-2) and channels/README.md for the protocol. */
#ifndef CHANFLOW_CHANNEL_LAYOUT_H
#define CHANFLOW_CHANNEL_LAYOUT_H

#ifdef __OPENCL_VERSION__
typedef ulong chanflow_u64;
typedef uint chanflow_u32;
/* C's `long long` is 64 bits on every host chanflow runs on, and 128 in OpenCL C: device code
 * compiled from C (chanflowc) spells it this way, so that it means on the device what it means on
 * the host. */
typedef long chanflow_llong;
typedef ulong chanflow_ullong;
#define CHANFLOW_SVM_PTR(type) __global type*
#else
#include <stdint.h>
typedef uint64_t chanflow_u64;
typedef uint32_t chanflow_u32;
typedef long long chanflow_llong;
typedef unsigned long long chanflow_ullong;
/* On the host the SVM pointers are plain 64-bit addresses: the device must have 64 address
 * bits (checked when the runtime opens it), so both sides agree on every offset below. */
#define CHANFLOW_SVM_PTR(type) uint64_t
#endif

/* A layout that host and device share, checked where it is compiled: the host's C and C++ and
 * every device's OpenCL C compiler each check the size and offsets the layout's one definition
 * states, so that a disagreement fails a build, never a run. */
#ifdef __cplusplus
#define CHANFLOW_STATIC_ASSERT(cond, what) static_assert(cond, what)
#define CHANFLOW_ALIGNOF(type) alignof(type)
#else
#define CHANFLOW_STATIC_ASSERT(cond, what) _Static_assert(cond, what)
#define CHANFLOW_ALIGNOF(type) _Alignof(type)
#endif
#define CHANFLOW_CHECK_SIZE(type, bytes) \
  CHANFLOW_STATIC_ASSERT(sizeof(type) == (bytes), "chanflow: " #type " is not " #bytes " bytes here")
#define CHANFLOW_CHECK_ALIGN(type, bytes) \
  CHANFLOW_STATIC_ASSERT(CHANFLOW_ALIGNOF(type) == (bytes), "chanflow: " #type " is not " #bytes "-byte aligned here")
#define CHANFLOW_CHECK_FIELD(type, field, offset) \
  CHANFLOW_STATIC_ASSERT(__builtin_offsetof(type, field) == (offset), \
                         "chanflow: " #type "." #field " is not at byte " #offset " here")

CHANFLOW_CHECK_SIZE(chanflow_llong, 8);
CHANFLOW_CHECK_SIZE(chanflow_ullong, 8);

/* A control-array entry is one 64-bit word: the data-array index of a ready CE in the low
 * 32 bits and, in the high 32 bits, the lap tag (position / ctrl_capacity + 1) of the
 * control position it was written at. A reader knows an entry is ready when its tag matches
 * the lap it expects, so publishing never waits on another work-group. */
#define CHANFLOW_CTRL_INDEX_MASK 0xffffffffUL
#define CHANFLOW_CTRL_TAG_SHIFT 32

/* Positions (data_tail, ctrl_head, ...) are 64-bit counters that only grow; the array index
 * is position % capacity. They never wrap in practice (2^64 CEs), so capacities need not be
 * powers of two.
 *
 * A reservation of T CEs takes T credits from data_free with one fetch-and-sub (giving them
 * back if there were not enough), then T positions from data_tail with one fetch-and-add, so
 * it never retries under contention. Its CEs stay contiguous in memory even when the
 * positions wrap past the array's end: the data array has max_reservation spare elements
 * after the first `capacity`, and a run that starts at index i < capacity simply continues
 * to i + T - 1 there. Element capacity + k stands in for logical slot k, which the same
 * reservation owns, so the two are never in use at once. Control entries hold this
 * physical index; done counts are kept per logical slot (physical % capacity). */
typedef struct chanflow_channel {
  /* Geometry: written by the host at creation, read-only afterwards. */
  CHANFLOW_SVM_PTR(uchar) data;   /* capacity + max_reservation CEs of ce_bytes each */
  CHANFLOW_SVM_PTR(ulong) ctrl;   /* ctrl_capacity entries, see above */
  CHANFLOW_SVM_PTR(uint) done;    /* capacity / done_group counts */
  chanflow_u32 capacity;          /* data-array elements (logical slots) */
  chanflow_u32 ce_bytes;          /* bytes per CE, a multiple of 4 */
  chanflow_u32 ctrl_capacity;     /* 2 * capacity */
  chanflow_u32 done_group;        /* adjacent data elements sharing one done count */
  chanflow_u32 id;                /* index in the channel table */
  chanflow_u32 max_reservation;   /* most CEs one talloc (one work-group) may reserve */

  /* Producer side, updated by device atomics. */
  chanflow_u64 data_tail;           /* next data position to hand out */
  chanflow_u64 ctrl_reserve_tail;   /* next control position to reserve */
  chanflow_u64 ctrl_published;      /* control entries written and visible, total */
  chanflow_u64 failed_reservations; /* work-group (or work-item) reservations refused */
  chanflow_u64 data_free;           /* credits: free elements, as a signed 64-bit value */

  /* Aggregator side: written by the host, or by the deallocation kernel it enqueues, while no
   * other kernel uses the channel (deallocation also moves data_tail and data_free). */
  chanflow_u64 data_head; /* first data position not yet deallocated */
  chanflow_u64 ctrl_head; /* first control position not yet dispatched */

  /* Statistics. atomic_ops counts global atomics on this channel, only in programs built
   * with CHANFLOW_COUNT_ATOMICS (the benchmark's counting pass); otherwise it stays 0. */
  chanflow_u64 oversized_requests; /* refused because they asked for more than max_reservation */
  chanflow_u64 atomic_ops;
  chanflow_u64 errors; /* CHANFLOW_CHANNEL_ERR_* bits */
  /* Checked frees (ChannelConfig::check_frees): one bit per logical slot, set by talloc and
   * cleared by tfree, so a tfree of a CE that is not allocated is caught at once; 0: unchecked
   * (only more frees than allocations in a done-count group are caught, by deallocation). */
  CHANFLOW_SVM_PTR(uint) live;
  /* The device scheduler's in-order deallocation inside a launch (scheduler/cl/schedule.cl): 1
   * while a work-group deallocates this channel, which the others then leave alone. */
  chanflow_u64 dealloc_lock;
  /* CEs reserved here and run by the work-group that made them without being published (the
   * device scheduler's kept spawns, scheduler/cl/schedule.cl): with ctrl_published, the CEs that
   * went through this channel. */
  chanflow_u64 ctrl_kept;
  /* Published CEs not yet claimed, as a signed 64-bit value: the device scheduler's claims take
   * them by fetch-and-subtract before moving ctrl_head by fetch-and-add, so no claim fails and
   * retries (scheduler/cl/claim.cl). enq adds what it publishes; the scheduler's first work-group
   * sets it to ctrl_published - ctrl_head at each launch (between launches the host's dispatches
   * move the head without it). */
  chanflow_u64 ctrl_credits;
} chanflow_channel;

#define CHANFLOW_CHANNEL_BYTES 160
CHANFLOW_CHECK_SIZE(chanflow_channel, CHANFLOW_CHANNEL_BYTES);
CHANFLOW_CHECK_FIELD(chanflow_channel, capacity, 24);
CHANFLOW_CHECK_FIELD(chanflow_channel, data_tail, 48);
CHANFLOW_CHECK_FIELD(chanflow_channel, data_head, 88);
CHANFLOW_CHECK_FIELD(chanflow_channel, ctrl_head, 96);

/* chanflow_channel::errors. Device code sets them with a 32-bit atomic_or on the low word. */
#define CHANFLOW_CHANNEL_ERR_OVERFREE 1u    /* a done-count group got more frees than it had CEs */
#define CHANFLOW_CHANNEL_ERR_NOT_LIVE 2u    /* tfree of a CE not allocated: freed twice, or never reserved */
#define CHANFLOW_CHANNEL_ERR_REALLOCATED 4u /* talloc handed out a slot still allocated (a broken invariant) */

#endif /* CHANFLOW_CHANNEL_LAYOUT_H */
