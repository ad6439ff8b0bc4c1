// The front end: runs Clang on the Cilk source with chanflow's keyword macros, records where each
// keyword was written (preprocessor callbacks, never text matching), then hands the AST to the
// analysis and the emitters. Clang's own diagnostics and ours go through one DiagnosticsEngine.
#include "analysis/analysis.hpp"
#include "chanflow/compiler.hpp"
#include "cilk_for.hpp"
#include "compiler_config.hpp"
#include "emit/emit.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Pragma.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <set>

namespace chanflow::compiler {
namespace {

// Records the token after each spawn / scope / cilk keyword, and rejects the Cilk constructs
// chanflow does not lower where they are written.
class KeywordRecorder : public clang::PPCallbacks {
 public:
  KeywordRecorder(clang::Preprocessor& pp, KeywordLocations& out) : PP(pp), Out(out) {
    PP.setTokenWatcher([this](const clang::Token& Tok) { onToken(Tok); });
  }

  void MacroExpands(const clang::Token& NameTok, const clang::MacroDefinition& MD, clang::SourceRange,
                    const clang::MacroArgs*) override {
    const clang::MacroInfo* MI = MD.getMacroInfo();
    if (!MI || !isChanflowHeader(MI->getDefinitionLoc())) return;
    const llvm::StringRef Name = NameTok.getIdentifierInfo()->getName();
    if (Name == "cilk_spawn" || Name == "spawn") {
      Pending = &Out.spawn_targets;
    } else if (Name == "cilk_scope") {
      Pending = &Out.scope_braces;
    } else if (Name == "cilk") {
      Out.cilk_qualifiers.push_back(PP.getSourceManager().getExpansionLoc(NameTok.getLocation()));
    } else if (Name == "inlet") {
      reject(NameTok.getLocation(), "Cilk-5 inlets are not supported by chanflowc; assign the spawn's result to a "
                                    "variable and combine the results after the sync");
    } else if (Name == "Cilk_lockvar" || Name == "Cilk_lock_init" || Name == "Cilk_lock" || Name == "Cilk_unlock") {
      reject(NameTok.getLocation(), "Cilk-5 locks (" + Name.str() + ") are not supported by chanflowc: a work-item "
                                    "that waits for another can stall the device; combine the children's results "
                                    "after a sync instead");
    } else if (Name == "CilkContext" || Name == "EXPORT" || Name == "Cilk_init" || Name == "Cilk_terminate") {
      reject(NameTok.getLocation(), "Cilk-5's interface for calling Cilk from C (" + Name.str() + ") is not supported "
                                    "by chanflowc: call the Cilk function itself; chanflowc runs it on the device");
    } else if (Name == "cilk_for") {
      Out.cilk_fors.push_back(PP.getSourceManager().getExpansionLoc(NameTok.getLocation()));
    } else if (Name == "cilk_reducer") {
      reject(NameTok.getLocation(), "reducers (cilk_reducer) are not supported by chanflowc");
    }
  }

 private:
  void onToken(const clang::Token& Tok) {
    if (!Pending) return;
    Pending->insert(Tok.getLocation());
    Pending = nullptr;
  }

  bool isChanflowHeader(clang::SourceLocation Loc) const {
    const clang::SourceManager& SM = PP.getSourceManager();
    const llvm::StringRef File = SM.getFilename(SM.getSpellingLoc(Loc));
    return File.endswith("cilk/cilk.h") || File.endswith("cilk/cilk5.h") || File.endswith("cilk-lib.cilkh");
  }

  void reject(clang::SourceLocation Loc, llvm::StringRef Message) {
    clang::DiagnosticsEngine& D = PP.getDiagnostics();
    D.Report(Loc, D.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << Message;
  }

  clang::Preprocessor& PP;
  KeywordLocations& Out;
  std::set<clang::SourceLocation>* Pending = nullptr;
};

// `#pragma chanflow serial_below(EXPR)`: EXPR's tokens, for the analysis to check against the
// function defined next (Analyzer::apply_serial_below).
class SerialBelowHandler : public clang::PragmaHandler {
 public:
  explicit SerialBelowHandler(KeywordLocations& out) : clang::PragmaHandler("serial_below"), Out(out) {}

  void HandlePragma(clang::Preprocessor& PP, clang::PragmaIntroducer, clang::Token& name) override {
    SerialBelowPragma pragma{.loc = name.getLocation()};
    clang::Token t;
    PP.Lex(t);
    if (t.isNot(clang::tok::l_paren)) return malformed(PP, t);
    for (int depth = 1;;) {
      PP.Lex(t);
      if (t.is(clang::tok::eod)) return malformed(PP, t);
      if (t.is(clang::tok::l_paren)) ++depth;
      if (t.is(clang::tok::r_paren) && --depth == 0) break;
      pragma.spellings.push_back(PP.getSpelling(t));
      pragma.tokens.push_back(t);
    }
    PP.Lex(t);
    if (t.isNot(clang::tok::eod) || pragma.tokens.empty()) return malformed(PP, t);
    Out.serial_below.push_back(std::move(pragma));
  }

