#include "ptx_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace ptxt {

std::string kernel(const std::string& body, const std::string& prelude) {
  return swcu::test::ptx(prelude +
                         "\n.visible .entry k(.param .u64 k_out, .param .u64 k_in)\n{\n"
                         "  .reg .b64 %out, %in, %rd_t;\n"
                         "  .reg .b32 %tx;\n"
                         "  ld.param.u64 %out, [k_out];\n"
                         "  ld.param.u64 %in, [k_in];\n"
                         "  cvta.to.global.u64 %out, %out;\n"
                         "  cvta.to.global.u64 %in, %in;\n"
                         "  mov.u32 %tx, %tid.x;\n"
                         "  mul.wide.u32 %rd_t, %tx, 8;\n" +
                         body + "\n  ret;\n}\n");
}

std::uint32_t f32(float v) {
  std::uint32_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
std::uint64_t f64(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
float as_f32(std::uint32_t bits) {
  float v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
double as_f64(std::uint64_t bits) {
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

namespace {

std::string reg(char name, int w) { return std::string("%") + name + std::to_string(w); }

std::string mov(char name, int w, std::uint64_t v) {
  return "mov.b" + std::to_string(w) + " " + reg(name, w) + ", " + hex(v) + "; ";
}

std::string dest(int w, int dw) {
  if (dw == 0) dw = w;
  return dw == 1 ? std::string("%p") : reg('d', dw);
}

}  // namespace

Check un(const std::string& insn, int w, std::uint64_t a, std::uint64_t expect, int dw) {
  return {mov('a', w, a) + insn + " " + dest(w, dw) + ", " + reg('a', w) + ";", dw ? dw : w, expect,
          insn + " " + hex(a)};
}

Check bin(const std::string& insn, int w, std::uint64_t a, std::uint64_t b, std::uint64_t expect,
          int dw) {
  return {mov('a', w, a) + mov('b', w, b) + insn + " " + dest(w, dw) + ", " + reg('a', w) + ", " +
              reg('b', w) + ";",
          dw ? dw : w, expect, insn + " " + hex(a) + ", " + hex(b)};
}

Check tern(const std::string& insn, int w, std::uint64_t a, std::uint64_t b, std::uint64_t c,
           std::uint64_t expect, int dw) {
  return {mov('a', w, a) + mov('b', w, b) + mov('c', w, c) + insn + " " + dest(w, dw) + ", " +
              reg('a', w) + ", " + reg('b', w) + ", " + reg('c', w) + ";",
          dw ? dw : w, expect, insn + " " + hex(a) + ", " + hex(b) + ", " + hex(c)};
}

Check nan(Check c) {
  c.any_nan = true;
  return c;
}

CUmodule PtxTest::load_logged(const std::string& module) {
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(std::uintptr_t{sizeof log})};
  CUmodule m = nullptr;
  const CUresult r = swcu::test::mod().cuModuleLoadDataEx(&m, module.c_str(), 2, options, values);
  INFO("JIT error log: ", log);
  SWCU_TEST_REQUIRE_SUCCESS(r);
  return m;
}

int line_of(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

std::string refused_ptx_log(const std::string& module) {
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(std::uintptr_t{sizeof log})};
  CUmodule m = nullptr;
  SWCU_TEST_CHECK_RESULT(
      swcu::test::mod().cuModuleLoadDataEx(&m, module.c_str(), 2, options, values),
      CUDA_ERROR_INVALID_PTX);
  CHECK(m == nullptr);
  return log;
}

CUdeviceptr PtxTest::alloc(std::size_t bytes) {
  CUdeviceptr p = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&p, bytes == 0 ? 1 : bytes));
  return p;
}

std::vector<unsigned char> PtxTest::run(const std::string& module, std::size_t out_bytes,
                                        const std::vector<unsigned char>& in, Dim3 grid, Dim3 block,
                                        unsigned shared, const char* name) {
  CUmodule m = load_logged(module);
  const CUfunction f = function(m, name);
  const CUdeviceptr out = alloc(out_bytes + 8);
  const CUdeviceptr input = alloc(in.size() + 8);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(out, 0xAB, out_bytes + 8));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(input, 0, in.size() + 8));
  if (!in.empty()) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(input, in.data(), in.size()));
  CUdeviceptr out_arg = out;
  CUdeviceptr in_arg = input;
  void* params[] = {&out_arg, &in_arg};
  swcu::test::StderrCapture capture;
  const CUresult launched = swcu::test::mod().cuLaunchKernel(
      f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, nullptr, params, nullptr);
  const std::string err = capture.finish();
  INFO("stderr: ", err);
  SWCU_TEST_REQUIRE_SUCCESS(launched);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  std::vector<unsigned char> result(out_bytes);
  if (out_bytes > 0) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(result.data(), out, out_bytes));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(out));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(input));
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  return result;
}

