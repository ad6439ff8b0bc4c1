// What device code needs and may not do (the analysis' second half, see analyzer.hpp): the
// device-subset checks as diagnostics, the helpers device code calls (callees first), which
// functions reach the device heap, and the types and constants device code uses.
#include "analysis/analyzer.hpp"

#include "emit/emit.hpp"

#include <clang/AST/ParentMapContext.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

namespace chanflow::compiler {

// ---- device code: what Cilk functions and helpers may not do
void Analyzer::check_device_code(const clang::FunctionDecl* d, const BodyFacts& b) {
  for (const clang::VarDecl* v : b.static_locals)
    error(v->getLocation(), "static local variables are not supported in device code (chanflowc part 1)");
  for (const clang::CallExpr* c : b.calls) {
    const clang::FunctionDecl* callee = c->getDirectCallee();
    const std::string name = callee->getNameAsString();
    if (memory_call(callee) != MemoryCall::None) continue;  // the device heap's, or a copy per address space
    if (name == "__assert_fail") record_assertion(d, c);
    if (name == "printf" || printed_stream(c)) Program.device_prints = true;
    if (!definition(callee) && !Program.cilk_function(callee) && !is_device_builtin(callee) && !printed_stream(c)) {
      error(c->getBeginLoc(), "call of '" + name + "', which has no definition in this file or its own headers, from device "
                              "code: chanflowc compiles only the functions it sees");
    }
  }
  for (const clang::DeclRefExpr* g : b.global_refs) {
    const auto* v = llvm::cast<clang::VarDecl>(g->getDecl());
    const bool constant = v->getType().isConstQualified() && v->hasInit();
    if (constant && !writes(g)) continue;  // copied into the device code
    if (v->isStaticLocal()) continue;      // reported with the static locals
    if (const char* why = unshareable(v)) {
      error(g->getLocation(), std::string(writes(g) ? "writes" : "reads") + " global '" + v->getNameAsString() +
                                  "' in device code: chanflowc moves a global that device code uses into memory "
                                  "host and device share, " + why);
      continue;
    }
    const clang::VarDecl* def = global_definition(v);
    if (Program.global_index.emplace(def, static_cast<unsigned>(Program.device_globals.size())).second)
      Program.device_globals.push_back(def);
  }
  if (const auto* abort_stmt = find_cilk5_abort(d->getBody()))
    error(abort_stmt->getBeginLoc(), "Cilk-5 'abort' is not supported by chanflowc");
}

// assert(e) as <assert.h> writes it: __assert_fail("e", __FILE__, __LINE__, __func__).
void Analyzer::record_assertion(const clang::FunctionDecl* d, const clang::CallExpr* c) {
  if (Program.assertion_of.count(c)) return;
  auto text = [&](unsigned i) -> std::string {
    if (c->getNumArgs() > i)
      if (auto* s = llvm::dyn_cast<clang::StringLiteral>(strip(c->getArg(i)))) return s->getString().str();
    return "?";
  };
  std::string line = "?";
  if (c->getNumArgs() > 2)
    if (auto* l = llvm::dyn_cast<clang::IntegerLiteral>(strip(c->getArg(2)))) line = llvm::toString(l->getValue(), 10, false);
  // __FILE__ as the command line named the file, as cc prints it (Clang's tooling made it absolute).
  std::string file = text(1);
  llvm::SmallString<256> absolute(Options.input);
  if (!llvm::sys::fs::make_absolute(absolute) && file == absolute.str()) file = Options.input;
  Program.assertion_of[c] = static_cast<unsigned>(Program.assertions.size());
  Program.assertions.push_back(file + ":" + line + ": " + d->getNameAsString() + ": Assertion `" + text(0) + "' failed.");
}

// Why device code cannot share a global with the host (null: it can): the compiled file must
// define it, and device code must be able to name its type.
const char* Analyzer::unshareable(const clang::VarDecl* v) const {
  const clang::VarDecl* def = global_definition(v);
  if (def->hasExternalStorage() || !SM.isInMainFile(SM.getExpansionLoc(def->getLocation())))
    return "but only one this file defines";
  const clang::QualType t = def->getType();
  if (t->isVariableArrayType() || t->isIncompleteType()) return "but only one of a complete, fixed size";
  if (const clang::TagDecl* tag = t->getBaseElementTypeUnsafe()->getAsTagDecl();
      tag && tag->getName().empty() && !tag->getTypedefNameForAnonDecl())
    return "and device code must name its type: give its struct a tag or a typedef";
  return nullptr;
}

bool Analyzer::writes(const clang::DeclRefExpr* ref) {
  const clang::Expr* top = nullptr;
  clang::DynTypedNode user = user_of(ref, &top);
  if (const auto* b = user.get<clang::BinaryOperator>()) return b->isAssignmentOp() && strip(b->getLHS()) == ref;
  if (const auto* u = user.get<clang::UnaryOperator>()) return u->isIncrementDecrementOp() || u->getOpcode() == clang::UO_AddrOf;
  return false;
}

const clang::Stmt* Analyzer::find_cilk5_abort(const clang::Stmt* s) {
  if (!s) return nullptr;
  if (auto* e = llvm::dyn_cast<clang::Expr>(s); e && is_statement(s)) {
    if (auto* r = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts()))
      if (r->getDecl()->getName() == "abort") return s;
  }
  for (const clang::Stmt* c : s->children())
    if (const clang::Stmt* found = find_cilk5_abort(c)) return found;
  return nullptr;
}

