// libFuzzer target: arbitrary bytes as PTX text for the driver's module loader,
// swcu::parse_ptx (swdriver/src/ptx.cpp): the header/declaration parser that gives kernels,
// parameter layouts and globals, then the interpreter's parse_program. It must succeed or fail
// with an ImageError and a one-line log, never crash, hang or allocate without bound. Built and run
// by scripts/fuzz (docs/software-driver.md, "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "module/image.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "ptx_image_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  swcu::LoadOptions options;
  swcu::Image image;
  const swcu::LoadLog log = swcu::parse_ptx(text, options, image);
  if (log.error == swcu::ImageError::none) {
    if (image.program == nullptr) broken("loaded without a decoded program");
    for (const swcu::KernelDesc& k : image.kernels) {
      std::size_t end = 0;
      for (const swcu::ParamLayout& p : k.params) {
        if (p.offset < end) broken("parameters overlap");
        end = p.offset + p.size;
      }
      if (end > k.params_size) broken("a parameter past params_size");
    }
  } else if (log.error_log.empty()) {
    broken("an error without a log");
  }
  return 0;
}
