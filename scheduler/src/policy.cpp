// The built-in scheduling policies.
#include "chanflow/policy.hpp"

namespace chanflow {

void Greedy::decide(const GraphView& view, std::vector<Dispatch>& out) {
  for (const auto& c : view.channels)
    if (c.predicate || c.restartable > 0) out.push_back({c.id, c.predicate ? c.admissible : 0, c.restartable});
}

void Levelized::decide(const GraphView& view, std::vector<Dispatch>& out) {
  for (const auto& c : view.channels) {
    if (!c.in_stack) {
      if (c.predicate || c.restartable > 0) out.push_back({c.id, c.predicate ? c.admissible : 0, c.restartable});
    } else if (c.level == view.max_level && (c.admissible > 0 || c.restartable > 0)) {
      // The deepest level goes whatever its size: nothing shallower may run before it drains.
      out.push_back({c.id, c.admissible, c.restartable});
    }
  }
}

}  // namespace chanflow
