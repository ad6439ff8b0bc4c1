/* The scores the device scheduler (schedule.cl) ranks watched channels by: the built-in
 * policies as device policies (policy.hpp's Levelized and Greedy) and a user's DevicePolicy
 * (`chanflow_user_policy_score`, which the host generates before this file). A score below 0 skips
 * the channel; among the others the highest goes first (the lowest entry on a tie). */

/* Deepest level first, and at one depth continuation frames before tasks (they free space and
 * ready their parents); channel nodes after every stack level (thesis 4.3.2-4.3.3). */
int chanflow_levelized_score(const chanflow_policy_view* v) {
  return v->in_stack ? (int)(2u + 2u * v->level + v->continuation) : 1;
}

/* The fullest batch first: every channel with ready CEs may go. */
int chanflow_greedy_score(const chanflow_policy_view* v) { return (int)min(v->ready, (ulong)v->group_ces); }

int chanflow_policy_score(uint policy, const chanflow_policy_view* v) {
  if (policy == CHANFLOW_POLICY_GREEDY) return chanflow_greedy_score(v);
  if (policy == CHANFLOW_POLICY_USER) return chanflow_user_policy_score(v);
  return chanflow_levelized_score(v);
}
