// LTO-IR: the NVVM IR that nvcc and NVRTC give with -dlto (nvrtcGetLTOIR), in its container.
//
//   header (24 bytes): u32 magic 0x7F4E43ED, 8 bytes of version numbers, u16 at 12 where the
//   options start, u16 at 14 the IR's level, u32 at 16 where the options' data starts, u32 at 20
//   where the IR starts (offsets from the first byte, each at least the one before; NVRTC 13
//   writes 24, 40 and 44). The IR runs from there to the end.
//
// NVIDIA documents LTO-IR as opaque, and the container records no length: NVRTC's output for a
// 2 KB and a 50 KB program has the same first 40 bytes (header and options). So only a caller
// that knows the length (a file loader, a fatbin entry, cuLinkAddData) can hand it on: nvJitLink
// refuses the IR cut short or followed by more than a few bytes (module.cpp). In memory, without
// a length, it is refused with a message that says so.
#include <cstring>
#include <string>

#include "module/image.hpp"

namespace swcu {
namespace {

constexpr std::size_t kHeader = 24;
// Options and their data: a few dozen bytes in practice; a larger claim is a corrupt header.
constexpr std::size_t kMaxIrOffset = 64 * 1024;

template <class T>
T read(const unsigned char* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

}  // namespace

LoadLog parse_ltoir(const unsigned char* data, std::size_t size) {
  LoadLog log;
  const auto invalid = [&log](const std::string& why) {
    log.error = ImageError::not_an_image;
    log.error_log = "invalid LTO-IR: " + why;
    return log;
  };
  if (size != SIZE_MAX && size < kHeader) {
    return invalid("a " + std::to_string(size) + "-byte image is shorter than the " +
                   std::to_string(kHeader) + "-byte container header");
  }
  const std::size_t options = read<std::uint16_t>(data + 12);
  const std::size_t option_data = read<std::uint32_t>(data + 16);
  const std::size_t ir = read<std::uint32_t>(data + 20);
  if (options < kHeader || option_data < options || ir < option_data) {
    return invalid("its header's offsets (options at " + std::to_string(options) +
                   ", their data at " + std::to_string(option_data) + ", the IR at " +
                   std::to_string(ir) + ") are not in order after the " + std::to_string(kHeader) +
                   "-byte header");
  }
  if (ir > kMaxIrOffset) {
    return invalid("its IR starts at byte " + std::to_string(ir) + ", past the " +
                   std::to_string(kMaxIrOffset) + " bytes a header and its options can take");
  }
  log.error = ImageError::not_supported;
  if (size == SIZE_MAX) {
    log.error_log =
        "LTO-IR in memory: its container records no length and the IR in it is opaque, so the "
        "driver cannot tell where it ends; load it from a file (cuModuleLoad, "
        "cuLibraryLoadFromFile), in a fatbin (nvcc -fatbin -gencode arch=compute_90,code=lto_90), "
        "or link it with cuLinkAddData(CU_JIT_INPUT_NVVM)";
    return log;
  }
  if (ir >= size) {
    return invalid("its IR starts at byte " + std::to_string(ir) + " of a " + std::to_string(size) +
                   "-byte image");
  }
  log.error_log = "LTO-IR needs nvJitLink to become PTX";
  log.ltoir = {data, size};
  log.ltoir_name = "LTO-IR";
  return log;
}

}  // namespace swcu
