// The device printer (device_printer.hpp): what it prints differently from Clang's printer.
#include "emit/device_printer.hpp"

#include "analysis/analysis.hpp"

#include <fmt/format.h>

namespace chanflow::compiler {

// How a value of type `t` travels in a 64-bit result slot, and back.
std::string to_bits(clang::QualType t, const std::string& v) {
  if (t->isSpecificBuiltinType(clang::BuiltinType::Float)) return "(ulong)as_uint(" + v + ")";
  if (t->isSpecificBuiltinType(clang::BuiltinType::Double)) return "as_ulong(" + v + ")";
  if (t->isSignedIntegerOrEnumerationType()) return "(ulong)(long)(" + v + ")";
  return "(ulong)(" + v + ")";
}

std::string from_bits(clang::ASTContext& ctx, clang::QualType t, const std::string& bits) {
  if (t->isSpecificBuiltinType(clang::BuiltinType::Float)) return "as_float((uint)" + bits + ")";
  if (t->isSpecificBuiltinType(clang::BuiltinType::Double)) return "as_double(" + bits + ")";
  return "(" + device_type(ctx, t.getUnqualifiedType(), true) + ")" + bits;
}

namespace {

bool has_loop_or_call(const clang::Stmt* s) {
  if (!s) return false;
  if (llvm::isa<clang::ForStmt, clang::WhileStmt, clang::DoStmt, clang::CallExpr>(s)) return true;
  for (const clang::Stmt* c : s->children())
    if (has_loop_or_call(c)) return true;
  return false;
}

// C's printf format as OpenCL C's printf takes it (OpenCL C 1.2, 6.12.13): no `ll`, `z`, `j` or
// `t` length (each of those types is 64 bits on the device, as `l` says), no `l` before a
// floating conversion (C ignores it there; OpenCL C leaves it undefined).
std::string opencl_printf_format(llvm::StringRef c) {
  std::string out;
  for (std::size_t i = 0; i < c.size();) {
    if (c[i] != '%') {
      out += c[i++];
      continue;
    }
    std::size_t j = i + 1;
    while (j < c.size() && llvm::StringRef("-+ #0123456789.*").contains(c[j])) ++j;  // flags, width, precision
    std::size_t k = j;
    while (k < c.size() && llvm::StringRef("hlLzjt").contains(c[k])) ++k;  // the length
    if (k >= c.size()) {  // a format that ends inside a conversion: left as written
      out += c.substr(i).str();
      break;
    }
    const llvm::StringRef length = c.slice(j, k);
    const bool floating = llvm::StringRef("fFeEgGaA").contains(c[k]);
    std::string opencl = length.str();
    if (length == "ll" || length == "z" || length == "j" || length == "t") opencl = "l";
    if (length == "l" && floating) opencl.clear();
    out += c.slice(i, j).str() + opencl + c[k];
    i = k + 1;
  }
  return out;
}

// `s` as a C string literal.
std::string c_string_literal(llvm::StringRef s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') out += std::string("\\") + ch;
    else if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (u < 0x20 || u >= 0x7f) out += fmt::format("\\{:03o}", u);
    else out += ch;
  }
  return out + "\"";
}

}  // namespace

// A loop of a constant trip count of at most 64 and a body of straight-line code: unrolled in
// full, as a GPU's compiler would, so that a private array it indexes (a row's accumulators)
// lives in registers on every device (PoCL's pipeline vectorizes such a loop first and keeps the
// array in memory).
bool DevicePrinter::unrolls(const clang::ForStmt* l) const {
  constexpr std::uint64_t kMaxUnrolled = 64;
  const std::optional<std::uint64_t> trips = constant_trip_count(Ctx, l);
  return trips && *trips > 0 && *trips <= kMaxUnrolled && !has_loop_or_call(l->getBody());
}

