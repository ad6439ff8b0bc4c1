// cilk_for as a divide-and-conquer Cilk function (see cilk_for.hpp).
#include "cilk_for.hpp"
#include "cilk_for_loop.hpp"
#include "cilk_for_scan.hpp"

#include "analysis/cilk_model.hpp"

#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Lex/Lexer.h>
#include <clang/Rewrite/Core/Rewriter.h>
#include <fmt/format.h>
#include <llvm/Support/Path.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

namespace chanflow::compiler {
namespace {

enum class Capture { Value, Address, Array };

// The most parts a loop's range is cut in at once: a Cilk function's loop of constant trip count
// spawns that many children without a batch sync (--max-loop-spawns, 32 by default).
constexpr int kFanOut = 32;

// The most cilk_for loops a function may hold and still give each a one-grain leaf (`leaf1`): a
// function's node has an output port per callee (kMostPorts in all), and each loop's leaf, part
// and one-grain leaf are three; past it a one-grain loop takes its block from the heap, as a
// longer one does, two ports a loop. A quarter of the ports leaves room for the other callees.
constexpr std::size_t kMostOneGrainLoops = kMostPorts / 4;

// A leaf's block of values (see LoopRewriter::lower): its fields, how the function spawning a
// leaf fills it where the loop was and in a splitter, and how the leaf reads it; and the
// arguments that stay arguments. Its first field counts the tasks that hold it (the leaves and
// parts of one run of the loop: the last frees it, chanflow_caps_release), 0 in a block not
// counted (main's, in SVM).
struct Caps {
  std::vector<std::string> decls, names, from_call;
  std::string direct_params, direct_passed, direct_outer;
  void add(const std::string& decl, const std::string& name, const std::string& at_call) {
    decls.push_back(decl);
    names.push_back(name);
    from_call.push_back(at_call);
  }
  void direct(const std::string& decl, const std::string& in_function, const std::string& at_call) {
    direct_params += ", " + decl;
    direct_passed += ", " + in_function;
    direct_outer += ", " + at_call;
  }
  std::string fields() const {
    std::string out = "unsigned int cf_holders; ";
    for (const std::string& d : decls) out += d + "; ";
    return out;
  }
  // An initializer where the loop was, the block held by `holders` tasks.
  std::string at_call(const std::string& holders) const {
    return from_call.empty() ? holders : holders + ", " + list(from_call);
  }
  // The same, stored through pointer `p`.
  std::string assign(const std::string& p, const std::string& holders) const {
    std::string out = p + "->cf_holders = " + holders + "; ";
    for (std::size_t i = 0; i < names.size(); ++i) out += p + "->" + names[i] + " = " + from_call[i] + "; ";
    return out;
  }
  // The values' declarations in a leaf, read from its block through `access` (`->` where the
  // leaf gets the block's address, `.` where its task holds the block itself).
  std::string unpack(const std::string& access) const {
    std::string out;
    for (std::size_t i = 0; i < decls.size(); ++i) out += decls[i] + " = cf_caps" + access + names[i] + "; ";
    return out;
  }

 private:
  static std::string list(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
    return out.empty() ? "0" : out;
  }
};

class LoopRewriter : public LoopSource {
 public:
  LoopRewriter(clang::ASTContext& ctx, clang::Rewriter& rw, const std::vector<clang::SourceLocation>& spawns,
               const std::string& path, std::set<std::string>& taken)
      : LoopSource(ctx), Rw(rw), Spawns(spawns), Path(path), Stem(llvm::sys::path::stem(path).str()), Taken(taken) {}

