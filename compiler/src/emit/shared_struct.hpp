// A struct of the types header (<name>.types.h), which host C, host C++ and OpenCL C all compile:
// its definition and, after it, the size, alignment and field offsets the host's ABI gives it,
// stated once and checked by each of those compilers (channel_layout.h's CHANFLOW_CHECK_*), so that
// a device laying it out differently fails its build, never a run.
#pragma once

#include <clang/AST/ASTContext.h>

#include <string>
#include <vector>

namespace chanflow::compiler {

class SharedStruct {
 public:
  /// A `typedef struct { ... } name;`.
  SharedStruct(clang::ASTContext& ctx, std::string name);

  /// A field the header spells `spelling` (a declaration without the `;`) whose type on the host is
  /// `host`, its offset checked by name.
  void field(const std::string& spelling, clang::QualType host, const std::string& name, const std::string& comment = "");
  /// The header of a task (chanflow_task) or a frame (chanflow_frame) of node_layout.h.
  void task_header();
  void frame_header();

  /// The definition and its checks.
  std::string text() const;
  /// The struct as the host lays it out, for a struct holding it.
  clang::QualType host_type() const;

 private:
  // A header of `bytes` (a multiple of 8, 8-byte aligned), first and at offset 0: not checked.
  void header(const std::string& spelling, const std::string& name, unsigned bytes);

  struct Field {
    std::string spelling, name, comment;
    bool checked;
  };
  clang::ASTContext& Ctx;
  std::string Name;
  clang::RecordDecl* Record;
  std::vector<Field> Fields;
};

/// The checks of a record the program defines (its host layout, from the AST): `name` is how the
/// header names it (`struct tag` or a typedef's name).
std::string layout_checks(clang::ASTContext& ctx, const clang::RecordDecl* record, const std::string& name);

}  // namespace chanflow::compiler
