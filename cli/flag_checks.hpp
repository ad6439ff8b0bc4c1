// Checks of the command line's numbers in the project's words: CLI11's own (PositiveNumber,
// Range) answer "Value 0 not in range 0.000000 to 1.797693e+308", a range that holds the value.
// CLI11 puts the flag's name in front: "--capacity: must be at least 1, not 0".
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>

namespace chanflow::cli {

/// A whole number from `least` to `most`.
inline CLI::Validator whole_number(std::int64_t least, std::int64_t most = std::numeric_limits<std::int64_t>::max()) {
  const std::string name =
      most == std::numeric_limits<std::int64_t>::max() ? fmt::format(">={}", least) : fmt::format("{}..{}", least, most);
  return CLI::Validator(
      [least, most](std::string& value) -> std::string {
        std::int64_t n = 0;
        if (!CLI::detail::lexical_cast(value, n)) return fmt::format("'{}' is not a whole number", value);
        if (n < least) return fmt::format("must be at least {}, not {}", least, n);
        if (n > most) return fmt::format("must be at most {}, not {}", most, n);
        return {};
      },
      name);
}

/// A whole number of at least 1.
inline CLI::Validator at_least_one() { return whole_number(1); }

}  // namespace chanflow::cli