  // Lowers one loop; false after reporting why it cannot.
  bool lower(const clang::ForStmt* s, const clang::FunctionDecl* f) {
    Loop = s;
    if (!canonical(s)) return false;
    if (!body_stays(s->getBody())) return false;
    const clang::ForStmt* in = collapsible(s);  // cilk_for (i ...) cilk_for (j ...): one range of i × j
    const clang::Stmt* work = in ? in->getBody() : s->getBody();
    // A body the device cannot run (a call of a function without a definition) stays serial here.
    if (const std::string host = host_only_call(s->getBody()); !host.empty()) {
      warn(s->getForLoc(), "this cilk_for runs as a serial loop where it is: its body calls '" + host +
                               "', which has no definition chanflowc can compile for the device");
      Rw.ReplaceText(SM.getExpansionLoc(s->getForLoc()), std::string("cilk_for").size(), "for");
      return true;
    }
    find_captures(s->getBody());
    if (Failed) return false;
    const unsigned line = SM.getPresumedLineNumber(SM.getExpansionLoc(s->getForLoc()));  // the original's, through #line
    std::string name = fmt::format("{}__cilk_for_{}", identifier(Stem), line);
    const llvm::StringRef buffer = SM.getBufferData(SM.getMainFileID());
    for (int k = 2; buffer.contains(name + "(") || Taken.count(name); ++k)
      name = fmt::format("{}__cilk_for_{}_{}", identifier(Stem), line, k);
    Taken.insert(name);
    // A body holding another cilk_for (rewritten by the next pass into a call of a Cilk function)
    // spawns as surely as one that says so.
    const bool spawns = holds_cilk_for(work) || body_spawns(work) || calls_cilk(work);

    // A collapsed pair also passes the inner range's trip count, start and step.
    // What follows the range in every function made: its parameters (`tail`), the arguments a
    // function passes its children (`passed`), and those the loop's own place passes (`outer`).
    // A leaf gets what is read by value (and a pair's inner range) in a block of its own, `caps`,
    // which the function spawning it keeps until its sync: a leaf's task is five words and a
    // pointer, however many values its body reads (a spawning task stages up to kFanOut of them,
    // and keeps them in its yield state). Addresses stay arguments: an array, or a variable the
    // body writes, is kept in the spawning task's frame because a child is given its address.
    std::string tail, passed, outer;
    Caps caps;
    if (in) {
      tail += ", long cf_inner, long cf_first2, long cf_step2";
      passed += ", cf_inner, cf_first2, cf_step2";
      outer += ", cf_n2, cf_a2, cf_s2";
      caps.add("long cf_inner", "cf_inner", "cf_n2");
      caps.add("long cf_first2", "cf_first2", "cf_a2");
      caps.add("long cf_step2", "cf_step2", "cf_s2");
    }
    for (const auto& [v, how] : Captures) {
      clang::QualType t = v->getType();
      std::string decl;
      const std::string n = v->getNameAsString();
      if (how == Capture::Value) {
        decl = print(t.getUnqualifiedType(), n);
        outer += ", " + n;
        passed += ", " + n;
        caps.add(decl, n, n);
      } else if (how == Capture::Array) {
        decl = print(Ctx.getDecayedType(t), n);
        outer += ", " + n;
        passed += ", " + n;
        caps.direct(decl, n, n);
      } else {
        decl = print(Ctx.getPointerType(t), "cf_ref_" + n);
        outer += ", &" + n;
        passed += ", cf_ref_" + n;
        caps.direct(decl, "cf_ref_" + n, "&" + n);
      }
      tail += ", " + decl;
    }
    const std::string params = "long cf_lo, long cf_hi, long cf_grain, long cf_first, long cf_step" + tail;
    const std::string inner = "cf_at, cf_hi - cf_at < cf_part ? cf_hi : cf_at + cf_part, cf_grain, cf_first, cf_step" + passed;

    // The call where the loop was: the start, limit and step evaluated once each, as cilk_for
    // does, in long (an int range's count can overflow int), then the trip count.
    std::string bounds = range_bounds("");
    // The loop variables of iteration cf_k, from the range's start and step as named in `names`
    // (first, step; for a pair also the inner trip count, first and step).
    std::function<std::string(const std::vector<std::string>&)> ivs = [&, var = Var](const std::vector<std::string>& n) {
      return print(var->getType().getUnqualifiedType(), var->getNameAsString()) + " = " + n[0] + " + cf_k * " + n[1] + ";";
    };
    if (in) {
      const Range saved = range();
      canonical(in);
      // The inner range only where the outer one is not empty (the elision evaluates it only then).
      bounds += " long cf_a2 = 0, cf_b2 = 0, cf_s2 = 1, cf_n2 = 0; if (cf_n > 0) { " + range_bounds("2", false) +
                " } cf_n = cf_n2 > 0 ? cf_n * cf_n2 : 0;";
      ivs = [&, outer_var = saved.var, inner_var = Var](const std::vector<std::string>& n) {
        return print(outer_var->getType().getUnqualifiedType(), outer_var->getNameAsString()) + " = " + n[0] + " + cf_k / " +
               n[2] + " * " + n[1] + "; " + print(inner_var->getType().getUnqualifiedType(), inner_var->getNameAsString()) +
               " = " + n[3] + " + cf_k % " + n[2] + " * " + n[4] + ";";
      };
      set_range(saved);
    }
    const std::vector<std::string> in_function = {"cf_first", "cf_step", "cf_inner", "cf_first2", "cf_step2"};
    const std::vector<std::string> at_call = {"cf_a", "cf_s", "cf_n2", "cf_a2", "cf_s2"};
    const std::string& file = Path;
    const bool host = f->isMain() || HostCode.count(f->getCanonicalDecl());
    const bool one_grain_leaf = !host && loops_in(f) <= kMostOneGrainLoops;
    const std::string body = body_text(work);
    const unsigned body_line = SM.getPresumedLineNumber(SM.getExpansionLoc(work->getBeginLoc()));
    const clang::CharSourceRange whole = loop_range(s);
    const std::string original = text(whole);
    const std::string newlines(std::count(original.begin(), original.end(), '\n'), '\n');  // lines stay where they were
    if (spawns) {
      // The call where the loop was: the start, limit and step evaluated once each, as cilk_for
      // does, in long (an int range's count can overflow int), then the trip count.
      Rw.ReplaceText(whole, fmt::format("{{ {0} if (cf_n > 0) {1}(0, cf_n, 1, cf_a, cf_s{2}); }}", bounds, name, outer) + newlines);
      // The function: split the range in eight parts, each spawned, down to one iteration each.
      Definitions += fmt::format(
          "\n#line {0} \"{1}\"\nvoid {2}({3}) {{ if (cf_hi - cf_lo > cf_grain) {{ long cf_part = (cf_hi - cf_lo + 7) / 8; "
          "if (cf_part < cf_grain) cf_part = cf_grain; for (int cf_c = 0; cf_c < 8; cf_c++) {{ long cf_at = cf_lo + cf_c * cf_part; "
          "if (cf_at < cf_hi) cilk_spawn {2}({4}); }} cilk_sync; return; }} "
          "{8} {{ {5}\n#line {6} \"{1}\"\n{7}\n}} }}\n",
          line, file, name, params, inner, ivs(in_function), body_line, body,
          // One iteration: no loop around its spawns, unless it needs one for `continue`.
          has_continue(work) ? "for (long cf_k = cf_lo; cf_k < cf_hi; cf_k++)" : "long cf_k = cf_lo;");
    } else {
      // A body that does not spawn: its range is cut in grains of iterations, and a grain runs as
      // a leaf, a work-group task whose work-items share its iterations (__chanflow_group_item:
      // its work-item, 0 in a per-item task). What the body reads by value is a block, `caps`,
      // which the function holding the loop keeps in its frame until its sync; every leaf and
      // every part of the range gets its address. A Cilk function spawns up to kFanOut leaves
      // itself and syncs (one wait, as a hand-built graph's bands); a longer range goes to parts
      // (`part`: a Cilk function spawning up to kFanOut leaves or parts again, each an equal
      // number of grains): a leaf's or a part's task is its range and the block's address, however
      // much the body reads.
      const std::string leaf = name + "__leaf", leaf1 = name + "__leaf1", block = name + "__caps", part = name + "__part";
      // The range's start, step and grain are the loop's: in the block, so that a leaf's or a
      // part's task is its range and the block's address (and the addresses it writes through).
      caps.add("long cf_first", "cf_first", "cf_a");
      caps.add("long cf_step", "cf_step", "cf_s");
      caps.add("long cf_grain", "cf_grain", "cf_g");
      const std::string leaf_params = "long cf_lo, long cf_hi, const struct " + block + " *cf_caps" + caps.direct_params;
      // A loop of one grain in a Cilk function shares its block with no other task: its one leaf,
      // `leaf1`, holds the block in its task (no heap block to take and free: a wave of 16,807
      // base cases of compiled Strassen each taking one retried the heap's list heads ~1.3 ms).
      const std::string leaf1_params = "long cf_lo, long cf_hi, struct " + block + " cf_caps" + caps.direct_params;
      const std::string part_params = leaf_params;
      // Up to kFanOut spawns of `callee` (those `when` allows) over the parts of `step` iterations
      // of [lo, hi): a loop of constant trip count, so no batch and no sync but the one after it.
      auto spawn_loop = [&](const std::string& lo, const std::string& hi, const std::string& step, const std::string& when,
                            const std::string& callee, const std::string& args) {
        return fmt::format("for (int cf_c = 0; cf_c < {0}; cf_c++) {{ long cf_at = {1} + cf_c * {3}; if (cf_at < {2}) {{ "
                           "long cf_end = {2} - cf_at < {3} ? {2} : cf_at + {3}; {4}cilk_spawn {5}(cf_at, cf_end, {6}); }} }} ",
                           kFanOut, lo, hi, step, when, callee, args);
      };
      // A part: its range split in up to kFanOut parts of equal grains, the leaves and the parts
      // spawned by a loop each; its one sync forwards (a part has no continuation). It hands its
      // hold on the block to its children.
      const std::string part_args = "cf_caps" + caps.direct_passed;
      const std::string split =
          fmt::format("long cf_grains = (cf_hi - cf_lo + cf_grain - 1) / cf_grain; long cf_part = (cf_grains + {0} - 1) / {0} * cf_grain; "
                      "__chanflow_caps_hold(cf_caps, (cf_hi - cf_lo + cf_part - 1) / cf_part - 1); ",
                      kFanOut) +
          spawn_loop("cf_lo", "cf_hi", "cf_part", "if (cf_end - cf_at <= cf_grain) ", leaf, part_args) +
          spawn_loop("cf_lo", "cf_hi", "cf_part", "if (cf_end - cf_at > cf_grain) ", part, part_args) + "cilk_sync;";
      // In main (whose spawns would each run a graph) the block is a host variable whose address
      // a Cilk function gets, so it lives in SVM (host_svm.cpp), not counted, and the range goes
      // to a part. A Cilk function takes it from the device heap, held by its leaves or its part
      // rather than by its own frame: a loop the function only returns after ends in a sync that
      // forwards (chanflow_forward_children), with no continuation to run.
      const std::string start =
          host
              ? fmt::format("struct {} cf_caps = {{ {} }}; {}(0, cf_n, &cf_caps{});", block, caps.at_call("0"), part,
                            caps.direct_outer)
              : fmt::format("long cf_leaves = (cf_n + cf_g - 1) / cf_g; {6}{{ "
                            "struct {0} *cf_caps = __chanflow_caps_new(sizeof(struct {0})); "
                            "{1}if (cf_leaves <= {2}) {{ {3}cilk_sync; }} else {4}(0, cf_n, cf_caps{5}); }}",
                            block, caps.assign("cf_caps", fmt::format("cf_leaves <= {} ? cf_leaves : 1", kFanOut)), kFanOut,
                            spawn_loop("0", "cf_n", "cf_g", "", leaf, "cf_caps" + caps.direct_outer), part, caps.direct_outer,
                            one_grain_leaf ? fmt::format("if (cf_leaves == 1) {{ struct {} cf_caps = {{ {} }}; cilk_spawn {}(0, cf_n, cf_caps{}); "
                                                         "cilk_sync; }} else ",
                                                         block, caps.at_call("0"), leaf1, caps.direct_outer)
                                           : "");
      // On a CPU device a small loop runs where it is (__chanflow_loop_inline): its body as written,
      // over the range evaluated once above; otherwise its range is cut in the device's grains
      // (__chanflow_loop_grain). The body keeps its lines (#line), and what follows it the loop's last.
      const unsigned last_line = SM.getPresumedLineNumber(SM.getExpansionLoc(s->getEndLoc()));
      Rw.ReplaceText(whole, fmt::format("{{ {0} if (cf_n > 0 && __chanflow_loop_inline(cf_n)) {{ for (long cf_k = 0; cf_k < cf_n; "
                                        "cf_k++) {{ {1}\n#line {2} \"{3}\"\n{4}\n#line {5} \"{3}\"\n}} }} else if (cf_n > 0) {{ "
                                        "long cf_g = __chanflow_loop_grain(cf_n); {6} }} }}",
                                        bounds, ivs(at_call), body_line, file, text(statement_range(work)), last_line, start));
      // A leaf: its work-item's share of [lo, hi), the values read from its block through `access`.
      auto leaf_definition = [&](const std::string& callee, const std::string& params, const std::string& access) {
        return fmt::format("\n#line {0} \"{1}\"\nvoid {2}({3}) {{ {4}for (long cf_k = cf_lo + __chanflow_group_item(); "
                           "cf_k < cf_hi; cf_k += __chanflow_group_items()) {{ {5}\n#line {6} \"{1}\"\n{7}\n}} }}\n",
                           line, file, callee, params, caps.unpack(access), ivs(in_function), body_line, body);
      };
      Definitions += "\nlong __chanflow_group_item(void); long __chanflow_group_items(void);" +
                     leaf_definition(leaf, leaf_params, "->") +
                     fmt::format("\n#line {0} \"{1}\"\nvoid {2}({3}) {{ long cf_grain = cf_caps->cf_grain; {4} }}\n", line,
                                 file, part, part_params, split);
      if (one_grain_leaf) Definitions += leaf_definition(leaf1, leaf1_params, ".");
      // The block's type, then the leaf and the part, before the function holding the loop, on
      // the line it starts (no line moves; each insertion goes before those made earlier).
      Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()), fmt::format("void {}({}); ", part, part_params));
      Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()), fmt::format("void {}({}); ", leaf, leaf_params));
      if (one_grain_leaf)
        Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()), fmt::format("void {}({}); ", leaf1, leaf1_params));
      Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()), fmt::format("struct {} {{ {} }}; ", block, caps.fields()));
      Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()),
                          "void *__chanflow_caps_new(unsigned long); void __chanflow_caps_hold(const void *, long); ");
    }
    // Declared before the function holding the loop, on the line it starts (no line moves).
    if (spawns) Rw.InsertTextBefore(SM.getExpansionLoc(f->getBeginLoc()), fmt::format("void {}({}); ", name, params));
    return true;
  }

  std::string Definitions;

 private:
  // The cilk_for loops of this pass written inside `f`.
  std::size_t loops_in(const clang::FunctionDecl* f) const {
    const clang::SourceLocation begin = SM.getExpansionLoc(f->getBeginLoc()), end = SM.getExpansionLoc(f->getEndLoc());
    return std::count_if(CilkFors.begin(), CilkFors.end(), [&](clang::SourceLocation at) {
      return !SM.isBeforeInTranslationUnit(at, begin) && !SM.isBeforeInTranslationUnit(end, at);
    });
  }

  // Whether `s` calls a Cilk function (CilkReach).
  bool calls_cilk(const clang::Stmt* s) const {
    if (!s) return false;
    if (const auto* c = llvm::dyn_cast<clang::CallExpr>(s); c && c->getDirectCallee() &&
                                                             CilkFunctions.count(c->getDirectCallee()->getCanonicalDecl()))
      return true;
    for (const clang::Stmt* c : s->children())
      if (calls_cilk(c)) return true;
    return false;
  }

  // Whether another cilk_for is written inside `s`.
  bool holds_cilk_for(const clang::Stmt* s) const {
    const clang::SourceLocation begin = SM.getExpansionLoc(s->getBeginLoc()), end = SM.getExpansionLoc(s->getEndLoc());
    for (clang::SourceLocation at : CilkFors)
      if (!SM.isBeforeInTranslationUnit(at, begin) && !SM.isBeforeInTranslationUnit(end, at)) return true;
    return false;
  }

  // A call the device cannot make: the name of its function, or "".
  std::string host_only_call(const clang::Stmt* s) {
    if (!s) return "";
    if (const auto* c = llvm::dyn_cast<clang::CallExpr>(s)) {
      const clang::FunctionDecl* callee = c->getDirectCallee();
      if (!callee) return "(a function pointer)";
      const std::string n = callee->getNameAsString();
      if (!callee->hasBody() && memory_call(callee) == MemoryCall::None && !is_device_builtin(callee)) return n;
    }
    for (const clang::Stmt* c : s->children())
      if (std::string h = host_only_call(c); !h.empty()) return h;
    return "";
  }

  bool body_spawns(const clang::Stmt* body) const {
    const clang::SourceRange r(SM.getExpansionLoc(body->getBeginLoc()), SM.getExpansionLoc(body->getEndLoc()));
    for (clang::SourceLocation at : Spawns)
      if (!SM.isBeforeInTranslationUnit(at, r.getBegin()) && !SM.isBeforeInTranslationUnit(r.getEnd(), at)) return true;
    return contains_sync(body);
  }

  // The locals of the function around the loop that the body names, and how each is passed.
  void find_captures(const clang::Stmt* s) {
    if (!s) return;
    if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
      const auto* v = llvm::dyn_cast<clang::VarDecl>(r->getDecl());
      if (v && (v->hasLocalStorage() || llvm::isa<clang::ParmVarDecl>(v)) && !inside_loop(v->getLocation())) {
        if (v->getType()->isVariableArrayType()) {
          fail(r->getLocation(), "a variable-length array used in cilk_for's body");
          return;
        }
        const Capture how = v->getType()->isArrayType() ? Capture::Array : read_only(r) ? Capture::Value : Capture::Address;
        auto [it, fresh] = Captures.emplace(v, how);
        if (!fresh && it->second == Capture::Value) it->second = how;  // written somewhere: by address
        References.push_back(r);
      }
    }
    for (const clang::Stmt* c : s->children()) find_captures(c);
  }

  bool read_only(const clang::DeclRefExpr* r) {
    auto parents = Ctx.getParents(*r);
    const auto* cast = parents.empty() ? nullptr : parents[0].get<clang::ImplicitCastExpr>();
    return cast && cast->getCastKind() == clang::CK_LValueToRValue;
  }

  bool inside_loop(clang::SourceLocation at) const {
    at = SM.getExpansionLoc(at);
    return !SM.isBeforeInTranslationUnit(at, SM.getExpansionLoc(Loop->getBeginLoc())) &&
           !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Loop->getEndLoc()), at);
  }

  // The body's text, each variable passed by address read through its pointer.
  std::string body_text(const clang::Stmt* body) {
    const clang::CharSourceRange range = statement_range(body);
    const unsigned begin = SM.getFileOffset(range.getBegin()), end = SM.getFileOffset(range.getEnd());
    std::string out = text(range);
    std::map<unsigned, std::pair<unsigned, std::string>, std::greater<>> edits;  // offset -> (length, text)
    for (const clang::DeclRefExpr* r : References) {
      if (Captures.at(llvm::cast<clang::VarDecl>(r->getDecl())) != Capture::Address) continue;
      const clang::SourceLocation at = SM.getSpellingLoc(r->getLocation());
      const unsigned o = SM.getFileOffset(at);
      if (!SM.isWrittenInMainFile(at) || o < begin || o >= end) {
        fail(r->getLocation(), "cilk_for's body writes '" + r->getDecl()->getNameAsString() +
                                   "' inside a macro; write it outside the macro, or use a pointer to it");
        continue;
      }
      edits[o - begin] = {static_cast<unsigned>(r->getDecl()->getName().size()),
                          "(*cf_ref_" + r->getDecl()->getNameAsString() + ")"};
    }
    for (const auto& [offset, edit] : edits) out.replace(offset, edit.first, edit.second);
    return out;
  }

  clang::Rewriter& Rw;
  const std::vector<clang::SourceLocation>& Spawns;
  std::string Path, Stem;
  const clang::ForStmt* Loop = nullptr;
  std::map<const clang::VarDecl*, Capture> Captures;
  std::set<std::string>& Taken;  // names made in this pass
  std::vector<const clang::DeclRefExpr*> References;  // every use of a captured variable in the body

 public:
  std::set<const clang::FunctionDecl*> CilkFunctions;  // CilkReach's, but the host drivers
  std::set<const clang::FunctionDecl*> HostCode;       // the host drivers (main is host code too)
};

}  // namespace

