// LTO-IR (NVVM IR from nvcc's and NVRTC's -dlto) given to the module loaders: NVIDIA's driver
// JIT-links it (issue 15, measured on GPUs); the software driver turns it into PTX with nvJitLink
// and runs that. From a file, or in a fatbin, its length is known; raw LTO-IR in memory records
// none (module/ltoir.cpp) and is refused with a message. A malformed container is an invalid
// image, never a crash.
#include <nvrtc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "module_support.hpp"

namespace {

using swcu::test::api;
using swcu::test::mod;
using swcu::test::ModuleTest;

constexpr std::uint32_t kLtoIrMagic = 0x7F4E43ED;

// The JIT error log of a cuModuleLoadDataEx that fails with `expected`.
std::string load_error(const void* image, CUresult expected) {
  char error[1024] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(sizeof error)};
  CUmodule m = nullptr;
  SWCU_TEST_CHECK_RESULT(mod().cuModuleLoadDataEx(&m, image, 2, options, values), expected);
  CHECK(m == nullptr);
  return error;
}

// The JIT error log of a cuLibraryLoadFromFile that fails with `expected`.
std::string file_error(const std::string& path, CUresult expected) {
  char error[1024] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(sizeof error)};
  CUlibrary lib = nullptr;
  SWCU_TEST_CHECK_RESULT(
      mod().cuLibraryLoadFromFile(&lib, path.c_str(), options, values, 2, nullptr, nullptr, 0),
      expected);
  CHECK(lib == nullptr);
  return error;
}

// A kernel compiled by NVRTC to LTO-IR (-dlto), as nvrtcGetLTOIR gives it.
std::string nvrtc_ltoir(const char* source) {
  nvrtcProgram program = nullptr;
  REQUIRE(nvrtcCreateProgram(&program, source, "ltoir.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  const char* options[] = {"-dlto", "--gpu-architecture=compute_90"};
  const nvrtcResult r = nvrtcCompileProgram(program, 2, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(program, log.data());
  REQUIRE_MESSAGE(r == NVRTC_SUCCESS, log);
  std::size_t size = 0;
  REQUIRE(nvrtcGetLTOIRSize(program, &size) == NVRTC_SUCCESS);
  std::string ir(size, '\0');
  REQUIRE(nvrtcGetLTOIR(program, ir.data()) == NVRTC_SUCCESS);
  nvrtcDestroyProgram(&program);
  std::uint32_t magic = 0;
  REQUIRE(ir.size() > sizeof magic);
  std::memcpy(&magic, ir.data(), sizeof magic);
  REQUIRE(magic == kLtoIrMagic);
  return ir;
}

constexpr const char* kAddSeven =
    "extern \"C\" __global__ void add_seven(int* p) { p[threadIdx.x] += 7 + threadIdx.x; }";

// A file that is removed when the test ends.
struct TempFile {
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/swdriver-ltoir-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path;
};

// Runs add_seven on 32 ints of 1 and checks the result against the host's.
void run_add_seven(CUfunction f) {
  const swcu::test::Api& cu = api();
  CUdeviceptr d = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 32 * sizeof(int)));
  std::vector<int> host(32, 1);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(d, host.data(), 32 * sizeof(int)));
  void* params[] = {&d};
  SWCU_TEST_REQUIRE_SUCCESS(
      mod().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(host.data(), d, 32 * sizeof(int)));
  for (int i = 0; i < 32; ++i) CHECK(host[static_cast<std::size_t>(i)] == 1 + 7 + i);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
}

// Runs sw_kernels.cu's saxpy (y = a * x + y) on 100 floats and checks y against the host's.
void run_saxpy(CUfunction f) {
  const swcu::test::Api& cu = api();
  constexpr int n = 100;
  std::vector<float> x(n);
  std::vector<float> y(n);
  for (int i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
    y[static_cast<std::size_t>(i)] = static_cast<float>(n - i);
  }
  CUdeviceptr dx = 0;
  CUdeviceptr dy = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dx, n * sizeof(float)));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dy, n * sizeof(float)));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(dx, x.data(), n * sizeof(float)));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(dy, y.data(), n * sizeof(float)));
  float a = 3.0f;
  int count = n;
  void* params[] = {&a, &dx, &dy, &count};
  SWCU_TEST_REQUIRE_SUCCESS(
      mod().cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  std::vector<float> out(n);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(out.data(), dy, n * sizeof(float)));
  for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == a * x[i] + y[i]);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dx));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dy));
}

