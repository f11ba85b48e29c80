// PTX text as tokens, and the spellings tokens carry: numbers and literals, types, state
// spaces (parse_tokens.cpp). Shared by the parser's files (parser.hpp), not part of the
// interpreter's interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/program.hpp"

namespace swcu::ptx::detail {

/// A malformed module: the PTX line and what is wrong (parse_program() makes it one message).
struct ParseError {
  int line;
  std::string what;
};

/// One token: a name (directives, opcodes with their modifiers, registers), a number, one
/// punctuation character, or a string literal.
struct Tok {
  enum class K : std::uint8_t { ident, number, punct, string, end };
  K kind = K::end;
  std::string_view text;
  int line = 0;
};

/// The tokens of a module, ending with an `end` token; comments and whitespace dropped.
std::vector<Tok> tokenize(std::string_view s);

/// The type a `.TYPE` suffix names (".f32"), if it names one.
std::optional<Type> type_of(std::string_view t);

/// The state space a `.SPACE` suffix names (".shared::cta"), if it names one.
std::optional<Space> space_of(std::string_view t);

/// Integer literal (decimal, 0x hex, 0 octal, 0b binary, optional U suffix).
std::optional<std::uint64_t> parse_int(std::string_view t);

/// A numeric literal as it should appear in an operand of `type` (see parse_tokens.cpp).
std::optional<std::uint64_t> parse_literal(std::string_view t, bool negative, Type type);

}  // namespace swcu::ptx::detail
