// A helper that calls itself, compiled into one loop over an explicit stack of its activations
// (OpenCL C has no recursion; cilk_model.hpp, RecursiveHelper). The newest frames live in private
// memory, one array per field of an activation (its parameters, its locals and its calls'
// results, each `cf_s_NAME[frame]`) and one of the call each frame resumes at: a call stores only
// the fields it needs, and each array is packed (NVIDIA places private arrays indexed at run time
// in local memory, a frame of structs there costs a strided access per field). Where no call lies
// in a loop:
//
//   for (;;) {                     between passes: the heap
//   for (;;) {                     one pass: an activation from its top
//     body                         a call of itself saves what is in scope, pushes, sets the
//                                  parameters and goes to cf_call; `return e` stores e and goes
//   cf_return:                     to cf_return
//     if (cf_depth == 0) { if (none spilled) break; fill }
//     --cf_depth;
//     switch (cf_s_resume_at[cf_depth]) { case K: goto cf_resume_K; ... }
//   cf_call:
//     if (cf_depth == W) break;
//   }
//   if (cf_depth == W) spill; else { free the chunks; return cf_value; }
//   }
//
// Depth is no limit (a list walked recursively, a skewed tree 10^5 levels deep): when a call
// fills the W private frames (--helper-stack), the older half goes to the next chunk of the
// device heap (taken the first time the call goes that deep, kept until it returns, linked both
// ways), and a return that finds the private frames empty copies the newest chunk's frames back.
// Each costs W/2 copies per W/2 calls, and only a recursion deeper than W pays it; the heap holds
// the frames of the call's deepest point. The heap's calls sit outside the loop of activations:
// inside it, even never taken, they cost fib 30's serial form on the H100 up to a quarter of its
// time (docs/compiler.md). A heap with no chunk left reports CHANFLOW_ERR_HELPER_STACK (the
// helper, the depth reached) and the run stops with that error, naming the heap's setting: never
// a wrong result.
//
// A serial form whose calls get pointers to its locals (a Cilk function's boxed locals: `cilk_spawn
// f(&x)`) or that calls alloca keeps those where they cannot move as frames spill and fill: each
// activation takes a block for its boxed locals (F__box) from a LIFO of blocks on the heap as it
// starts (cf_lifo, heap.cl), its alloca blocks above it, and resets the LIFO to that first block
// as it returns; a frame saves the block's address (cf_box). No atomics and no heap call per
// activation: the LIFO's chunks are taken the first time the stack goes that deep and kept until
// the serial call ends, so its memory is that of the deepest point, as the frames' is.
//
// A call inside a loop is resumed through the loop's head instead (resumable_printer.hpp): the
// return path sets cf_resuming and the top of the pass goes on from there. So is a body the top of
// which can reach the code after a call without making one (a call in an if:
// RecursiveHelper::one_entry). On PoCL 3.1 the direct form ran fib(30)'s serial form in 1.8 ms
// where that one took 3.1.
//
// A body that opens with guards (`if (n <= 2) return ...;`, RecursiveHelper::guards) runs them at
// each call on its arguments, so that a call ending there pushes no frame and makes no pass: half
// of fib's calls. Jumping from such a guard to the code after its call, which the return's dispatch
// also enters, makes a loop of two entries (PoCL 3.1's kernel compiler recursed on it without end,
// a stack overflow in libpocl); so the body is printed twice, a top copy that new activations run
// and the copy that calls resume in, each guard going on in its own copy (two_copies). The form that
// resumes through the top of the pass needs no second copy: every resume enters there.
#include "emit/recursive_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace chanflow::compiler {

