// nvJitLink, loaded on first use (dlopen'ed: SWCUDA_NVJITLINK names the library, else
// $CUDA_HOME/lib64, $CUDA_PATH/lib64, then the soname): the JIT linker (link.cpp) turns LTO-IR
// inputs into PTX with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace swcu {

/// The functions of a loaded libnvJitLink.
struct NvJitLink {
  using Handle = void*;
  int (*create)(Handle*, std::uint32_t, const char**) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*add_data)(Handle, int, const void*, std::size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*ptx_size)(Handle, std::size_t*) = nullptr;
  int (*ptx)(Handle, char*) = nullptr;
  int (*error_log_size)(Handle, std::size_t*) = nullptr;
  int (*error_log)(Handle, char*) = nullptr;
  std::string path;
};

/// One LTO-IR input (raw, fatbin or host object: nvJitLink tells them apart).
struct LtoInput {
  std::string name;
  std::vector<unsigned char> bytes;
};

/// The loaded library, or nullptr with why (a failed search is retried on the next use).
[[nodiscard]] const NvJitLink* nvjitlink(std::string& why);

/// Links every LTO-IR input into PTX; false with the reason. Runs without the state lock: `lib`
/// was loaded under it (and is never unloaded).
[[nodiscard]] bool lto_to_ptx(const NvJitLink* lib, const std::vector<LtoInput>& inputs,
                              std::string& ptx, std::string& why);

}  // namespace swcu
