// Checking a module image against its size before the driver sees it (private to cuwrap).
//
// The driver API takes a bare pointer: cuModuleLoadDataEx and cuLibraryLoadData read a cubin or
// fatbin as far as its own headers say, and LTO-IR as far as its opaque IR goes. cuwrap knows
// the image's size, so it checks every extent the headers give (ELF header, section and program
// header tables, sections, string tables, symbol tables; fatbin header, entries, compressed
// sizes, the ELF inside each entry; the LTO-IR container's header and where its IR starts)
// before the call. Free of cuda.h and of cuwrap's error types, so the fuzzer (tests/fuzz)
// compiles it alone.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace cuwrap::detail {

/// Why `image` must not reach the driver ("cubin: section 5 ('.nv.info') extends to byte 9000
/// of a 4096-byte image"), or nothing when the driver can read it within its bytes. PTX text is
/// always acceptable (the caller hands the driver a NUL-terminated copy); the in-memory fatbin
/// wrapper (magic 0x466243B1) never is: it holds a pointer, not code.
[[nodiscard]] std::optional<std::string> image_problem(std::span<const std::byte> image);

}  // namespace cuwrap::detail
