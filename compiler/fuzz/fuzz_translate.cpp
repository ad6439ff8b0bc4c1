// The fuzz target of chanflowc's front end and lowering: any text as a Cilk source (a .c file;
// a first byte of '5' makes it a .cilk one), translated with diagnostics silenced. Built with
// libFuzzer by compiler/fuzz/run.sh (Debian's clang); the same function replays a corpus in the
// test suite (replay_main.cpp). An input may be rejected; it must never crash or hang.
#include "chanflow/compiler.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  chanflow::compiler::TranslateOptions options;
  const bool cilk5 = size > 0 && data[0] == '5';
  options.input = cilk5 ? "fuzz.cilk" : "fuzz.c";
  options.text = std::string(reinterpret_cast<const char*>(data) + (cilk5 ? 1 : 0), size - (cilk5 ? 1 : 0));
  options.quiet = true;
  (void)chanflow::compiler::translate(options);
  return 0;
}
