// The printer of a helper that calls itself, or of a Cilk function's serial form: one loop over an
// explicit stack of its activations. recursive_helper.cpp prints the loop and its returns (and says
// how the form reads), recursive_calls.cpp the calls of itself: a frame pushed, a guard run at the
// call, or the activation going on as a call its return adds to.
#pragma once

#include "analysis/analysis.hpp"
#include "emit/resumable_printer.hpp"
#include "emit/spilled_frames.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace chanflow::compiler {

class RecursivePrinter : public ResumablePrinter {
 public:
  RecursivePrinter(clang::ASTContext& ctx, const CilkProgram& program, const RecursiveHelper& h, const FunctionSpaces& fs);

  std::string code();

  // A boxed local's declaration: its initial value stored in its activation's block.
  void print_declaration(const clang::Decl* decl, llvm::raw_ostream& os) override;

  // A form with no call of itself (a leaf's, or one that spawns only others): one activation, no stack.
  std::string leaf_code(const std::string& body, const std::string& value) const;

  bool handledStmt(clang::Stmt* s, llvm::raw_ostream& os) override;

 private:
  // A statement holding calls of the helper: the calls first, each into its temporary, then the
  // statement reading them. An expression statement or a return goes in `do { } while (0)` (it
  // may be the branch of an if), an if or switch in a block; a declaration stays in its block.
  void print_carrier(clang::Stmt* s, const std::vector<const clang::CallExpr*>& calls, llvm::raw_ostream& os);

  // One call of itself: the arguments evaluated, what is in scope saved in a new frame, the
  // parameters set, and a new activation from the top; resumed here when it returns.
  void print_call(const clang::CallExpr* call, const std::vector<const clang::VarDecl*>& scope,
                  const std::vector<std::string>& made, llvm::raw_ostream& os);

  // A call the return only adds to (RecursiveHelper::sums): its addend joins the sum this
  // activation's value is still to be added to, and the activation goes on as the call, from the
  // top with the call's arguments; no frame, no resume. (A guard that holds gives the call's value
  // as a pushing call's does, and the statement goes on to the return.)
  void print_summed_call(const clang::CallExpr* call, llvm::raw_ostream& os);

  // Whether a loop of the body holds `s`.
  bool in_loop(const clang::Stmt* s) const;

  // The unsigned type a sum of the helper's values is kept in (it wraps as theirs does).
  std::string sum_type() const;

  // A guarded call's opening (Guarded): the callee's guards on the arguments (cf_aI), in order; one
  // that holds gives the call's value there, with no frame; else the call is made (`else {`).
  void print_guards(const clang::CallExpr* call, llvm::raw_ostream& os);

  // Whether `s` holds a label or a static local: the guarded form prints the body twice.
  static bool has_label_or_static(const clang::Stmt* s);

  // The parameters and locals in scope at statement `s` (declared before it in the blocks around
  // it, or in the head of a for loop around it), in the helper's order.
  std::vector<const clang::VarDecl*> in_scope(const clang::Stmt* s) const;

  // The stack's array of a field (a parameter's, a local's or a call's result).
  static std::string slot(const std::string& field) { return "cf_s_" + field; }

  // The fields some call saves, in the helper's order: its variables, then its calls' results
  // (`var` null), then the activation's block and the sum its value is to be added to (`own`:
  // their types).
  struct SavedField {
    std::string name;
    const clang::VarDecl* var;
    std::string own;
    std::string declared(const RecursivePrinter& p, const std::string& as) const {
      return !own.empty() ? own + " " + as : var ? p.type_of(var, as) : p.value_type(as);
    }
    std::string copy(const RecursivePrinter& p, const std::string& to, const std::string& from, bool from_global,
                     bool to_global = false) const {
      if (!own.empty()) return "  " + to + " = " + from + ";\n";
      return p.copy(to, from, from_global, var ? var->getType() : p.H.decl->getReturnType(), to_global);
    }
  };
  std::vector<SavedField> fields() const {
    std::vector<SavedField> out;
    for (const clang::VarDecl* v : H.variables)
      if (Saved.count(Field.at(v))) out.push_back({Field.at(v), v, ""});
    for (const clang::CallExpr* call : H.calls)
      if (Temp.count(call) && Saved.count(Temp.at(call))) out.push_back({Temp.at(call), nullptr, ""});
    if (Saved.count("cf_box")) out.push_back({"cf_box", nullptr, box_type()});
    if (Saved.count("cf_sum")) out.push_back({"cf_sum", nullptr, sum_type()});
    return out;
  }

  // The type of an activation's first block (a serial form's with boxed locals or alloca).
  std::string box_type() const { return Cilk->boxed.empty() ? "__global uchar*" : "__global " + Cilk->name + "__box*"; }

  // An activation's start: its first block taken (its boxed locals, a parameter's value copied
  // in; or, 0 bytes, the mark its alloca blocks start at). A heap without room has reported.
  std::string entry(const std::string& value) const;
  std::string resume_type() const { return TotalResumes < 256 ? "uchar" : "uint"; }

  // What the loop of activations prints for its frames on the device heap (spilled_frames.hpp).
  std::string chunk_name() const { return Fs.name + "__frames"; }
  SpilledFrames heap_frames() const;
  std::string value_type(const std::string& name) const {
    return device_type_in(Ctx, H.decl->getReturnType().getUnqualifiedType(), Fs.result, name);
  }

  std::string print_body() {
    Resumes = 0;
    std::string body;
    llvm::raw_string_ostream os(body);
    H.decl->getBody()->printPretty(os, this, Policy, 0);
    return os.str();
  }

  const RecursiveHelper& H;
  const FunctionSpaces& Fs;

 public:
  std::string Heading;  // a comment before the function

 private:
  std::map<const clang::VarDecl*, std::string> Field;  // every parameter's and local's name
  std::map<const clang::VarDecl*, std::string> Printed;  // as the body names them: boxed ones in cf_box
  const CilkFunction* Cilk = nullptr;  // the function whose serial form this is
  bool Lifo = false;  // a serial form with boxed locals or alloca: its activations' blocks on cf_lifo
  std::map<const clang::CallExpr*, std::string> Temp;  // each call's result, where it has one
  std::vector<std::vector<const clang::Stmt*>> Found;  // per call, the loops around it
  std::set<const clang::Stmt*> Printing;  // carriers being printed after their calls
  bool Layout = true;  // the first pass
  std::set<std::string> Saved;  // the fields some call saves: the stack's arrays
  bool Direct = false;  // no call in a loop: a return goes straight to its call's resume point
  // A direct form whose body opens with guards (RecursiveHelper::guards) runs them at each call on
  // its arguments, and is printed twice: a top copy, which a new activation runs and no resume
  // enters, and the copy the return's dispatch resumes, each call's guard path going on within its
  // own copy. So no code is entered both from the top and from a resume (a loop of two entries,
  // which PoCL 3.1's kernel compiler recursed on without end; one_entry).
  bool Guarded = false;  // the callee's opening guards run at each call
  bool Summing = false;  // calls the return only adds to go on as the activation (print_summed_call)
  bool TopCopy = false;  // printing the top copy
  bool two_copies() const { return Direct && Guarded; }  // the body printed twice (above)
  unsigned Resumes = 0;
};

}  // namespace chanflow::compiler
