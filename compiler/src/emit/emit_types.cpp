// The shared types header (<name>.types.h): the user's types that device code needs and each Cilk
// function's task, locals and frame structs, written once for host C, host C++ and OpenCL C
// (pointers to global memory carry __global, defined away on the host).
#include "emit/emit.hpp"
#include "emit/shared_struct.hpp"

#include <clang/AST/Type.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>
#include <fmt/format.h>

#include <set>

namespace chanflow::compiler {
namespace {

bool in_program_code(clang::ASTContext& ctx, const clang::Decl* d) {
  return is_program_code(ctx.getSourceManager(), d->getLocation());
}

}  // namespace

clang::QualType device_scalar_type(clang::ASTContext& ctx, clang::QualType t) {
  const auto* b = llvm::dyn_cast<clang::BuiltinType>(t.getTypePtr());
  if (!b || (b->getKind() != clang::BuiltinType::LongLong && b->getKind() != clang::BuiltinType::ULongLong)) return t;
  // channel_layout.h's typedef, named here only (never added to the translation unit, so that
  // nothing else sees it): printing the type prints its name.
  const bool is_unsigned = b->getKind() == clang::BuiltinType::ULongLong;
  const clang::TypedefDecl* name = clang::TypedefDecl::Create(
      ctx, ctx.getTranslationUnitDecl(), {}, {}, &ctx.Idents.get(is_unsigned ? "chanflow_ullong" : "chanflow_llong"),
      ctx.getTrivialTypeSourceInfo(t.getUnqualifiedType()));
  return ctx.getQualifiedType(ctx.getTypedefType(name), t.getLocalQualifiers());
}

// The type with system typedefs desugared and, where asked, every pointer to global memory.
clang::QualType device_qual_type(clang::ASTContext& ctx, clang::QualType t, bool global) {
  const clang::Qualifiers q = t.getLocalQualifiers();
  const clang::Type* ty = t.getTypePtr();
  auto requalify = [&](clang::QualType u) { return ctx.getQualifiedType(u, q); };
  if (auto* td = llvm::dyn_cast<clang::TypedefType>(ty)) {
    const clang::QualType under = td->getDecl()->getUnderlyingType();
    const bool keep = in_program_code(ctx, td->getDecl()) && !(global && under->isPointerType());
    if (keep) return t;
    return requalify(device_qual_type(ctx, under, global));
  }
  if (auto* e = llvm::dyn_cast<clang::ElaboratedType>(ty)) {
    if (llvm::isa<clang::TypedefType>(e->getNamedType().getTypePtr()))
      return requalify(device_qual_type(ctx, e->getNamedType(), global));
    return t;
  }
  if (auto* p = llvm::dyn_cast<clang::ParenType>(ty)) return requalify(device_qual_type(ctx, p->getInnerType(), global));
  if (auto* d = llvm::dyn_cast<clang::DecayedType>(ty)) return requalify(device_qual_type(ctx, d->getDecayedType(), global));
  if (auto* p = llvm::dyn_cast<clang::PointerType>(ty)) {
    clang::QualType pointee = device_qual_type(ctx, p->getPointeeType(), global);
    if (global && !pointee->isFunctionType()) pointee = ctx.getAddrSpaceQualType(pointee, clang::LangAS::opencl_global);
    return requalify(ctx.getPointerType(pointee));
  }
  if (auto* a = llvm::dyn_cast<clang::ConstantArrayType>(ty))
    return requalify(ctx.getConstantArrayType(device_qual_type(ctx, a->getElementType(), global), a->getSize(), nullptr,
                                              a->getSizeModifier(), a->getIndexTypeCVRQualifiers()));
  if (auto* a = llvm::dyn_cast<clang::IncompleteArrayType>(ty))
    return requalify(ctx.getIncompleteArrayType(device_qual_type(ctx, a->getElementType(), global),
                                                a->getSizeModifier(), a->getIndexTypeCVRQualifiers()));
  return device_scalar_type(ctx, t);
}

namespace {

clang::PrintingPolicy policy(clang::ASTContext& ctx) {
  clang::PrintingPolicy p(ctx.getLangOpts());
  p.SuppressTagKeyword = false;
  p.Bool = false;
  return p;
}

// `struct tag { fields }` or, for an anonymous record, its body only (a typedef names it).
std::string record_body(clang::ASTContext& ctx, const clang::RecordDecl* r) {
  std::string out = r->isUnion() ? "union" : "struct";
  if (!r->getName().empty()) out += " " + r->getNameAsString();
  out += " {\n";
  for (const clang::FieldDecl* f : r->fields()) {
    std::string field = device_type(ctx, f->getType(), true, device_name(f->getNameAsString()));
    if (f->isBitField()) field += " : " + std::to_string(f->getBitWidthValue(ctx));
    out += "  " + field + ";\n";
  }
  return out + "}";
}

std::string enum_body(const clang::EnumDecl* e) {
  std::string out = "enum";
  if (!e->getName().empty()) out += " " + e->getNameAsString();
  out += " {";
  bool first = true;
  for (const clang::EnumConstantDecl* c : e->enumerators()) {
    out += fmt::format("{} {} = {}", first ? "" : ",", c->getNameAsString(), c->getInitVal().getSExtValue());
    first = false;
  }
  return out + " }";
}

const clang::TagDecl* anonymous_tag(clang::QualType t) {
  const clang::TagDecl* tag = t->getAsTagDecl();
  return tag && tag->getName().empty() ? tag : nullptr;
}

}  // namespace

std::string device_name(const std::string& name) {
  static const std::set<std::string> reserved = {
      "global", "local", "constant", "private", "generic", "kernel", "read_only", "write_only", "read_write",
      "uniform", "pipe", "half", "bool", "uchar", "ushort", "uint", "ulong", "quad", "image1d_t", "image2d_t",
      "image3d_t", "sampler_t", "event_t", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "complex", "imaginary",
      // C++'s keywords: the types header is C++ too (the graph's), and C names such as `new` are common
      "new", "delete", "class", "this", "template", "typename", "namespace", "operator", "protected", "public",
      "virtual", "friend", "throw", "try", "catch", "using", "explicit", "mutable", "export", "true", "false",
      "nullptr", "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "not_eq", "xor_eq",
      "decltype", "constexpr", "consteval", "constinit", "noexcept", "concept", "requires", "co_await", "co_return",
      "co_yield", "char8_t", "char16_t", "char32_t", "wchar_t", "dynamic_cast", "static_cast", "reinterpret_cast",
      "const_cast", "typeid", "asm"};
  if (reserved.count(name)) return name + "_";
  static const char* const vectors[] = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float",
                                        "double", "half", "bool"};
  for (const char* v : vectors) {
    const std::string base = v;
    if (name.size() > base.size() && name.compare(0, base.size(), base) == 0) {
      const std::string n = name.substr(base.size());
      if (n == "2" || n == "3" || n == "4" || n == "8" || n == "16") return name + "_";
    }
  }
  return name;
}

