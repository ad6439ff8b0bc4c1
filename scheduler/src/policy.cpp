// The built-in scheduling policies.
#include "chanflow/policy.hpp"

#include <algorithm>
#include <stdexcept>

namespace chanflow {

void Greedy::decide(const GraphView& view, std::vector<Dispatch>& out) {
  for (const auto& c : view.channels)
    if (c.predicate || c.restartable > 0) out.push_back({c.id, c.predicate ? c.admissible : 0, c.restartable});
}

void Levelized::decide(const GraphView& view, std::vector<Dispatch>& out) {
  // Deepest first: the aggregator admits dispatches in the order given, so deeper work gets
  // the space it needs before shallower work may take what is left.
  std::vector<const ChannelView*> order;
  for (const auto& c : view.channels)
    if (c.admissible > 0 || c.restartable > 0) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const ChannelView* a, const ChannelView* b) {
    return a->in_stack && b->in_stack ? a->level > b->level : a->in_stack > b->in_stack;
  });
  for (const ChannelView* c : order) {
    // Plain channels keep Greedy's predicate; any stack level may go once deeper ones had theirs.
    if (!c->in_stack && !c->predicate && c->restartable == 0) continue;
    out.push_back({c->id, c->in_stack || c->predicate ? c->admissible : 0, c->restartable});
  }
}

void DevicePolicy::decide(const GraphView& view, std::vector<Dispatch>& out) {
  if (!fallback_)
    throw std::logic_error("device policy '" + name_ + "' has no host form: it runs on the device scheduler only");
  fallback_(view, out);
}

}  // namespace chanflow