bool DevicePrinter::handledStmt(clang::Stmt* s, llvm::raw_ostream& os) {
  if (auto* l = llvm::dyn_cast<clang::ForStmt>(s); l && l->getInit() && llvm::isa<clang::DeclStmt>(l->getInit())) {
    // The loop's declarations go before it, in a block of their own (Clang's printer would
    // print them itself, without address spaces or renaming).
    os << "{\n";
    for (const clang::Decl* decl : llvm::cast<clang::DeclStmt>(l->getInit())->decls()) print_declaration(decl, os);
    if (unrolls(l)) os << "#pragma unroll\n";
    os << "for (;";
    if (l->getCond()) print_expr(l->getCond(), os);
    os << ";";
    if (l->getInc()) print_expr(l->getInc(), os);
    os << ")\n";
    print_statement(const_cast<clang::Stmt*>(l->getBody()), os);
    os << "}\n";
    return true;
  }
  if (auto* d = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* decl : d->decls()) print_declaration(decl, os);
    return true;
  }
  if (auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
    if (auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (const std::optional<unsigned> g = Program.device_global(v)) {
        // A global host and device share: its SVM cell, whose address is the node's argument g.
        const clang::QualType cell = Ctx.getPointerType(
            Ctx.getAddrSpaceQualType(device_qual_type(Ctx, v->getType(), true), clang::LangAS::opencl_global));
        os << "(*(" << device_type(Ctx, cell, false) << ")((__global const ulong*)cf_env->user_args)[" << *g << "])";
        return true;
      }
      const std::string name = name_of(v);
      if (name != v->getNameAsString()) {
        os << name;
        return true;
      }
    }
  }
  if (auto* m = llvm::dyn_cast<clang::MemberExpr>(s)) {
    const std::string field = m->getMemberDecl()->getNameAsString();
    if (device_name(field) != field) {
      print_expr(m->getBase(), os);
      os << (m->isArrow() ? "->" : ".") << device_name(field);
      return true;
    }
  }
  if (auto* l = llvm::dyn_cast<clang::IntegerLiteral>(s)) {
    // `LL` makes a literal 128 bits wide in OpenCL C: a 64-bit one says `L`, as the host's does.
    const clang::BuiltinType::Kind k = l->getType()->castAs<clang::BuiltinType>()->getKind();
    if (k != clang::BuiltinType::LongLong && k != clang::BuiltinType::ULongLong) return false;
    os << llvm::toString(l->getValue(), 10, /*Signed=*/false) << (k == clang::BuiltinType::ULongLong ? "UL" : "L");
    return true;
  }
  if (auto* e = llvm::dyn_cast<clang::UnaryExprOrTypeTraitExpr>(s); e && e->isArgumentType()) {
    // sizeof(T), _Alignof(T): T as device code spells it.
    const char* op = e->getKind() == clang::UETT_SizeOf ? "sizeof" : e->getKind() == clang::UETT_AlignOf ? "_Alignof" : nullptr;
    if (!op) return false;
    os << op << "(" << device_type(Ctx, e->getArgumentType(), true) << ")";
    return true;
  }
  if (auto* c = llvm::dyn_cast<clang::CompoundLiteralExpr>(s)) {
    os << "(" << device_type(Ctx, c->getTypeSourceInfo()->getType(), true) << ")";
    print_expr(c->getInitializer(), os);
    return true;
  }
  if (auto* c = llvm::dyn_cast<clang::CStyleCastExpr>(s)) {
    auto it = Spaces.casts.find(c);
    os << "(" << device_type_in(Ctx, c->getTypeAsWritten(), it == Spaces.casts.end() ? Space::Global : it->second) << ")";
    print_expr(c->getSubExpr(), os);
    return true;
  }
  if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(s); u && u->getOpcode() == clang::UO_Extension) {
    print_expr(u->getSubExpr(), os);  // __extension__ (assert's): C's, not OpenCL C's
    return true;
  }
  if (auto* e = llvm::dyn_cast<clang::StmtExpr>(s)) {
    // <assert.h>'s GNU form, `({ if (e) ; else __assert_fail(...); })`, as a conditional.
    const clang::CompoundStmt* body = e->getSubStmt();
    const auto* i = body->size() == 1 ? llvm::dyn_cast<clang::IfStmt>(body->body_front()) : nullptr;
    const auto* fail = i && i->getElse() && llvm::isa<clang::NullStmt>(i->getThen()) ? llvm::dyn_cast<clang::CallExpr>(i->getElse()) : nullptr;
    if (fail && Program.assertion_of.count(fail)) {
      os << "((";
      print_expr(i->getCond(), os);
      os << ") ? (void)0 : ";
      print_expr(fail, os);
      os << ")";
      return true;
    }
  }
  if (auto* call = llvm::dyn_cast<clang::CallExpr>(s)) {
    if (auto it = Program.assertion_of.find(call); it != Program.assertion_of.end()) {
      os << "chanflow_assert_fail(cf_env, " << it->second << "u)";
      return true;
    }
    if (const clang::FunctionDecl* callee = call->getDirectCallee(); callee && callee->getName().startswith("__chanflow_loop_")) {
      // How a cilk_for runs on this device (scheduler/cl/node_macros.cl).
      os << (callee->getName() == "__chanflow_loop_inline" ? "CHANFLOW_LOOP_INLINE(" : "CHANFLOW_LOOP_GRAIN(");
      if (call->getNumArgs() == 1) print_expr(call->getArg(0), os);
      os << ")";
      return true;
    }
    if (const clang::FunctionDecl* callee = call->getDirectCallee(); callee && callee->getName().startswith("__chanflow_group_item")) {
      // A work-group task's work-item and their number; a per-item task is a group of one.
      const bool all = callee->getName() == "__chanflow_group_items";
      os << (Group ? (all ? "CHANFLOW_LEAF_ITEMS" : "CHANFLOW_LEAF_ITEM") : (all ? "1L" : "0L"));
      return true;
    }
    if (const clang::FunctionDecl* callee = call->getDirectCallee(); callee && callee->getName() == "__chanflow_caps_hold") {
      // A cilk_for part hands its hold on the loop's block to its children (scheduler/cl/heap.cl).
      os << "chanflow_caps_hold(";
      print_expr(call->getArg(0), os);
      os << ", ";
      print_expr(call->getArg(1), os);
      os << ")";
      return true;
    }
    const clang::FunctionDecl* direct = call->getDirectCallee();
    if (const unsigned first = printed_stream(call) ? 1 : 0;
        first || (direct && !direct->hasBody() && direct->getName() == "printf" && call->getNumArgs())) {
      // fprintf(stderr, ...) too: OpenCL C's printf, standard output its only stream; C's format
      // in OpenCL C's words.
      os << "printf(";
      for (unsigned i = first; i < call->getNumArgs(); ++i) {
        if (i > first) os << ", ";
        const auto* format = i == first ? llvm::dyn_cast<clang::StringLiteral>(call->getArg(i)->IgnoreParenImpCasts()) : nullptr;
        if (format && format->isOrdinary()) os << c_string_literal(opencl_printf_format(format->getString()));
        else print_expr(call->getArg(i), os);
      }
      os << ")";
      return true;
    }
    if (const clang::FunctionDecl* callee = call->getDirectCallee(); callee && callee->getNumParams() == call->getNumArgs()) {
      // The math library's functions and abs: OpenCL C overloads them by argument type (and its
      // abs returns an unsigned type), so each argument is converted to the parameter's type first,
      // as C converts it, and abs's result back to C's type.
      const std::string math = device_math_name(callee);
      const std::string name = callee->getNameAsString();
      const bool absolute = name == "abs" || name == "labs" || name == "llabs";
      if (!math.empty() || absolute) {
        const auto type = [&](clang::QualType t) { return "(" + device_type(Ctx, t.getUnqualifiedType(), true) + ")"; };
        if (absolute) os << "(" << type(callee->getReturnType());
        os << (absolute ? "abs" : math) << "(";
        for (unsigned i = 0; i < call->getNumArgs(); ++i) {
          os << (i ? ", " : "") << type(callee->getParamDecl(i)->getType()) << "(";
          print_expr(call->getArg(i), os);
          os << ")";
        }
        os << (absolute ? "))" : ")");
        return true;
      }
      if (const ProcessEnd end = process_end(callee); end != ProcessEnd::None) {  // scheduler/cl/spawn.cl
        os << "chanflow_exit(cf_env, ";
        if (end == ProcessEnd::Exit) print_expr(call->getArg(0), os);
        os << (end == ProcessEnd::Exit ? ", 0u)" : "134, 1u)");
        return true;
      }
    }
    if (const MemoryCall m = memory_call(call->getDirectCallee()); m != MemoryCall::None) {
      print_memory_call(call, m, os);
      return true;
    }
    if (auto it = Spaces.calls.find(call); it != Spaces.calls.end()) {
      os << it->second->name << "(";
      const bool heap = Program.takes_env(it->second->decl);  // the helper takes the environment first
      if (heap) os << "cf_env";
      for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        if (i || heap) os << ", ";
        print_expr(call->getArg(i), os);
      }
      os << ")";
      return true;
    }
  }
  if (auto* r = llvm::dyn_cast<clang::ReturnStmt>(s); r && ReleasesAllocas) {  // a helper's return
    os << "{\n";
    if (r->getRetValue()) {
      os << device_type_in(Ctx, Spaces.decl->getReturnType().getUnqualifiedType(), Spaces.result, "cf_r") << " = ";
      print_expr(r->getRetValue(), os);
      os << ";\nchanflow_release_allocas(cf_env, cf_allocas);\nreturn cf_r;\n}\n";
    } else {
      os << "chanflow_release_allocas(cf_env, cf_allocas);\nreturn;\n}\n";
    }
    return true;
  }
  return false;
}

