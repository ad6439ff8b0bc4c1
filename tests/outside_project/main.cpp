// Builds a one-node flow graph against the installed chanflow and checks its result.
#include <chanflow/chanflow.hpp>

#include "outside_sources.hpp"

#include <cstdio>
#include <string>
#include <vector>

struct Number {
  std::uint32_t value;
};
struct SquareArgs {
  std::uint32_t* squares;
};

int main() {
  const chanflow::Runtime rt;
  chanflow::Graph g(rt);
  g.add_source(std::string(outside_cl::square_cl()));
  auto& numbers = g.channel<Number>("numbers", 4096);
  auto& square = g.kernel<Number>("square", "square");
  chanflow::make_edge(numbers, square);
  chanflow::SvmBuffer squares(rt, 1000 * sizeof(std::uint32_t));
  rt.svm_fill_zero(squares.get(), squares.size());
  square.set_args(SquareArgs{static_cast<std::uint32_t*>(squares.get())}).uses(squares);
  for (std::uint32_t i = 0; i < 1000; ++i) numbers.push(Number{i});
  const auto stats = g.run();
  std::vector<std::uint32_t> out(1000);
  rt.svm_read(out.data(), squares.get(), squares.size());
  for (std::uint32_t i = 0; i < 1000; ++i)
    if (out[i] != i * i) {
      std::printf("wrong square at %u: %u\n", i, out[i]);
      return 1;
    }
  std::printf("outside project: 1000 squares correct in %llu dispatch(es)\n",
              static_cast<unsigned long long>(stats.dispatches));
  return 0;
}
