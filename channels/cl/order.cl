/* Device-scope ordering between the work-groups of one launch: a release store that makes every
 * store its work-group made before it (and saw through a barrier) visible to a work-group whose
 * acquire load reads its value, and the acquire load that does so. OpenCL 1.2 gives no such
 * thing: NVIDIA compiles mem_fence(CLK_GLOBAL_MEM_FENCE) to membar.cta, a work-group-scope fence,
 * and a GPU's L1 keeps lines another SM has since written. What each device gets is chosen on
 * the host (chanflow::device_order) and passed as a build option:
 *
 * - CHANFLOW_ORDER_PTX (NVIDIA): PTX's st.release.gpu and ld.acquire.gpu (sm_70 on), inline.
 * - CHANFLOW_ORDER_TSO (a CPU device of an x86-64 host): x86-64 keeps stores in order and loads
 *   in order (TSO); only the compiler must not move accesses across, which an empty asm with a
 *   memory clobber forbids.
 * - neither: no device-scope order is promised (chanflow::DeviceOrder::None); these fall back to
 *   volatile accesses, and nothing that needs the order may run there.
 *
 * CHANFLOW_ORDER_UNFENCED (a test's switch, through CHANFLOW_BUILD_OPTIONS) drops the fences on
 * any device, to show what the message-passing stress test finds without them. */

#if defined(CHANFLOW_ORDER_UNFENCED)

void chanflow_store_release(volatile __global ulong* p, ulong v) { *p = v; }
ulong chanflow_load_acquire(volatile __global ulong* p) { return *p; }
void chanflow_fence_acq_rel(void) {}
void chanflow_backoff(uint polls) { (void)polls; }

#elif defined(CHANFLOW_ORDER_PTX)

void chanflow_store_release(volatile __global ulong* p, ulong v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
ulong chanflow_load_acquire(volatile __global ulong* p) {
  ulong v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
/* Both at once, for what an atomic read-modify-write publishes or takes: after this item's stores
 * (and those its work-group's barrier showed it) and before a relaxed atomic that publishes them,
 * or after a relaxed atomic that read another work-group's publication and before the loads that
 * depend on it. */
void chanflow_fence_acq_rel(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
/* A work-group polling for work steps aside for a while (sm_70 on), so that polling groups leave
 * the memory system to the groups that work. */
void chanflow_backoff(uint polls) {
  const uint ns = min(64u << min(polls, 5u), 2048u); /* doubling from 64 ns to about 2 us */
  asm volatile("nanosleep.u32 %0;" ::"r"(ns) : "memory");
}

#elif defined(CHANFLOW_ORDER_TSO)

void chanflow_store_release(volatile __global ulong* p, ulong v) {
  __asm__ volatile("" ::: "memory");
  *p = v;
}
ulong chanflow_load_acquire(volatile __global ulong* p) {
  const ulong v = *p;
  __asm__ volatile("" ::: "memory");
  return v;
}
void chanflow_fence_acq_rel(void) { __asm__ volatile("" ::: "memory"); }
void chanflow_backoff(uint polls) { (void)polls; }

#else

void chanflow_store_release(volatile __global ulong* p, ulong v) { *p = v; }
ulong chanflow_load_acquire(volatile __global ulong* p) { return *p; }
void chanflow_fence_acq_rel(void) { mem_fence(CLK_GLOBAL_MEM_FENCE); }
void chanflow_backoff(uint polls) { (void)polls; }

#endif

/* The device's clock in ns, for the device scheduler's timeline and a profiled build's phases
 * (CHANFLOW_SCHED_PHASES, reserve.cl): PTX's %globaltimer on NVIDIA; none elsewhere (0). */
#ifdef CHANFLOW_ORDER_PTX
ulong chanflow_clock_ns(void) {
  ulong ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}
#else
ulong chanflow_clock_ns(void) { return 0ul; }
#endif
