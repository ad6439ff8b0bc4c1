// The built-in scheduling policies.
#include "chanflow/policy.hpp"

namespace chanflow {

void Greedy::decide(const GraphView& view, std::vector<Dispatch>& out) {
  for (const auto& c : view.channels)
    if (c.predicate) out.push_back({c.id, c.admissible});
}

void Levelized::decide(const GraphView& view, std::vector<Dispatch>& out) {
  for (const auto& c : view.channels) {
    if (!c.in_stack) {
      if (c.predicate) out.push_back({c.id, c.admissible});
    } else if (c.level == view.max_level && c.ready > 0 && c.admissible > 0) {
      // The deepest level goes whatever its size: nothing shallower may run before it drains.
      out.push_back({c.id, c.admissible});
    }
  }
}

}  // namespace chanflow
