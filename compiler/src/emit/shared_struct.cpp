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

SharedStruct::SharedStruct(clang::ASTContext& ctx, std::string name, bool is_union)
    : Ctx(ctx), Name(std::move(name)), Record(ctx.buildImplicitRecord(Name, is_union ? clang::TTK_Union : clang::TTK_Struct)) {
  Record->startDefinition();
}

void SharedStruct::field(const std::string& spelling, clang::QualType host, const std::string& name, bool checked,
                         const std::string& comment) {
  auto* f = clang::FieldDecl::Create(Ctx, Record, {}, {}, &Ctx.Idents.get(name), host, nullptr, nullptr,
                                     /*Mutable=*/false, clang::ICIS_NoInit);
  f->setAccess(clang::AS_public);
  Record->addDecl(f);
  Fields.push_back({spelling, name, comment, checked});
}

// A header is as large and as aligned as words of 8 bytes of its size make it (checked above).
void SharedStruct::task_header() {
  field("chanflow_task task", Ctx.getConstantArrayType(Ctx.UnsignedLongTy, llvm::APInt(32, CHANFLOW_TASK_BYTES / 8), nullptr,
                                                       clang::ArrayType::Normal, 0),
        "task", /*checked=*/false);
}

void SharedStruct::frame_header() {
  field("chanflow_frame frame", Ctx.getConstantArrayType(Ctx.UnsignedLongTy, llvm::APInt(32, CHANFLOW_FRAME_BYTES / 8),
                                                         nullptr, clang::ArrayType::Normal, 0),
        "frame", /*checked=*/false);
}

clang::QualType SharedStruct::host_type() const {
  if (!Record->isCompleteDefinition()) Record->completeDefinition();
  return Ctx.getRecordType(Record);
}

std::string SharedStruct::text() const {
  host_type();  // completes the record
  const clang::ASTRecordLayout& layout = Ctx.getASTRecordLayout(Record);
  std::string out = fmt::format("typedef {} {{\n", Record->isUnion() ? "union" : "struct");
  for (const Field& f : Fields)
    out += "  " + f.spelling + ";" + (f.comment.empty() ? "" : " /* " + f.comment + " */") + "\n";
  out += fmt::format("}} {};\n", Name);
  out += fmt::format("CHANFLOW_CHECK_SIZE({}, {});\nCHANFLOW_CHECK_ALIGN({}, {});\n", Name,
                     layout.getSize().getQuantity(), Name, layout.getAlignment().getQuantity());
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
  std::string out = fmt::format("CHANFLOW_CHECK_SIZE({}, {});\nCHANFLOW_CHECK_ALIGN({}, {});\n", name,
                                layout.getSize().getQuantity(), name, layout.getAlignment().getQuantity());
  for (const clang::FieldDecl* f : def->fields())
    if (!f->isBitField() && !f->getName().empty())
      out += fmt::format("CHANFLOW_CHECK_FIELD({}, {}, {});\n", name, device_name(f->getNameAsString()),
                         layout.getFieldOffset(f->getFieldIndex()) / 8);
  return out;
}

}  // namespace chanflow::compiler
