// PTX text to tokens (parse_tokens.hpp), and the spellings tokens carry: integer and float
// literals (0f/0d bit patterns included), types and state spaces.
#include "ptx/parse_tokens.hpp"

#include <bit>
#include <charconv>
#include <cstdlib>
#include <unordered_map>

namespace swcu::ptx::detail {
namespace {

bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%' ||
         c == '.';
}
bool ident_char(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }

// The bits of `d` as a value of floating-point `type` (f32 rounds to nearest; else f64).
std::uint64_t float_bits(double d, Type type) {
  if (type == Type::f32) return std::bit_cast<std::uint32_t>(static_cast<float>(d));
  return std::bit_cast<std::uint64_t>(d);
}

}  // namespace

std::vector<Tok> tokenize(std::string_view s) {
  std::vector<Tok> out;
  int line = 1;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\0') {
      ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const int start = line;
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') ++line;
        ++i;
      }
      if (i + 1 >= n) throw ParseError{start, "unterminated comment"};
      i += 2;
    } else if (c == '"') {
      const std::size_t b = i++;
      while (i < n && s[i] != '"' && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n) ++i;
        ++i;
      }
      if (i >= n || s[i] != '"') throw ParseError{line, "unterminated string"};
      ++i;
      out.push_back({Tok::K::string, s.substr(b, i - b), line});
    } else if (c >= '0' && c <= '9') {
      const std::size_t b = i;
      while (i < n && (ident_char(s[i]) && s[i] != '%' && s[i] != '$')) {
        // 1.5e-3 style exponents
        if ((s[i] == 'e' || s[i] == 'E') && i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+') &&
            !(s[b] == '0' && b + 1 < n &&
              (s[b + 1] == 'x' || s[b + 1] == 'X' || s[b + 1] == 'f' || s[b + 1] == 'F' ||
               s[b + 1] == 'd' || s[b + 1] == 'D')))
          ++i;
        ++i;
      }
      out.push_back({Tok::K::number, s.substr(b, i - b), line});
    } else if (ident_start(c)) {
      const std::size_t b = i;
      while (i < n) {
        if (ident_char(s[i])) {
          ++i;
        } else if (s[i] == ':' && i + 1 < n && s[i + 1] == ':') {
          i += 2;
        } else {
          break;
        }
      }
      out.push_back({Tok::K::ident, s.substr(b, i - b), line});
    } else {
      out.push_back({Tok::K::punct, s.substr(i, 1), line});
      ++i;
    }
  }
  out.push_back({Tok::K::end, {}, line});
  return out;
}

std::optional<Type> type_of(std::string_view t) {
  static const std::unordered_map<std::string_view, Type> kTypes = {
      {".pred", Type::pred},   {".b8", Type::b8},      {".b16", Type::b16},
      {".b32", Type::b32},     {".b64", Type::b64},    {".b128", Type::b128},
      {".u8", Type::u8},       {".u16", Type::u16},    {".u32", Type::u32},
      {".u64", Type::u64},     {".s8", Type::s8},      {".s16", Type::s16},
      {".s32", Type::s32},     {".s64", Type::s64},    {".f16", Type::f16},
      {".f16x2", Type::f16x2}, {".bf16", Type::bf16},  {".bf16x2", Type::bf16x2},
      {".tf32", Type::tf32},   {".f32", Type::f32},    {".f64", Type::f64},
      {".u16x2", Type::u16x2}, {".s16x2", Type::s16x2}};
  const auto it = kTypes.find(t);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

std::optional<Space> space_of(std::string_view t) {
  if (t == ".global") return Space::global;
  // .shared::cluster addresses include the CTA's own (.shared::cta) ones: one space (exec.hpp)
  if (t == ".shared" || t == ".shared::cta" || t == ".shared::cluster") return Space::shared;
  if (t == ".local") return Space::local;
  if (t == ".const") return Space::constant;
  if (t == ".param" || t == ".param::entry" || t == ".param::func") return Space::param;
  return std::nullopt;
}

// Integer literal (decimal, 0x hex, 0 octal, 0b binary, optional U suffix).
std::optional<std::uint64_t> parse_int(std::string_view t) {
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.remove_suffix(1);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) {
    base = 2;
    t.remove_prefix(2);
  } else if (t.size() > 1 && t[0] == '0') {
    base = 8;
    t.remove_prefix(1);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

// A numeric literal as it should appear in an operand of `type`: 0fXXXXXXXX (f32 bits) and
// 0dXXXXXXXXXXXXXXXX (f64 bits) converted to the operand's precision, decimal floats, and
// integers (their value, for f32/f64 operands).
std::optional<std::uint64_t> parse_literal(std::string_view t, bool negative, Type type) {
  const bool is_f32_bits = t.size() == 10 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F');
  const bool is_f64_bits = t.size() == 18 && t[0] == '0' && (t[1] == 'd' || t[1] == 'D');
  if (is_f32_bits || is_f64_bits) {
    const auto v = parse_int("0x" + std::string(t.substr(2)));
    if (!v) return std::nullopt;
    double d = is_f32_bits
                   ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(*v)))
                   : std::bit_cast<double>(*v);
    if (negative) d = -d;
    const bool same_width = is_f32_bits ? type != Type::f64 : type != Type::f32;
    if (same_width) {  // the bits as written (NaN payloads kept), sign flipped for '-'
      const std::uint64_t sign = is_f32_bits ? 0x80000000ull : 0x8000000000000000ull;
      return negative ? (*v ^ sign) : *v;
    }
    return float_bits(d, type);
  }
  const bool looks_float = t.find_first_of(".eE") != std::string_view::npos &&
                           !(t.size() > 1 && (t[1] == 'x' || t[1] == 'X'));
  if (looks_float) {
    const double d = std::strtod(std::string(t).c_str(), nullptr);
    return float_bits(negative ? -d : d, type);
  }
  const auto v = parse_int(t);
  if (!v) return std::nullopt;
  if (type == Type::f32 || type == Type::f64) {
    const double d = static_cast<double>(*v);
    return float_bits(negative ? -d : d, type);
  }
  return negative ? ~*v + 1 : *v;
}

}  // namespace swcu::ptx::detail