RecursivePrinter::RecursivePrinter(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h,
                                   const FunctionSpaces& fs)
    : ResumablePrinter(ctx, program, fs, nullptr), H(h), Fs(fs) {
  // Every parameter and local by a name of its own: a call saves each in scope by name, so none
  // may be hidden by another of the same name.
  std::set<std::string> used = {"resume_at"};  // cf_s_resume_at is the stack's own
  for (const clang::VarDecl* v : h.variables) {
    const std::string base = device_name(v->getNameAsString());
    std::string name = base;
    for (unsigned n = 1; used.count(name); ++n) name = fmt::format("{}__{}", base, n);
    used.insert(name);
    Field[v] = name;
  }
  // A serial form's boxed locals (those its calls get pointers to) live in its activation's block,
  // which stays where it is while the frames move between private memory and the heap.
  if (h.serial) Cilk = program.cilk_function(h.decl);
  Lifo = Cilk && (!Cilk->boxed.empty() || program.calls_alloca(h.decl));
  AllocasOnLifo = Lifo;
  Printed = Field;
  if (Cilk)
    for (const clang::VarDecl* v : Cilk->boxed) Printed[v] = "cf_box->" + Cilk->field.at(v);
  Names = &Printed;
  for (unsigned k = 0; k < h.calls.size(); ++k)
    if (!h.decl->getReturnType()->isVoidType()) Temp[h.calls[k]] = fmt::format("cf_r{}", k + 1);
  ResumeLoops = &Found;
  ResumeIndex = "cf_s_resume_at[cf_depth]";
  // Calls the return only adds to go on as the activation itself (RecursiveHelper::sums) in the
  // direct form, where a return goes to one place; not where activations keep blocks on the LIFO.
  Summing = !H.sums.empty() && !Lifo && H.one_entry &&
            std::none_of(H.calls.begin(), H.calls.end(), [&](const clang::CallExpr* c) { return in_loop(c); });
}

std::string RecursivePrinter::code() {
  print_body();  // the first pass finds the calls' resume points and the loops around them
  TotalResumes = static_cast<unsigned>(Found.size());
  Direct = !in_loops() && H.one_entry;
  Guarded = !Lifo && !H.guards.empty() && !(Direct && has_label_or_static(H.decl->getBody()));
  Layout = false;
  const std::string body = print_body();
  std::string top;  // the copy a new activation runs (two_copies)
  if (two_copies()) {
    TopCopy = true;
    top = print_body();
    TopCopy = false;
  }
  const SpilledFrames heap = heap_frames();  // what some call saves is known now
  const clang::QualType result = H.decl->getReturnType();
  const unsigned frames = Program.helper_stack_frames;
  const std::string value = result->isVoidType() ? "" : " cf_value";
  if (H.calls.empty()) return leaf_code(body, value);
  std::string out = heap.type(frames / 2) + Heading + helper_signature(Ctx, Program, Fs) + " {\n";
  out += fmt::format("  /* '{}' calls itself: its activations run on an explicit stack (OpenCL C has no recursion), "
                     "a field an array, the newest {} frames in private memory and older ones on the device heap "
                     "*/\n",
                     H.decl->getName().str(), frames);
  const std::string dims = fmt::format("[{}]", frames);
  for (const SavedField& f : fields()) out += "  " + f.declared(*this, slot(f.name) + dims) + ";\n";
  out += fmt::format("  {} cf_s_resume_at{}; /* the call each frame goes on from */\n  uint cf_depth = 0;\n",
                     resume_type(), dims);
  if (Lifo)
    out += fmt::format("  chanflow_lifo cf_lifo = {{0, 0ul, 0ul}}; /* the activations' blocks, on the heap */\n"
                       "  {} cf_box = 0; /* this activation's first block: {} */\n",
                       box_type(), Cilk->boxed.empty() ? "where its alloca blocks start" : "its boxed locals");
  out += fmt::format("  __global {0} *cf_spilled = 0; /* the frames below these: the newest chunk on the heap */\n"
                     "  __global {0} *cf_chunks = 0;  /* the chunks this call took, the oldest first */\n",
                     chunk_name());
  if (!result->isVoidType())
    out += "  " + value_type("cf_value") + (result->isScalarType() ? " = 0" : "") + "; /* what the last activation returned */\n";
  if (Summing) out += "  " + sum_type() + " cf_sum = 0; /* what this activation's value is still to be added to */\n";
  if (!Direct) out += "  volatile uint cf_resuming = 0; /* until the call resumed at: loops are entered at their head */\n";
  // The heap's calls come between passes of the loop of activations, never inside it (above).
  out += "  for (;;) { /* around the loop of activations: a chunk taken, or the call's end */\n  for (;;) {\n";
  const std::string give_back = Lifo ? "  chanflow_lifo_reset(&cf_lifo, cf_box); /* its blocks */\n" : "";
  if (Direct) {
    if (Summing) out += "  cf_top:; /* an activation from its top: a new one, or one going on as a call its return adds to */\n";
    out += entry(value);
    if (two_copies()) out += top + "  goto cf_return; /* below: the copy the calls resume in */\n";
    const std::string sum = Summing ? fmt::format("  cf_value = ({})(({})cf_value + cf_sum);\n", value_type(""), sum_type()) : "";
    out += body + fmt::format("  cf_return:\n{}{}{}  --cf_depth;\n{}", sum, give_back, heap.fill(frames / 2), dispatch(nullptr));
  } else {
    out += "  if (cf_resuming) {\n" + dispatch(nullptr) + "  }\n" + entry(value) + body;
    out += fmt::format("  cf_return:\n{}{}  --cf_depth;\n  cf_resuming = 1;\n", give_back, heap.fill(frames / 2));
  }
  out += fmt::format("  cf_call:\n  if (cf_depth == {}u) break;\n  }}\n", frames);
  return out + fmt::format("  if (cf_depth == {}u) {{\n{}  }} else {{\n{}    return{};\n  }}\n  }}\n}}\n", frames,
                           heap.spill(frames, value), heap.release() + (Lifo ? "    chanflow_lifo_release(cf_env, &cf_lifo);\n" : ""), value);
}

