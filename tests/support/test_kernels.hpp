// Kernels the sw tests load: the files tests/kernels builds (PTX, cubin, fatbin), by path or as
// bytes, and PTX whose kernels have C++ (mangled) names.
#pragma once

#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace cuwrap::testing {

/// The test kernels built as `extension` ("ptx", "cubin" or "fatbin").
inline std::string kernels_file(const char* extension) {
  return std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels." + extension;
}

/// The bytes of the file at `path` (none if it cannot be read).
inline std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  const std::vector<char> chars{std::istreambuf_iterator<char>{in},
                                std::istreambuf_iterator<char>{}};
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

/// C++ kernels as the compiler names them: two overloads of `twice`, a function in a namespace,
/// a template instantiation, and one extern "C" kernel (`plain`).
inline constexpr const char* cxx_kernels_ptx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry _Z11scale_chunkPKfPfffi(.param .u64 a, .param .u64 b, .param .f32 c,
                                        .param .f32 d, .param .u32 e) { ret; }
.visible .entry _Z5twicePfi(.param .u64 a, .param .u32 n) { ret; }
.visible .entry _Z5twicePdi(.param .u64 a, .param .u32 n) { ret; }
.visible .entry _ZN2ns4stepEi(.param .u32 n) { ret; }
.visible .entry _Z4fillIfEvPT_S0_i(.param .u64 a, .param .f32 v, .param .u32 n) { ret; }
.visible .entry plain(.param .u32 n) { ret; }
)";

}  // namespace cuwrap::testing
