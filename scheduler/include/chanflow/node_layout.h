/* The per-dispatch environment of a kernel node, its error status and its yield records,
 * declared once for host C++ and OpenCL C (see scheduler/cl/). */
#ifndef CHANFLOW_NODE_LAYOUT_H
#define CHANFLOW_NODE_LAYOUT_H

#ifndef __OPENCL_VERSION__
#include "chanflow/channel_layout.h"  /* on the device, the runtime prepends it */
#include "chanflow/heap_layout.h"
#endif

#ifdef __OPENCL_VERSION__
#define CHANFLOW_SVM_STRUCT_PTR(type) __global type*
#else
#define CHANFLOW_SVM_STRUCT_PTR(type) uint64_t
#endif

/* A pointer to user data in SVM, for CE and argument structs declared once for the host and
 * the kernels: __global type* on the device, type* on the host (64 bits on both; the runtime
 * requires a 64-bit device). The data must be SVM (SvmBuffer), and the kernel nodes reaching it
 * must name it (KernelNode::uses). */
#ifdef __OPENCL_VERSION__
#define CHANFLOW_PTR(type) __global type*
#else
#define CHANFLOW_PTR(type) type*
#endif

/* Output ports a kernel node may have (a compiled Cilk function has one per function it spawns and
 * per cilk_for loop it holds). A graph's program is built with CHANFLOW_NODE_PORTS, its widest
 * node's ports, which sizes the kernels' per-port arrays (private and local memory). */
#define CHANFLOW_MAX_PORTS 32
#if defined(__OPENCL_VERSION__) && !defined(CHANFLOW_NODE_PORTS)
#define CHANFLOW_NODE_PORTS CHANFLOW_MAX_PORTS
#endif

/* Loops chanflowc compiles from cilk_for (compiler/README.md, "cilk_for"): the grain a range of n
 * iterations is cut in on a CPU device and on any other (a GPU: a leaf a work-group shares, at
 * least CHANFLOW_LOOP_MIN_GPU iterations and about CHANFLOW_LOOP_LEAVES_GPU leaves a loop; both
 * may be set for a build with CHANFLOW_BUILD_OPTIONS=-D...), and the most iterations a loop runs
 * where it is on a CPU device. Device code picks by CHANFLOW_CPU_DEVICE (node_macros.cl), the
 * host by cpu_shaped() (sizing.hpp). */
#define CHANFLOW_LOOP_GRAIN_CPU(n) ((n) / 64 < 16384 ? 16384 : (n) / 64 < (1L << 20) ? (n) / 64 : (1L << 20))
#ifndef CHANFLOW_LOOP_LEAVES_GPU
#define CHANFLOW_LOOP_LEAVES_GPU 128
#endif
#ifndef CHANFLOW_LOOP_MIN_GPU
#define CHANFLOW_LOOP_MIN_GPU 2048
#endif
#define CHANFLOW_LOOP_GRAIN_GPU(n)                                                                       \
  ((n) <= CHANFLOW_LOOP_MIN_GPU ? (n)                                                                   \
   : (n) / CHANFLOW_LOOP_LEAVES_GPU < CHANFLOW_LOOP_MIN_GPU ? CHANFLOW_LOOP_MIN_GPU                      \
   : (n) / CHANFLOW_LOOP_LEAVES_GPU < 16384                 ? (n) / CHANFLOW_LOOP_LEAVES_GPU             \
                                                            : 16384)
#define CHANFLOW_LOOP_INLINE_CPU 65536
/* The widest work-group a compiled program with cilk_for leaves runs unless asked (the compiled
 * runtime, cilk_runtime.cpp): a leaf's work-items share its iterations, and a loop shorter than
 * the group leaves the rest idle (the 64 rows of Strassen's base case: three quarters of a
 * 256-item group, half of a 128-item one; compiled Strassen 2048 on an H200: 18.4 ms in groups
 * of 256, 11.9 in groups of 128; on an H100 after its one-grain loops kept their blocks in their
 * leaves' tasks: 10.1 ms in groups of 128, 9.4 in groups of 64, 10.5 in groups of 32). */
#define CHANFLOW_LOOP_WG_GPU 64

