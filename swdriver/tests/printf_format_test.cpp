// Device printf formatting (swdriver/src/ptx/printf.cpp), linked into this test directly: the
// argument buffers are packed here the way nvcc packs them (each promoted argument at the next
// offset aligned to its size).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ptx/printf.hpp"

namespace {

using swcu::ptx::format_printf;

// An argument buffer as a kernel packs it.
struct Args {
  std::vector<unsigned char> bytes;
  std::vector<std::size_t> offsets;  // where each argument went

  template <class T>
  Args& add(T value) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    const std::size_t at = (bytes.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &value, sizeof(T));
    offsets.push_back(at);
    return *this;
  }
  Args& i32(std::int32_t v) { return add(v); }
  Args& u32(std::uint32_t v) { return add(v); }
  Args& i64(std::int64_t v) { return add(v); }
  Args& u64(std::uint64_t v) { return add(v); }
  Args& f64(double v) { return add(v); }
};

// Device strings for %s, by address.
struct Strings {
  std::map<std::uint64_t, std::string> memory;
  int reads = 0;
  swcu::ptx::ReadString reader() {
    return [this](std::uint64_t address, std::string& out) {
      ++reads;
      const auto it = memory.find(address);
      if (it == memory.end()) return false;
      out = it->second;
      return true;
    };
  }
};

std::string fmt(std::string_view format, const Args& args, int& parsed,
                const swcu::ptx::ReadString& read = {}) {
  return format_printf(format, args.bytes.data(), args.bytes.size(), read, parsed);
}

std::string fmt(std::string_view format, const Args& args) {
  int parsed = -1;
  return fmt(format, args, parsed);
}

}  // namespace

TEST_CASE("text without conversions prints as is and parses nothing") {
  int parsed = -1;
  CHECK_EQ(format_printf("hello\n", nullptr, 0, {}, parsed), "hello\n");
  CHECK_EQ(parsed, 0);
  CHECK_EQ(format_printf("", nullptr, 0, {}, parsed), "");
  CHECK_EQ(format_printf("100%% sure", nullptr, 0, {}, parsed), "100% sure");
  CHECK_EQ(parsed, 0);
  CHECK_EQ(format_printf("trailing %", nullptr, 0, {}, parsed), "trailing %");
}

TEST_CASE("ints of each width") {
  int parsed = -1;
  CHECK_EQ(fmt("%d %i", Args().i32(-42).i32(7), parsed), "-42 7");
  CHECK_EQ(parsed, 2);
  CHECK_EQ(fmt("%u", Args().i32(-1)), "4294967295");
  CHECK_EQ(fmt("%x %X %o", Args().u32(0xbeefu).u32(0xbeefu).u32(8)), "beef BEEF 10");
  // h and hh take the int slot and truncate like the host.
  CHECK_EQ(fmt("%hd %hhd %hu %hhx", Args().i32(70000).i32(300).i32(-1).i32(0x1ff)),
           "4464 44 65535 ff");
  // l, ll, z, j, t take 8 bytes.
  CHECK_EQ(fmt("%ld %lld", Args().i64(-5000000000LL).i64(INT64_MIN)),
           "-5000000000 -9223372036854775808");
  CHECK_EQ(fmt("%lu %llx", Args().u64(UINT64_MAX).u64(0x123456789abcdefULL)),
           "18446744073709551615 123456789abcdef");
  CHECK_EQ(fmt("%zu %jd %td", Args().u64(12).i64(-13).i64(14)), "12 -13 14");
  // An int then a long long: the long long sits at offset 8.
  Args mixed;
  mixed.i32(1).i64(2);
  CHECK_EQ(mixed.offsets[1], 8u);
  CHECK_EQ(fmt("%d %lld", mixed), "1 2");
}

