// Replays files (or every file of directories) through the fuzz target, as libFuzzer would run a
// corpus, for a build without libFuzzer (the test suite: compiler_fuzz_corpus). Prints each file
// it runs, so a crash names its input. A path that is neither a file nor a directory, or a
// directory with no file, is an error (exit 2): a corpus that vanished must not replay as none.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    const std::size_t before = files.size();
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    }
    if (files.size() == before) {
      std::fprintf(stderr, "chanflowc_fuzz_replay: '%s' is no file, nor a directory holding one\n", argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: chanflowc_fuzz_replay FILE|DIRECTORY...\n");
    return 2;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "chanflowc_fuzz_replay: cannot read '%s'\n", f.c_str());
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (f.extension() == ".cilk") bytes.insert(0, "5");  // the target's mark of a Cilk-5 file
    std::printf("%s\n", f.c_str());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs, no crash\n", files.size());
  return 0;
}
