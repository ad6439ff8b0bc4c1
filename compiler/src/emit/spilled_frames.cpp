// The frames a helper's explicit stack keeps on the device heap (spilled_frames.hpp). Depth is no
// limit: the chunks are taken the first time the call goes that deep and kept until it returns;
// a recursion no deeper than the private frames never touches the heap, and a heap with no chunk
// left reports CHANFLOW_ERR_HELPER_STACK with the depth reached.
#include "emit/spilled_frames.hpp"

#include <fmt/format.h>

namespace chanflow::compiler {
namespace {

std::string slot(const std::string& field) { return "cf_s_" + field; }

}  // namespace

std::string SpilledFrames::type(unsigned half) const {
  std::string out = fmt::format("/* {0} frames of '{1}' spilled from its private ones to the device heap */\ntypedef struct {2} {{\n"
                                "  __global struct {2} *cf_below; /* the chunk before it (0: none) */\n"
                                "  __global struct {2} *cf_above; /* the one after it, kept once taken (0: none) */\n",
                                half, helper, chunk);
  for (const Field& f : fields) out += "  " + f.declared(fmt::format("{}[{}]", f.name, half)) + ";\n";
  return out + fmt::format("  {} resume_at[{}];\n}} {};\n\n", resume_type, half, chunk);
}

// The older half to the next chunk (taken from the heap the first time this call goes that deep),
// the newer half down. No room on the heap fails the run, naming the depth reached.
std::string SpilledFrames::spill(unsigned frames, const std::string& value) const {
  const unsigned half = frames / 2;
  std::string out = fmt::format(
      "    /* the private frames are full: the older half to the device heap */\n"
      "    __global {0} *cf_chunk = cf_spilled ? cf_spilled->cf_above : cf_chunks;\n"
      "    if (!cf_chunk) {{\n"
      "      cf_chunk = (__global {0} *)chanflow_stack_chunk(cf_env, sizeof({0}));\n"
      "      if (!cf_chunk) {{ /* the depth reached: these frames and the spilled ones */\n"
      "        uint cf_deep = {1}u;\n        for (__global {0} *cf_c = cf_spilled; cf_c; cf_c = cf_c->cf_below) cf_deep += {4}u;\n"
      "        chanflow_report(cf_env, CHANFLOW_ERR_HELPER_STACK, cf_deep, {2}u);\n        return{3};\n      }}\n"
      "      cf_chunk->cf_below = cf_spilled;\n      cf_chunk->cf_above = 0;\n"
      "      if (cf_spilled) cf_spilled->cf_above = cf_chunk;\n      else cf_chunks = cf_chunk;\n    }}\n"
      "    for (uint cf_k = 0; cf_k < {4}u; ++cf_k) {{\n",
      chunk, frames, helper_id, value, half);
  for (const Field& f : fields) {
    out += "  " + f.copy(fmt::format("cf_chunk->{}[cf_k]", f.name), slot(f.name) + "[cf_k]", false, true);
    out += "  " + f.copy(slot(f.name) + "[cf_k]", fmt::format("{}[cf_k + {}u]", slot(f.name), half), false, false);
  }
  out += fmt::format("      cf_chunk->resume_at[cf_k] = cf_s_resume_at[cf_k];\n"
                     "      cf_s_resume_at[cf_k] = cf_s_resume_at[cf_k + {0}u];\n    }}\n"
                     "    cf_spilled = cf_chunk;\n    cf_depth = {0}u;\n",
                     half);
  return out;
}

// The outermost activation has returned (out of the loop), or the newest chunk's frames come back
// (no call: the chunk stays for the next spill).
std::string SpilledFrames::fill(unsigned half) const {
  std::string out = fmt::format(
      "  if (cf_depth == 0) {{\n    if (!cf_spilled) break;\n    /* the newest chunk's frames back from the device heap */\n"
      "    for (uint cf_k = 0; cf_k < {}u; ++cf_k) {{\n",
      half);
  for (const Field& f : fields)
    out += "  " + f.copy(slot(f.name) + "[cf_k]", fmt::format("cf_spilled->{}[cf_k]", f.name), true, false);
  out += fmt::format("      cf_s_resume_at[cf_k] = cf_spilled->resume_at[cf_k];\n    }}\n"
                     "    cf_spilled = cf_spilled->cf_below;\n    cf_depth = {0}u;\n  }}\n",
                     half);
  return out;
}

std::string SpilledFrames::release() const {
  return "    while (cf_chunks) { /* the chunks back to the device heap */\n      __global void *cf_chunk = cf_chunks;\n"
         "      cf_chunks = cf_chunks->cf_above;\n      chanflow_free(cf_env, cf_chunk);\n    }\n";
}

}  // namespace chanflow::compiler