void DevicePrinter::print_memory_call(const clang::CallExpr* call, MemoryCall m, llvm::raw_ostream& os) {
  static const std::map<MemoryCall, const char*> names = {
      {MemoryCall::Malloc, "chanflow_malloc"},   {MemoryCall::Calloc, "chanflow_calloc"},
      {MemoryCall::Realloc, "chanflow_realloc"}, {MemoryCall::Free, "chanflow_free"},
      {MemoryCall::Alloca, "chanflow_alloca"},   {MemoryCall::Memcpy, "chanflow_memcpy_"},
      {MemoryCall::Memmove, "chanflow_memmove_"}, {MemoryCall::Memset, "chanflow_memset_"}};
  const bool lifo = m == MemoryCall::Alloca && AllocasOnLifo;
  os << (lifo ? "chanflow_lifo_take" : names.at(m));
  if (auto it = Spaces.memory.find(call); it != Spaces.memory.end()) os << it->second;
  os << "(";
  if (allocates(m)) os << (m != MemoryCall::Alloca ? "cf_env" : lifo ? "cf_env, &cf_lifo" : "cf_env, &cf_allocas");
  for (unsigned i = 0; i < call->getNumArgs(); ++i) {
    if (i || allocates(m)) os << ", ";
    print_expr(call->getArg(i), os);
  }
  os << ")";
}

