/* Message passing between the work-groups of one launch (channels/cl/order.cl), the pattern a
 * device-resident scheduler's claims follow: a producer writes a message with plain stores and
 * publishes it with a release store of its flag; a consumer in another work-group, which has read
 * the message's memory before (a stale copy may sit in its L1, or in a register), waits for the
 * flag with acquire loads, a bounded number of times, and reads the message again: every word must
 * be the new one. Work-item t of work-group g < groups / 2 produces for (pair g, item t), the same
 * item of work-group g + groups / 2 consumes it; every round has messages of its own, so nothing
 * is written twice. No barrier: each item is a pair of its own (PoCL 3.1 mis-runs barriers under
 * a condition or in a loop). counts: [0] stale words read after their message's flag was seen,
 * [1] messages seen, [2] messages whose flag did not come within `spins` loads (their producer
 * not running yet: not a failure). */
#define ORDER_MAGIC 0x9e3779b97f4a7c15ul
#define ORDER_WORDS 8u

__kernel void order_message_pass(__global ulong* messages, __global ulong* flags, __global uint* counts,
                                 uint rounds, uint spins) {
  const uint groups = (uint)get_num_groups(0), pairs = groups / 2u, items = (uint)get_local_size(0);
  const uint g = (uint)get_group_id(0), lid = (uint)get_local_id(0);
  if (g >= 2u * pairs) return;
  const uint pair = g % pairs;
  ulong warm = 0;
  for (uint r = 0; r < rounds; ++r) {
    const ulong at = ((ulong)r * pairs + pair) * items + lid;
    __global ulong* message = messages + at * ORDER_WORDS;
    const ulong expected = ORDER_MAGIC * (r + 1u) + at;
    if (g < pairs) {
      for (uint w = 0; w < ORDER_WORDS; ++w) message[w] = expected + w;
      chanflow_store_release(flags + at, r + 1u);
    } else {
      for (uint w = 0; w < ORDER_WORDS; ++w) warm += message[w];
      uint k = 0;
      while (k < spins && chanflow_load_acquire(flags + at) != r + 1u) ++k;
      if (k == spins) {
        atomic_inc(&counts[2]);
        continue;
      }
      uint stale = 0;
      for (uint w = 0; w < ORDER_WORDS; ++w) stale += message[w] != expected + w;
      if (stale) atomic_add(&counts[0], stale);
      atomic_inc(&counts[1]);
    }
  }
  if (warm == 1u) atomic_inc(&counts[3]); /* keeps the warming reads */
}