std::optional<std::string> rewrite_cilk_fors(clang::ASTContext& ctx, const std::vector<clang::SourceLocation>& loops,
                                             const std::vector<clang::SourceLocation>& spawns,
                                             const std::string& path, const HostDrivers& host_drivers) {
  clang::SourceManager& sm = ctx.getSourceManager();
  LoopFinder finder(sm, loops);
  finder.TraverseDecl(ctx.getTranslationUnitDecl());
  clang::Rewriter rw(sm, ctx.getLangOpts());
  std::vector<clang::SourceLocation> keywords;
  for (const auto& [loop, function] : finder.Found) keywords.push_back(sm.getExpansionLoc(loop->getForLoc()));
  std::vector<clang::SourceLocation> spawned;
  for (clang::SourceLocation at : spawns) spawned.push_back(sm.getExpansionLoc(at));
  CilkReach reach(sm, spawned, keywords);
  reach.TraverseDecl(ctx.getTranslationUnitDecl());
  std::set<const clang::FunctionDecl*> cilk_functions = reach.functions();
  const std::set<const clang::FunctionDecl*> host = host_drivers(cilk_functions);
  for (const clang::FunctionDecl* f : host) cilk_functions.erase(f);
  std::string definitions;
  std::set<std::string> taken;
  bool ok = true;
  for (const auto& [loop, function] : finder.Found) {
    // The outermost ones: an inner loop is rewritten by the next pass, in its outer loop's function.
    bool nested = false;
    for (const auto& [other, f] : finder.Found)
      nested = nested || (other != loop && !sm.isBeforeInTranslationUnit(sm.getExpansionLoc(loop->getForLoc()),
                                                                          sm.getExpansionLoc(other->getBeginLoc())) &&
                          sm.isBeforeInTranslationUnit(sm.getExpansionLoc(loop->getForLoc()),
                                                       sm.getExpansionLoc(other->getEndLoc())));
    if (nested) continue;
    if (!sm.isWrittenInMainFile(sm.getExpansionLoc(loop->getForLoc()))) {
      clang::DiagnosticsEngine& d = ctx.getDiagnostics();
      d.Report(loop->getForLoc(), d.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                                    "cilk_for in a header: write it in the file chanflowc compiles"));
      ok = false;
      continue;
    }
    LoopRewriter one(ctx, rw, spawns, path, taken);
    for (const auto& [other, f] : finder.Found) one.CilkFors.insert(sm.getExpansionLoc(other->getForLoc()));
    one.CilkFunctions = cilk_functions;
    one.HostCode = host;
    ok = one.lower(loop, function) && ok;
    definitions += one.Definitions;
  }
  if (!ok) return std::nullopt;
  const clang::FileID main = sm.getMainFileID();
  std::string out;
  llvm::raw_string_ostream os(out);
  rw.getEditBuffer(main).write(os);
  os.flush();
  return out + definitions;
}

}  // namespace chanflow::compiler