// sw_kernels.cu as a fatbin that holds LTO-IR only (-gencode arch=compute_90,code=lto_90), in
// 8-byte words as a program's embedded fatbin is.
std::vector<unsigned long long> lto_fatbin() {
  const std::string bytes =
      swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels_lto.fatbin"));
  std::vector<unsigned long long> words((bytes.size() + 7) / 8);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

// The fatbin's first entry: its kind (u16 at 0) and architecture (u32 at 0x1c).
constexpr std::size_t kFirstEntry = 16;

// A container header: magic, versions, then the offsets of the options (u16 at 12), of their
// data (u32 at 16) and of the IR (u32 at 20), as NVRTC 13 writes them unless changed.
std::string ltoir_header(std::uint32_t ir_offset = 44, std::uint32_t data_offset = 40) {
  std::string h(24, '\0');
  std::memcpy(h.data(), &kLtoIrMagic, 4);
  const unsigned char versions[8] = {1, 0x41, 2, 0x62, 3, 2, 7, 0};
  std::memcpy(h.data() + 4, versions, sizeof versions);
  const std::uint16_t options = 24;
  const std::uint16_t level = 1;
  std::memcpy(h.data() + 12, &options, 2);
  std::memcpy(h.data() + 14, &level, 2);
  std::memcpy(h.data() + 16, &data_offset, 4);
  std::memcpy(h.data() + 20, &ir_offset, 4);
  return h;
}

}  // namespace

