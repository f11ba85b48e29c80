// Support for the kernel conformance suite: the PTX that nvcc built from conformance/*.cu,
// device buffers, launches, and element-by-element comparison with host references.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "module_support.hpp"

namespace conf {

/// A file nvcc built from conformance/<stem>.cu, e.g. "reduce.ptx".
inline std::string built_file(const std::string& name) {
  return std::string(SWDRIVER_CONFORMANCE_DIR) + "/" + name;
}

struct Dim {
  unsigned x = 1, y = 1, z = 1;
};

/// A module test that tracks what it loads and allocates, and releases it at the end.
struct Conformance : swcu::test::ModuleTest {
  Conformance() = default;
  ~Conformance() {
    for (CUdeviceptr p : buffers_) static_cast<void>(cu.cuMemFree_v2(p));
    for (CUmodule m : modules_) static_cast<void>(swcu::test::mod().cuModuleUnload(m));
  }
  Conformance(const Conformance&) = delete;
  Conformance& operator=(const Conformance&) = delete;

  /// Loads an image (PTX text or fatbin bytes); unloaded at the end.
  CUmodule load_image(const std::string& image) {
    CUmodule m = load(image);
    modules_.push_back(m);
    return m;
  }
  /// Loads conformance/<stem>.ptx.
  CUmodule load_ptx(const std::string& stem) {
    return load_image(swcu::test::read_bytes(built_file(stem + ".ptx")));
  }
  void unload(CUmodule m) {
    std::erase(modules_, m);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&p, bytes == 0 ? 1 : bytes));
    buffers_.push_back(p);
    return p;
  }
  template <class T>
  CUdeviceptr upload(const std::vector<T>& values) {
    const CUdeviceptr p = alloc(values.size() * sizeof(T));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(p, values.data(), values.size() * sizeof(T)));
    return p;
  }
  /// A buffer of `count` elements filled with `fill`.
  template <class T>
  CUdeviceptr zeros(std::size_t count, T fill = T{}) {
    return upload(std::vector<T>(count, fill));
  }
  template <class T>
  std::vector<T> download(CUdeviceptr p, std::size_t count) {
    std::vector<T> out(count);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(out.data(), p, count * sizeof(T)));
    return out;
  }

  /// Launches on the legacy default stream; returns the launch's code.
  template <class... A>
  CUresult launch(CUfunction f, Dim grid, Dim block, unsigned shared, A... args) {
    void* params[] = {static_cast<void*>(&args)..., nullptr};
    return swcu::test::mod().cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                            shared, nullptr, params, nullptr);
  }
  /// Launches and synchronizes the context; both must succeed.
  template <class... A>
  void run(CUfunction f, Dim grid, Dim block, unsigned shared, A... args) {
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, grid, block, shared, args...));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  }

  /// Forgets the tracked handles (after the context was destroyed by the test).
  void forget() {
    buffers_.clear();
    modules_.clear();
  }

 private:
  std::vector<CUdeviceptr> buffers_;
  std::vector<CUmodule> modules_;
};

/// Compares every element; reports the count of mismatches and the first few.
template <class T, class Eq>
void compare(const std::vector<T>& got, const std::vector<T>& want, const std::string& what,
             Eq eq) {
  REQUIRE_EQ(got.size(), want.size());
  std::size_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (eq(got[i], want[i], i)) continue;
    if (bad < 5) {
      first << " [" << i << "] got " << +got[i] << " want " << +want[i] << ";";
    }
    ++bad;
  }
  CHECK_MESSAGE(bad == 0, what, ": ", bad, " of ", got.size(), " differ:", first.str());
}

template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  compare(got, want, what, [](const T& a, const T& b, std::size_t) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) && std::isnan(b)) return true;
      return std::memcmp(&a, &b, sizeof(T)) == 0;  // -0.0 differs from 0.0
    } else {
      return a == b;
    }
  });
}

/// A key that orders floating-point bit patterns like their values (+0 and -0 adjacent).
template <class U>
U ordered_key(U bits) {
  constexpr U sign = U{1} << (sizeof(U) * 8 - 1);
  return (bits & sign) != 0 ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
}

/// Distance in units in the last place (0 for two NaNs, the maximum for one NaN).
inline std::uint64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  if (a == b) return 0;
  const std::uint32_t ka = ordered_key(std::bit_cast<std::uint32_t>(a));
  const std::uint32_t kb = ordered_key(std::bit_cast<std::uint32_t>(b));
  return ka > kb ? ka - kb : kb - ka;
}
inline std::uint64_t ulp_distance(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  if (a == b) return 0;
  const std::uint64_t ka = ordered_key(std::bit_cast<std::uint64_t>(a));
  const std::uint64_t kb = ordered_key(std::bit_cast<std::uint64_t>(b));
  return ka > kb ? ka - kb : kb - ka;
}

using FdCapture = swcu::test::FdCapture;

/// A deterministic generator (xorshift64*) for test inputs.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ull + 1) {}
  std::uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545f4914f6cdd1dull;
  }
  /// Uniform in [lo, hi].
  int range(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

 private:
  std::uint64_t s_;
};

}  // namespace conf