 private:
  void malformed(clang::Preprocessor& PP, clang::Token& at) {
    clang::DiagnosticsEngine& D = PP.getDiagnostics();
    D.Report(at.getLocation(), D.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                                 "expected '#pragma chanflow serial_below(EXPR)', EXPR a condition on "
                                                 "the parameters of the Cilk function defined next"));
    while (at.isNot(clang::tok::eod)) PP.Lex(at);
  }

  KeywordLocations& Out;
};

class LowerConsumer : public clang::ASTConsumer {
 public:
  LowerConsumer(clang::CompilerInstance& ci, const KeywordLocations& keywords, const TranslateOptions& options,
                std::optional<Translation>& out, std::optional<std::string>& rewritten)
      : CI(ci), Keywords(keywords), Options(options), Out(out), Rewritten(rewritten) {}

  void HandleTranslationUnit(clang::ASTContext& Ctx) override {
    if (CI.getDiagnostics().hasErrorOccurred()) return;
    if (!Keywords.cilk_fors.empty()) {  // rewritten first; the front end runs again on the result
      const std::vector<clang::SourceLocation> spawns(Keywords.spawn_targets.begin(), Keywords.spawn_targets.end());
      Rewritten = rewrite_cilk_fors(Ctx, Keywords.cilk_fors, spawns, Options.input,
                                    [&](std::set<const clang::FunctionDecl*> cilk) {
                                      return host_drivers(Ctx, Keywords, Options, std::move(cilk));
                                    });
      return;
    }
    std::optional<CilkProgram> Program = analyze(Ctx, Keywords, Options);
    if (!Program || CI.getDiagnostics().hasErrorOccurred()) return;
    lay_out_frames(Ctx, *Program);  // what each frame holds, before any emitter reads it
    if (CI.getDiagnostics().hasErrorOccurred()) return;  // reported once, by the layout's pass
    Translation t = emit(Ctx, *Program);  // it may still report what only lowering finds
    if (!CI.getDiagnostics().hasErrorOccurred()) Out = std::move(t);
  }

 private:
  clang::CompilerInstance& CI;
  const KeywordLocations& Keywords;
  const TranslateOptions& Options;
  std::optional<Translation>& Out;
  std::optional<std::string>& Rewritten;
};

class LowerAction : public clang::ASTFrontendAction {
 public:
  LowerAction(const TranslateOptions& options, std::optional<Translation>& out, std::optional<std::string>& rewritten)
      : Options(options), Out(out), Rewritten(rewritten) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& CI, llvm::StringRef) override {
    CI.getPreprocessor().addPPCallbacks(std::make_unique<KeywordRecorder>(CI.getPreprocessor(), Keywords));
    CI.getPreprocessor().AddPragmaHandler("chanflow", new SerialBelowHandler(Keywords));  // the preprocessor owns it
    return std::make_unique<LowerConsumer>(CI, Keywords, Options, Out, Rewritten);
  }

 private:
  const TranslateOptions& Options;
  std::optional<Translation>& Out;
  std::optional<std::string>& Rewritten;
  KeywordLocations Keywords;
};

class LowerActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  LowerActionFactory(const TranslateOptions& options, std::optional<Translation>& out,
                     std::optional<std::string>& rewritten)
      : Options(options), Out(out), Rewritten(rewritten) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<LowerAction>(Options, Out, Rewritten); }

 private:
  const TranslateOptions& Options;
  std::optional<Translation>& Out;
  std::optional<std::string>& Rewritten;
};

// Where a string or character literal of `text` has a `\N` escape that is not a whole `\N{name}`,
// as line and column (1-based); {0, 0} if none. Clang 15's literal parser reads past the end of
// such a literal (llvm/llvm-project#84122, clangd/clangd#1406: found here by fuzzing), so chanflowc
// refuses it before Clang sees it. Comments are skipped; a literal ends at its quote or line.
std::pair<unsigned, unsigned> broken_named_escape(llvm::StringRef text) {
  unsigned line = 1, column = 1;
  char quote = 0;  // inside a literal: its quote
  for (std::size_t i = 0; i < text.size(); ++i, ++column) {
    const char c = text[i];
    if (c == '\n') {
      quote = 0;
      ++line;
      column = 0;
      continue;
    }
    if (!quote) {
      if (text.substr(i).startswith("//")) {
        while (i + 1 < text.size() && text[i + 1] != '\n') ++i, ++column;
      } else if (text.substr(i).startswith("/*")) {
        for (i += 2, column += 2; i < text.size() && !text.substr(i).startswith("*/"); ++i, ++column)
          if (text[i] == '\n') ++line, column = 0;
        ++i, ++column;
      } else if (c == '"' || c == '\'') {
        quote = c;
      }
      continue;
    }
    if (c == quote) {
      quote = 0;
    } else if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == 'N') {
        const std::size_t close = text.find_first_of(std::string("}\n") + quote, i + 2);
        if (i + 2 >= text.size() || text[i + 2] != '{' || close == llvm::StringRef::npos || text[close] != '}')
          return {line, column};
      }
      ++i, ++column;  // the escaped character
    }
  }
  return {0, 0};
}

