// Support for the PTX instruction tests: hand-written PTX modules run by the software driver's
// interpreter. A kernel named "k" takes (.u64 out, .u64 in); the harness fills `in`, launches,
// and returns `out`. Expected values come from the PTX ISA 9.0 definitions, never from a run.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "module_support.hpp"

namespace ptxt {

/// A kernel "k(.param .u64 out, .param .u64 in)" whose body starts with %out and %in holding
/// the global addresses of the buffers, %tx = %tid.x, and %rd_t = 8 * %tid.x (a .b64).
/// `prelude` goes before the entry (globals, .func definitions, .extern declarations).
[[nodiscard]] std::string kernel(const std::string& body, const std::string& prelude = "");

/// Bit patterns of floating-point values.
[[nodiscard]] std::uint32_t f32(float v);
[[nodiscard]] std::uint64_t f64(double v);
[[nodiscard]] float as_f32(std::uint32_t bits);
[[nodiscard]] double as_f64(std::uint64_t bits);

/// Hexadecimal text of a value ("0x1f").
[[nodiscard]] std::string hex(std::uint64_t v);

/// One table-driven check: `code` computes a value into %d16/%d32/%d64 (width 16/32/64) or
/// into the predicate %p (width 1). The kernel declares, once, %a16 %b16 %c16 %d16 %e16, the
/// same for 32 and 64 bits, and the predicates %p %q %r; each check sets what it reads.
struct Check {
  std::string code;
  int width;
  std::uint64_t expect;
  std::string label;  // empty: the code is the label
  /// The result must be a NaN of the width (f16, f32, f64), whatever its payload; a result
  /// other than the canonical NaN (0x7fff, 0x7fffffff, 0x7fffffffffffffff) is only a warning.
  bool any_nan = false;
};

/// `c` with any_nan set.
[[nodiscard]] Check nan(Check c);

/// "mov.b<w> %a<w>, A; ...; <insn> %d<w>, %a<w>, ...;" for one, two or three operands of width
/// `w` and a result of width `dw` (0: same as w; 1: the predicate %p).
[[nodiscard]] Check un(const std::string& insn, int w, std::uint64_t a, std::uint64_t expect,
                       int dw = 0);
[[nodiscard]] Check bin(const std::string& insn, int w, std::uint64_t a, std::uint64_t b,
                        std::uint64_t expect, int dw = 0);
[[nodiscard]] Check tern(const std::string& insn, int w, std::uint64_t a, std::uint64_t b,
                         std::uint64_t c, std::uint64_t expect, int dw = 0);

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A test with a context; runs PTX kernels.
struct PtxTest : swcu::test::ModuleTest {
  /// Loads `module`, launches its kernel `name` with a zero-filled (well, 0xAB-filled) output
  /// buffer of `out_bytes` and an input buffer holding `in`; requires that everything succeeds,
  /// and returns the output bytes.
  std::vector<unsigned char> run(const std::string& module, std::size_t out_bytes,
                                 const std::vector<unsigned char>& in = {}, Dim3 grid = {},
                                 Dim3 block = {}, unsigned shared = 0, const char* name = "k");

  template <class T, class In = unsigned char>
  std::vector<T> run_as(const std::string& module, std::size_t count,
                        const std::vector<In>& in = {}, Dim3 grid = {}, Dim3 block = {},
                        unsigned shared = 0) {
    std::vector<unsigned char> bytes(in.size() * sizeof(In));
    if (!in.empty()) std::memcpy(bytes.data(), in.data(), bytes.size());
    const std::vector<unsigned char> raw =
        run(module, count * sizeof(T), bytes, grid, block, shared);
    std::vector<T> out(count);
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
  }

  /// Like run, but with one buffer as both `out` and `in`: copies `buffer` to the device, runs,
  /// and copies it back into `buffer`.
  void run_inout(const std::string& module, std::vector<unsigned char>& buffer, Dim3 grid = {},
                 Dim3 block = {}, unsigned shared = 0);
  template <class T>
  void run_inout_as(const std::string& module, std::vector<T>& values, Dim3 grid = {},
                    Dim3 block = {}, unsigned shared = 0) {
    std::vector<unsigned char> bytes(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    run_inout(module, bytes, grid, block, shared);
    std::memcpy(values.data(), bytes.data(), bytes.size());
  }

  /// Runs the checks in one kernel and CHECKs each result (masked to its width).
  void check_all(const std::vector<Check>& checks);

  /// Loads a module, launches "k" with the given buffers, and returns what cuCtxSynchronize
  /// returns (the launch itself must succeed). The module stays loaded (see `loaded`).
  CUresult launch_status(const std::string& module, CUdeviceptr out, CUdeviceptr in, Dim3 grid = {},
                         Dim3 block = {}, unsigned shared = 0);
  /// Loads a module with cuModuleLoadDataEx; on failure the test fails with the JIT error log.
  CUmodule load_logged(const std::string& module);
  /// Allocates device memory (freed by the test or by destroying the context).
  CUdeviceptr alloc(std::size_t bytes);

  CUmodule loaded = nullptr;
};

using StdoutCapture = swcu::test::StdoutCapture;

/// The 1-based line of the first occurrence of `needle` in `text` (REQUIREs that there is one).
int line_of(const std::string& text, const std::string& needle);

/// Loads `module` with cuModuleLoadDataEx, CHECKs that it is refused with CUDA_ERROR_INVALID_PTX
/// and no module, and returns the JIT error log.
std::string refused_ptx_log(const std::string& module);

}  // namespace ptxt
