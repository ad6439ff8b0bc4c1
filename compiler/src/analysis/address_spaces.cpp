// Address-space inference (see address_spaces.hpp): a unification over each function copy's
// pointer variables, to a fixed point, then one name per copy.
#include "analysis/address_spaces.hpp"

#include "analysis/analysis.hpp"
#include "emit/emit.hpp"

#include <clang/AST/RecursiveASTVisitor.h>

namespace chanflow::compiler {
namespace {

const char* space_name(Space s) {
  switch (s) {
    case Space::Private: return "private";
    case Space::Global: return "global";
    case Space::Constant: return "constant";
    case Space::Unknown: break;
  }
  return "unknown";
}

char space_letter(Space s) { return s == Space::Private ? 'p' : s == Space::Constant ? 'c' : 'g'; }

bool is_pointer(clang::QualType t) { return t->isPointerType(); }

}  // namespace

AddressSpaces::AddressSpaces(clang::ASTContext& ctx, const CilkProgram& program) : ctx_(ctx), program_(program) {
  for (const CilkFunction& f : program.functions) {
    auto fs = std::make_unique<FunctionSpaces>();
    fs->decl = f.decl;
    fs->name = f.name;
    for (const clang::ParmVarDecl* p : f.decl->parameters())
      fs->params.push_back(is_pointer(p->getType()) ? Space::Global : Space::Unknown);
    FunctionSpaces& ref = *fs;
    cilk_[f.decl] = std::move(fs);
    infer(ref);
  }
  name_copies();
}

FunctionSpaces& AddressSpaces::instance(const clang::FunctionDecl* f, const std::vector<Space>& params) {
  const clang::FunctionDecl* def = f->getDefinition() ? f->getDefinition() : f;
  auto key = std::make_pair(def, params);
  if (auto it = helpers_.find(key); it != helpers_.end()) return *it->second;
  auto fs = std::make_unique<FunctionSpaces>();
  fs->decl = def;
  fs->params = params;
  FunctionSpaces& ref = *fs;
  helpers_[key] = std::move(fs);
  infer(ref);
  order_.push_back(&ref);  // after its own callees: they were made while inferring it
  return ref;
}

void AddressSpaces::infer(FunctionSpaces& fs) {
  for (unsigned i = 0; i < fs.decl->getNumParams(); ++i)
    if (fs.params[i] != Space::Unknown) fs.vars[fs.decl->getParamDecl(i)] = fs.params[i];
  for (int round = 0; round < 16; ++round) {
    changed_ = false;
    visit(fs, fs.decl->getBody());
    if (!changed_) break;
  }
  for (auto& [v, s] : fs.vars)
    if (s == Space::Unknown) s = Space::Global;
}

void AddressSpaces::unify(FunctionSpaces& fs, const clang::VarDecl* v, Space s, clang::SourceLocation at) {
  if (s == Space::Unknown) return;
  Space& current = fs.vars[v];
  if (current == Space::Unknown) {
    current = s;
    changed_ = true;
  } else if (current != s) {
    clang::DiagnosticsEngine& d = ctx_.getDiagnostics();
    d.Report(at, d.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                   "pointer '%0' points to %1 memory here and to %2 memory elsewhere; OpenCL C 1.2 has no "
                                   "generic address space, so chanflowc needs one for each pointer"))
        << v->getName() << space_name(s) << space_name(current);
    current = s;  // report once per conflict
  }
}

// Walks the body: declarations and assignments of pointer variables, helper calls, returns.
void AddressSpaces::visit(FunctionSpaces& fs, const clang::Stmt* s) {
  if (!s) return;
  if (auto* d = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* decl : d->decls())
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(decl); v && is_pointer(v->getType())) {
        if (!fs.vars.count(v)) fs.vars[v] = Space::Unknown;
        if (v->getInit()) unify(fs, v, expr_space(fs, v->getInit()), v->getLocation());
      }
  } else if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(s); b && b->getOpcode() == clang::BO_Assign) {
    if (auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(b->getLHS())))
      if (auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl()); v && is_pointer(v->getType()) && v->hasLocalStorage())
        unify(fs, v, expr_space(fs, b->getRHS()), b->getOperatorLoc());
  } else if (auto* r = llvm::dyn_cast<clang::ReturnStmt>(s); r && r->getRetValue() && is_pointer(r->getRetValue()->getType())) {
    const Space sp = expr_space(fs, r->getRetValue());
    if (fs.result == Space::Unknown && sp != Space::Unknown) {
      fs.result = sp;
      changed_ = true;
    }
  } else if (auto* c = llvm::dyn_cast<clang::ExplicitCastExpr>(s); c && is_pointer(c->getType())) {
    fs.casts[c] = expr_space(fs, c->getSubExpr());
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(s)) expr_space(fs, call);
  for (const clang::Stmt* child : s->children()) visit(fs, child);
}