// ---- helpers: functions device code calls that are not Cilk functions, callees first. A helper
// that calls itself goes on an explicit stack (recursive_helpers.cpp); helpers calling each other
// are refused.
void Analyzer::collect_helpers() {
  std::set<const clang::FunctionDecl*> done, active, self_calling;
  std::function<void(const clang::FunctionDecl*, const clang::CallExpr*, const clang::FunctionDecl*)> visit =
      [&](const clang::FunctionDecl* f, const clang::CallExpr* at, const clang::FunctionDecl* caller) {
        const clang::FunctionDecl* key = f->getCanonicalDecl();
        if (done.count(key)) return;
        if (active.count(key)) {
          if (key == caller) {
            self_calling.insert(key);
            return;
          }
          error(at->getBeginLoc(), "helper '" + caller->getNameAsString() + "' calls '" + f->getNameAsString() +
                                       "', which calls it back: OpenCL has no recursion, and chanflowc puts only a "
                                       "helper that calls itself on an explicit stack; make one of them a Cilk "
                                       "function (spawn it, or call it from one), or merge them into one helper");
          return;
        }
        active.insert(key);
        for (const clang::CallExpr* c : Facts[key].calls) {
          const clang::FunctionDecl* g = definition(c->getDirectCallee());
          if (g && !Program.cilk_function(g)) visit(g, c, key);
        }
        active.erase(key);
        done.insert(key);
        Program.helpers.push_back(Definitions[key]);
        check_device_code(Definitions[key], Facts[key]);
        if (self_calling.count(key)) describe_recursive_helper(Definitions[key]);
        for (const clang::VarDecl* v : Facts[key].locals)
          if (v->getType()->isVariableArrayType())
            error(v->getLocation(), "variable-length arrays are not supported in device code");
      };
  for (const CilkFunction& f : Program.functions)
    for (const clang::CallExpr* c : Facts[f.decl->getCanonicalDecl()].calls) {
      const clang::FunctionDecl* g = definition(c->getDirectCallee());
      if (g && !Program.cilk_function(g)) {
        if (g->isMain()) error(c->getBeginLoc(), "main cannot be called from a Cilk function");
        else visit(g, c, f.decl->getCanonicalDecl());
      }
    }
}

