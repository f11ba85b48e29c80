// A host reference of texture fetching as the CUDA C++ Programming Guide's "Texture Fetching"
// appendix documents it, for the texture conformance tests: address modes (wrap and mirror on
// normalized coordinates, clamp, border), point filtering (T[floor(x)]) and linear filtering
// (x - 0.5 with 8-bit fractions), element conversions (normalized integers, sRGB, half), missing
// channels as (0, 0, 0, 1). Where the documents leave the arithmetic open, the rules are what an
// H200 returned (2026-11-27): the bilinear weights, one rounding of the exact sum (ties away from
// zero), the mipmap level choice and the level fraction. Sums are taken in long double, exact for
// the tests' texel values.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

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

/// A cube map's face for direction (x, y, z), the Programming Guide's "Cubemap Textures" table:
/// the largest component's axis and sign (ties to z, then y: an H200 samples +Y where
/// |x| = |y| is the largest), the face coordinates (s, t) and the divisor m.
struct CubeSite {
  int face = 0;
  float s = 0, t = 0, m = 1;
};
inline CubeSite cube_site(float x, float y, float z) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  if (az >= ax && az >= ay) return {z >= 0 ? 4 : 5, z >= 0 ? x : -x, -y, az};
  if (ay >= ax) return {y >= 0 ? 2 : 3, x, y >= 0 ? z : -z, ay};
  return {x >= 0 ? 0 : 1, x >= 0 ? -z : z, -y, ax};
}

/// x rounded to float: to nearest, ties away from zero (how an H200 rounds a filtered sum).
inline float round_away(long double x) {
  const float nearest = static_cast<float>(x);  // ties to even
  if (static_cast<long double>(nearest) == x) return nearest;
  const bool above = x > static_cast<long double>(nearest);
  const float other = std::nextafter(nearest, above ? INFINITY : -INFINITY);
  const long double middle =
      (static_cast<long double>(nearest) + static_cast<long double>(other)) / 2;
  if (x != middle) return nearest;
  return std::fabs(other) > std::fabs(nearest) ? other : nearest;
}

/// The 2 x 2 texels of linear filtering at texel-space (x, y) and their weights in 1/256 steps:
/// x - 1/2 and y - 1/2 rounded to 1/256 of a texel (ties up) give the texels (i, j) below and the
/// fractions a, b; then w11 = ab / 256 rounded (ties up), w10 = a - w11, w01 = b - w11 and
/// w00 = 256 - a - b + w11.
struct Bilinear {
  long i = 0, j = 0;
  long w00 = 0, w10 = 0, w01 = 0, w11 = 0;
};
inline Bilinear bilinear(double x, double y) {
  const auto fixed = [](double c, long& index) {
    const auto steps = static_cast<long>(std::floor((c - 0.5) * 256.0 + 0.5));
    index = static_cast<long>(std::floor(static_cast<double>(steps) / 256.0));
    return steps - index * 256;
  };
  Bilinear out;
  const long a = fixed(x, out.i), b = fixed(y, out.j);
  out.w11 = static_cast<long>(std::floor(static_cast<double>(a * b) / 256.0 + 0.5));
  out.w10 = a - out.w11;
  out.w01 = b - out.w11;
  out.w00 = 256 - a - b + out.w11;
  return out;
}

/// 256 x tex2D(u, v), not rounded: the weighted sum of the texels (point filtering: 256 T).
inline std::array<long double, 4> weighted(const Sampler& s, float u, float v) {
  const double x = texel_space(u, s.width, s.mode[0], s.normalized);
  const double y = texel_space(v, s.height, s.mode[1], s.normalized);
  std::array<long double, 4> out{};
  if (!s.linear) {
    const Float4 t = at(s, static_cast<long>(std::floor(x)), static_cast<long>(std::floor(y)));
    for (int c = 0; c < 4; ++c) out[c] = 256.0L * t[c];
    return out;
  }
  const Bilinear b = bilinear(x, y);
  const Float4 t00 = at(s, b.i, b.j), t10 = at(s, b.i + 1, b.j), t01 = at(s, b.i, b.j + 1),
               t11 = at(s, b.i + 1, b.j + 1);
  for (int c = 0; c < 4; ++c) {
    out[c] = static_cast<long double>(b.w00) * t00[c] + static_cast<long double>(b.w10) * t10[c] +
             static_cast<long double>(b.w01) * t01[c] + static_cast<long double>(b.w11) * t11[c];
  }
  return out;
}

/// tex2D(u, v).
inline Float4 sample(const Sampler& s, float u, float v) {
  const std::array<long double, 4> w = weighted(s, u, v);
  Float4 out{};
  for (int c = 0; c < 4; ++c) out[c] = round_away(w[c] / 256);
  return out;
}

