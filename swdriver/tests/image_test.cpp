// Images the module loaders must refuse or accept as NVIDIA's driver does: malformed cubins
// (found by fuzzing) and PTX with very many kernels. LTO-IR has its own file (ltoir_test.cpp).
#include <elf.h>

#include <cstring>
#include <string>

#include "module_support.hpp"

namespace {

using swcu::test::mod;
using swcu::test::ModuleTest;

// The JIT error log of a load that fails with `expected`.
std::string load_error(const void* image, CUresult expected) {
  char error[512] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(sizeof error)};
  CUmodule m = nullptr;
  SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadDataEx(&m, image, 2, options, values), expected);
  CHECK(m == nullptr);
  return error;
}

Elf64_Ehdr header_of(const std::string& cubin) {
  Elf64_Ehdr h;
  std::memcpy(&h, cubin.data(), sizeof h);
  return h;
}

Elf64_Shdr section_of(const std::string& cubin, std::size_t i) {
  Elf64_Shdr s;
  std::memcpy(&s, cubin.data() + header_of(cubin).e_shoff + i * sizeof s, sizeof s);
  return s;
}

void set_section(std::string& cubin, std::size_t i, const Elf64_Shdr& s) {
  std::memcpy(cubin.data() + header_of(cubin).e_shoff + i * sizeof s, &s, sizeof s);
}

std::size_t find_section(const std::string& cubin, std::uint32_t type) {
  for (std::size_t i = 0; i < header_of(cubin).e_shnum; ++i) {
    if (section_of(cubin, i).sh_type == type) return i;
  }
  FAIL("the cubin has no section of type ", type);
  return 0;
}

}  // namespace

TEST_SUITE("images") {
  // cuda.h, CUDA_ERROR_INVALID_IMAGE: "the device kernel image is invalid". The fuzzer's 192-byte
  // cubin: an ELF header and two section headers, the second (the section-name table) inactive
  // (SHT_NULL) and "at" an offset far outside the file. It read out of bounds, then crashed.
  TEST_CASE_FIXTURE(ModuleTest, "a cubin whose section-name table is SHT_NULL is refused") {
    std::string cubin(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr), '\0');
    REQUIRE(cubin.size() == 192);
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_ABIVERSION] = 8;
    h.e_machine = 190;  // EM_CUDA
    h.e_flags = 90u << 8;
    h.e_shoff = sizeof h;
    h.e_shentsize = sizeof(Elf64_Shdr);
    h.e_shnum = 2;
    h.e_shstrndx = 1;
    std::memcpy(cubin.data(), &h, sizeof h);
    Elf64_Shdr names{};
    names.sh_type = SHT_NULL;
    names.sh_offset = 1ULL << 40;
    names.sh_size = 64;
    set_section(cubin, 1, names);
    CHECK_NE(load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE).find("section-name table"),
             std::string::npos);
    h.e_shstrndx = 0;  // section 0 is always SHT_NULL
    std::memcpy(cubin.data(), &h, sizeof h);
    CHECK_NE(load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE).find("section-name table"),
             std::string::npos);
  }

  TEST_CASE_FIXTURE(ModuleTest, "a cubin whose sections link to no section with bytes is refused") {
    const std::string good = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.cubin"));
    const std::size_t symtab = find_section(good, SHT_SYMTAB);
    const std::size_t nobits = find_section(good, SHT_NOBITS);
    const Elf64_Ehdr h = header_of(good);
    {
      // The symbol table's string table is the inactive section 0, far outside the file.
      std::string cubin = good;
      Elf64_Shdr s = section_of(cubin, symtab);
      s.sh_link = 0;
      set_section(cubin, symtab, s);
      Elf64_Shdr null_section = section_of(cubin, 0);
      null_section.sh_offset = 1ULL << 40;
      null_section.sh_size = 1 << 20;
      set_section(cubin, 0, null_section);
      // sh_link 0 means "no link", so this cubin has no string table for its symbols.
      const std::string error = load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE);
      CHECK_NE(error.find("symbol table"), std::string::npos);
    }
    for (const std::size_t link : {std::size_t{h.e_shnum}, std::size_t{h.e_shnum} + 1000, nobits}) {
      INFO("sh_link ", link);
      std::string cubin = good;
      Elf64_Shdr s = section_of(cubin, symtab);
      s.sh_link = static_cast<Elf64_Word>(link);
      set_section(cubin, symtab, s);
      const std::string error = load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE);
      CHECK_NE(error.find("links to section " + std::to_string(link)), std::string::npos);
    }
    {
      std::string cubin = good;  // another section's link: a NOBITS section has no bytes
      Elf64_Shdr s = section_of(cubin, 1);
      s.sh_link = static_cast<Elf64_Word>(nobits);
      set_section(cubin, 1, s);
      CHECK_NE(load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE).find("links to section"),
               std::string::npos);
    }
    {
      std::string cubin = good;  // the section-name table is a NOBITS section
      Elf64_Ehdr bad = h;
      bad.e_shstrndx = static_cast<Elf64_Half>(nobits);
      std::memcpy(cubin.data(), &bad, sizeof bad);
      CHECK_NE(load_error(cubin.data(), CUDA_ERROR_INVALID_IMAGE).find("section-name table"),
               std::string::npos);
    }
    CUmodule m = load(good);  // the original still loads
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  // Loading is linear in the number of kernels: 80 000 kernels took 5 s when each new kernel was
  // compared with every earlier one (100 000 would take 8 s); the loaders now look kernels,
  // globals and sections up by hash (0.5 s). This loads 100 000 kernels and checks they are there;
  // perf."loading PTX is linear in its kernels and globals" (load_scaling/) counts instructions.
  TEST_CASE_FIXTURE(ModuleTest, "a PTX module with very many kernels loads") {
    constexpr unsigned kKernels = 100000;
    std::string body;
    body.reserve(kKernels * 40);
    for (unsigned i = 0; i < kKernels; ++i) {
      body += ".visible .entry k" + std::to_string(i) + "(.param .u64 p) { ret; }\n";
    }
    const std::string text = swcu::test::ptx(body);
    CUmodule m = load(text);
    unsigned count = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunctionCount(&count, m));
    CHECK(count == kKernels);
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&f, m, "k99999"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadData(&lib, text.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernelCount(&count, lib));
    CHECK(count == kKernels);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
  }
}