// A boxed local's declaration: its initial value stored in its activation's block.
void RecursivePrinter::print_declaration(const clang::Decl* decl, llvm::raw_ostream& os) {
  const auto* v = llvm::dyn_cast<clang::VarDecl>(decl);
  if (!v || !Cilk || !Cilk->is_boxed(v)) return DevicePrinter::print_declaration(decl, os);
  print_boxed_init(v, Printed.at(v), os);
}

// A form with no call of itself (a leaf's, or one that spawns only others): one activation, no stack.
std::string RecursivePrinter::leaf_code(const std::string& body, const std::string& value) const {
  const clang::QualType result = H.decl->getReturnType();
  std::string out = Heading + helper_signature(Ctx, Program, Fs) + " {\n";
  if (!result->isVoidType())
    out += "  " + value_type("cf_value") + (result->isScalarType() ? " = 0" : "") + "; /* what it returns */\n";
  // Its boxed locals' block and alloca blocks all go back as it returns.
  if (Lifo) out += "  chanflow_lifo cf_lifo = {0, 0ul, 0ul}; /* its blocks, on the heap */\n";
  if (Lifo && !Cilk->boxed.empty()) out += fmt::format("  {} cf_box = 0;\n", box_type()) + entry(value);
  std::function<bool(const clang::Stmt*)> returns = [&](const clang::Stmt* s) {
    if (!s || llvm::isa<clang::ReturnStmt>(s)) return s != nullptr;
    return std::any_of(s->child_begin(), s->child_end(), returns);
  };
  out += body + (returns(H.decl->getBody()) ? "  cf_return:\n" : "");  // no label unused: PoCL warns at run time
  if (Lifo) out += "  chanflow_lifo_release(cf_env, &cf_lifo);\n";
  return out + "  return" + value + ";\n}\n";
}