void PtxTest::run_inout(const std::string& module, std::vector<unsigned char>& buffer, Dim3 grid,
                        Dim3 block, unsigned shared) {
  CUmodule m = load_logged(module);
  const CUfunction f = function(m, "k");
  const CUdeviceptr p = alloc(buffer.size());
  if (!buffer.empty())
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(p, buffer.data(), buffer.size()));
  CUdeviceptr out_arg = p;
  CUdeviceptr in_arg = p;
  void* params[] = {&out_arg, &in_arg};
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(
      f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, nullptr, params, nullptr));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  if (!buffer.empty())
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(buffer.data(), p, buffer.size()));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
}

void PtxTest::check_all(const std::vector<Check>& checks) {
  std::string body =
      "  .reg .b16 %a16, %b16, %c16, %d16, %e16;\n"
      "  .reg .b32 %a32, %b32, %c32, %d32, %e32;\n"
      "  .reg .b64 %a64, %b64, %c64, %d64, %e64;\n"
      "  .reg .pred %p, %q, %r;\n";
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Check& c = checks[i];
    const std::string at = "[%out+" + std::to_string(8 * i) + "]";
    body += "  " + c.code + "\n";
    if (c.width == 1) {
      body += "  selp.u32 %d32, 1, 0, %p; st.global.b32 " + at + ", %d32;\n";
    } else {
      body += "  st.global.b" + std::to_string(c.width) + " " + at + ", %d" +
              std::to_string(c.width) + ";\n";
    }
  }
  const std::string module = kernel(body);
  const std::vector<std::uint64_t> got = run_as<std::uint64_t>(module, checks.size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Check& c = checks[i];
    const int bits = c.width == 1 ? 32 : c.width;
    const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    const std::uint64_t value = got[i] & mask;
    const std::string label = c.label.empty() ? c.code : c.label;
    if (c.any_nan) {
      const int mantissa = bits == 16 ? 10 : bits == 32 ? 23 : 52;
      const std::uint64_t exponent = (mask >> (mantissa + 1)) << mantissa;
      const std::uint64_t fraction = (std::uint64_t{1} << mantissa) - 1;
      CHECK_MESSAGE(((value & exponent) == exponent && (value & fraction) != 0), label, ": got ",
                    hex(value), ", expected a NaN");
      WARN_MESSAGE(value == (mask >> 1), label, ": got ", hex(value), ", not the canonical NaN ",
                   hex(mask >> 1));
      continue;
    }
    CHECK_MESSAGE(value == (c.expect & mask), label, ": got ", hex(value), ", expected ",
                  hex(c.expect & mask));
  }
}

CUresult PtxTest::launch_status(const std::string& module, CUdeviceptr out, CUdeviceptr in,
                                Dim3 grid, Dim3 block, unsigned shared) {
  loaded = load_logged(module);
  const CUfunction f = function(loaded, "k");
  CUdeviceptr out_arg = out;
  CUdeviceptr in_arg = in;
  void* params[] = {&out_arg, &in_arg};
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(
      f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, nullptr, params, nullptr));
  return cu.cuCtxSynchronize();
}

}  // namespace ptxt