TEST_CASE("chars, padding, precision and flags") {
  CHECK_EQ(fmt("[%c%c]", Args().i32('o').i32('k')), "[ok]");
  CHECK_EQ(fmt("[%5d][%-5d][%05d][%+d][% d]", Args().i32(42).i32(42).i32(42).i32(42).i32(42)),
           "[   42][42   ][00042][+42][ 42]");
  CHECK_EQ(fmt("[%.3d][%8.3x][%#x][%#o]", Args().i32(7).u32(255).u32(255).u32(8)),
           "[007][     0ff][0xff][010]");
  CHECK_EQ(fmt("[%3c]", Args().i32('z')), "[  z]");
}

TEST_CASE("'*' width and precision take int slots") {
  int parsed = -1;
  CHECK_EQ(fmt("[%*d]", Args().i32(6).i32(-3), parsed), "[    -3]");
  CHECK_EQ(parsed, 2);
  CHECK_EQ(fmt("[%-*d]", Args().i32(4).i32(1)), "[1   ]");
  CHECK_EQ(fmt("[%*d]", Args().i32(-4).i32(1)), "[1   ]");  // negative width: left-justified
  CHECK_EQ(fmt("[%.*f]", Args().i32(2).f64(3.14159), parsed), "[3.14]");
  CHECK_EQ(parsed, 2);
  CHECK_EQ(fmt("[%*.*f]", Args().i32(8).i32(3).f64(2.5), parsed), "[   2.500]");
  CHECK_EQ(parsed, 3);
}

TEST_CASE("doubles print with %f %e %g %a and their upper-case forms") {
  CHECK_EQ(fmt("%f", Args().f64(1.5)), "1.500000");
  CHECK_EQ(fmt("%.2f %10.3f|", Args().f64(-2.345).f64(3.14159)), "-2.35      3.142|");
  CHECK_EQ(fmt("%e %E", Args().f64(12345.678).f64(0.000125)), "1.234568e+04 1.250000E-04");
  CHECK_EQ(fmt("%g %G %g", Args().f64(0.0001).f64(1e20).f64(100.0)), "0.0001 1E+20 100");
  CHECK_EQ(fmt("%a %A", Args().f64(1.0).f64(-0.5)), "0x1p+0 -0X1P-1");
  CHECK_EQ(fmt("%lf %Lf", Args().f64(0.25).f64(0.75)), "0.250000 0.750000");
  CHECK_EQ(fmt("%F", Args().f64(2.0)), "2.000000");
}

TEST_CASE("%s reads the string through the callback") {
  Strings strings;
  strings.memory[0x7000'0000'1000ULL] = "world";
  Args args;
  args.u64(0x7000'0000'1000ULL).u64(0x7000'0000'1000ULL).u64(0x7000'0000'1000ULL);
  int parsed = -1;
  CHECK_EQ(fmt("hello %s! [%8s] [%.3s]", args, parsed, strings.reader()),
           "hello world! [   world] [wor]");
  CHECK_EQ(parsed, 3);
  CHECK_EQ(strings.reads, 3);
}

TEST_CASE("a null or unreadable %s prints (null)") {
  Strings strings;
  int parsed = -1;
  CHECK_EQ(fmt("[%s]", Args().u64(0), parsed, strings.reader()), "[(null)]");
  CHECK_EQ(parsed, 1);
  CHECK_EQ(strings.reads, 0);  // a null pointer is not read
  CHECK_EQ(fmt("[%s]", Args().u64(0xdead0000ULL), parsed, strings.reader()), "[(null)]");
  CHECK_EQ(strings.reads, 1);
  CHECK_EQ(fmt("[%8s]", Args().u64(0), parsed, strings.reader()), "[  (null)]");
  // Without a callback nothing can be read.
  CHECK_EQ(fmt("[%s]", Args().u64(0x1000), parsed), "[(null)]");
}