// ---- the node's environment: which functions reach the device heap, or a recursive helper (which
// reports an overflow of its stack through it), themselves or through the helpers they call
void Analyzer::find_env_users() {
  std::vector<const clang::FunctionDecl*> device;  // canonical declarations
  for (const CilkFunction& f : Program.functions) device.push_back(f.decl->getCanonicalDecl());
  for (const clang::FunctionDecl* h : Program.helpers) device.push_back(h->getCanonicalDecl());
  for (const clang::FunctionDecl* f : device)
    for (const clang::CallExpr* c : Facts[f].calls) {
      const MemoryCall m = memory_call(c->getDirectCallee());
      if (allocates(m)) Program.heap_users.insert(f);
      if (m == MemoryCall::Alloca) Program.alloca_users.insert(f);
    }
  Program.device_allocates = !Program.heap_users.empty();
  // A helper that calls itself spills the older frames of its explicit stack to the heap.
  for (const RecursiveHelper& h : Program.recursive_helpers) Program.heap_users.insert(h.decl->getCanonicalDecl());
  Program.env_users = Program.heap_users;
  for (const clang::FunctionDecl* f : device) {
    for (const clang::CallExpr* c : Facts[f].calls)  // a failed assertion or an exit reports through it
      if (Program.assertion_of.count(c) || process_end(c->getDirectCallee()) != ProcessEnd::None) Program.env_users.insert(f);
    for (const clang::DeclRefExpr* g : Facts[f].global_refs)  // a shared global's address is in its arguments
      if (Program.device_global(llvm::cast<clang::VarDecl>(g->getDecl()))) Program.env_users.insert(f);
  }
  for (std::set<const clang::FunctionDecl*>* users : {&Program.heap_users, &Program.env_users})
    for (bool changed = true; changed;) {  // callers of helpers that reach it reach it too
      changed = false;
      for (const clang::FunctionDecl* f : device) {
        if (users->count(f)) continue;
        for (const clang::CallExpr* c : Facts[f].calls) {
          const clang::FunctionDecl* g = definition(c->getDirectCallee());
          if (g && !Program.cilk_function(g) && users->count(g->getCanonicalDecl())) {
            users->insert(f);
            changed = true;
            break;
          }
        }
      }
    }
}

// ---- types no OpenCL C device gives the meaning they have on the host: the reason, or null
namespace {

const char* no_device_meaning(clang::QualType t) {
  if (t.isNull()) return nullptr;
  const clang::Type* c = t->getUnqualifiedDesugaredType();
  if (auto* p = llvm::dyn_cast<clang::PointerType>(c)) return no_device_meaning(p->getPointeeType());
  if (auto* a = llvm::dyn_cast<clang::ArrayType>(c)) return no_device_meaning(a->getElementType());
  if (llvm::isa<clang::ComplexType>(c)) return "'_Complex' types have no OpenCL C counterpart";
  if (llvm::isa<clang::BitIntType>(c)) return "'_BitInt' types have no OpenCL C counterpart";
  if (auto* b = llvm::dyn_cast<clang::BuiltinType>(c)) switch (b->getKind()) {
      case clang::BuiltinType::LongDouble:
        return "'long double' is 80-bit extended precision on the host and has no OpenCL C counterpart";
      case clang::BuiltinType::Int128:
      case clang::BuiltinType::UInt128:
        return "'__int128' has no OpenCL C counterpart";
      case clang::BuiltinType::Float16:
      case clang::BuiltinType::Half:
      case clang::BuiltinType::BFloat16:
        return "16-bit floating point needs an OpenCL extension chanflow does not assume";
      case clang::BuiltinType::Float128:
      case clang::BuiltinType::Ibm128:
        return "'__float128' has no OpenCL C counterpart";
      default:
        break;
    }
  return nullptr;
}

}  // namespace

void Analyzer::check_device_scalars(const clang::FunctionDecl* f) {
  std::set<std::string> said;  // each reason once per function
  auto check = [&](clang::QualType t, clang::SourceLocation loc) {
    if (const char* why = no_device_meaning(t); why && said.insert(why).second)
      error(loc, std::string("'") + f->getNameAsString() + "' runs on the device, where " + why);
  };
  check(f->getReturnType(), f->getLocation());
  for (const clang::ParmVarDecl* p : f->parameters()) check(p->getType(), p->getLocation());
  std::function<void(const clang::Stmt*)> walk = [&](const clang::Stmt* s) {
    if (!s) return;
    if (auto* d = llvm::dyn_cast<clang::DeclStmt>(s))
      for (const clang::Decl* decl : d->decls())
        if (auto* v = llvm::dyn_cast<clang::ValueDecl>(decl)) check(v->getType(), v->getLocation());
    if (auto* e = llvm::dyn_cast<clang::Expr>(s)) check(e->getType(), e->getExprLoc());
    if (auto* e = llvm::dyn_cast<clang::UnaryExprOrTypeTraitExpr>(s); e && e->isArgumentType())
      check(e->getArgumentType(), e->getExprLoc());
    for (const clang::Stmt* c : s->children()) walk(c);
  };
  walk(f->getBody());
}

