// Resuming in the middle of a body through the heads of the loops around the point (see
// resumable_printer.hpp).
#include "emit/resumable_printer.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow::compiler {

bool ResumablePrinter::in_loops() const {
  return ResumeLoops &&
         std::any_of(ResumeLoops->begin(), ResumeLoops->end(), [](const auto& l) { return !l.empty(); });
}

std::string ResumablePrinter::dispatch(const clang::Stmt* loop) const {
  std::vector<std::pair<unsigned, std::string>> targets;
  for (unsigned k = 1; ResumeLoops && k <= ResumeLoops->size(); ++k) {
    const auto& chain = (*ResumeLoops)[k - 1];
    auto at = chain.begin();  // from the top: the outermost loop, if any
    if (loop) {
      at = std::find(chain.begin(), chain.end(), loop);
      if (at == chain.end()) continue;
      ++at;
    }
    targets.emplace_back(k, at == chain.end() ? fmt::format("cf_resume_{}", k) : fmt::format("cf_loop_{}", loop_id(*at)));
  }
  if (targets.empty()) return "";
  if (TotalResumes == 1) return "  goto " + targets[0].second + ";\n";
  std::string out = "  switch (" + ResumeIndex + ") {\n";
  for (const auto& [k, label] : targets) out += fmt::format("  case {}: goto {};\n", k, label);
  return out + "  }\n";
}

unsigned ResumablePrinter::loop_id(const clang::Stmt* loop) const {
  std::vector<const clang::Stmt*> seen;
  for (const auto& chain : *ResumeLoops)
    for (const clang::Stmt* l : chain) {
      if (l == loop) return static_cast<unsigned>(std::find(seen.begin(), seen.end(), l) - seen.begin()) + 1;
      if (std::find(seen.begin(), seen.end(), l) == seen.end()) seen.push_back(l);
    }
  return 0;
}

void ResumablePrinter::print_loop(clang::Stmt* s, llvm::raw_ostream& os) {
  Loops.push_back(s);
  const std::string enter = dispatch(s);
  const std::string label = enter.empty() ? "" : fmt::format("cf_loop_{}:\n", loop_id(s));
  const auto body = [&](const clang::Stmt* b) {
    if (enter.empty()) return print_statement(const_cast<clang::Stmt*>(b), os);
    os << "{\nif (cf_resuming) {\n" << enter << "}\n";
    print_statement(const_cast<clang::Stmt*>(b), os);
    os << "}\n";
  };
  const auto condition = [&](const clang::Expr* c) {
    if (!enter.empty()) os << "cf_resuming || (";
    print_expr(c, os);
    if (!enter.empty()) os << ")";
  };
  if (auto* l = llvm::dyn_cast<clang::ForStmt>(s)) {
    // The init goes before the loop, the two in a block of their own: the loop may be the body of
    // another statement (`for (i = 0; ...) for (k = 0; ...) {...}`), which must keep both.
    if (l->getInit()) os << "{\n";
    if (auto* d = llvm::dyn_cast_or_null<clang::DeclStmt>(l->getInit()))
      for (const clang::Decl* decl : d->decls()) print_declaration(decl, os);
    else if (l->getInit())
      print_statement(const_cast<clang::Stmt*>(l->getInit()), os);
    os << label << (enter.empty() && unrolls(l) ? "#pragma unroll\n" : "") << "for (;";
    if (l->getCond()) condition(l->getCond());
    os << ";";
    if (l->getInc()) print_expr(l->getInc(), os);
    os << ")\n";
    body(l->getBody());
    if (l->getInit()) os << "}\n";
  } else if (auto* w = llvm::dyn_cast<clang::WhileStmt>(s)) {
    os << label << "while (";
    condition(w->getCond());
    os << ")\n";
    body(w->getBody());
  } else {
    auto* d = llvm::cast<clang::DoStmt>(s);
    os << label << "do\n";
    body(d->getBody());
    os << "while (";
    print_expr(d->getCond(), os);
    os << ");\n";
  }
  Loops.pop_back();
}

std::string ResumablePrinter::copy(const std::string& to, const std::string& from, bool from_global, clang::QualType t,
                                   bool to_global) const {
  if (!t->isArrayType()) return "  " + to + " = " + from + ";\n";
  clang::QualType element = t;
  while (const clang::ArrayType* a = Ctx.getAsArrayType(element)) element = a->getElementType();
  const std::string e = device_type(Ctx, element.getUnqualifiedType(), true);
  return fmt::format("  for (uint cf_i = 0; cf_i < sizeof({0}) / sizeof({1}); ++cf_i) (({4}{1}*)&{0})[cf_i] = "
                     "(({3}const {1}*)&{2})[cf_i];\n",
                     to, e, from, from_global ? "__global " : "", to_global ? "__global " : "");
}

void ResumablePrinter::print_boxed_init(const clang::VarDecl* v, const std::string& ref, llvm::raw_ostream& os) {
  const clang::Expr* init = v->getInit();
  if (!init) return;
  if (!v->getType()->isArrayType() && !llvm::isa<clang::InitListExpr>(init->IgnoreImplicit())) {
    os << ref << " = ";
    print_expr(init, os);
    os << ";\n";
    return;
  }
  os << "{\n" << type_of(v, "cf_init") << " = ";
  print_expr(init, os);
  os << ";\n" << copy(ref, "cf_init", false, v->getType(), true) << "}\n";
}

}  // namespace chanflow::compiler