TEST_SUITE("images") {
  // CUDA driver API reference, cuModuleLoadData / cuLibraryLoadData: the image may be "a cubin or
  // PTX or fatbin"; NVIDIA's driver also JIT-links NVRTC's LTO-IR (NVVM IR from -dlto) given to
  // them (issue 15, measured on GPUs). The software driver turns it into PTX with nvJitLink.
  TEST_CASE_FIXTURE(ModuleTest, "NVRTC's LTO-IR loads through nvJitLink and runs") {
    const std::string ir = nvrtc_ltoir(kAddSeven);
    const TempFile file(ir);
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoad(&m, file.path.c_str()));
    run_add_seven(function(m, "add_seven"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryLoadFromFile(&lib, file.path.c_str(), nullptr, nullptr,
                                                          0, nullptr, nullptr, 0));
    CUkernel k = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernel(&k, lib, "add_seven"));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetFunction(&f, k));
    run_add_seven(f);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
  }

  // A fatbin's entries carry their sizes, so LTO-IR in one needs no length from the caller: in
  // memory, through every loader (and the wrapper nvcc puts in host objects), it is linked like
  // LTO-IR from a file when the fatbin has no SASS or PTX the device can use.
  TEST_CASE_FIXTURE(ModuleTest, "a fatbin holding only LTO-IR loads from memory and runs") {
    const std::vector<unsigned long long> fatbin = lto_fatbin();
    std::uint16_t kind = 0;
    std::memcpy(&kind, reinterpret_cast<const char*>(fatbin.data()) + kFirstEntry, 2);
    REQUIRE(kind == 8);  // an LTO-IR entry

    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, fatbin.data()));
    run_saxpy(function(m, "saxpy"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    char info[256] = {};
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {info, reinterpret_cast<void*>(sizeof info)};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadDataEx(&m, fatbin.data(), 2, options, values));
    run_saxpy(function(m, "saxpy"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    const struct {
      int magic;
      int version;
      const unsigned long long* data;
      void* filename_or_fatbins;
    } wrapper{0x466243B1, 1, fatbin.data(), nullptr};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadFatBinary(&m, &wrapper));
    run_saxpy(function(m, "saxpy"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));

    CUlibrary lib = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadData(&lib, fatbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernel(&k, lib, "saxpy"));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuKernelGetFunction(&f, k));
    run_saxpy(f);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
  }

  // cuda.h, CUDA_ERROR_NO_BINARY_FOR_GPU: "no kernel image is available that is suitable for the
  // device". LTO-IR for a newer architecture (lto_100) cannot become code for sm_90.
  TEST_CASE_FIXTURE(ModuleTest, "a fatbin with LTO-IR only for a newer device has no binary") {
    std::vector<unsigned long long> fatbin = lto_fatbin();
    const std::uint32_t arch = 100;
    std::memcpy(reinterpret_cast<char*>(fatbin.data()) + kFirstEntry + 0x1c, &arch, 4);
    const std::string error = load_error(fatbin.data(), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK_NE(error.find("LTO-IR for lto_100"), std::string::npos);
  }

  // Raw LTO-IR in memory: NVIDIA's driver links it (issue 15), but its container records no
  // length (NVRTC's output for programs of any size starts with the same 40 bytes) and the IR is
  // opaque, so the software driver cannot tell where it ends; it says so, naming what works.
  TEST_CASE_FIXTURE(ModuleTest,
                    "NVRTC's LTO-IR in memory is refused: its container has no length") {
    const std::string ir = nvrtc_ltoir(kAddSeven);
    const std::string error = load_error(ir.data(), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_NE(error.find("its container records no length"), std::string::npos);
    CHECK_NE(error.find("in a fatbin"), std::string::npos);
    CUlibrary lib = nullptr;
    SWCU_TEST_CHECK_RESULT(
        mod().cuLibraryLoadData(&lib, ir.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        CUDA_ERROR_NOT_SUPPORTED);
    CHECK(lib == nullptr);
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 0);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
  }

  // cuda.h, CUDA_ERROR_INVALID_IMAGE: "the device kernel image is invalid". The container's
  // header is checked before anything else reads the image: against the file's size, and for
  // order and a sane extent in memory. None of these reads past what the header claims.
  TEST_CASE_FIXTURE(ModuleTest, "LTO-IR with a cut short or inconsistent header is invalid") {
    const TempFile short_file(ltoir_header().substr(0, 20));
    CHECK_NE(file_error(short_file.path, CUDA_ERROR_INVALID_IMAGE)
                 .find("a 20-byte image is shorter than the 24-byte container header"),
             std::string::npos);
    CUmodule m = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoad(&m, short_file.path.c_str()),
                           CUDA_ERROR_INVALID_IMAGE);

    const TempFile header_only(ltoir_header() + std::string(20, 'x'));  // 44 bytes, IR at 44
    CHECK_NE(file_error(header_only.path, CUDA_ERROR_INVALID_IMAGE)
                 .find("its IR starts at byte 44 of a 44-byte image"),
             std::string::npos);

    std::string out_of_order = ltoir_header(36, 40) + std::string(64, '\0');
    CHECK_NE(load_error(out_of_order.data(), CUDA_ERROR_INVALID_IMAGE).find("not in order"),
             std::string::npos);
    const TempFile out_of_order_file(out_of_order);
    CHECK_NE(file_error(out_of_order_file.path, CUDA_ERROR_INVALID_IMAGE).find("not in order"),
             std::string::npos);

    // An IR offset near 4 GiB in memory: refused from the header alone.
    std::string far = ltoir_header(0xFFFFFFF0u, 40) + std::string(64, '\0');
    CHECK_NE(load_error(far.data(), CUDA_ERROR_INVALID_IMAGE).find("past the 65536 bytes"),
             std::string::npos);
    CUlibrary lib = nullptr;
    SWCU_TEST_CHECK_RESULT(
        mod().cuLibraryLoadData(&lib, far.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        CUDA_ERROR_INVALID_IMAGE);
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 0);
  }

  // A sound header over IR cut short (the first half of NVRTC's output): nvJitLink refuses it,
  // and the load is an invalid image with nvJitLink's reason in the error log.
  TEST_CASE_FIXTURE(ModuleTest, "truncated LTO-IR from a file is an invalid image") {
    const std::string ir = nvrtc_ltoir(kAddSeven);
    const TempFile half(ir.substr(0, ir.size() / 2));
    CHECK_NE(file_error(half.path, CUDA_ERROR_INVALID_IMAGE).find("nvJitLink"), std::string::npos);
    CUmodule m = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoad(&m, half.path.c_str()), CUDA_ERROR_INVALID_IMAGE);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
  }
}

TEST_SUITE("env") {
  TEST_CASE_FIXTURE(ModuleTest, "images: without nvJitLink LTO-IR is not supported") {
    const TempFile file(nvrtc_ltoir(kAddSeven));
    CUmodule m = nullptr;
    SWCU_TEST_CHECK_RESULT(mod().cuModuleLoad(&m, file.path.c_str()), CUDA_ERROR_NOT_SUPPORTED);
    CHECK(m == nullptr);
    CHECK(ctl.live_handles(SWCU_MODULE) == 0);
    CHECK_NE(file_error(file.path, CUDA_ERROR_NOT_SUPPORTED).find("LTO-IR needs nvJitLink"),
             std::string::npos);
    const std::vector<unsigned long long> fatbin = lto_fatbin();
    CHECK_NE(load_error(fatbin.data(), CUDA_ERROR_NOT_SUPPORTED).find("LTO-IR needs nvJitLink"),
             std::string::npos);
    CHECK(ctl.live_handles(SWCU_LIBRARY) == 0);
  }
}