// ---- types and constants device code needs, in dependency order
void Analyzer::collect_types_and_constants() {
  std::set<const clang::Decl*> seen;
  std::function<void(clang::QualType)> visit_type = [&](clang::QualType t) {
    if (t.isNull()) return;
    if (auto* td = t->getAs<clang::TypedefType>()) {
      const clang::TypedefNameDecl* d = td->getDecl();
      if (is_program_code(SM, d->getLocation())) {
        if (seen.insert(d).second) {
          visit_type(d->getUnderlyingType());
          Program.types.push_back(d);
        }
        return;
      }
      visit_type(d->getUnderlyingType());
      return;
    }
    if (auto* p = t->getAs<clang::PointerType>()) return visit_type(p->getPointeeType());
    if (auto* a = Ctx.getAsArrayType(t)) return visit_type(a->getElementType());
    if (auto* tag = t->getAsTagDecl()) {
      const clang::TagDecl* def = tag->getDefinition();
      if (!def) return;
      if (!is_program_code(SM, def->getLocation())) {
        error(def->getLocation(), "type '" + t.getAsString() + "' from a system header cannot be used in device code");
        return;
      }
      if (!seen.insert(def).second) return;
      if (auto* r = llvm::dyn_cast<clang::RecordDecl>(def))
        for (const clang::FieldDecl* fd : r->fields()) {
          visit_type(fd->getType());
          if (const char* why = no_device_meaning(fd->getType()))
            error(fd->getLocation(), std::string("field '") + fd->getNameAsString() + "' is used on the device, where " + why);
        }
      Program.types.push_back(def);
    }
    if (t->isSpecificBuiltinType(clang::BuiltinType::Double)) Program.uses_double = true;
  };
  std::set<const clang::VarDecl*> constants;
  auto visit_function = [&](const clang::FunctionDecl* f) {
    check_device_scalars(f);
    visit_type(f->getReturnType());
    for (const clang::ParmVarDecl* p : f->parameters()) visit_type(p->getType());
    const BodyFacts& b = Facts[f->getCanonicalDecl()];
    for (const clang::VarDecl* v : b.locals) visit_type(v->getType());
    for (const clang::DeclRefExpr* g : b.global_refs) {
      const auto* v = llvm::cast<clang::VarDecl>(g->getDecl());
      if (Program.device_global(v)) {
        visit_type(v->getType());
        continue;
      }
      if (constants.insert(v).second) {
        visit_type(v->getType());
        Program.constants.push_back(v);
      }
    }
    visit_body_types(f->getBody(), visit_type);
  };
  for (const clang::FunctionDecl* h : Program.helpers) visit_function(h);
  for (const CilkFunction& f : Program.functions) visit_function(f.decl);
}

// The types a body names without declaring a variable of them: casts, sizeof, and the enums
// whose constants it uses (`enum { I_GUESS, ... }` with no variable of its type).
void Analyzer::visit_body_types(const clang::Stmt* s, const std::function<void(clang::QualType)>& visit_type) {
  if (!s) return;
  if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(s)) visit_type(c->getTypeAsWritten());
  if (auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s))
    if (auto* c = llvm::dyn_cast<clang::EnumConstantDecl>(r->getDecl()))
      if (auto* e = llvm::cast<clang::EnumDecl>(c->getDeclContext()); e->getDeclContext()->isFileContext())
        visit_type(Ctx.getEnumType(e));  // an enum declared in the body is printed with it
  if (auto* e = llvm::dyn_cast<clang::UnaryExprOrTypeTraitExpr>(s); e && e->isArgumentType())
    visit_type(e->getArgumentType());
  if (auto* e = llvm::dyn_cast<clang::Expr>(s); e && e->getType()->isSpecificBuiltinType(clang::BuiltinType::Double))
    Program.uses_double = true;
  for (const clang::Stmt* c : s->children()) visit_body_types(c, visit_type);
}

}  // namespace chanflow::compiler