bool RecursivePrinter::handledStmt(clang::Stmt* s, llvm::raw_ostream& os) {
  if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt>(s)) {
    print_loop(s, os);
    return true;
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(s); H.serial && call && call->getDirectCallee()) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (callee->getName() == "__chanflow_sync") {
      os << "(void)0 /* cilk_sync: its children have returned */";
      return true;
    }
    // Another Cilk function (analysis: it has a serial form): a plain call of that form.
    if (Program.cilk_function(callee) && callee->getCanonicalDecl() != H.decl->getCanonicalDecl()) {
      os << Program.cilk_function(callee)->name << "__serial(cf_env";
      for (const clang::Expr* arg : call->arguments()) {
        os << ", ";
        print_expr(arg, os);
      }
      os << ")";
      return true;
    }
  }
  if (auto it = H.carriers.find(s); it != H.carriers.end() && !Printing.count(s)) {
    print_carrier(s, it->second, os);
    return true;
  }
  if (auto it = Temp.find(llvm::dyn_cast<clang::CallExpr>(s)); it != Temp.end()) {
    os << it->second;
    return true;
  }
  if (auto* i = llvm::dyn_cast<clang::IfStmt>(s)) {
    // Printed here, not by Clang: its printer prints an `else if` without asking this printer
    // about the inner if, whose condition may hold calls of the helper. Branches in braces.
    os << "if (";
    print_expr(i->getCond(), os);
    os << ") {\n";
    print_statement(const_cast<clang::Stmt*>(i->getThen()), os);
    os << "}";
    if (i->getElse()) {
      os << " else {\n";
      print_statement(const_cast<clang::Stmt*>(i->getElse()), os);
      os << "}";
    }
    os << "\n";
    return true;
  }
  if (auto* r = llvm::dyn_cast<clang::ReturnStmt>(s)) {
    os << "{\n";
    if (r->getRetValue()) {
      if (!H.decl->getReturnType()->isVoidType()) os << "cf_value = ";
      print_expr(r->getRetValue(), os);
      os << ";\n";
    }
    os << "goto cf_return;\n}\n";
    return true;
  }
  return DevicePrinter::handledStmt(s, os);
}

// An activation's start: its first block taken (its boxed locals, a parameter's value copied
// in; or, 0 bytes, the mark its alloca blocks start at). A heap without room has reported.
std::string RecursivePrinter::entry(const std::string& value) const {
  if (!Lifo) return "";
  std::string out = fmt::format("  cf_box = ({})chanflow_lifo_take(cf_env, &cf_lifo, {});\n"
                                "  if (!cf_box) return{}; /* the heap had no room: reported */\n",
                                box_type(), Cilk->boxed.empty() ? "0" : "sizeof(" + Cilk->name + "__box)", value);
  for (const clang::VarDecl* v : Cilk->boxed)
    if (llvm::isa<clang::ParmVarDecl>(v)) out += "  " + Printed.at(v) + " = " + Field.at(v) + ";\n";
  return out;
}

// What the loop of activations prints for its frames on the device heap (spilled_frames.hpp).
SpilledFrames RecursivePrinter::heap_frames() const {
  SpilledFrames out{chunk_name(), H.decl->getName().str(), H.id, resume_type(), {}};
  for (const SavedField& f : fields())
    out.fields.push_back({f.name, [this, f](const std::string& as) { return f.declared(*this, as); },
                          [this, f](const std::string& to, const std::string& from, bool from_global, bool to_global) {
                            return f.copy(*this, to, from, from_global, to_global);
                          }});
  return out;
}


std::string recursive_helper_code(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h,
                                  const FunctionSpaces& fs) {
  RecursivePrinter printer(ctx, program, h, fs);
  return printer.code();
}

std::string serial_form_code(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h,
                             const FunctionSpaces& fs) {
  FunctionSpaces named = fs;
  named.name = program.cilk_function(h.decl)->name + "__serial";  // as F__run calls it
  RecursivePrinter printer(ctx, program, h, named);
  const std::string& name = program.cilk_function(h.decl)->name;
  printer.Heading = h.leaf ? "/* " + name + " as its spawners' serial forms call it (it spawns nothing) */\n"
                           : "/* " + name + "'s serial form, run by its tasks from the run's serial depth on (granularity control) */\n";
  return printer.code();
}

}  // namespace chanflow::compiler
