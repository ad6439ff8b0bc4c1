// Which Cilk functions' tasks may run on another device of a run across devices (DESIGN.md
// decision 16; multidevice/). Each device has an OpenCL context of its own, so an address means
// nothing on another device: a task may move when nothing it carries or reaches is an address
// into the memory it was spawned in. Its CE holds its parameters, and its result comes back
// through the router; what its subtree makes (frames, allocas, blocks of the device heap) lives
// on the device it runs on. What it may not do is reach memory the host shares with the first
// device: a pointer argument (main's heap, a parent's local), or a global that lives in an SVM
// cell (host_svm.cpp), itself or through anything it spawns or calls.
#include "analysis/analyzer.hpp"

#include <deque>

namespace chanflow::compiler {
namespace {

// Whether `t` holds an address anywhere: a pointer, a reference, or a struct, union or array
// with one inside.
bool holds_address(clang::QualType t) {
  t = t.getCanonicalType();
  if (t->isPointerType() || t->isReferenceType() || t->isBlockPointerType() || t->isMemberPointerType()) return true;
  if (const clang::ArrayType* a = t->getAsArrayTypeUnsafe()) return holds_address(a->getElementType());
  if (const clang::RecordDecl* r = t->getAsRecordDecl()) {
    const clang::RecordDecl* def = r->getDefinition();
    if (!def) return true;  // nothing known of it: an address, for all chanflowc can say
    for (const clang::FieldDecl* f : def->fields())
      if (holds_address(f->getType())) return true;
  }
  return false;
}

}  // namespace

void Analyzer::find_movable_tasks() {
  // Device functions (canonical declarations) that name a shared global themselves: the first.
  std::map<const clang::FunctionDecl*, const clang::VarDecl*> names_global;
  std::vector<const clang::FunctionDecl*> device;
  for (const CilkFunction& f : Program.functions) device.push_back(f.decl->getCanonicalDecl());
  for (const clang::FunctionDecl* h : Program.helpers) device.push_back(h->getCanonicalDecl());
  for (const clang::FunctionDecl* f : device)
    for (const clang::DeclRefExpr* g : Facts[f].global_refs) {
      const auto* v = llvm::cast<clang::VarDecl>(g->getDecl());
      if (Program.device_global(v)) {
        names_global.emplace(f, v);
        break;
      }
    }
  for (CilkFunction& f : Program.functions) {
    for (const clang::ParmVarDecl* p : f.decl->parameters())
      if (holds_address(p->getType())) {
        f.stays_because = "its parameter '" + p->getNameAsString() + "' " +
                          (p->getType()->isPointerType() ? "is a pointer" : "holds an address");
        break;
      }
    if (!f.movable()) continue;
    if (holds_address(f.decl->getReturnType())) {
      f.stays_because = "it returns an address";
      continue;
    }
    // Everything its tasks' subtrees run: the Cilk functions it spawns or calls and the helpers,
    // breadth first, so the reason names the nearest function that reaches a shared global.
    std::set<const clang::FunctionDecl*> seen{f.decl->getCanonicalDecl()};
    std::deque<const clang::FunctionDecl*> todo{f.decl->getCanonicalDecl()};
    while (!todo.empty() && f.movable()) {
      const clang::FunctionDecl* g = todo.front();
      todo.pop_front();
      if (auto it = names_global.find(g); it != names_global.end()) {
        const std::string global = it->second->getNameAsString();
        f.stays_because = g == f.decl->getCanonicalDecl()
                              ? "it uses global '" + global + "', which lives in memory the host shares with the first device"
                              : "'" + g->getNameAsString() + "', which it reaches, uses global '" + global +
                                    "', which lives in memory the host shares with the first device";
        break;
      }
      for (const clang::CallExpr* c : Facts[g].calls) {
        const clang::FunctionDecl* callee = definition(c->getDirectCallee());
        if (callee && seen.insert(callee->getCanonicalDecl()).second) todo.push_back(callee->getCanonicalDecl());
      }
    }
  }
}

}  // namespace chanflow::compiler