// Where the pointer value `e` points.
Space AddressSpaces::expr_space(FunctionSpaces& fs, const clang::Expr* e) {
  if (!e) return Space::Unknown;
  e = e->IgnoreParens();
  if (auto* c = llvm::dyn_cast<clang::CastExpr>(e)) {
    if (c->getCastKind() == clang::CK_ArrayToPointerDecay) return storage_space(fs, c->getSubExpr());
    if (c->getCastKind() == clang::CK_NullToPointer || c->getCastKind() == clang::CK_IntegralToPointer)
      return Space::Unknown;
    return expr_space(fs, c->getSubExpr());
  }
  if (auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (!is_pointer(v->getType())) return Space::Unknown;
      if (v->hasGlobalStorage()) return Space::Global;
      auto it = fs.vars.find(v);
      return it == fs.vars.end() ? Space::Unknown : it->second;
    }
    return Space::Unknown;
  }
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (u->getOpcode() == clang::UO_AddrOf) return storage_space(fs, u->getSubExpr());
    if (u->getOpcode() == clang::UO_Deref) return Space::Global;  // a pointer loaded from memory
    return expr_space(fs, u->getSubExpr());                       // ++p, p--
  }
  if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    if (b->isAssignmentOp() || b->getOpcode() == clang::BO_Comma) return expr_space(fs, b->getRHS());
    if (is_pointer(b->getLHS()->getType())) return expr_space(fs, b->getLHS());
    if (is_pointer(b->getRHS()->getType())) return expr_space(fs, b->getRHS());
    return Space::Unknown;
  }
  if (auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    const Space a = expr_space(fs, c->getTrueExpr());
    return a != Space::Unknown ? a : expr_space(fs, c->getFalseExpr());
  }
  if (llvm::isa<clang::StringLiteral>(e)) return Space::Constant;
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(e)) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (const MemoryCall m = memory_call(callee); m == MemoryCall::Memcpy || m == MemoryCall::Memmove || m == MemoryCall::Memset) {
      const auto letter = [](Space s) { return s == Space::Unknown ? 'g' : space_letter(s); };
      const Space to = call->getNumArgs() > 0 ? expr_space(fs, call->getArg(0)) : Space::Unknown;
      std::string suffix(1, letter(to));
      if (m != MemoryCall::Memset && call->getNumArgs() > 1) suffix += letter(expr_space(fs, call->getArg(1)));
      fs.memory[call] = suffix;
      return to == Space::Unknown ? Space::Global : to;
    }
    if (!callee || program_.cilk_function(callee) || !callee->getDefinition()) return Space::Global;
    std::vector<Space> params;
    for (unsigned i = 0; i < callee->getNumParams() && i < call->getNumArgs(); ++i) {
      Space s = is_pointer(callee->getParamDecl(i)->getType()) ? expr_space(fs, call->getArg(i)) : Space::Unknown;
      if (is_pointer(callee->getParamDecl(i)->getType()) && s == Space::Unknown) s = Space::Global;
      params.push_back(s);
    }
    FunctionSpaces& target = instance(callee, params);
    fs.calls[call] = &target;
    return target.result == Space::Unknown ? Space::Global : target.result;
  }
  // A pointer read from memory (a field, an element): by convention it points to global memory.
  return is_pointer(e->getType()) ? Space::Global : Space::Unknown;
}

// Where the object the lvalue `e` names lives.
Space AddressSpaces::storage_space(FunctionSpaces& fs, const clang::Expr* e) {
  e = e->IgnoreParenImpCasts();
  if (auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (v->hasGlobalStorage()) return program_.device_global(v) ? Space::Global : Space::Constant;
      const CilkFunction* f = program_.cilk_function(fs.decl);
      return f && f->is_boxed(v) ? Space::Global : Space::Private;  // boxed: in the task's scratch block
    }
    return Space::Unknown;
  }
  if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e))
    return m->isArrow() ? expr_space(fs, m->getBase()) : storage_space(fs, m->getBase());
  if (auto* a = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    const clang::Expr* base = a->getBase()->IgnoreParenImpCasts();
    if (base->getType()->isArrayType()) return storage_space(fs, base);
    return expr_space(fs, a->getBase());
  }
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_Deref)
    return expr_space(fs, u->getSubExpr());
  if (llvm::isa<clang::CompoundLiteralExpr>(e)) return Space::Private;
  if (llvm::isa<clang::StringLiteral>(e)) return Space::Constant;
  return Space::Unknown;
}

void AddressSpaces::name_copies() {
  std::map<const clang::FunctionDecl*, int> copies;
  for (const auto& [key, fs] : helpers_) ++copies[key.first];
  for (auto& [key, fs] : helpers_) {
    fs->name = key.first->getNameAsString();
    if (copies[key.first] < 2) continue;
    fs->name += "__";
    for (Space s : key.second)
      if (s != Space::Unknown) fs->name += space_letter(s);
  }
}

std::string device_type_in(clang::ASTContext& ctx, clang::QualType type, Space space, const std::string& declarator) {
  if (space == Space::Unknown || space == Space::Global) return device_type(ctx, type, true, declarator);
  clang::QualType t = type;
  const clang::Qualifiers q = t.getLocalQualifiers();
  while (!llvm::isa<clang::PointerType>(t.getTypePtr())) {
    const clang::Type* ty = t.getTypePtr();
    if (auto* td = llvm::dyn_cast<clang::TypedefType>(ty)) t = td->getDecl()->getUnderlyingType();
    else if (auto* el = llvm::dyn_cast<clang::ElaboratedType>(ty)) t = el->getNamedType();
    else if (auto* p = llvm::dyn_cast<clang::ParenType>(ty)) t = p->getInnerType();
    else if (auto* d = llvm::dyn_cast<clang::DecayedType>(ty)) t = d->getDecayedType();
    else return device_type(ctx, type, true, declarator);
  }
  clang::QualType pointee = device_qual_type(ctx, llvm::cast<clang::PointerType>(t.getTypePtr())->getPointeeType(), true);
  if (space == Space::Constant) pointee = ctx.getAddrSpaceQualType(pointee, clang::LangAS::opencl_constant);
  const clang::QualType result = ctx.getQualifiedType(ctx.getPointerType(pointee), q);
  std::string out;
  llvm::raw_string_ostream os(out);
  clang::PrintingPolicy policy(ctx.getLangOpts());
  policy.SuppressTagKeyword = false;
  policy.Bool = false;
  result.print(os, policy, declarator);
  return os.str();
}

}  // namespace chanflow::compiler
