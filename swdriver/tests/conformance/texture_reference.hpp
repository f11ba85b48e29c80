// A host reference of texture fetching as the CUDA C++ Programming Guide's "Texture Fetching"
// appendix documents it, for the texture conformance tests: address modes (wrap and mirror on
// normalized coordinates, clamp, border), point filtering (T[floor(x)]) and linear filtering
// (x - 0.5, weights in 9-bit fixed point with 8 fractional bits, so the result matches a GPU's
// bit for bit), element conversions (normalized integers, sRGB, half), missing channels as
// (0, 0, 0, 1).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

namespace conf::texref {

using Float4 = std::array<float, 4>;

/// The float value of IEEE half bits.
inline float half_to_float(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  float v = 0;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(man), -24);
  } else if (exp == 31) {
    v = man != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

/// sRGB to linear (the sRGB transfer function's inverse).
inline float srgb(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

/// A 2D texture's texels (already converted to floats) and its sampler.
struct Sampler {
  int width = 1, height = 1;
  std::function<Float4(int x, int y)> texel;
  int mode[2] = {1, 1};  ///< CUaddress_mode
  bool linear = false;
  bool normalized = false;
  Float4 border{};
};

/// A texel index under address mode `mode` for extent n; false outside under border.
inline bool wrap_index(long& i, long n, int mode) {
  switch (mode) {
    case 0: i = ((i % n) + n) % n; return true;
    case 2: {
      const long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      i = m < n ? m : 2 * n - 1 - m;
      return true;
    }
    case 3: return i >= 0 && i < n;
    default: i = std::clamp(i, 0L, n - 1); return true;
  }
}

/// The texel-space coordinate of c: normalized coordinates wrapped (mode 0) or mirrored (2),
/// then scaled by n.
inline double texel_space(float c, long n, int mode, bool normalized) {
  double u = c;
  if (!normalized) return u;
  if (mode == 0) u -= std::floor(u);
  if (mode == 2) {
    const double f = std::floor(u);
    u = static_cast<long>(f) % 2 == 0 ? u - f : 1.0 - (u - f);
  }
  return u * static_cast<double>(n);
}

/// The texel at (i, j) or the border color.
inline Float4 at(const Sampler& s, long i, long j) {
  const int m0 = s.normalized ? s.mode[0] : (s.mode[0] == 3 ? 3 : 1);
  const int m1 = s.normalized ? s.mode[1] : (s.mode[1] == 3 ? 3 : 1);
  if (!wrap_index(i, s.width, m0) || !wrap_index(j, s.height, m1)) return s.border;
  return s.texel(static_cast<int>(i), static_cast<int>(j));
}

/// The weight of fraction f in 1.8 fixed point.
inline float weight(double f) { return static_cast<float>(std::nearbyint(f * 256.0) / 256.0); }

/// tex2D(u, v).
inline Float4 sample(const Sampler& s, float u, float v) {
  const double x = texel_space(u, s.width, s.mode[0], s.normalized);
  const double y = texel_space(v, s.height, s.mode[1], s.normalized);
  if (!s.linear) {
    return at(s, static_cast<long>(std::floor(x)), static_cast<long>(std::floor(y)));
  }
  const double xb = x - 0.5, yb = y - 0.5;
  const long i = static_cast<long>(std::floor(xb)), j = static_cast<long>(std::floor(yb));
  const float a = weight(xb - std::floor(xb)), b = weight(yb - std::floor(yb));
  const Float4 t00 = at(s, i, j), t10 = at(s, i + 1, j), t01 = at(s, i, j + 1),
               t11 = at(s, i + 1, j + 1);
  Float4 out{};
  for (int c = 0; c < 4; ++c) {
    float acc = 0;
    acc += (1 - a) * (1 - b) * t00[c];
    acc += a * (1 - b) * t10[c];
    acc += (1 - a) * b * t01[c];
    acc += a * b * t11[c];
    out[c] = acc;
  }
  return out;
}

/// tex2Dgather(u, v, comp): component comp of T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j] around
/// (x - 0.5, y - 0.5).
inline Float4 gather(const Sampler& s, float u, float v, int comp) {
  const double x = texel_space(u, s.width, s.mode[0], s.normalized) - 0.5;
  const double y = texel_space(v, s.height, s.mode[1], s.normalized) - 0.5;
  const long i = static_cast<long>(std::floor(x)), j = static_cast<long>(std::floor(y));
  return {at(s, i, j + 1)[comp], at(s, i + 1, j + 1)[comp], at(s, i + 1, j)[comp],
          at(s, i, j)[comp]};
}

}  // namespace conf::texref
