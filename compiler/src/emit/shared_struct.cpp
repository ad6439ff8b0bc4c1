// Structs host and device share, with the layout checks that keep them alike (shared_struct.hpp).
#include "emit/shared_struct.hpp"

#include "emit/emit.hpp"

#include "chanflow/node_layout.h"

#include <clang/AST/Decl.h>
#include <clang/AST/RecordLayout.h>
#include <fmt/format.h>

namespace chanflow::compiler {

static_assert(CHANFLOW_TASK_BYTES % 8 == 0 && alignof(chanflow_task) == 8);
static_assert(CHANFLOW_FRAME_BYTES % 8 == 0 && alignof(chanflow_frame) == 8);

namespace {

std::string size_checks(const clang::ASTRecordLayout& layout, const std::string& name) {
  return fmt::format("CHANFLOW_CHECK_SIZE({0}, {1});\nCHANFLOW_CHECK_ALIGN({0}, {2});\n", name, layout.getSize().getQuantity(),
                     layout.getAlignment().getQuantity());
}

}  // namespace

SharedStruct::SharedStruct(clang::ASTContext& ctx, std::string name)
    : Ctx(ctx), Name(std::move(name)), Record(ctx.buildImplicitRecord(Name)) {
  Record->startDefinition();
}

void SharedStruct::field(const std::string& spelling, clang::QualType host, const std::string& name,
                         const std::string& comment) {
  auto* f = clang::FieldDecl::Create(Ctx, Record, {}, {}, &Ctx.Idents.get(name), host, nullptr, nullptr,
                                     /*Mutable=*/false, clang::ICIS_NoInit);
  f->setAccess(clang::AS_public);
  Record->addDecl(f);
  Fields.push_back({spelling, name, comment, /*checked=*/true});
}

// On the host a header is as large and as aligned as words of 8 bytes of its size make it
// (checked above).
void SharedStruct::header(const std::string& spelling, const std::string& name, unsigned bytes) {
  field(spelling, Ctx.getConstantArrayType(Ctx.UnsignedLongTy, llvm::APInt(32, bytes / 8), nullptr, clang::ArrayType::Normal, 0),
        name);
  Fields.back().checked = false;
}

void SharedStruct::task_header() { header("chanflow_task task", "task", CHANFLOW_TASK_BYTES); }
void SharedStruct::frame_header() { header("chanflow_frame frame", "frame", CHANFLOW_FRAME_BYTES); }

clang::QualType SharedStruct::host_type() const {
  if (!Record->isCompleteDefinition()) Record->completeDefinition();
  return Ctx.getRecordType(Record);
}

std::string SharedStruct::text() const {
  host_type();  // completes the record
  const clang::ASTRecordLayout& layout = Ctx.getASTRecordLayout(Record);
  std::string out = "typedef struct {\n";
  for (const Field& f : Fields)
    out += "  " + f.spelling + ";" + (f.comment.empty() ? "" : " /* " + f.comment + " */") + "\n";
  out += fmt::format("}} {};\n", Name) + size_checks(layout, Name);
  unsigned i = 0;
  for (const Field& f : Fields) {
    if (f.checked) out += fmt::format("CHANFLOW_CHECK_FIELD({}, {}, {});\n", Name, f.name, layout.getFieldOffset(i) / 8);
    ++i;
  }
  return out + "\n";
}

std::string layout_checks(clang::ASTContext& ctx, const clang::RecordDecl* record, const std::string& name) {
  const clang::RecordDecl* def = record->getDefinition();
  if (!def || def->isInvalidDecl() || def->isDependentType()) return "";
  const clang::ASTRecordLayout& layout = ctx.getASTRecordLayout(def);
  std::string out = size_checks(layout, name);
  for (const clang::FieldDecl* f : def->fields())
    if (!f->isBitField() && !f->getName().empty())
      out += fmt::format("CHANFLOW_CHECK_FIELD({}, {}, {});\n", name, device_name(f->getNameAsString()),
                         layout.getFieldOffset(f->getFieldIndex()) / 8);
  return out;
}

}  // namespace chanflow::compiler