/* Error codes a dispatch reports through chanflow_status (the first one of a run wins). */
#define CHANFLOW_ERR_NONE 0u
#define CHANFLOW_ERR_CE_SIZE 1u      /* the body's CE type differs from the channel's CE size */
#define CHANFLOW_ERR_SPAWN_LIMIT 2u  /* more spawns on a port than its edge declared */
#define CHANFLOW_ERR_SPAWN_SIZE 3u   /* a spawned value's size differs from the port's CE size */
#define CHANFLOW_ERR_BAD_PORT 4u     /* a spawn on a port the node does not have */
#define CHANFLOW_ERR_CHANNEL_FULL 5u /* a non-yielding node found no room despite admission control */
#define CHANFLOW_ERR_YIELD_SPACE 6u  /* more yield records than the aggregator provided room for */
#define CHANFLOW_ERR_NODE_KIND 7u    /* a continuation stack consumed by a node not made as a continuation node */
#define CHANFLOW_ERR_NO_CONTINUATION 8u /* chanflow_spawn_child or _continuation in a node without a continuation port */
#define CHANFLOW_ERR_SCRATCH 9u      /* a frame found no free scratch block at its level (more live than declared) */
#define CHANFLOW_ERR_YIELD_STATE 10u /* a yielding node's input has no yield state to keep a yielded task's spawns in */
#define CHANFLOW_ERR_GROUP_SPAWN 11u /* a work-item of a work-group task other than its leader spawned */
#define CHANFLOW_ERR_HEAP_FULL 12u   /* the device heap could not meet a request (detail, extra: its bytes) */
#define CHANFLOW_ERR_HEAP_FREE 13u   /* a free of memory the heap did not hand out, or took back already (the address) */
#define CHANFLOW_ERR_NO_HEAP 14u     /* an allocation in a graph given no device heap (Graph::set_heap) */
#define CHANFLOW_ERR_HELPER_STACK 15u /* a recursive function's explicit stack found the heap full (detail: the
                                       * calls deep it was; extra: which function, Graph::name_recursive_functions) */
#define CHANFLOW_ERR_ASSERT 16u      /* an assertion of device code failed (detail: which, Graph::name_assertions) */
#define CHANFLOW_ERR_EXIT 17u        /* device code called exit (detail: its status) or abort (extra: 1) */

typedef struct chanflow_status {
  chanflow_u32 code;
  chanflow_u32 node;   /* kernel node index */
  chanflow_u32 detail; /* port, or size found */
  chanflow_u32 extra;  /* the expected value */
} chanflow_status;

/* A restart context (thesis 4.4): the kernel node and input channel are the dispatch's; the
 * record names the CE (its control position) and the resource it blocked on. The resume point
 * lives in the CE itself (chanflow_task::resume_port), what the task had yet to flush in its
 * input's yield state (chanflow_node_env::yield_state). */
typedef struct chanflow_yield_record {
  chanflow_u64 ctrl_pos;
  chanflow_u32 blocked_port;
  chanflow_u32 depth;  /* the level of the CE's channel (a dispatch may span a stack's levels) */
} chanflow_yield_record;
CHANFLOW_CHECK_SIZE(chanflow_yield_record, 16);

/* The header every CE of a yielding kernel node starts with (a Cilk task frame). `ret` and
 * `ret_frame` say where the task's result goes: a 64-bit result slot, and the continuation
 * frame holding that slot, whose join counter the task decrements when it has returned (0 for
 * a root task returning into plain memory). */
typedef struct chanflow_task {
  chanflow_u64 ret;          /* the result slot: an SVM address, or 0 */
  chanflow_u64 ret_frame;    /* the chanflow_frame the slot lies in, or 0 */
  chanflow_u32 resume_port;  /* ports below this one were flushed before a yield; the flush resumes here */
  chanflow_u32 cont_index;   /* physical index of this task's continuation CE, once reserved */
} chanflow_task;

#define CHANFLOW_TASK_BYTES 24
CHANFLOW_CHECK_SIZE(chanflow_task, CHANFLOW_TASK_BYTES);
CHANFLOW_CHECK_ALIGN(chanflow_task, 8);

