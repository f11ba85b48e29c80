// Telling images apart by their first bytes, and what the "JIT" options change.
#include "module/image.hpp"

#include <algorithm>
#include <cstring>

namespace swcu {
namespace {

constexpr std::uint32_t kElfMagic = 0x464c457f;      // "\x7fELF"
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;   // fatbin data
constexpr std::uint32_t kWrapperMagic = 0x466243B1;  // __fatBinC_Wrapper_t (fatbinary_section.h)
constexpr std::uint32_t kLtoIrMagic = 0x7F4E43ED;    // NVVM IR from -dlto (ltoir.cpp)

// Registers a PTX kernel reports: there is no register allocator, so a fixed number, capped by
// .maxnreg and CU_JIT_MAX_REGISTERS.
constexpr int kPtxRegisters = 32;

// Text, as far as PTX goes: no control characters but white space.
bool is_text(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
  });
}

void apply_jit_options(const LoadOptions& options, Image& image) {
  for (KernelDesc& k : image.kernels) {
    int regs = kPtxRegisters;
    if (k.max_regs > 0) regs = std::min(regs, k.max_regs);
    if (options.max_registers > 0) regs = std::min(regs, static_cast<int>(options.max_registers));
    k.num_regs = regs;
    if (options.threads_per_block > 0 && options.threads_per_block <= 1024 &&
        (k.max_threads == 0 || options.threads_per_block < k.max_threads)) {
      k.max_threads = options.threads_per_block;
    }
  }
}

LoadLog detect_and_parse(const void* data, std::size_t size, const LoadOptions& options,
                         Image& out) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  const char* chars = static_cast<const char*>(data);
  std::uint32_t magic = 0;
  // No magic number has a zero byte, so a shorter string is text (and is not read past).
  if (strnlen(chars, std::min<std::size_t>(size, 4)) == 4) std::memcpy(&magic, bytes, 4);
  LoadLog log;
  if (magic == kElfMagic) return parse_cubin(bytes, size, out);
  if (magic == kFatbinMagic) return parse_fatbin(bytes, size, options, out);
  if (magic == kLtoIrMagic) return parse_ltoir(bytes, size);
  if (magic == kWrapperMagic) {
    // { int magic; int version; const unsigned long long* data; void* filename_or_fatbins; }
    if (size != SIZE_MAX && size < 16) {
      log.error = ImageError::not_an_image;
      log.error_log = "truncated fatbin wrapper";
      return log;
    }
    const unsigned char* inner = nullptr;
    std::memcpy(&inner, bytes + 8, sizeof inner);
    if (inner == nullptr) {
      log.error = ImageError::not_an_image;
      log.error_log = "the fatbin wrapper points to no fatbin";
      return log;
    }
    return parse_fatbin(inner, SIZE_MAX, options, out);
  }
  const std::string_view text(chars, size == SIZE_MAX ? std::strlen(chars) : strnlen(chars, size));
  if (!is_text(text)) {
    log.error = ImageError::not_an_image;
    log.error_log = "not a PTX, cubin or fatbin image: binary data without a known magic number";
    return log;
  }
  return parse_ptx(text, options, out);
}

}  // namespace

LoadLog load_image(const void* data, std::size_t size, const LoadOptions& options, Image& out) {
  LoadLog log = detect_and_parse(data, size, options, out);
  if (log.error == ImageError::none && out.code == ImageCode::ptx) apply_jit_options(options, out);
  return log;
}

}  // namespace swcu
