// The cilk_for pass's scan (see cilk_for_scan.hpp).
#include "cilk_for_scan.hpp"

namespace chanflow::compiler {

std::set<const clang::FunctionDecl*> CilkReach::functions() {
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [caller, callees] : Calls)
      if (!Cilk.count(caller))
        for (const clang::FunctionDecl* g : callees)
          if (Cilk.count(g)) {
            Cilk.insert(caller);
            changed = true;
            break;
          }
  }
  return Cilk;
}

}  // namespace chanflow::compiler