/* The header every continuation CE starts with (thesis Figure 4-9: the frame holding the live
 * locals after a sync and the children's result slots, 64-bit slot i at byte
 * CHANFLOW_FRAME_BYTES + 8 * i). The library fills it when the task flushes its continuation:
 * the continuation returns where the task would have, and it is enqueued (made ready) by the
 * last child to return, so a continuation never runs before its children, whatever the policy
 * (a join counter per frame, in place of the thesis' level-wide gating). */
typedef struct chanflow_frame {
  chanflow_u64 ret;        /* copied from the task: where the continuation's result goes */
  chanflow_u64 ret_frame;  /* copied from the task */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_channel) channel; /* the continuation channel holding this frame */
  chanflow_u32 index;      /* its physical index there */
  chanflow_u32 pending;    /* children that have not returned yet */
  chanflow_u64 scratch;    /* the frame's scratch block (an SVM address), or 0: see chanflow_scratch_pool */
} chanflow_frame;

#define CHANFLOW_FRAME_BYTES 40
CHANFLOW_CHECK_SIZE(chanflow_frame, CHANFLOW_FRAME_BYTES);
CHANFLOW_CHECK_ALIGN(chanflow_frame, 8);

/* Frame scratch: per-frame memory of a continuation stack with a scratch size
 * (ChannelStackNode::set_frame_scratch), one pool per level. The flush that reserves a frame
 * takes a block for it (a bit in `bitmap`) and the frame's continuation node gives it back
 * after its body has run, so the block lives exactly as long as the frame: from the task's
 * spawns to its continuation (the Cilk function's temporaries until its sync). */
typedef struct chanflow_scratch_pool {
  chanflow_u64 base;        /* blocks * block_bytes bytes of SVM */
  chanflow_u64 block_bytes; /* a multiple of 128 */
  CHANFLOW_SVM_STRUCT_PTR(uint) bitmap; /* one bit per block, set while a frame holds it */
  chanflow_u32 blocks;
  chanflow_u32 words;       /* bitmap words; bits past `blocks` stay set */
} chanflow_scratch_pool;

/* What one launch's work-groups count on the device; zeroed before each round. */
typedef struct chanflow_launch_counters {
  chanflow_u32 yields;         /* restart contexts written (records, or control entries published again) */
  chanflow_u32 claimed;        /* a sweep: CEs taken, over its passes */
  chanflow_u32 batches;        /* a sweep: work-groups that found CEs, over its passes */
  chanflow_u32 partial_yields; /* a sweep: tasks that yielded after reserving their continuation */
  chanflow_u32 restarts;       /* tasks resumed after a yield (CHANFLOW_TASK_YIELDED was set) */
  chanflow_u32 busy_passes;    /* a planned sweep: passes whose plan gave it CEs */
  chanflow_u32 passes;         /* a planned sweep: passes planned so far this round */
  chanflow_u32 last_busy_pass; /* a planned sweep: the last of them that gave it CEs (1-based; 0: none) */
  chanflow_u32 resumed_at[CHANFLOW_MAX_PORTS]; /* of those, per port their flush resumed at */
  chanflow_u64 busy_ns; /* the device scheduler: work-group time running its batches, summed over
                           work-groups (0 where the device has no clock: schedule.cl) */
} chanflow_launch_counters;
CHANFLOW_CHECK_SIZE(chanflow_launch_counters, 168);

/* chanflow_task::resume_port's top bits: the task yielded and has not run again since; and it is
 * counted in its level's resumable tasks (chanflow_node_env::resumable). */
#define CHANFLOW_TASK_YIELDED 0x80000000u
#define CHANFLOW_TASK_RESUMABLE 0x40000000u

