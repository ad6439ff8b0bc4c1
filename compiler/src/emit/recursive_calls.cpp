// The calls of itself in a helper's or serial form's loop of activations (recursive_printer.hpp):
// the statement carrying them, each call made into its temporary, the callee's opening guards run
// on its arguments, a frame pushed (what is in scope saved) and restored where it resumes, or, for
// a call the return only adds to, the activation going on as the call.
#include "emit/recursive_printer.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow::compiler {

// A statement holding calls of the helper: the calls first, each into its temporary, then the
// statement reading them. An expression statement or a return goes in `do { } while (0)` (it
// may be the branch of an if), an if or switch in a block; a declaration stays in its block.
void RecursivePrinter::print_carrier(clang::Stmt* s, const std::vector<const clang::CallExpr*>& calls, llvm::raw_ostream& os) {
  const bool expression = llvm::isa<clang::Expr>(s), branch = llvm::isa<clang::IfStmt, clang::SwitchStmt>(s);
  const bool wrapped = expression || llvm::isa<clang::ReturnStmt>(s);
  os << (wrapped ? "do {\n" : branch ? "{\n" : "");
  for (const clang::CallExpr* c : calls)
    if (Temp.count(c)) os << value_type(Temp.at(c)) << ";\n";
  std::vector<const clang::VarDecl*> scope = in_scope(s);
  std::vector<std::string> made;  // the temporaries of this statement's calls made so far
  for (const clang::CallExpr* c : calls) {
    print_call(c, scope, made, os);
    if (Temp.count(c)) made.push_back(Temp.at(c));
  }
  Printing.insert(s);
  if (!expression) {
    print_expr(s, os);
  } else if (std::find(calls.begin(), calls.end(), strip(llvm::cast<clang::Expr>(s))) == calls.end()) {
    print_expr(s, os);
    os << ";\n";
  }
  Printing.erase(s);
  os << (wrapped ? "} while (0)" : branch ? "}\n" : "");
  if (wrapped && !expression) os << ";\n";
}

// One call of itself: the arguments evaluated, what is in scope saved in a new frame, the
// parameters set, and a new activation from the top; resumed here when it returns.
void RecursivePrinter::print_call(const clang::CallExpr* call, const std::vector<const clang::VarDecl*>& scope,
                                  const std::vector<std::string>& made, llvm::raw_ostream& os) {
  const bool summed = Summing && H.sums.count(call);
  const unsigned k = summed ? 0 : ++Resumes;
  if (Layout) {
    if (!summed) Found.push_back(Loops);
    // A Cilk function's pointer parameters are all global: its serial form's calls agree.
    if (auto it = Fs.calls.find(call); !H.serial && (it == Fs.calls.end() || it->second != &Fs)) {
      clang::DiagnosticsEngine& d = Ctx.getDiagnostics();
      d.Report(call->getBeginLoc(), d.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                                      "'%0' calls itself here with pointers into other address "
                                                      "spaces than its own parameters' (OpenCL C 1.2 has no generic "
                                                      "one): chanflowc runs its activations in one function, so "
                                                      "they must agree"))
          << H.decl->getName();
    }
  }
  os << "{ /* a call of '" << H.decl->getName()
     << (summed ? "' its return adds to: the activation goes on as the call */\n" : "': a new activation on the stack */\n");
  for (unsigned i = 0; i < call->getNumArgs() && i < H.decl->getNumParams(); ++i) {
    os << type_of(H.decl->getParamDecl(i), fmt::format("cf_a{}", i)) << " = ";
    print_expr(call->getArg(i), os);
    os << ";\n";
  }
  if (Guarded) print_guards(call, os);
  if (summed) return print_summed_call(call, os);
  for (const clang::VarDecl* v : scope) {
    os << copy(slot(Field.at(v)) + "[cf_depth]", Field.at(v), false, v->getType());
    Saved.insert(Field.at(v));
  }
  for (const std::string& t : made) {
    os << "  " << slot(t) << "[cf_depth] = " << t << ";\n";
    Saved.insert(t);
  }
  if (Lifo) {
    os << "  " << slot("cf_box") << "[cf_depth] = cf_box;\n";
    Saved.insert("cf_box");
  }
  if (Summing) {
    os << "  " << slot("cf_sum") << "[cf_depth] = cf_sum;\n";
    Saved.insert("cf_sum");
  }
  os << fmt::format("  cf_s_resume_at[cf_depth] = {};\n  ++cf_depth;\n", k);
  for (unsigned i = 0; i < call->getNumArgs() && i < H.decl->getNumParams(); ++i)
    os << "  " << Field.at(H.decl->getParamDecl(i)) << " = cf_a" << i << ";\n";
  if (Summing) os << "  cf_sum = 0;\n";
  os << "  goto cf_call;\n" << (Guarded ? "" : "}\n");
  if (!TopCopy) {  // the top copy is never resumed (two_copies)
    os << fmt::format("cf_resume_{}:{}\n{}", k, Guarded ? ";" : "", Direct ? "" : "  cf_resuming = 0;\n");  // a label ends no block
    for (const clang::VarDecl* v : scope) os << copy(Field.at(v), slot(Field.at(v)) + "[cf_depth]", false, v->getType());
    for (const std::string& t : made) os << "  " << t << " = " << slot(t) << "[cf_depth];\n";
    if (Lifo) os << "  cf_box = " << slot("cf_box") << "[cf_depth];\n";
    if (Summing) os << "  cf_sum = " << slot("cf_sum") << "[cf_depth];\n";
  }
  if (Guarded) os << "}\n}\n";
  if (Temp.count(call)) os << "  " << Temp.at(call) << " = cf_value;\n";
}