std::string helper_signature(clang::ASTContext& ctx, const CilkProgram& program, const FunctionSpaces& fs) {
  const clang::FunctionDecl* f = fs.decl;
  std::string out = device_type_in(ctx, f->getReturnType(), fs.result, "") + " " + fs.name + "(";
  const bool env = program.takes_env(f);
  if (env) out += "__global const chanflow_node_env* cf_env";  // the device heap's, a recursive helper's errors
  for (unsigned i = 0; i < f->getNumParams(); ++i) {
    const clang::ParmVarDecl* p = f->getParamDecl(i);
    auto it = fs.vars.find(p);
    out += (i || env ? ", " : "") + device_type_in(ctx, p->getType().getUnqualifiedType(), it == fs.vars.end() ? Space::Unknown : it->second,
                                                   device_name(p->getNameAsString()));
  }
  return out + ")";
}

// A helper as compiled for one combination of address spaces.
std::string helper_code(clang::ASTContext& ctx, const CilkProgram& program, const FunctionSpaces& fs) {
  const clang::FunctionDecl* f = fs.decl;
  if (const RecursiveHelper* r = program.recursive_helper(f)) return recursive_helper_code(ctx, program, *r, fs);
  std::string out = helper_signature(ctx, program, fs) + " ";
  std::string body;
  llvm::raw_string_ostream os(body);
  DevicePrinter printer(ctx, program, fs, nullptr);
  printer.ReleasesAllocas = program.calls_alloca(f);
  f->getBody()->printPretty(os, &printer, clang::PrintingPolicy(ctx.getLangOpts()), 0);
  if (!printer.ReleasesAllocas) return out + os.str() + "\n";
  return out + "{\nulong cf_allocas = 0; /* its alloca blocks, released when it returns */\n" + os.str() +
         "chanflow_release_allocas(cf_env, cf_allocas);\n}\n";
}

}  // namespace chanflow::compiler