typedef struct chanflow_node_env {
  CHANFLOW_SVM_STRUCT_PTR(chanflow_channel) port[CHANFLOW_MAX_PORTS]; /* output channel per port */
  CHANFLOW_SVM_STRUCT_PTR(uchar) user_args;                           /* the node's argument block */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_status) status;
  CHANFLOW_SVM_STRUCT_PTR(ulong) positions;  /* restart dispatch: control positions; 0: a range */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_yield_record) yields; /* this dispatch's yield records */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_launch_counters) counters; /* this launch's */
  chanflow_u32 max_spawns[CHANFLOW_MAX_PORTS]; /* per work-item, as declared on the edge */
  chanflow_u32 ce_words[CHANFLOW_MAX_PORTS];
  chanflow_u32 staging_offset[CHANFLOW_MAX_PORTS]; /* in words */
  chanflow_u32 ports;
  chanflow_u32 depth;          /* level of the input channel (0 if plain) */
  chanflow_u32 node;
  chanflow_u32 yielding;       /* 1: a failed reservation yields; 0: it is an error */
  chanflow_u32 cont_port;      /* port holding the task's continuation, or 0xffffffff */
  chanflow_u32 yield_capacity; /* records `yields` can hold */
  chanflow_u32 frames;         /* 1: the input is a continuation stack (CEs start with chanflow_frame) */
  chanflow_u32 sweep_levels;   /* 0: a range or list dispatch; else a sweep over this many levels */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_channel) in; /* the input channel (this level's, in a sweep) */
  /* CEs of this stack level published again by a sweep after reserving their continuation (they
   * need no room in the continuation port to go on); kept across rounds, named by every dispatch
   * of the level (a resumed task leaves the count however it is dispatched). 0: not a stack
   * level a sweep can reach. */
  CHANFLOW_SVM_STRUCT_PTR(uint) resumable;
  chanflow_u32 room_check;     /* a sweep claims only levels whose outputs have room */
  /* 1: a multi-level range dispatch: sweep_levels environments, level l's work-groups from
   * group_first on take range_count CEs from control position range_begin (host-sized). */
  chanflow_u32 ranged;
  chanflow_u64 range_begin;
  chanflow_u32 range_count;
  chanflow_u32 group_first;
  /* 1: a planned sweep: the ranges above are written on the device, by the planning kernel
   * that runs before each pass (chanflow_plan_batches), and a yield publishes the CE again in
   * its channel, as in a claimed sweep. */
  chanflow_u32 planned;
  /* Bytes of yield state per slot of the input channel (see yield_state below), or 0. */
  chanflow_u32 yield_state_bytes;
  /* Frame scratch pools (0: the stack has none, or the level is not made): the continuation
   * port's level (blocks taken at the flush) and the input's (a continuation node's frames give
   * theirs back). */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_scratch_pool) cont_scratch;
  CHANFLOW_SVM_STRUCT_PTR(chanflow_scratch_pool) in_scratch;
  /* A yielding node's input: per logical slot (index % capacity), yield_state_bytes bytes where a
   * task that yields keeps what it has not flushed yet (its spawn records from the refused port
   * on, and its task scratch block), so that its restart resumes at the flush and never runs its
   * body again (the thesis' saved wavefront state, 4.4). Written only by a yield. */
  CHANFLOW_SVM_STRUCT_PTR(uchar) yield_state;
  /* CEs one work-group takes at most: the work-group size, or 1 for a work-group task node
   * (CHANFLOW_GROUP_KERNEL_NODE), whose work-items all work on one CE. */
  chanflow_u32 group_ces;
  /* The CEs each work-group of a range or list dispatch takes (at most group_ces; 0: group_ces):
   * fewer where a narrow launch is spread over more of the device's compute units, by the host
   * (Aggregator::spread) or, for a planned sweep's level, by the planning kernel each pass. */
  chanflow_u32 batch_ces;
  /* The graph's device heap (heap.cl: chanflow_malloc and the rest), or 0. */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_heap) heap;
  /* Granularity control: a task of a compiled Cilk function with a serial form, at this stack
   * level or deeper, runs its whole call in its work-item (chanflow_serial_depth in spawn.cl);
   * CHANFLOW_SERIAL_OFF: never. Written per run (RunOptions::serial_depth). */
  chanflow_u32 serial_depth;
  /* 1: a claimed sweep leaves this level's CEs alone; the host sends them out as a range
   * (Aggregator::serial_ranged: a CPU device's serial level). */
  chanflow_u32 unclaimed;
} chanflow_node_env;