// A call the return only adds to (RecursiveHelper::sums): its addend joins the sum this
// activation's value is still to be added to, and the activation goes on as the call, from the
// top with the call's arguments; no frame, no resume. (A guard that holds gives the call's value
// as a pushing call's does, and the statement goes on to the return.)
void RecursivePrinter::print_summed_call(const clang::CallExpr* call, llvm::raw_ostream& os) {
  os << "  cf_sum += (" << sum_type() << ")(";
  print_expr(H.sums.at(call), os);
  os << ");\n";
  for (unsigned i = 0; i < call->getNumArgs() && i < H.decl->getNumParams(); ++i)
    os << "  " << Field.at(H.decl->getParamDecl(i)) << " = cf_a" << i << ";\n";
  os << "  goto cf_top; /* no frame pushed: none to spill */\n}\n" << (Guarded ? "}\n" : "");
  if (Temp.count(call)) os << "  " << Temp.at(call) << " = cf_value;\n";
}

// Whether a loop of the body holds `s`.
bool RecursivePrinter::in_loop(const clang::Stmt* s) const {
  for (const clang::Stmt* p = parent_stmt(Ctx, s); p && p != H.decl->getBody(); p = parent_stmt(Ctx, p))
    if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(p)) return true;
  return false;
}

// The unsigned type a sum of the helper's values is kept in (it wraps as theirs does).
std::string RecursivePrinter::sum_type() const {
  const clang::QualType t = H.decl->getReturnType().getCanonicalType().getUnqualifiedType();
  return device_type_in(Ctx, t->isUnsignedIntegerType() ? t : Ctx.getCorrespondingUnsignedType(t), Fs.result);
}

// A guarded call's opening (Guarded): the callee's guards on the arguments (cf_aI), in order; one
// that holds gives the call's value there, with no frame; else the call is made (`else {`).
void RecursivePrinter::print_guards(const clang::CallExpr* call, llvm::raw_ostream& os) {
  if (call->getNumArgs() != H.decl->getNumParams()) {  // an old-style definition's call: no guards
    os << "{\n";
    return;
  }
  const std::map<const clang::VarDecl*, std::string> names = Printed;
  for (unsigned i = 0; i < H.decl->getNumParams(); ++i) Printed[H.decl->getParamDecl(i)] = fmt::format("cf_a{}", i);
  for (std::size_t j = 0; j < H.guards.size(); ++j) {
    os << (j ? "} else if (" : "if (");
    print_expr(H.guards[j].cond, os);
    os << fmt::format(") {{ /* '{}' returns at once: it opens with this guard */\n", H.decl->getName().str());
    if (const clang::Expr* v = H.guards[j].value) {
      if (!H.decl->getReturnType()->isVoidType()) os << "cf_value = ";
      print_expr(v, os);
      os << ";\n";
    }
  }
  os << "} else {\n";
  Printed = names;
}

// Whether `s` holds a label or a static local: the guarded form prints the body twice.
bool RecursivePrinter::has_label_or_static(const clang::Stmt* s) {
  if (!s) return false;
  if (llvm::isa<clang::LabelStmt>(s)) return true;
  if (const auto* d = llvm::dyn_cast<clang::DeclStmt>(s))
    for (const clang::Decl* decl : d->decls())
      if (const auto* v = llvm::dyn_cast<clang::VarDecl>(decl); v && v->isStaticLocal()) return true;
  return std::any_of(s->child_begin(), s->child_end(), has_label_or_static);
}

// The parameters and locals in scope at statement `s` (declared before it in the blocks around
// it, or in the head of a for loop around it), in the helper's order.
std::vector<const clang::VarDecl*> RecursivePrinter::in_scope(const clang::Stmt* s) const {
  std::set<const clang::VarDecl*> seen(H.decl->param_begin(), H.decl->param_end());
  const auto add = [&](const clang::Stmt* d) {
    if (auto* decls = llvm::dyn_cast_or_null<clang::DeclStmt>(d))
      for (const clang::Decl* decl : decls->decls())
        if (auto* v = llvm::dyn_cast<clang::VarDecl>(decl)) seen.insert(v);
  };
  const clang::Stmt* child = s;
  for (const clang::Stmt* p = parent_stmt(Ctx, s); p; child = p, p = parent_stmt(Ctx, p)) {
    if (auto* c = llvm::dyn_cast<clang::CompoundStmt>(p))
      for (const clang::Stmt* x : c->body()) {
        if (x == child) break;
        add(x);
      }
    if (auto* f = llvm::dyn_cast<clang::ForStmt>(p); f && child != f->getInit()) add(f->getInit());
    if (p == H.decl->getBody()) break;
  }
  std::vector<const clang::VarDecl*> out;
  for (const clang::VarDecl* v : H.variables)
    if (seen.count(v) && !(Cilk && Cilk->is_boxed(v))) out.push_back(v);  // boxed: its block stays
  return out;
}

}  // namespace chanflow::compiler