// Prints each diagnostic once. A cilk_for body is in a pass's source up to three times (where
// the loop was, for a CPU device; in its leaf; in its one-grain leaf), each copy #line'd to where
// it was written, so a construct the device cannot run there would be reported once per copy.
// Notes go with the diagnostic they follow.
class OncePrinter : public clang::DiagnosticConsumer {
 public:
  // The options as the command line gives them (a presumed location: #line's file and line);
  // the printer holds them by reference count, and frees them.
  explicit OncePrinter(const std::vector<std::string>& args)
      : printer_(llvm::errs(), options_from(args).release()) {}
  void BeginSourceFile(const clang::LangOptions& lang, const clang::Preprocessor* pp) override {
    printer_.BeginSourceFile(lang, pp);
  }
  void EndSourceFile() override { printer_.EndSourceFile(); }
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    if (level != clang::DiagnosticsEngine::Note) {
      llvm::SmallString<128> key;
      info.FormatDiagnostic(key);
      if (info.getLocation().isValid() && info.hasSourceManager()) {
        const clang::PresumedLoc at = info.getSourceManager().getPresumedLoc(info.getLocation());
        if (at.isValid()) key += fmt::format("@{}:{}:{}", at.getFilename(), at.getLine(), at.getColumn());
      }
      key += fmt::format("#{}", static_cast<int>(level));
      repeated_ = !seen_.insert(key.str().str()).second;
    }
    if (repeated_) return;
    DiagnosticConsumer::HandleDiagnostic(level, info);  // counts it
    printer_.HandleDiagnostic(level, info);
  }

 private:
  static std::unique_ptr<clang::DiagnosticOptions> options_from(const std::vector<std::string>& args) {
    std::vector<const char*> argv = {"chanflowc"};  // the program's name: not an option
    for (const std::string& a : args) argv.push_back(a.c_str());
    return clang::CreateAndPopulateDiagOpts(argv);
  }
  clang::TextDiagnosticPrinter printer_;
  std::set<std::string> seen_;
  bool repeated_ = false;
};

}  // namespace

std::optional<Translation> translate(const TranslateOptions& options) {
  const bool cilk5 = llvm::StringRef(options.input).endswith(".cilk");
  {
    std::string text;
    if (options.text) {
      text = *options.text;
    } else if (auto file = llvm::MemoryBuffer::getFile(options.input)) {
      text = (*file)->getBuffer().str();
    }
    if (const auto [line, column] = broken_named_escape(text); line) {
      if (!options.quiet)
        llvm::errs() << options.input << ":" << line << ":" << column
                     << ": error: a '\\N' escape must name its character as \\N{NAME} (chanflowc's front end, Clang "
                        "15, misreads any other)\n";
      return std::nullopt;
    }
  }
  std::vector<std::string> args = {"-x", "c", "-std=gnu11", "-D__chanflowc__=1", "-fsyntax-only",
                                   "-resource-dir=" + std::string(config::kClangResourceDir),
                                   // a system header: not the program's own code (is_program_code)
                                   "-isystem" + config::cilk_include_dir()};
  if (cilk5) args.insert(args.end(), {"-include", "cilk/cilk5.h"});
  args.insert(args.end(), options.clang_args.begin(), options.clang_args.end());
  clang::tooling::FixedCompilationDatabase db(".", args);
  std::optional<Translation> out;
  // A pass that rewrites cilk_for loops (the outermost of each nest) hands its text to the next,
  // which parses it in the input's place; the last pass, with none left, lowers the program.
  std::optional<std::string> source = options.text;
  clang::IgnoringDiagConsumer silent;
  constexpr int kPasses = 16;  // a nest of cilk_for loops takes one each
  for (int pass = 0;; ++pass) {
    if (pass == kPasses) {
      if (!options.quiet)
        llvm::errs() << options.input << ": error: cilk_for loops nested more than " << kPasses - 1
                     << " deep: chanflowc rewrites one level a pass\n";
      return std::nullopt;
    }
    clang::tooling::ClangTool tool(db, {options.input});
    if (source) tool.mapVirtualFile(options.input, *source);
    OncePrinter once(args);
    tool.setDiagnosticConsumer(options.quiet ? static_cast<clang::DiagnosticConsumer*>(&silent) : &once);
    std::optional<std::string> rewritten;
    LowerActionFactory factory(options, out, rewritten);
    if (tool.run(&factory) != 0) return std::nullopt;
    if (!rewritten) break;
    source = std::move(rewritten);
  }
  if (out) {
    out->name = llvm::sys::path::stem(options.input).str();
    out->source = options.input;
  }
  return out;
}

}  // namespace chanflow::compiler