#define CHANFLOW_NODE_ENV_BYTES 808
CHANFLOW_CHECK_SIZE(chanflow_node_env, CHANFLOW_NODE_ENV_BYTES);
CHANFLOW_CHECK_FIELD(chanflow_node_env, max_spawns, 296);
CHANFLOW_CHECK_FIELD(chanflow_node_env, yield_capacity, 700);
/* chanflow_node_env::serial_depth of a run without granularity control. */
#define CHANFLOW_SERIAL_OFF 0xffffffffu

/* One planned sweep, as the planning kernel sees it: the launch's per-level environments and
 * the grid it was given. */
typedef struct chanflow_plan {
  CHANFLOW_SVM_STRUCT_PTR(chanflow_node_env) envs; /* `levels` environments, level l at envs + l */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_launch_counters) counters; /* the launch's: CEs and work-groups planned */
  chanflow_u32 levels;
  chanflow_u32 max_groups; /* work-groups in the node's launch: the plan assigns no more */
  chanflow_u32 spread_groups; /* a pass filling fewer work-groups than this spreads its CEs over as many */
  chanflow_u32 pad;
} chanflow_plan;
CHANFLOW_CHECK_SIZE(chanflow_plan, 32);

/* Levels one planning kernel covers (over all the planned sweeps of a round), and the channel
 * ids it can keep free space for (the graph's channel table must not be larger). */
#define CHANFLOW_PLAN_MAX_LEVELS 128
#define CHANFLOW_PLAN_MAX_CHANNELS 1024

/* A sweep spans at most this many levels of a stack (each work-group's leader looks at them
 * all, deepest first, for CEs to claim). */
#define CHANFLOW_SWEEP_MAX_LEVELS 64

/* The device scheduler (scheduler/cl/schedule.cl): one launch whose work-groups loop, each
 * taking a batch of ready CEs from whichever channel the policy scores highest and running its
 * node's body, until nothing is left for them. */

/* One channel the scheduler watches: a stack level or a channel node, with its consumer. */
typedef struct chanflow_sched_entry {
  CHANFLOW_SVM_STRUCT_PTR(chanflow_node_env) env; /* the level's environment */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_channel) in;   /* the channel (env->in) */
  chanflow_u32 body;    /* which node body runs it: the case of chanflow_sched_run's switch */
  chanflow_u32 node;    /* the consuming kernel node's index in the graph */
  chanflow_u32 level;   /* depth in its stack; 0 for a channel node */
  chanflow_u32 flags;   /* CHANFLOW_SCHED_IN_STACK, CHANFLOW_SCHED_CONTINUATION */
} chanflow_sched_entry;

#define CHANFLOW_SCHED_IN_STACK 1u
#define CHANFLOW_SCHED_CONTINUATION 2u
/* Most entries one scheduler launch watches (a work-group keeps a bit per entry it tried). */
#define CHANFLOW_SCHED_MAX_ENTRIES 2048

/* One batch a work-group ran, in a traced run on a device with a clock (order.cl's
 * chanflow_clock_ns): the trace's device timeline. */
typedef struct chanflow_sched_span {
  chanflow_u64 start_ns, end_ns; /* the device's clock */
  chanflow_u32 group;            /* the work-group */
  chanflow_u32 entry;            /* what it ran: an entry of chanflow_sched */
  chanflow_u32 ces;              /* CEs in the batch */
  chanflow_u32 pad;
  /* A profiled build's (CHANFLOW_SCHED_PHASES, reserve.cl): ns the leader spent in the node's body,
   * the flush's reservations, writes and publishing, the join and the free; 0 elsewhere. As many
   * as reserve.cl's CHANFLOW_SCHED_PHASES_N (the host's trace names them: device_scheduler.cpp). */
  chanflow_u32 phase_ns[6];
} chanflow_sched_span;