std::string device_type(clang::ASTContext& ctx, clang::QualType type, bool global_pointers,
                        const std::string& declarator) {
  std::string out;
  llvm::raw_string_ostream os(out);
  device_qual_type(ctx, type, global_pointers).print(os, policy(ctx), declarator);
  return os.str();
}

std::string emit_types_header(clang::ASTContext& ctx, const CilkProgram& program) {
  return fmt::format(
      "/* Generated by chanflowc from {0}.c: the types its kernel nodes and their host side share (C, C++ and\n"
      " * OpenCL C). Pointers to global memory say __global, defined away on the host. */\n"
      "#ifndef CHANFLOWC_{0}_TYPES_H\n#define CHANFLOWC_{0}_TYPES_H\n\n"
      "#ifndef __OPENCL_VERSION__\n#include <chanflow/node_layout.h>\n#define __global\n#endif\n\n{1}{2}#endif\n",
      program.name, emit_user_types(ctx, program), emit_frame_types(ctx, program));
}

std::string emit_user_types(clang::ASTContext& ctx, const CilkProgram& program) {
  std::string out;
  // A scalar's or an enum's size, checked like a record's layout.
  auto size_check = [&](clang::QualType t, const std::string& name) -> std::string {
    if (t->isIncompleteType() || t->isFunctionType() || t->isVoidType()) return "";
    return fmt::format("CHANFLOW_CHECK_SIZE({}, {});\n", name, ctx.getTypeSizeInChars(t).getQuantity());
  };
  for (const clang::Decl* d : program.types) {
    if (auto* r = llvm::dyn_cast<clang::RecordDecl>(d)) {
      if (r->getName().empty()) continue;
      const std::string name = (r->isUnion() ? "union " : "struct ") + r->getNameAsString();
      out += record_body(ctx, r) + ";\n" + layout_checks(ctx, r, name) + "\n";
    } else if (auto* e = llvm::dyn_cast<clang::EnumDecl>(d)) {
      if (!e->getName().empty())
        out += enum_body(e) + ";\n" + size_check(ctx.getEnumType(e), "enum " + e->getNameAsString()) + "\n";
      else if (!e->getTypedefNameForAnonDecl())  // `enum { A, B };`: its constants (a typedef's is printed with it)
        out += enum_body(e) + ";\n\n";
    } else if (auto* t = llvm::dyn_cast<clang::TypedefNameDecl>(d)) {
      const clang::QualType under = t->getUnderlyingType();
      const std::string name = t->getNameAsString();
      if (const clang::TagDecl* tag = anonymous_tag(under)) {
        const auto* r = llvm::dyn_cast<clang::RecordDecl>(tag);
        const std::string body = r ? record_body(ctx, r) : enum_body(llvm::cast<clang::EnumDecl>(tag));
        out += "typedef " + body + " " + name + ";\n" + (r ? layout_checks(ctx, r, name) : size_check(under, name)) + "\n";
      } else {
        out += "typedef " + device_type(ctx, under, true, name) + ";\n" + size_check(under, name) + "\n";
      }
    }
  }
  return out;
}

