// Device-side printf formatting (printf.hpp).
#include "ptx/printf.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace swcu::ptx {
namespace {

// Widths and precisions past this are clamped (a device printf cannot make the host allocate
// gigabytes for one field).
constexpr int kMaxField = 1 << 16;

// The argument buffer as a sequence of aligned slots, at most kMaxPrintfArguments of them.
struct Slots {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  std::size_t offset = 0;
  int count = 0;

  // The next slot of `bytes` (4 or 8, aligned to its size) into `out`; false when it is not
  // in the buffer or the argument limit is reached (nothing is then consumed).
  bool take(std::size_t bytes, void* out) noexcept {
    if (count >= kMaxPrintfArguments || data == nullptr) return false;
    const std::size_t at = (offset + bytes - 1) / bytes * bytes;
    if (at > size || size - at < bytes) return false;
    std::memcpy(out, data + at, bytes);
    offset = at + bytes;
    ++count;
    return true;
  }
};

// Appends snprintf(spec, value) to `out`.
template <class T>
void append_formatted(std::string& out, const std::string& spec, T value) {
  const int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n <= 0) return;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(n) + 1);
  std::snprintf(out.data() + at, static_cast<std::size_t>(n) + 1, spec.c_str(), value);
  out.resize(at + static_cast<std::size_t>(n));
}

bool is_flag(char c) noexcept { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// A decimal field at format[i...]: advances i, clamps the value.
int read_number(std::string_view format, std::size_t& i) noexcept {
  long value = 0;
  while (i < format.size() && is_digit(format[i])) {
    value = std::min<long>(value * 10 + (format[i] - '0'), kMaxField);
    ++i;
  }
  return static_cast<int>(value);
}

enum class Kind { signed_int, unsigned_int, character, pointer, string, floating, unknown };

Kind kind_of(char c) noexcept {
  switch (c) {
    case 'd':
    case 'i': return Kind::signed_int;
    case 'u':
    case 'o':
    case 'x':
    case 'X': return Kind::unsigned_int;
    case 'c': return Kind::character;
    case 'p': return Kind::pointer;
    case 's': return Kind::string;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': return Kind::floating;
    default: return Kind::unknown;
  }
}

}  // namespace

std::string format_printf(std::string_view format, const unsigned char* args, std::size_t args_size,
                          const ReadString& read_string, int& parsed) {
  std::string out;
  Slots slots{args, args_size, 0, 0};
  bool exhausted = false;  // a conversion found no argument: later ones find none either
  std::size_t i = 0;
  while (i < format.size()) {
    const std::size_t percent = format.find('%', i);
    if (percent == std::string_view::npos) {
      out.append(format.substr(i));
      break;
    }
    out.append(format.substr(i, percent - i));
    std::size_t j = percent + 1;
    if (j < format.size() && format[j] == '%') {
      out += '%';
      i = j + 1;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    std::string flags;
    while (j < format.size() && is_flag(format[j])) flags += format[j++];
    bool width_star = false;
    int width = -1;
    if (j < format.size() && format[j] == '*') {
      width_star = true;
      ++j;
    } else if (j < format.size() && is_digit(format[j])) {
      width = read_number(format, j);
    }
    bool precision_star = false;
    int precision = -1;
    if (j < format.size() && format[j] == '.') {
      ++j;
      if (j < format.size() && format[j] == '*') {
        precision_star = true;
        ++j;
      } else {
        precision = read_number(format, j);  // "." alone is precision 0
      }
    }
    std::string length;
    while (j < format.size() &&
           std::string_view("hlLzjtq").find(format[j]) != std::string_view::npos &&
           length.size() < 2) {
      length += format[j++];
    }
    if (j >= format.size()) {  // no conversion character: print what there is
      out.append(format.substr(percent));
      break;
    }
    const char conversion = format[j];
    const std::string_view verbatim = format.substr(percent, j + 1 - percent);
    i = j + 1;
    const Kind kind = kind_of(conversion);
    if (kind == Kind::unknown || exhausted) {
      out.append(verbatim);
      continue;
    }

    // The slots: the '*' fields (ints), then the value. All or nothing.
    Slots trial = slots;
    std::int32_t star_width = 0;
    std::int32_t star_precision = 0;
    bool ok = (!width_star || trial.take(4, &star_width)) &&
              (!precision_star || trial.take(4, &star_precision));
    const bool wide = length == "l" || length == "ll" || length == "L" || length == "z" ||
                      length == "j" || length == "t" || length == "q";
    std::size_t value_size = 8;
    if (kind == Kind::signed_int || kind == Kind::unsigned_int) value_size = wide ? 8 : 4;
    if (kind == Kind::character) value_size = 4;
    std::uint64_t value = 0;
    if (ok) {
      if (value_size == 4) {
        std::uint32_t v32 = 0;
        ok = trial.take(4, &v32);
        value = v32;
      } else {
        ok = trial.take(8, &value);
      }
    }
    if (!ok) {
      exhausted = true;
      out.append(verbatim);
      continue;
    }
    slots = trial;

    if (width_star) {
      if (star_width < 0) {
        flags += '-';
        width = static_cast<int>(
            std::min<std::int64_t>(-static_cast<std::int64_t>(star_width), kMaxField));
      } else {
        width = std::min<int>(star_width, kMaxField);
      }
    }
    if (precision_star)
      precision = star_precision < 0 ? -1 : std::min<int>(star_precision, kMaxField);
    std::string spec = "%" + flags;
    if (width >= 0) spec += std::to_string(width);
    if (precision >= 0) spec += "." + std::to_string(precision);

    switch (kind) {
      case Kind::signed_int:
        if (value_size == 8) {
          append_formatted(out, spec + "ll" + conversion, static_cast<long long>(value));
        } else {
          const std::string size = length == "h" || length == "hh" ? length : std::string();
          append_formatted(out, spec + size + conversion,
                           static_cast<int>(static_cast<std::int32_t>(value)));
        }
        break;
      case Kind::unsigned_int:
        if (value_size == 8) {
          append_formatted(out, spec + "ll" + conversion, static_cast<unsigned long long>(value));
        } else {
          const std::string size = length == "h" || length == "hh" ? length : std::string();
          append_formatted(out, spec + size + conversion, static_cast<unsigned int>(value));
        }
        break;
      case Kind::character:
        append_formatted(out, spec + 'c', static_cast<int>(static_cast<unsigned char>(value)));
        break;
      case Kind::pointer:
        append_formatted(out, spec + 'p',
                         reinterpret_cast<const void*>(static_cast<std::uintptr_t>(value)));
        break;
      case Kind::string: {
        std::string text;
        if (value == 0 || !read_string || !read_string(value, text)) text = "(null)";
        append_formatted(out, spec + 's', text.c_str());
        break;
      }
      case Kind::floating: {
        double d = 0;
        std::memcpy(&d, &value, sizeof d);
        append_formatted(out, spec + conversion, d);
        break;
      }
      case Kind::unknown: break;
    }
  }
  parsed = slots.count;
  return out;
}

}  // namespace swcu::ptx
