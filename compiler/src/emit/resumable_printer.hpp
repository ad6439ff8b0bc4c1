// Device code that stops and later resumes in the middle of its body: a Cilk function at its sync
// points (emit_device.cpp), a helper that calls itself at those calls (recursive_helper.cpp). A
// resume enters every loop around its point through the loop's head, never its middle, so the
// control flow stays reducible: PoCL 3.1's kernel compiler recursed without end (a stack overflow
// inside libpocl) on bodies entered in the middle of a loop.
#pragma once

#include "emit/device_printer.hpp"

#include <string>
#include <vector>

namespace chanflow::compiler {

class ResumablePrinter : public DevicePrinter {
 public:
  using DevicePrinter::DevicePrinter;

 protected:
  /// Whether some resume point lies in a loop.
  bool in_loops() const;

  /// Where a resume goes from the head of `loop` (nullptr: the body's top): for each resume point
  /// inside it, the head of the next loop around that point, or the point itself (`cf_resume_K`).
  std::string dispatch(const clang::Stmt* loop) const;

  /// A loop, as Clang prints it; one with a resume point inside is entered at its head by a resume
  /// (cf_loop_N, skipping its initialization; its condition is passed while cf_resuming), whose
  /// body's first statement goes on toward the point.
  void print_loop(clang::Stmt* s, llvm::raw_ostream& os);

  /// to = from, element by element for arrays; `from_global`: the source is in global memory,
  /// `to_global`: the destination is.
  std::string copy(const std::string& to, const std::string& from, bool from_global, clang::QualType t,
                   bool to_global = false) const;

  /// A boxed local's initializer (where it has one) stored at `ref`, its place in global memory: an
  /// initializer list (an array's, a struct's) through a private copy.
  void print_boxed_init(const clang::VarDecl* v, const std::string& ref, llvm::raw_ostream& os);

  /// Per resume point (K - 1), the loops around it, outermost first (found by a first pass over
  /// the body; empty during it).
  const std::vector<std::vector<const clang::Stmt*>>* ResumeLoops = nullptr;
  std::string ResumeIndex;  ///< the expression naming the point a resume goes to
  unsigned TotalResumes = 0;  ///< with one resume point, no index is read
  std::vector<const clang::Stmt*> Loops;  ///< the loops around what is being printed, outermost first

 private:
  /// The loops with resume points, numbered in the order the points are.
  unsigned loop_id(const clang::Stmt* loop) const;
};

}  // namespace chanflow::compiler