/* What a launch of the scheduler reads and counts. */
typedef struct chanflow_sched {
  CHANFLOW_SVM_STRUCT_PTR(chanflow_sched_entry) entries;
  /* Per case of chanflow_sched_run, an environment of its node (a CPU device runs every node's
   * collectives for each batch, the others inactive: schedule.cl). */
  CHANFLOW_SVM_STRUCT_PTR(ulong) envs;
  chanflow_u32 count;      /* entries */
  chanflow_u32 policy;     /* CHANFLOW_POLICY_* */
  chanflow_u32 polls;      /* empty polls in a row after which a work-group leaves */
  chanflow_u32 patience;   /* polls in a row a work-group takes only full batches */
  chanflow_u32 spread;     /* work-groups a narrow level's ready CEs are spread over */
  chanflow_u32 busy;       /* work-groups holding a batch now */
  chanflow_u32 batches;    /* batches run in this launch */
  chanflow_u32 empty_polls;/* polls that found nothing to take */
  chanflow_u32 left_idle;  /* work-groups that left because nothing was ready and none was busy */
  chanflow_u32 left_polls; /* work-groups that left after `polls` empty polls */
  chanflow_u32 quiet;      /* empty polls in a row, with no batch held or finished anywhere in the
                              launch, after which a work-group leaves */
  chanflow_u32 left_quiet; /* work-groups that left so */
  CHANFLOW_SVM_STRUCT_PTR(chanflow_sched_span) spans; /* a traced run's timeline, or 0 */
  chanflow_u32 span_capacity;
  chanflow_u32 spans_used; /* batches that wanted a span (those past the capacity have none) */
  /* A word the host sets while the launch runs (Aggregator::recall_launch; a block of its own,
   * which no write of the header's can overwrite): every work-group leaves at its next poll, so
   * that the host can move work to another device (multidevice/). Zeroed after each launch; 0 (no
 * word) in a run that is not shared. */
  CHANFLOW_SVM_STRUCT_PTR(uint) recall;
  chanflow_u32 left_recalled; /* work-groups that left so */
  /* The launch's claim credits (chanflow_channel::ctrl_credits): 0 until a work-group takes the
   * setting of them (1), 2 once set; the other groups wait for 2. */
  chanflow_u32 credits_set;
  /* Of the empty polls: those whose claim found the batch's CEs taken by other work-groups, and
   * those that found CEs ready whose outputs had no room for them. */
  chanflow_u32 polls_lost;
  chanflow_u32 polls_no_room;
  /* A scheduler the size of the work (schedule.cl, chanflow_sched_doze): work-groups numbered
   * `awake` and up doze instead of polling while some work-group holds a batch. Polls raise it to
   * what they see ready and held plus `least`, and lower it to that when they find nothing ready; a
   * launch starts with every group awake. `least` at or above the launch's work-groups: every one
   * polls. */
  chanflow_u32 awake;
  chanflow_u32 least;
  chanflow_u32 naps; /* the dozing work-groups' sleeps, counted as each leaves */
  chanflow_u32 pad_awake;
} chanflow_sched;

/* A piece of what the host reads after a device-scheduler launch (readback.cl): `words` 32-bit
 * words from `src` to `dst`, and then `src` reset: left (0), zeroed (CHANFLOW_READBACK_ZERO) or
 * copied from the template at `reset`. */
typedef struct chanflow_readback_piece {
  chanflow_u64 src, dst, reset;
  chanflow_u32 words;
  chanflow_u32 pad;
} chanflow_readback_piece;
#define CHANFLOW_READBACK_ZERO 1ul

#define CHANFLOW_POLICY_LEVELIZED 0u
#define CHANFLOW_POLICY_GREEDY 1u
#define CHANFLOW_POLICY_USER 2u

/* What a device policy sees of one channel with ready CEs (chanflow_policy_score). */
typedef struct chanflow_policy_view {
  chanflow_u64 ready;        /* CEs ready (a snapshot: other work-groups take and add meanwhile) */
  chanflow_u64 free;         /* unreserved slots of the channel itself */
  chanflow_u32 level;        /* depth in its stack; 0 for a channel node */
  chanflow_u32 in_stack;
  chanflow_u32 continuation;
  chanflow_u32 node;         /* the consuming kernel node's index in the graph */
  chanflow_u32 group_ces;    /* CEs one work-group takes at most */
  chanflow_u32 pad;
} chanflow_policy_view;

#endif /* CHANFLOW_NODE_LAYOUT_H */
