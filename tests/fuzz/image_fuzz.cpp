// libFuzzer target: arbitrary bytes as a module image given to module::load(span). The bytes sit
// in a heap block of exactly their size; cuwrap's validator (src/image_check.hpp) must refuse
// them with a message or accept them, and an accepted cubin, fatbin or LTO-IR container then
// goes to the software driver's image loader the way cuModuleLoadDataEx gets it: a bare pointer,
// the size unknown (SIZE_MAX), trusted to its headers. AddressSanitizer fails the run if either
// reads past the block. Built and run by scripts/fuzz (docs/modules-and-kernels.md, "Images are
// checked").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "image_check.hpp"
#include "module/image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto block = std::make_unique<std::byte[]>(size);
  if (size > 0) std::memcpy(block.get(), data, size);
  const std::span<const std::byte> image{block.get(), size};
  if (const auto problem = cuwrap::detail::image_problem(image)) {
    if (problem->empty()) {
      std::fprintf(stderr, "image_fuzz: an image refused without a reason\n");
      std::abort();
    }
    return 0;
  }
  std::uint32_t magic = 0;
  if (size >= sizeof magic) std::memcpy(&magic, data, sizeof magic);
  // PTX reaches the driver as a NUL-terminated copy (ptx_image_fuzz covers its parser).
  if (magic != 0x464c457fU && magic != 0xba55ed50U && magic != 0x7f4e43edU) return 0;
  swcu::Image loaded;
  (void)swcu::load_image(block.get(), SIZE_MAX, swcu::LoadOptions{}, loaded);
  return 0;
}
