// Device-side printf (vprintf) formatting for the PTX interpreter.
//
// A kernel's printf becomes `vprintf(format, buffer)`: the arguments, after the C default
// promotions (float to double, char/short/bool to int), are packed into `buffer`, each at the
// next offset aligned to its own size (int 4, double, long long and pointers 8). The format is
// parsed here, on the host side, and the size of each argument slot comes from its conversion:
//
//   %d %i %u %o %x %X %c, with no size or with h/hh   4 bytes (int)
//   the same with l, ll, z, j, t                      8 bytes (64-bit integer)
//   %p %s                                             8 bytes (generic address)
//   %f %F %e %E %g %G %a %A, any size                 8 bytes (double)
//   '*' as width or precision                         4 bytes (int), before the value's slot
//
// Each conversion is printed with the host's snprintf and the same flags, width and precision,
// so the text is what a host printf would print. At most 32 arguments are read (CUDA's limit);
// a conversion past that, or one whose slot would end beyond `args_size`, is printed verbatim
// (its specification text, as CUDA prints the specifiers of ignored arguments) and consumes
// nothing. "%%" prints "%"; an unknown conversion character (including %n, which CUDA does not
// list) is printed verbatim without reading anything; a '%' at the end of the format is printed
// as is.
//
// %s reads the string through a callback (the interpreter's address translation). A null
// pointer, or an address the callback cannot read, prints "(null)" (what glibc prints for a
// null %s), formatted with the conversion's width and precision.
//
// Free of the driver's state and of cuda.h: the test printf_format_test.cpp links it alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace swcu::ptx {

/// The most arguments one device printf prints (CUDA Programming Guide, "Formatted Output").
inline constexpr int kMaxPrintfArguments = 32;

/// Reads a NUL-terminated string at a generic device address for %s into `out`; returns false
/// when the address is not readable (then "(null)" is printed).
using ReadString = std::function<bool(std::uint64_t address, std::string& out)>;

/// Formats one device-side printf (vprintf) call as a GPU prints it: `format` is the format
/// string, `args`/`args_size` the argument buffer the kernel packed (may be null/0). Returns the
/// text and sets `parsed` to the number of argument slots consumed (what vprintf returns; '*'
/// widths count as arguments). Never reads outside [args, args + args_size).
[[nodiscard]] std::string format_printf(std::string_view format, const unsigned char* args,
                                        std::size_t args_size, const ReadString& read_string,
                                        int& parsed);

}  // namespace swcu::ptx
