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

/// The weight of fraction f in 1.8 fixed point.
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

/// A mipmapped 2D texture: a Sampler per level (the same modes and filter) and the mipmap
/// settings of CUDA_TEXTURE_DESC.
struct MipSampler {
  std::vector<Sampler> levels;
  bool mip_linear = false;
  float bias = 0, min_lod = 0, max_lod = 0;
  unsigned max_anisotropy = 1;
};

/// The level of detail after mipmapLevelBias, minMipmapLevelClamp and maxMipmapLevelClamp, and
/// within the levels.
inline float clamp_lod(const MipSampler& m, float lod) {
  lod += m.bias;
  lod = std::max(lod, m.min_lod);
  lod = std::min(lod, m.max_lod);
  return std::clamp(lod, 0.0f, static_cast<float>(m.levels.size() - 1));
}

/// tex2DLod(u, v, lod): the nearest level (point mipmap filter: OpenGL's rule, 0 up to 0.5, then
/// ceil(lod + 0.5) - 1), or the two levels around lod blended by the fraction in 1.8 fixed point.
inline Float4 sample_lod(const MipSampler& m, float u, float v, float lod) {
  const float l = clamp_lod(m, lod);
  const int last = static_cast<int>(m.levels.size()) - 1;
  if (!m.mip_linear) {
    const int level = l <= 0.5f ? 0 : static_cast<int>(std::ceil(l + 0.5f)) - 1;
    return sample(m.levels[static_cast<std::size_t>(std::min(level, last))], u, v);
  }
  const int lo = static_cast<int>(std::floor(l));
  const float w = weight(l - std::floor(l));
  if (lo >= last) return sample(m.levels[static_cast<std::size_t>(last)], u, v);
  const Float4 a = sample(m.levels[static_cast<std::size_t>(lo)], u, v);
  if (w == 0.0f) return a;
  const Float4 b = sample(m.levels[static_cast<std::size_t>(lo) + 1], u, v);
  if (w == 1.0f) return b;
  Float4 out{};
  for (int c = 0; c < 4; ++c) out[c] = (1.0f - w) * a[c] + w * b[c];
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
