// libFuzzer target: arbitrary bytes as a module image for the loader behind cuModuleLoadData and
// cuLibraryLoadData, swcu::load_image (swdriver/src/module/image.cpp), which tells PTX, ELF
// cubins, fatbins, fatbin wrappers and LTO-IR apart and parses them (ptx_image.cpp, cubin.cpp,
// fatbin.cpp, ltoir.cpp). The bytes are an image of known size, as the file loaders give it; input
// that starts with 'W' is a fatbin body that the target wraps in a fatbin header and a
// __fatBinC_Wrapper_t, as a program's registered fatbin reaches the driver. It must load or fail
// with an ImageError and a one-line log, never crash, hang or allocate without bound; LTO-IR it
// hands on for nvJitLink (LoadLog::ltoir, not linked here) lies within the bytes it was given. Raw
// bytes that start with a wrapper's magic number are rejected: a wrapper carries a pointer. Built
// and run by scripts/fuzz (docs/software-driver-internals.md, "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "module/image.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "module_image_fuzz: %s\n", what);
  std::abort();
}

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint32_t kWrapperMagic = 0x466243B1;

// fatbinary_section.h's __fatBinC_Wrapper_t.
struct Wrapper {
  std::int32_t magic;
  std::int32_t version;
  const void* data;
  void* filename_or_fatbins;
};

// `bytes` are the image's: LTO-IR handed on must lie within them.
void check(const swcu::LoadLog& log, const swcu::Image& image,
           std::span<const unsigned char> bytes) {
  if (!log.ltoir.empty()) {
    if (log.error != swcu::ImageError::not_supported) broken("LTO-IR handed on with another error");
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
    const auto at = reinterpret_cast<std::uintptr_t>(log.ltoir.data());
    if (at < begin || at - begin > bytes.size() || log.ltoir.size() > bytes.size() - (at - begin)) {
      broken("LTO-IR handed on outside the image");
    }
  }
  if (log.error != swcu::ImageError::none) {
    if (log.error_log.empty()) broken("an error without a log");
    if (log.error_log.find('\n') != std::string::npos) broken("an error log of several lines");
    return;
  }
  for (const swcu::KernelDesc& k : image.kernels) {
    if (k.name.empty()) broken("a kernel without a name");
    std::size_t end = 0;
    for (const swcu::ParamLayout& p : k.params) {
      if (p.offset < end) broken("parameters overlap");
      end = p.offset + p.size;
    }
    if (k.layout_known && end > k.params_size) broken("a parameter past params_size");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  swcu::LoadOptions options;
  swcu::Image image;
  if (size > 0 && data[0] == 'W') {
    // A fatbin whose header covers exactly the bytes that follow 'W', and a wrapper around it.
    std::vector<unsigned char> fatbin(16 + size - 1);
    const std::uint16_t version = 1;
    const std::uint16_t header = 16;
    const std::uint64_t body = size - 1;
    std::memcpy(fatbin.data(), &kFatbinMagic, 4);
    std::memcpy(fatbin.data() + 4, &version, 2);
    std::memcpy(fatbin.data() + 6, &header, 2);
    std::memcpy(fatbin.data() + 8, &body, 8);
    if (size > 1) std::memcpy(fatbin.data() + 16, data + 1, size - 1);
    const Wrapper wrapper{static_cast<std::int32_t>(kWrapperMagic), 1, fatbin.data(), nullptr};
    const swcu::LoadLog log = swcu::load_image(&wrapper, SIZE_MAX, options, image);
    check(log, image, fatbin);
    return 0;
  }
  // A wrapper holds a pointer to its fatbin, which the driver follows as NVIDIA's does; raw bytes
  // cannot hold a valid one, so such inputs are rejected (wrappers are built above instead).
  if (size >= 4) {
    std::uint32_t magic = 0;
    std::memcpy(&magic, data, 4);
    if (magic == kWrapperMagic) return -1;
  }
  const swcu::LoadLog log = swcu::load_image(data, size, options, image);
  check(log, image, {data, size});
  return 0;
}