std::string emit_frame_types(clang::ASTContext& ctx, const CilkProgram& program) {
  std::string out;
  for (const CilkFunction& f : program.functions) out += emit_frame_types(ctx, f);
  return out;
}

std::string emit_frame_types(clang::ASTContext& ctx, const CilkFunction& f) {
  std::string out;
  const clang::QualType u64 = ctx.UnsignedLongTy, u32 = ctx.UnsignedIntTy;
  auto array = [&](clang::QualType t, unsigned n) {
    return ctx.getConstantArrayType(t, llvm::APInt(32, n), nullptr, clang::ArrayType::Normal, 0);
  };
  auto add = [&](SharedStruct& s, clang::QualType t, const std::string& name) {
    s.field(device_type(ctx, t.getUnqualifiedType(), true, name), t.getUnqualifiedType(), name);
  };
  const std::string& n = f.name;
  out += fmt::format("/* {}: a task (its arguments), and the frame its continuation resumes from. */\n", n);
  SharedStruct task(ctx, n + "__task");
  task.task_header();
  for (const clang::ParmVarDecl* p : f.decl->parameters()) add(task, p->getType(), f.field.at(p));
  out += task.text();
  if (f.spawns.empty()) return out;
  const bool has_locals = !f.frame.saved.empty() || f.frame.saves_return || f.frame.saves_allocas;
  SharedStruct locals(ctx, n + "__locals");
  if (has_locals) {
    for (const clang::VarDecl* v : f.locals)
      if (f.frame.saved.count(v)) add(locals, v->getType(), f.field.at(v));
    if (f.frame.saves_return) add(locals, f.decl->getReturnType(), "cf_ret");
    if (f.frame.saves_allocas) locals.field("chanflow_u64 cf_allocas", u64, "cf_allocas", "its alloca blocks");
    out += locals.text();
  }
  SharedStruct frame(ctx, n + "__frame");
  frame.frame_header();
  if (f.result_slots)
    frame.field(fmt::format("chanflow_u64 slot[{}]", f.result_slots), array(u64, f.result_slots), "slot",
                "results, at CHANFLOW_FRAME_BYTES + 8 * i");
  if (f.frame.resume_points > 1) frame.field("chanflow_u32 resume", u32, "resume", "the sync point it resumes after");
  if (f.static_slots && f.result_slots) frame.field("chanflow_u32 filled", u32, "filled", "bit i: slot i was spawned for");
  if (!f.static_slots) frame.field("chanflow_u32 results", u32, "results", "slots filled");
  if (!f.static_slots && f.result_slots && f.result_sites() > 1)
    frame.field(fmt::format("chanflow_u32 site[{}]", f.result_slots), array(u32, f.result_slots), "site",
                "the spawn that fills slot i");
  if (f.result_slots && f.results_need_destinations())
    frame.field(fmt::format("chanflow_u64 dest[{}]", f.result_slots), array(u64, f.result_slots), "dest",
                "where slot i goes: an offset in a local, or an address");
  if (has_locals) frame.field(n + "__locals locals", locals.host_type(), "locals");
  out += frame.text();
  if (f.boxed.empty()) return out;
  out += "/* The locals whose address its children get: in the task's scratch block until its last sync. */\n";
  SharedStruct box(ctx, n + "__box");
  for (const clang::VarDecl* v : f.boxed) add(box, v->getType(), f.field.at(v));
  out += box.text();
  return out;
}

std::string format_code(const std::string& code, const std::string& file_name) {
  clang::format::FormatStyle style = clang::format::getLLVMStyle();
  style.ColumnLimit = 110;
  style.AllowShortFunctionsOnASingleLine = clang::format::FormatStyle::SFS_Empty;
  style.SortIncludes = clang::format::FormatStyle::SI_Never;
  const std::vector<clang::tooling::Range> ranges = {clang::tooling::Range(0, static_cast<unsigned>(code.size()))};
  const clang::tooling::Replacements replacements = clang::format::reformat(style, code, ranges, file_name);
  llvm::Expected<std::string> formatted = clang::tooling::applyAllReplacements(code, replacements);
  if (!formatted) {
    llvm::consumeError(formatted.takeError());
    return code;
  }
  return *formatted;
}

}  // namespace chanflow::compiler
