// Modules: images (PTX, cubin, fatbin), the PTX parser, functions, attributes, globals, JIT
// options and logs. Libraries and kernels: library_test.cpp.
#include <elf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "module_support.hpp"

namespace {

using swcu::test::Jit;
using swcu::test::kKernelNames;
using swcu::test::mod;
using swcu::test::ModuleTest;
using Layout = std::vector<std::pair<std::size_t, std::size_t>>;

const Layout kSaxpy{{0, 4}, {8, 8}, {16, 8}, {24, 4}};
const Layout kWithStruct{{0, 16}, {16, 1}, {18, 2}, {24, 8}};
const Layout kByValue{{0, 16}, {16, 8}};
const Layout kFill{{0, 8}, {8, 8}, {16, 4}};
const char* const kFillName = "_ZN2ns4fillIdEEvPT_S1_i";

// The image variants built from kernels/sw_kernels.cu that hold sm_90 code.
const std::array<const char*, 7> kImages{"sw_kernels.ptx",
                                         "sw_kernels.cubin",
                                         "sw_kernels.fatbin",
                                         "sw_kernels_ptx_zstd.fatbin",
                                         "sw_kernels_ptx_lz4.fatbin",
                                         "sw_kernels_ptx_plain.fatbin",
                                         "sw_kernels_elf_zstd.fatbin"};

// An EIATTR_KPARAM_INFO record of a .nv.info.<kernel> section.
std::vector<unsigned char> kparam(std::uint16_t ordinal, std::uint16_t offset, std::uint32_t size) {
  std::vector<unsigned char> r{0x04, 0x17, 0x0c, 0x00, 0, 0, 0, 0};
  const std::uint32_t word = (size << 18) | 0x1f000;
  r.push_back(static_cast<unsigned char>(ordinal));
  r.push_back(static_cast<unsigned char>(ordinal >> 8));
  r.push_back(static_cast<unsigned char>(offset));
  r.push_back(static_cast<unsigned char>(offset >> 8));
  for (int b = 0; b < 4; ++b) r.push_back(static_cast<unsigned char>(word >> (8 * b)));
  return r;
}

// A minimal sm_90 cubin: kernel `name` in .text.<name>, an 8-byte global `g` in .nv.global,
// and a .nv.info.<name> section with `info` when `with_info`.
std::string tiny_cubin(const std::string& name, bool with_info,
                       const std::vector<unsigned char>& info = {}) {
  std::vector<std::string> section_names{"",        ".shstrtab",     ".strtab",
                                         ".symtab", ".text." + name, ".nv.global"};
  if (with_info) section_names.push_back(".nv.info." + name);
  std::string shstrtab;
  std::vector<std::uint32_t> name_offsets;
  for (const auto& n : section_names) {
    name_offsets.push_back(static_cast<std::uint32_t>(shstrtab.size()));
    shstrtab += n;
    shstrtab.push_back('\0');
  }
  const std::string strtab = std::string(1, '\0') + name + '\0' + "g" + '\0';
  std::vector<Elf64_Sym> syms(3);
  syms[1].st_name = 1;
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  syms[1].st_other = 0x10;
  syms[1].st_shndx = 4;
  syms[1].st_size = 16;
  syms[2].st_name = static_cast<std::uint32_t>(2 + name.size());
  syms[2].st_info = ELF64_ST_INFO(STB_LOCAL, STT_OBJECT);
  syms[2].st_shndx = 5;
  syms[2].st_size = 8;
  const std::string text(16, '\0');

  std::string out(sizeof(Elf64_Ehdr), '\0');
  std::vector<Elf64_Shdr> headers(section_names.size());
  const auto place = [&](std::size_t index, const void* data, std::size_t size,
                         std::uint32_t type) {
    headers[index].sh_name = name_offsets[index];
    headers[index].sh_type = type;
    headers[index].sh_offset = out.size();
    headers[index].sh_size = size;
    headers[index].sh_addralign = 4;
    if (type != SHT_NOBITS) out.append(static_cast<const char*>(data), size);
  };
  place(1, shstrtab.data(), shstrtab.size(), SHT_STRTAB);
  place(2, strtab.data(), strtab.size(), SHT_STRTAB);
  place(3, syms.data(), syms.size() * sizeof(Elf64_Sym), SHT_SYMTAB);
  headers[3].sh_link = 2;
  headers[3].sh_entsize = sizeof(Elf64_Sym);
  place(4, text.data(), text.size(), SHT_PROGBITS);
  place(5, nullptr, 8, SHT_NOBITS);
  if (with_info) place(6, info.data(), info.size(), SHT_LOPROC);
  while (out.size() % 8 != 0) out.push_back('\0');
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_ident[EI_OSABI] = 0x41;
  h.e_ident[EI_ABIVERSION] = 8;
  h.e_type = ET_EXEC;
  h.e_machine = 190;  // EM_CUDA
  h.e_version = EV_CURRENT;
  h.e_flags = (90u << 8) | 0x4;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shnum = static_cast<Elf64_Half>(headers.size());
  h.e_shstrndx = 1;
  h.e_shoff = out.size();
  out.append(reinterpret_cast<const char*>(headers.data()), headers.size() * sizeof(Elf64_Shdr));
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

}  // namespace

TEST_SUITE("modules") {
  TEST_CASE_FIXTURE(ModuleTest, "every image kind lists the same kernels with the same layouts") {
    for (const char* file : kImages) {
      CAPTURE(file);
      const std::string image = swcu::test::read_bytes(swcu::test::kernel_file(file));
      const CUmodule m = load(image);
      CHECK(ctl.live_handles(SWCU_MODULE) == 1);
      auto names = this->names(m);
      std::sort(names.begin(), names.end());
      CHECK(names == kKernelNames);  // calls_device_function's helper is not a kernel
      CHECK(layout(function(m, "saxpy")) == kSaxpy);
      CHECK(layout(function(m, "with_struct")) == kWithStruct);
      CHECK(layout(function(m, "by_value")) == kByValue);
      CHECK(layout(function(m, kFillName)) == kFill);
      CHECK(layout(function(m, "no_params")).empty());
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    }
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
  }

  TEST_CASE_FIXTURE(ModuleTest, "the PTX parser reads the declaration forms compilers emit") {
    const std::string text = swcu::test::ptx(R"(
// .visible .entry commented_out(.param .u32 x)
/* .entry also_commented_out(
     .param .u64 p) */
.file 1 "/tmp//path with // slashes.cu"
.global .align 8 .u64 pointer_sized;
.visible .global .align 4 .f32 scaled[3] = {0f3F800000, 0f40000000, 0f40400000};
.const .align 16 .b8 lut[64];
.extern .global .align 4 .u32 defined_elsewhere;
.shared .align 4 .b8 module_scratch[128];
.extern .func (.param .b32 func_retval0) helper(.param .b32 helper_param_0);
.func (.param .b32 func_retval0) local_helper(
  .param .b32 local_helper_param_0
)
{
  .param .b32 inner;
  ret;
}
.weak .entry weak_kernel(
  .param .u8 a,          // 1 byte at 0
  .param .align 16 .b8 b[40],   // struct: 16-aligned
  .param .u32 .ptr .align 32 c, // a 32-bit pointer: .align is the pointee's
  .param .u64 .ptr .global .align 16 d,
  .param .b32 e[3],
  .param .f16 f,
  .param .b128 g
)
.maxntid 128, 2, 1
.minnctapersm 2
.pragma "nounroll";
{
  .reg .b32 %r<4>;
  .local .align 8 .b8 __local_depot0[40];
  .shared .align 4 .b8 block_buffer[256];
  {
    .param .b32 param0;
    .param .b32 retval0;
    call.uni (retval0), helper, (param0);
  }
  mov.u32 %r1, module_scratch;
  ld.param.u32 %r2, [c];
  ret;
}
.extern .entry declared_only(.param .u32 x);
.visible .entry declared_only(.param .u32 x) .reqntid 64 { ret; }
.entry _ZN5outer5innerIiE3runEv() { ret; }
)");
    const CUmodule m = load(text);
    auto names = this->names(m);
    std::sort(names.begin(), names.end());
    CHECK(names ==
          std::vector<std::string>{"_ZN5outer5innerIiE3runEv", "declared_only", "weak_kernel"});
    const CUfunction weak = function(m, "weak_kernel");
    CHECK(layout(weak) == Layout{{0, 1}, {16, 40}, {56, 4}, {64, 8}, {72, 12}, {84, 2}, {96, 16}});
    CHECK(attribute(weak, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 256);
    CHECK(attribute(weak, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 256 + 128);
    CHECK(attribute(weak, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) == 40);
    CHECK(attribute(weak, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES) == 64);
    const CUfunction declared = function(m, "declared_only");
    CHECK(layout(declared) == Layout{{0, 4}});
    CHECK(attribute(declared, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 64);
    CHECK(attribute(declared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 0);
    CHECK(layout(function(m, "_ZN5outer5innerIiE3runEv")).empty());
    CUfunction f = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&f, m, "local_helper"), CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&f, m, "commented_out"), CUDA_ERROR_NOT_FOUND);

    CUdeviceptr p = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&p, &bytes, m, "scaled"));
    CHECK(bytes == 12);
    float values[3] = {};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpyDtoH_v2(values, p, sizeof values));
    CHECK(values[0] == 1.0f);
    CHECK(values[1] == 2.0f);
    CHECK(values[2] == 3.0f);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "lut"), CUDA_SUCCESS);
    CHECK(bytes == 64);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "defined_elsewhere"),
                           CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&p, &bytes, m, "module_scratch"),
                           CUDA_ERROR_NOT_FOUND);  // shared memory is not a global
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "bad images are refused with an error log") {
    struct Case {
      std::string image;
      CUresult expected;
      const char* log;
    };
    const std::vector<Case> cases{
        {"this is not PTX", CUDA_ERROR_INVALID_IMAGE, "not a PTX, cubin or fatbin image"},
        {"", CUDA_ERROR_INVALID_IMAGE, "not a PTX, cubin or fatbin image"},
        {std::string("\x01\x02\x03\x04garbage"), CUDA_ERROR_INVALID_IMAGE, "binary data"},
        {std::string("\x7f"
                     "ELF garbage"),
         CUDA_ERROR_INVALID_IMAGE, "ELF"},
        {".version 9.0\n.address_size 64\n", CUDA_ERROR_INVALID_PTX, "no .target"},
        {swcu::test::ptx(".visible .entry x(\n.param .u33 a)\n{ ret; }\n"), CUDA_ERROR_INVALID_PTX,
         "line 5: unexpected '.u33'"},
        {swcu::test::ptx(".entry x() { ret;\n"), CUDA_ERROR_INVALID_PTX, "never closed"},
        {swcu::test::ptx(".entry () { ret; }\n"), CUDA_ERROR_INVALID_PTX, "expected a kernel name"},
        {swcu::test::ptx(".entry x() { ret; }\n.entry x() { ret; }\n"), CUDA_ERROR_INVALID_PTX,
         "defined twice"},
        {swcu::test::ptx("/* unterminated\n"), CUDA_ERROR_INVALID_PTX, "unterminated /* comment"},
        {".version 9.9\n.target sm_90\n", CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "PTX ISA 9.9"},
        {".version 9.0\n.target sm_100a\n", CUDA_ERROR_INVALID_PTX, "newer than the device"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.image);
      Jit jit;
      CUmodule m = nullptr;
      SWCU_TEST_CHECK_RESULT(jit.load(&m, c.image.c_str()), c.expected);
      CHECK(m == nullptr);
      const std::string error = jit.error;
      INFO(error);
      CHECK(error.find(c.log) != std::string::npos);
      CHECK(error.starts_with("swcuda: "));
      CHECK(jit.error_size() == error.size());
      CHECK(std::string(jit.info).empty());
      CHECK(jit.info_size() == 0);
    }
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
  }

  TEST_CASE_FIXTURE(ModuleTest, "a PTX load writes an info log and a zero wall time") {
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx"));
    Jit jit;
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(jit.load(&m, image.c_str()));
    const std::string info = jit.info;
    CHECK(info == "swcuda: PTX ISA 9.0 for sm_90 loaded for sm_90: 10 kernel(s), 3 global(s)");
    CHECK(jit.info_size() == info.size());
    CHECK(std::string(jit.error).empty());
    CHECK(jit.wall_time() == 0.0f);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    // A log buffer too small is truncated with its NUL.
    char small[8] = "xxxxxxx";
    std::array<CUjit_option, 2> options{CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    std::array<void*, 2> values{small, reinterpret_cast<void*>(std::uintptr_t{sizeof small})};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuModuleLoadDataEx(&m, image.c_str(), 2, options.data(), values.data()));
    CHECK(std::string(small) == "swcuda:");
    CHECK(reinterpret_cast<std::uintptr_t>(values[1]) == 7);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "JIT options are checked and some change what is reported") {
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx"));
    CUmodule m = nullptr;
    std::array<CUjit_option, 2> options{CU_JIT_MAX_REGISTERS, CU_JIT_THREADS_PER_BLOCK};
    std::array<void*, 2> values{reinterpret_cast<void*>(std::uintptr_t{24}),
                                reinterpret_cast<void*>(std::uintptr_t{128})};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuModuleLoadDataEx(&m, image.c_str(), 2, options.data(), values.data()));
    CHECK(attribute(function(m, "saxpy"), CU_FUNC_ATTRIBUTE_NUM_REGS) == 24);
    CHECK(attribute(function(m, "saxpy"), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 128);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    auto unknown = swcu::test::invalid_enum<CUjit_option>(CU_JIT_NUM_OPTIONS);
    void* value = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadDataEx(&m, image.c_str(), 1, &unknown, &value),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadDataEx(&m, image.c_str(), 1, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadData(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadData(nullptr, image.c_str()),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
  }

  TEST_CASE_FIXTURE(ModuleTest, "code for another architecture is CUDA_ERROR_NO_BINARY_FOR_GPU") {
    for (const char* file : {"sw_kernels_sm80.cubin", "sw_kernels_sm80.fatbin"}) {
      CAPTURE(file);
      const std::string image = swcu::test::read_bytes(swcu::test::kernel_file(file));
      Jit jit;
      CUmodule m = nullptr;
      SWCU_TEST_CHECK_RESULT(jit.load(&m, image.data()), CUDA_ERROR_NO_BINARY_FOR_GPU);
      CHECK(std::string(jit.error).find("sm_80") != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(ModuleTest,
                    "cuModuleLoad reads files and cuModuleLoadFatBinary takes wrappers") {
    CUmodule m = nullptr;
    for (const char* file : {"sw_kernels.ptx", "sw_kernels.cubin", "sw_kernels.fatbin"}) {
      CAPTURE(file);
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoad(&m, swcu::test::kernel_file(file).c_str()));
      CHECK(names(m).size() == kKernelNames.size());
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    }
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoad(&m, "/nonexistent/k.ptx"), CUDA_ERROR_FILE_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoad(&m, nullptr), CUDA_ERROR_INVALID_VALUE);

    // The wrapper nvcc puts in host objects (fatbinary_section.h): magic, version, data.
    const std::string bytes = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.fatbin"));
    std::vector<unsigned long long> data((bytes.size() + 7) / 8);
    std::memcpy(data.data(), bytes.data(), bytes.size());
    struct {
      int magic;
      int version;
      const unsigned long long* data;
      void* filename_or_fatbins;
    } wrapper{0x466243B1, 1, data.data(), nullptr};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadFatBinary(&m, &wrapper));
    CHECK(layout(function(m, "saxpy")) == kSaxpy);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadFatBinary(&m, data.data()));  // the data itself
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "a cubin without parameter records has no known layout") {
    const std::string bare = tiny_cubin("bare", false);
    const CUmodule m = load(bare);
    CHECK(names(m) == std::vector<std::string>{"bare"});
    const CUfunction f = function(m, "bare");
    std::size_t offset = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetParamInfo(f, 0, &offset, nullptr),
                           CUDA_ERROR_NOT_SUPPORTED);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
    CUdeviceptr g = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&g, &bytes, m, "g"));
    CHECK(bytes == 8);

    // Without a layout, kernelParams cannot be packed; a buffer from `extra` can.
    int value = 7;
    void* params[] = {&value};
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
                           CUDA_ERROR_INVALID_IMAGE);
    std::size_t size = sizeof value;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &value, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    // A cubin has no PTX to run: a host function stands in, so the record can be checked.
    CHECK(ctl.register_kernel(
              "bare", [](const swcu_launch*, void*) {}, nullptr) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(ctl.register_kernel("bare", nullptr, nullptr) == 0);
    const swcu_launch l = last_launch();
    CHECK(l.param_count == 0);
    CHECK(l.params_size == sizeof value);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    // With records (in any order), the layout is theirs.
    std::vector<unsigned char> info = kparam(1, 8, 4);
    const auto first = kparam(0, 0, 8);
    info.insert(info.end(), first.begin(), first.end());
    const CUmodule with_info = load(tiny_cubin("described", true, info));
    CHECK(layout(function(with_info, "described")) == Layout{{0, 8}, {8, 4}});
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(with_info));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuCtxSynchronize());
  }

  TEST_CASE_FIXTURE(ModuleTest,
                    "globals are zeroed device memory of the module, with initial values") {
    for (const char* file : {"sw_kernels.ptx", "sw_kernels.cubin"}) {
      CAPTURE(file);
      const CUmodule m = load(swcu::test::read_bytes(swcu::test::kernel_file(file)));
      CUdeviceptr counter = 0;
      std::size_t bytes = 0;
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&counter, &bytes, m, "counter"));
      CHECK(bytes == 4);
      CHECK(counter != 0);
      int value = -1;
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpyDtoH_v2(&value, counter, sizeof value));
      CHECK(value == 0);
      value = 41;
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpyHtoD_v2(counter, &value, sizeof value));
      value = 0;
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpyDtoH_v2(&value, counter, sizeof value));
      CHECK(value == 41);
      // Beyond the end is not the global's.
      int two[2] = {};
      SWCU_TEST_CHECK_RESULT(swcu::test::api().cuMemcpyDtoH_v2(two, counter, sizeof two),
                             CUDA_ERROR_INVALID_VALUE);

      CUdeviceptr table = 0;
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&table, &bytes, m, "table"));
      CHECK(bytes == 32);
      int t[8] = {};
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpyDtoH_v2(t, table, sizeof t));
      CHECK(t[0] == 1);
      CHECK(t[7] == 8);
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(nullptr, &bytes, m, "coefficients"));
      CHECK(bytes == 16);
      CUdeviceptr only_address = 0;
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&only_address, nullptr, m, "coefficients"));
      SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(nullptr, nullptr, m, "counter"),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&counter, &bytes, m, "nothing"),
                             CUDA_ERROR_NOT_FOUND);
      SWCU_TEST_CHECK_RESULT(mod().cuModuleGetGlobal(&counter, &bytes, m, nullptr),
                             CUDA_ERROR_INVALID_VALUE);

      // The memory subsystem knows it: its range and context, and it is not cuMemFree's.
      CUdeviceptr base = 0;
      std::size_t size = 0;
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemGetAddressRange_v2(&base, &size, table + 4));
      CHECK(base == table);
      CHECK(size == 32);
      CUcontext owner = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(
          swcu::test::api().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, table));
      CHECK(owner == ctx);
      SWCU_TEST_CHECK_RESULT(swcu::test::api().cuMemFree_v2(table), CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
      SWCU_TEST_CHECK_RESULT(swcu::test::api().cuMemcpyDtoH_v2(&value, counter, sizeof value),
                             CUDA_ERROR_INVALID_VALUE);  // gone with its module
    }
  }

  TEST_CASE_FIXTURE(ModuleTest, "function attributes: every one has a value") {
    for (const char* file : {"sw_kernels.ptx", "sw_kernels.cubin"}) {
      CAPTURE(file);
      const bool ptx = std::string(file).ends_with(".ptx");
      const CUmodule m = load(swcu::test::read_bytes(swcu::test::kernel_file(file)));
      const CUfunction saxpy = function(m, "saxpy");
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 0);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES) == 16);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) == 0);
      if (ptx) {
        CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_NUM_REGS) == 32);
      } else {
        CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_NUM_REGS) > 0);  // EIATTR_REGCOUNT
      }
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_PTX_VERSION) == 90);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_BINARY_VERSION) == 90);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA) == 0);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 49152);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == -1);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) == 0);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 0);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) == 0);
      CHECK(attribute(saxpy, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) == 0);
      int value = 0;
      SWCU_TEST_CHECK_RESULT(mod().cuFuncGetAttribute(
                                 &value, swcu::test::invalid_enum<CUfunction_attribute>(16), saxpy),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(mod().cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, saxpy),
                             CUDA_ERROR_INVALID_VALUE);

      CHECK(attribute(function(m, "bounded"), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 256);
      const CUfunction shared = function(m, "static_shared");
      CHECK(attribute(shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 400);
      CHECK(attribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 49152 - 400);
      SWCU_TEST_CHECK_RESULT(
          mod().cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   232448 - 400),
          CUDA_SUCCESS);
      SWCU_TEST_CHECK_RESULT(
          mod().cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   232448 - 399),
          CUDA_ERROR_INVALID_VALUE);

      const CUfunction clustered = function(m, "clustered");
      CHECK(attribute(clustered, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) == 1);
      CHECK(attribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 2);
      CHECK(attribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT) == 1);
      CHECK(attribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH) == 1);
      SWCU_TEST_CHECK_RESULT(
          mod().cuFuncSetAttribute(clustered, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4),
          CUDA_ERROR_NOT_PERMITTED);  // set at compile time
      SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    }
  }

  TEST_CASE_FIXTURE(ModuleTest, "settable function attributes read back and others are refused") {
    const CUmodule m = load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")));
    const CUfunction f = function(m, "no_params");
    const auto set = [&](CUfunction_attribute a, int v) {
      return mod().cuFuncSetAttribute(f, a, v);
    };
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448),
                           CUDA_SUCCESS);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 232448);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 232448);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50),
                           CUDA_SUCCESS);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == 50);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2), CUDA_SUCCESS);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 2);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 0), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, -1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                           CUDA_SUCCESS);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) == 1);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                               CU_CLUSTER_SCHEDULING_POLICY_SPREAD),
                           CUDA_SUCCESS);
    CHECK(attribute(f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) ==
          CU_CLUSTER_SCHEDULING_POLICY_SPREAD);
    SWCU_TEST_CHECK_RESULT(set(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 3),
                           CUDA_ERROR_INVALID_VALUE);
    for (const auto read_only :
         {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS,
          CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET}) {
      SWCU_TEST_CHECK_RESULT(set(read_only, 1), CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(set(swcu::test::invalid_enum<CUfunction_attribute>(99), 1),
                           CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_CHECK_RESULT(mod().cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED),
                           CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncSetCacheConfig(f, swcu::test::invalid_enum<CUfunc_cache>(9)),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuFuncSetSharedMemConfig(f, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(
        mod().cuFuncSetSharedMemConfig(f, swcu::test::invalid_enum<CUsharedconfig>(9)),
        CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "functions and modules: lookups, names, stale handles") {
    const CUmodule m = load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")));
    CUfunction f = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&f, m, "saxpi"), CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&f, m, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(nullptr, m, "saxpy"),
                           CUDA_ERROR_INVALID_VALUE);
    f = function(m, kFillName);
    const char* name = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetName(&name, f));
    CHECK(std::string(name) == kFillName);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetName(nullptr, f), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetName(&name, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUmodule owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetModule(&owner, f));
    CHECK(owner == m);
    CUfunctionLoadingState loaded{};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncIsLoaded(&loaded, f));
    CHECK(loaded == CU_FUNCTION_LOADING_STATE_LOADED);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncLoad(f), CUDA_SUCCESS);
    std::size_t offset = 0;
    std::size_t size = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetParamInfo(f, 3, &offset, &size),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetParamInfo(f, 0, nullptr, &size),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuFuncGetParamInfo(f, 2, &offset, nullptr));  // size optional
    CHECK(offset == 16);
    CUmoduleLoadingMode mode{};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetLoadingMode(&mode));
    CHECK(mode == CU_MODULE_LAZY_LOADING);
    std::array<CUfunction, 2> two{};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleEnumerateFunctions(two.data(), 2, m));
    CHECK(two[0] != nullptr);
    CHECK(two[1] != nullptr);

    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    SWCU_TEST_CHECK_RESULT(mod().cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
    unsigned count = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunctionCount(&count, m), CUDA_ERROR_INVALID_HANDLE);
    int value = 0;
    SWCU_TEST_CHECK_RESULT(mod().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(ctx), "saxpy"),
                           CUDA_ERROR_INVALID_HANDLE);  // a handle of another kind
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a module belongs to its context and goes with it") {
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadData(nullptr, "x"), CUDA_ERROR_INVALID_CONTEXT);
    const std::size_t before = ctl.reclaimed_handles(SWCU_MODULE);
    const CUcontext ctx = swcu::test::create_context();
    CUmodule m = nullptr;
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, image.c_str()));
    CUdeviceptr counter = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&counter, nullptr, m, "counter"));
    CHECK(ctl.live_handles(SWCU_MODULE) == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_MODULE) == before + 1);
    SWCU_TEST_CHECK_RESULT(mod().cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
    CUdeviceptr base = 0;
    const CUcontext other = swcu::test::create_context();
    SWCU_TEST_CHECK_RESULT(cu.cuMemGetAddressRange_v2(&base, nullptr, counter),
                           CUDA_ERROR_NOT_FOUND);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
  }

  TEST_CASE_FIXTURE(ModuleTest, "a fault on a load leaves no module") {
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx"));
    REQUIRE(ctl.add_fault_rule("cuModuleLoadData:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUmodule m = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadData(&m, image.c_str()), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(m == nullptr);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, image.c_str()));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }
}

TEST_SUITE("modules") {
  // Found by fuzzing: an 88-byte fatbin whose PTX entry claims 1 GiB uncompressed once made the
  // driver allocate and zero-fill all of it before the decompressor refused the data.
  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "a fatbin entry's uncompressed size is checked first") {
    for (const unsigned long long flags : {0x8000ull, 0x2000ull}) {  // zstd, LZ4
      std::string image(16 + 64 + 8, '\0');
      const auto put = [&image](std::size_t at, auto value) {
        std::memcpy(image.data() + at, &value, sizeof value);
      };
      put(0, std::uint32_t{0xBA55ED50});       // fatbin magic
      put(4, std::uint16_t{1});                // version
      put(6, std::uint16_t{16});               // header size
      put(8, std::uint64_t{64 + 8});           // payload
      put(16, std::uint16_t{1});               // PTX entry
      put(16 + 4, std::uint32_t{64});          // entry header size
      put(16 + 8, std::uint64_t{8});           // padded payload
      put(16 + 0x10, std::uint32_t{8});        // compressed size
      put(16 + 0x1c, std::uint32_t{90});       // compute_90
      put(16 + 0x28, flags);                   // compression
      put(16 + 0x38, std::uint64_t{1} << 30);  // claimed uncompressed size
      CUmodule m = nullptr;
      Jit jit;
      SWCU_TEST_CHECK_RESULT(jit.load(&m, image.data()), CUDA_ERROR_INVALID_IMAGE);
      const std::string log = jit.error;
      INFO(log);
      CHECK(log.find("1073741824 bytes uncompressed") != std::string::npos);
    }
  }
}