/// tex2Dgather(u, v, comp): component comp of T[i, j+1], T[i+1, j+1], T[i+1, j], T[i, j], the
/// texels linear filtering reads.
inline Float4 gather(const Sampler& s, float u, float v, int comp) {
  const Bilinear b = bilinear(texel_space(u, s.width, s.mode[0], s.normalized),
                              texel_space(v, s.height, s.mode[1], s.normalized));
  return {at(s, b.i, b.j + 1)[comp], at(s, b.i + 1, b.j + 1)[comp], at(s, b.i + 1, b.j)[comp],
          at(s, b.i, b.j)[comp]};
}

/// A mipmapped 2D texture: a Sampler per level (the same modes and filter) and the mipmap
/// settings of CUDA_TEXTURE_DESC.
struct MipSampler {
  std::vector<Sampler> levels;
  bool mip_linear = false;
  float bias = 0, min_lod = 0, max_lod = 0;
  unsigned max_anisotropy = 1;
};

/// The level of detail after mipmapLevelBias (counted in 1/512 steps, cut toward zero),
/// minMipmapLevelClamp and maxMipmapLevelClamp, and within the levels.
inline long double clamp_lod(const MipSampler& m, float lod) {
  long double l = static_cast<long double>(lod) + std::trunc(m.bias * 512.0L) / 512;
  if (!(l >= m.min_lod)) l = m.min_lod;
  l = std::min<long double>(l, m.max_lod);
  return std::clamp<long double>(l, 0, static_cast<long double>(m.levels.size() - 1));
}

/// tex2DLod(u, v, lod): level floor(lod + 1/2) (point mipmap filter), or, with lod rounded to
/// 1/256 (ties up) as n + f / 256, (256 - f) x level n plus f x level n + 1, rounded once.
inline Float4 sample_lod(const MipSampler& m, float u, float v, float lod) {
  const long double l = clamp_lod(m, lod);
  const long last = static_cast<long>(m.levels.size()) - 1;
  if (!m.mip_linear) {
    const long level = std::min(static_cast<long>(std::floor(l + 0.5L)), last);
    return sample(m.levels[static_cast<std::size_t>(level)], u, v);
  }
  const auto steps = static_cast<long>(std::floor(l * 256 + 0.5L));
  const long lo = steps / 256, f = steps % 256;
  if (lo >= last || f == 0) {
    return sample(m.levels[static_cast<std::size_t>(std::min(lo, last))], u, v);
  }
  const auto a = weighted(m.levels[static_cast<std::size_t>(lo)], u, v);
  const auto b = weighted(m.levels[static_cast<std::size_t>(lo) + 1], u, v);
  Float4 out{};
  for (int c = 0; c < 4; ++c) {
    out[c] = round_away(
        (static_cast<long double>(256 - f) * a[c] + static_cast<long double>(f) * b[c]) / 65536);
  }
  return out;
}

/// tex2DGrad(u, v, dPdx, dPdy): with Px, Py the gradients' lengths in level-0 texels, the level
/// of detail log2(max(Px, Py)); with maxAnisotropy > 1 EXT_texture_filter_anisotropic's
/// N = min(ceil(Pmax / Pmin), maxAnisotropy) probes along the longer gradient at
/// (i / (N + 1) - 1/2) of it, each at level of detail log2(Pmax / N), averaged.
inline Float4 sample_grad(const MipSampler& m, float u, float v, const float* dx, const float* dy) {
  const double w = m.levels[0].width, h = m.levels[0].height;
  const double xu = dx[0] * w, xv = dx[1] * h, yu = dy[0] * w, yv = dy[1] * h;
  const double px = std::sqrt(xu * xu + xv * xv), py = std::sqrt(yu * yu + yv * yv);
  const double pmax = std::max(px, py), pmin = std::min(px, py);
  unsigned n = 1;
  if (m.max_anisotropy > 1 && pmax > 0) {
    const double ratio = pmin > 0 ? std::ceil(pmax / pmin) : m.max_anisotropy;
    n = static_cast<unsigned>(std::min<double>(ratio, m.max_anisotropy));
  }
  const float lod = static_cast<float>(std::log2(pmax / n));
  if (n == 1) return sample_lod(m, u, v, lod);
  const float* major = px >= py ? dx : dy;
  Float4 sum{};
  for (unsigned i = 1; i <= n; ++i) {
    const float k = static_cast<float>(i) / static_cast<float>(n + 1) - 0.5f;
    const Float4 s = sample_lod(m, u + k * major[0], v + k * major[1], lod);
    for (int c = 0; c < 4; ++c) sum[c] += s[c];
  }
  for (float& c : sum) c /= static_cast<float>(n);
  return sum;
}

}  // namespace conf::texref