TEST_CASE("%p prints a generic address like the host") {
  char expected[64];
  std::snprintf(expected, sizeof expected, "%p",
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x7f00'1234'5678ULL)));
  CHECK_EQ(fmt("%p", Args().u64(0x7f00'1234'5678ULL)), expected);
  CHECK_EQ(fmt("%p", Args().u64(0x10)), "0x10");
}

TEST_CASE(
    "the mixed layout of the note: int, float, double, char*, long long, char, short, void*") {
  Strings strings;
  strings.memory[0x5000] = "str";
  Args args;
  args.i32(-1)
      .f64(static_cast<double>(2.5f))  // float promoted to double
      .f64(3.25)
      .u64(0x5000)
      .i64(1LL << 40)
      .i32('A')                     // char promoted to int
      .i32(static_cast<short>(-7))  // short promoted to int
      .u64(0x1234);
  CHECK_EQ(args.offsets, std::vector<std::size_t>{0, 8, 16, 24, 32, 40, 44, 48});
  CHECK_EQ(args.bytes.size(), 56u);
  int parsed = -1;
  CHECK_EQ(fmt("%d %f %g %s %lld %c %hd %p", args, parsed, strings.reader()),
           "-1 2.500000 3.25 str 1099511627776 A -7 0x1234");
  CHECK_EQ(parsed, 8);

  Args second;  // (int, int, double, char*, char*): 0, 4, 8, 16, 24
  second.i32(1).i32(2).f64(0.5).u64(0x5000).u64(0x5000);
  CHECK_EQ(second.offsets, std::vector<std::size_t>{0, 4, 8, 16, 24});
  CHECK_EQ(fmt("%d,%d,%.1f,%s,%s", second, parsed, strings.reader()), "1,2,0.5,str,str");
  CHECK_EQ(parsed, 5);
}

TEST_CASE("missing argument bytes print the specification verbatim") {
  int parsed = -1;
  CHECK_EQ(format_printf("a=%d b=%d", nullptr, 0, {}, parsed), "a=%d b=%d");
  CHECK_EQ(parsed, 0);
  CHECK_EQ(fmt("a=%d b=%05.2f c=%d", Args().i32(1), parsed), "a=1 b=%05.2f c=%d");
  CHECK_EQ(parsed, 1);
  // A 4-byte buffer cannot hold a double; a later int does not pick the bytes up either.
  Args short_buffer;
  short_buffer.i32(9);
  CHECK_EQ(fmt("%f %d", short_buffer, parsed), "%f %d");
  CHECK_EQ(parsed, 0);
  // A 12-byte buffer: int at 0, then an 8-byte slot at 8 would end at 16.
  std::vector<unsigned char> twelve(12, 0);
  CHECK_EQ(format_printf("%d %lld", twelve.data(), twelve.size(), {}, parsed), "0 %lld");
  CHECK_EQ(parsed, 1);
  // '*' with no value after it: the whole conversion is verbatim and consumes nothing.
  CHECK_EQ(fmt("[%*d]", Args().i32(5), parsed), "[%*d]");
  CHECK_EQ(parsed, 0);
}

TEST_CASE("at most 32 arguments are printed and later conversions print verbatim") {
  Args args;
  std::string format;
  std::string expected;
  for (int k = 0; k < 34; ++k) {
    args.i32(k);
    format += "%d ";
    expected += k < 32 ? std::to_string(k) + " " : std::string("%d ");
  }
  int parsed = -1;
  CHECK_EQ(fmt(format, args, parsed), expected);
  CHECK_EQ(parsed, 32);
}

TEST_CASE("unknown conversions and %n print verbatim and consume nothing") {
  int parsed = -1;
  CHECK_EQ(fmt("%y %n %d %k", Args().i32(3), parsed), "%y %n 3 %k");
  CHECK_EQ(parsed, 1);
  CHECK_EQ(fmt("%-08.3", Args().i32(3), parsed), "%-08.3");  // the format ends mid-conversion
  CHECK_EQ(parsed, 0);
}
