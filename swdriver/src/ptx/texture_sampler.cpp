// The texture sampler (texture_sampler.hpp), as the CUDA C++ Programming Guide's "Texture
// Fetching" appendix and the PTX ISA's tex and tld4 describe it, with the graphics APIs' rules
// where those leave something open:
//
// - Normalized coordinates are scaled by the size; wrap takes the fraction of a normalized
//   coordinate and mirror reflects it on odd periods (with unnormalized coordinates both act as
//   clamp); clamp clamps the texel index, border gives the border color outside [0, N).
// - Point filtering reads T[floor(x)]; linear filtering reads the two (four, eight) texels around
//   x - 0.5 with integer weights in 1/256 steps (footprint() has the rule) and sums them
//   exactly, rounded once (filter_sum.hpp). Only floating-point results are filtered.
// - 8- and 16-bit integer formats read as normalized floats ([0, 1], [-1, 1]) unless the object
//   reads them as integers; sRGB converts the first three channels of unsigned 8-bit ones to
//   linear. Missing channels read as (0, 0, 0, 1).
// - Cubemap coordinates pick a face by their largest component (face = 2 axis + sign) and
//   (s / m + 1) / 2, (t / m + 1) / 2 in it. Without CU_TRSF_SEAMLESS_CUBEMAP a face's texel
//   indices follow the address mode within the face (wrap, mirror, clamp, border); with it, a texel
//   one step outside the face is the texel of the adjacent face at that place on the cube, and the
//   texel outside both edges at a corner is the average of the three texels that meet there
//   (ARB_seamless_cube_map's recommended rule).
// - Level of detail (mipmapped textures): 0 without a mode, the operand for .level, log2 of the
//   longer gradient in level-0 texels for .grad (OpenGL's rho, the PTX ISA's "partials"); then
//   + mipmapLevelBias, clamped to [minMipmapLevelClamp, maxMipmapLevelClamp] and to the levels.
//   A point mipmap filter takes level floor(lod + 1/2); a linear one blends floor(lod) and the
//   next level by the fraction in 1/256 steps (sample_at()).
// - Where the documents leave the arithmetic open, an H200's results decided (2026-11-27): its
//   bilinear results, level choices, level fractions and non-seamless cube results are the ones
//   here bit for bit. Three things differ from it: the blend of two linearly filtered levels
//   (each level's weights round there in a way two observed samples did not settle; about
//   1/256 of the texels' spread), seamless cube edges (about 0.011 in 4 of 6 samples) and
//   anisotropic filtering (below).
// - Anisotropic filtering (maxAnisotropy > 1, .grad only) as EXT_texture_filter_anisotropic
//   describes it: with Px, Py the gradients' lengths in texels, N = min(ceil(Pmax / Pmin),
//   maxAnisotropy) probes at P + (i / (N + 1) - 1/2) dP_major (i = 1..N), each sampled at level of
//   detail log2(Pmax / N), averaged. NVIDIA's own algorithm is unpublished: a GPU differs.
#include "ptx/texture_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ptx/alu_internal.hpp"
#include "ptx/filter_sum.hpp"

namespace swcu::ptx {
namespace {

using detail::fdecode;
using detail::FKind;

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

// A texel index under address mode `mode` (CUaddress_mode) for an extent of n: false when it is
// outside under border mode.
bool wrap_index(std::int64_t& i, std::int64_t n, unsigned mode, bool normalized) {
  if (!normalized && (mode == 0 || mode == 2)) mode = 1;  // wrap, mirror: normalized only
  switch (mode) {
    case 0: i = ((i % n) + n) % n; return true;
    case 2: {
      std::int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
      i = m < n ? m : 2 * n - 1 - m;
      return true;
    }
    case 3: return i >= 0 && i < n;
    default: i = std::clamp<std::int64_t>(i, 0, n - 1); return true;
  }
}

// A coordinate in texel space: the normalized one scaled by n, after wrap or mirror.
double scaled(float c, std::int64_t n, unsigned mode, bool normalized) {
  double u = c;
  if (!normalized) return u;
  if (mode == 0) u = u - std::floor(u);
  if (mode == 2) {
    const double f = std::floor(u);
    u = (static_cast<std::int64_t>(f) % 2 == 0) ? u - f : 1.0 - (u - f);
  }
  return u * static_cast<double>(n);
}

// The channels of element (x, y, z) of level `lv` (z: the slice: depth, layer or face).
Texel fetch(const Texture& tx, const TexLevel& lv, std::int64_t x, std::int64_t y, std::int64_t z) {
  const unsigned cs = channel_size(tx.format);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(lv.address) +
                           static_cast<std::uint64_t>(z) * lv.slice +
                           static_cast<std::uint64_t>(y) * lv.pitch +
                           static_cast<std::uint64_t>(x) * cs * tx.channels;
  Texel out;
  for (unsigned c = 0; c < tx.channels; ++c) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, p + c * cs, cs);
    float f = 0;
    std::uint32_t u = bits;
    switch (tx.format) {
      case kFormatU8: f = static_cast<float>(bits) / 255.0f; break;
      case kFormatU16: f = static_cast<float>(bits) / 65535.0f; break;
      case kFormatS8:
        u = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(bits)));
        f = std::max(static_cast<float>(static_cast<std::int8_t>(bits)) / 127.0f, -1.0f);
        break;
      case kFormatS16:
        u = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int16_t>(bits)));
        f = std::max(static_cast<float>(static_cast<std::int16_t>(bits)) / 32767.0f, -1.0f);
        break;
      case kFormatHalf:
        f = static_cast<float>(fdecode(FKind::f16, bits, false));
        std::memcpy(&u, &f, 4);
        break;
      default: std::memcpy(&f, &bits, 4); break;  // float; 32-bit integers: no normalized form
    }
    if (tx.srgb && tx.format == kFormatU8 && c < 3) f = srgb_to_linear(f);
    out.f[c] = f;
    out.u[c] = u;
  }
  return out;
}

// ------------------------------------------------------------------------------ cube maps

// Per face (2 axis + sign): the axis and sign of s and of t, from the Programming Guide's
// cubemap table (+X: s = -z, t = -y; -X: z, -y; +Y: x, z; -Y: x, -z; +Z: x, -y; -Z: -x, -y).
struct FaceAxes {
  int s_axis, s_sign, t_axis, t_sign;
};
constexpr FaceAxes kFaces[6] = {{2, -1, 1, -1}, {2, 1, 1, -1}, {0, 1, 2, 1},
                                {0, 1, 2, -1},  {0, 1, 1, -1}, {0, -1, 1, -1}};

// The face of direction d (the largest component; ties go to z, then y: an H200 samples the +Y
// face where |x| = |y| is the largest, seen 2026-11-27; z before y is assumed) and the face
// coordinates (s / m + 1) / 2, (t / m + 1) / 2 in [0, 1], in T's arithmetic.
template <class T>
unsigned cube_face(const T* d, T& s, T& t) {
  const T ax = std::fabs(d[0]), ay = std::fabs(d[1]), az = std::fabs(d[2]);
  const int axis = az >= ax && az >= ay ? 2 : ay >= ax ? 1 : 0;
  const unsigned face = static_cast<unsigned>(2 * axis + (d[axis] >= 0 ? 0 : 1));
  const T m = std::fabs(d[axis]);
  const FaceAxes& f = kFaces[face];
  s = (static_cast<T>(f.s_sign) * d[f.s_axis] / m + 1) / 2;
  t = (static_cast<T>(f.t_sign) * d[f.t_axis] / m + 1) / 2;
  return face;
}

// Texel (i, j) of `face` of a cube of w x w texels, one step outside the face across one edge:
// the face and texel where the centre of that texel lies on the cube. The centre's direction
// (the table read backwards) crosses onto the adjacent face, whose texel holds it.
void across_edge(unsigned& face, std::int64_t& i, std::int64_t& j, std::int64_t w) {
  const double n = static_cast<double>(w);
  const double sc = 2 * (static_cast<double>(i) + 0.5) / n - 1;
  const double tc = 2 * (static_cast<double>(j) + 0.5) / n - 1;
  const FaceAxes& f = kFaces[face];
  double d[3] = {};
  d[face / 2] = face % 2 == 0 ? 1.0 : -1.0;
  d[f.s_axis] = f.s_sign * sc;
  d[f.t_axis] = f.t_sign * tc;
  double s = 0, t = 0;
  face = cube_face(d, s, t);
  i = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(s * n)), 0, w - 1);
  j = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(t * n)), 0, w - 1);
}

// ------------------------------------------------------------------------- one level

// Where a lookup reads on one level: its coordinates after the cube projection.
struct Site {
  const Texture& tx;
  const TexLevel& lv;
  unsigned dims;  // coordinates used (a cube face: 2)
  bool cube;
  unsigned face;  // cubes
  std::int64_t slice_base;
  bool normalized;
};

unsigned mode_of(const Site& s, unsigned i) { return s.cube ? 1u : s.tx.address_mode[i]; }

Texel border_texel(const Texture& tx) {
  Texel b;
  for (int k = 0; k < 4; ++k) {
    b.f[k] = tx.border[k];
    b.u[k] = static_cast<std::uint32_t>(static_cast<std::int64_t>(tx.border[k]));
  }
  return b;
}

// The texel at indices `idx` (before the address mode): `inside` is false (and the border color
// returned) outside the texture under border mode.
Texel texel_at(const Site& s, const std::int64_t* idx, bool& inside) {
  const std::int64_t size[3] = {s.lv.width, s.lv.height, s.lv.depth};
  inside = true;
  if (s.cube) {
    std::int64_t i = idx[0], j = idx[1];
    const std::int64_t w = size[0];
    const bool out_i = i < 0 || i >= w, out_j = j < 0 || j >= w;
    const auto at = [&](unsigned face, std::int64_t x, std::int64_t y) {
      return fetch(s.tx, s.lv, x, y, s.slice_base + face);
    };
    if (!s.tx.seamless_cube) {
      // Without seamless filtering the texture's address mode applies within the face: an H200
      // wrapped a footprint across a face's edge to the face's other side under wrap mode.
      if (!wrap_index(i, w, s.tx.address_mode[0], true) ||
          !wrap_index(j, w, s.tx.address_mode[1], true)) {
        inside = false;
        return border_texel(s.tx);
      }
      return at(s.face, i, j);
    }
    if (!out_i && !out_j) return at(s.face, i, j);
    const std::int64_t ci = std::clamp<std::int64_t>(i, 0, w - 1);
    const std::int64_t cj = std::clamp<std::int64_t>(j, 0, w - 1);
    unsigned f1 = s.face;
    std::int64_t i1 = out_i ? i : ci, j1 = out_i ? cj : j;
    across_edge(f1, i1, j1, w);
    if (out_i != out_j) return at(f1, i1, j1);
    // A corner: the average of the face's corner texel and its neighbours across both edges.
    unsigned f2 = s.face;
    std::int64_t i2 = ci, j2 = j;
    across_edge(f2, i2, j2, w);
    const Texel a = at(s.face, ci, cj), b = at(f1, i1, j1), c = at(f2, i2, j2);
    Texel v;
    for (int k = 0; k < 4; ++k) v.f[k] = (a.f[k] + b.f[k] + c.f[k]) / 3.0f;
    return v;
  }
  std::int64_t p[3] = {idx[0], 0, 0};
  for (unsigned i = 0; i < s.dims; ++i) {
    p[i] = idx[i];
    if (!wrap_index(p[i], size[i], mode_of(s, i), s.normalized)) inside = false;
  }
  if (!inside) return border_texel(s.tx);
  return fetch(s.tx, s.lv, p[0], p[1], s.dims == 3 ? p[2] : s.slice_base);
}

Texel texel_at(const Site& s, const std::int64_t* idx) {
  bool inside = true;
  return texel_at(s, idx, inside);
}

// Coordinate i of c in texels of the site's level, within 2^40 texels of the origin (far outside
// any texture, where every address mode reads what it reads at the edge; NaN reads the far
// negative side).
double texel_coordinate(const Site& s, const float* c, unsigned i) {
  const std::int64_t size[3] = {s.lv.width, s.lv.height, s.lv.depth};
  constexpr double kFar = 1099511627776.0;
  const double x = scaled(c[i], size[i], mode_of(s, i), s.normalized);
  return x > -kFar ? std::min(x, kFar) : -kFar;
}

// The integer weights (1/256 steps) of linear filtering's 2^dims texels around x - 0.5, x the
// texel-space coordinate: x rounds to 1/256 of a texel (ties up), which gives the texel below
// and the fractions a, b, c; the weights are a 1D pair, or the 2D rule an H200 follows
// (2026-11-27: w11 = a b / 256 rounded, ties up; w10 = a - w11, w01 = b - w11,
// w00 = 256 - a - b + w11, so they always sum to 256), and in 3D each of those split by c the
// same way (assumed: volumes were not compared on a GPU).
struct Footprint {
  std::int64_t base[3] = {};
  std::uint32_t weight[8] = {};
  unsigned corners = 1;
};

Footprint footprint(const Site& s, const float* c) {
  std::uint32_t frac[3] = {};
  Footprint fp;
  for (unsigned i = 0; i < s.dims; ++i) {
    const double x = texel_coordinate(s, c, i);
    const auto steps = static_cast<std::int64_t>(std::floor(x * 256.0 + 0.5)) - 128;
    fp.base[i] = steps >> 8;  // floor(steps / 256)
    frac[i] = static_cast<std::uint32_t>(steps & 255);
  }
  const auto split = [](std::uint32_t w, std::uint32_t f) { return (w * f + 128) >> 8; };
  fp.corners = 1u << s.dims;
  if (s.dims == 1) {
    fp.weight[0] = 256 - frac[0];
    fp.weight[1] = frac[0];
    return fp;
  }
  const std::uint32_t a = frac[0], b = frac[1], w11 = split(a, b);
  const std::uint32_t plane[4] = {256 - a - b + w11, a - w11, b - w11, w11};
  for (unsigned k = 0; k < 4; ++k) {
    if (s.dims == 2) {
      fp.weight[k] = plane[k];
    } else {
      fp.weight[k + 4] = split(plane[k], frac[2]);
      fp.weight[k] = plane[k] - fp.weight[k + 4];
    }
  }
  return fp;
}

// The texel at corner k of a footprint.
Texel corner(const Site& s, const Footprint& fp, unsigned k) {
  std::int64_t idx[3] = {};
  for (unsigned i = 0; i < s.dims; ++i) idx[i] = fp.base[i] + ((k >> i) & 1);
  return texel_at(s, idx);
}

bool filtered(const Texture& tx) { return tx.linear_filter && !returns_integers(tx); }

// The texel point filtering reads at c on one level.
Texel nearest(const Site& s, const float* c) {
  std::int64_t idx[3] = {};
  for (unsigned i = 0; i < s.dims; ++i) {
    idx[i] = static_cast<std::int64_t>(std::floor(texel_coordinate(s, c, i)));
  }
  return texel_at(s, idx);
}

// Adds the filtered value at c on one level, times `scale`, to `sums` (in 1/256 steps: a point
// filtered texel weighs 256).
void accumulate(const Site& s, const float* c, std::uint32_t scale, FilterSum* sums) {
  if (!filtered(s.tx)) {
    const Texel t = nearest(s, c);
    for (int ch = 0; ch < 4; ++ch) sums[ch].add(t.f[ch], 256 * scale);
    return;
  }
  const Footprint fp = footprint(s, c);
  for (unsigned k = 0; k < fp.corners; ++k) {
    if (fp.weight[k] == 0) continue;
    const Texel t = corner(s, fp, k);
    for (int ch = 0; ch < 4; ++ch) sums[ch].add(t.f[ch], fp.weight[k] * scale);
  }
}

// Point or linear filtering at c on one level.
Texel filter(const Site& s, const float* c) {
  if (!filtered(s.tx)) return nearest(s, c);
  FilterSum sums[4];
  accumulate(s, c, 1, sums);
  Texel v;
  for (int ch = 0; ch < 4; ++ch) v.f[ch] = sums[ch].result(8);
  return v;
}

// The site of level `level` for coordinates `c` (a cube: the direction, projected into `face`
// coordinates in `uv`).
Site site(const Texture& tx, const TexLookup& at, std::size_t level, const float* c, float* uv) {
  unsigned face = 0;
  if (at.cube) {
    face = cube_face(c, uv[0], uv[1]);
  } else {
    std::copy(c, c + 3, uv);
  }
  return Site{tx,   tx.levels[level], at.cube ? 2u : at.dims,         at.cube,
              face, at.slice_base,    at.cube || tx.normalized_coords};
}

// ------------------------------------------------------------------------ level of detail

// The gradient g of coordinates c in level-0 texels (a cube: of the face coordinates).
void texel_gradient(const Texture& tx, const TexLookup& at, const float* g, double* out) {
  const TexLevel& l0 = tx.levels[0];
  const double size[3] = {static_cast<double>(l0.width), static_cast<double>(l0.height),
                          static_cast<double>(l0.depth)};
  if (at.cube) {
    // s = (sc / |ma| + 1) / 2 on the face: ds = (dsc |ma| - sc d|ma|) / (2 ma^2).
    float u = 0, v = 0;
    const unsigned face = cube_face(at.coord, u, v);
    const FaceAxes& f = kFaces[face];
    const int axis = static_cast<int>(face / 2);
    const double ma = std::fabs(static_cast<double>(at.coord[axis]));
    const double dma = (face % 2 == 0 ? 1.0 : -1.0) * g[axis];
    const auto d = [&](int ax, int sign) {
      const double sc = sign * static_cast<double>(at.coord[ax]);
      const double dsc = sign * static_cast<double>(g[ax]);
      return (dsc * ma - sc * dma) / (2 * ma * ma) * size[0];
    };
    out[0] = d(f.s_axis, f.s_sign);
    out[1] = d(f.t_axis, f.t_sign);
    out[2] = 0;
    return;
  }
  for (unsigned i = 0; i < 3; ++i) {
    out[i] = i < at.dims ? static_cast<double>(g[i]) * (tx.normalized_coords ? size[i] : 1.0) : 0;
  }
}

// The level of detail after bias and clamps, in [0, levels - 1]. The bias counts in 1/512
// steps, cut toward zero: an H200 blends levels at lod + bias with bias -0.6 as if it were
// -307/512 (2026-11-27; -0.6 itself, or -0.6 rounded to 1/256, blends other fractions).
double clamp_lod(const Texture& tx, float lod) {
  double l = static_cast<double>(lod) + std::trunc(static_cast<double>(tx.mip_bias) * 512) / 512;
  if (!(l >= tx.min_lod)) l = tx.min_lod;  // NaN too
  if (l > tx.max_lod) l = tx.max_lod;
  return std::clamp(l, 0.0, static_cast<double>(tx.levels.size() - 1));
}

// Filtering at c with level of detail `lod` (before bias and clamps). A point mipmap filter
// takes level floor(lod + 1/2) (an H200 takes level 1 at 0.5, 2 at 1.5); a linear one rounds
// the level of detail to 1/256 (ties up) and blends level floor(lod) and the next by the
// fraction f, (256 - f) x the one plus f x the other, exactly, rounded once.
Texel sample_at(const Texture& tx, const TexLookup& at, const float* c, float lod) {
  float uv[3] = {};
  if (tx.levels.size() == 1) return filter(site(tx, at, 0, c, uv), uv);
  const double l = clamp_lod(tx, lod);
  const std::size_t last = tx.levels.size() - 1;
  if (!tx.mip_linear || returns_integers(tx)) {
    const auto level = static_cast<std::size_t>(std::floor(l + 0.5));
    return filter(site(tx, at, std::min(level, last), c, uv), uv);
  }
  const auto steps = static_cast<std::size_t>(std::floor(l * 256.0 + 0.5));
  const std::size_t lower = steps >> 8;
  const auto f = static_cast<std::uint32_t>(steps & 255);
  if (lower >= last || f == 0) return filter(site(tx, at, std::min(lower, last), c, uv), uv);
  FilterSum sums[4];
  accumulate(site(tx, at, lower, c, uv), uv, 256 - f, sums);
  accumulate(site(tx, at, lower + 1, c, uv), uv, f, sums);
  Texel v;
  for (int k = 0; k < 4; ++k) v.f[k] = sums[k].result(16);
  return v;
}

}  // namespace

bool returns_integers(const Texture& tx) noexcept {
  return tx.read_as_integer || tx.format == kFormatU32 || tx.format == kFormatS32;
}

Texel sample(const Texture& tx, const TexLookup& at) {
  if (at.lod_mode != LodMode::grad) {
    return sample_at(tx, at, at.coord, at.lod_mode == LodMode::level ? at.lod : 0.0f);
  }
  double gx[3] = {}, gy[3] = {};
  texel_gradient(tx, at, at.grad[0], gx);
  texel_gradient(tx, at, at.grad[1], gy);
  const double px = std::sqrt(gx[0] * gx[0] + gx[1] * gx[1] + gx[2] * gx[2]);
  const double py = std::sqrt(gy[0] * gy[0] + gy[1] * gy[1] + gy[2] * gy[2]);
  const double pmax = std::max(px, py), pmin = std::min(px, py);
  unsigned n = 1;
  if (tx.max_anisotropy > 1 && pmax > 0) {
    const double ratio = pmin > 0 ? std::ceil(pmax / pmin) : tx.max_anisotropy;
    n = static_cast<unsigned>(std::min<double>(ratio, tx.max_anisotropy));
  }
  const float lod = static_cast<float>(std::log2(pmax / n));  // -inf for no gradient
  if (n == 1) return sample_at(tx, at, at.coord, lod);
  // N probes along the longer gradient, averaged.
  const float* major = px >= py ? at.grad[0] : at.grad[1];
  float sum[4] = {};
  for (unsigned i = 1; i <= n; ++i) {
    const float k = static_cast<float>(i) / static_cast<float>(n + 1) - 0.5f;
    float c[3] = {};
    for (unsigned d = 0; d < 3; ++d) c[d] = at.coord[d] + k * major[d];
    const Texel v = sample_at(tx, at, c, lod);
    for (int ch = 0; ch < 4; ++ch) sum[ch] += v.f[ch];
  }
  Texel v;
  for (int ch = 0; ch < 4; ++ch) v.f[ch] = sum[ch] / static_cast<float>(n);
  return v;
}

Texel gather(const Texture& tx, const TexLookup& at, unsigned comp) {
  float uv[3] = {};
  const Site s = site(tx, at, 0, at.coord, uv);
  const Footprint fp = footprint(s, uv);
  static constexpr unsigned kOrder[4] = {2, 3, 1, 0};
  Texel g;
  for (int k = 0; k < 4; ++k) {
    const Texel t = corner(s, fp, kOrder[k]);
    g.f[k] = t.f[comp];
    g.u[k] = t.u[comp];
  }
  return g;
}

Texel fetch_element(const Texture& tx, const TexLookup& at, const std::int64_t* idx,
                    std::size_t level) {
  float uv[3] = {};
  const float zero[3] = {};
  const Site s = site(tx, at, std::min(level, tx.levels.size() - 1), zero, uv);
  bool inside = true;
  const Texel v = texel_at(s, idx, inside);
  if (tx.resource == 2 && (!inside || idx[0] < 0 || idx[0] >= s.lv.width)) {
    return Texel{{0, 0, 0, 0}, {0, 0, 0, 0}};  // linear memory reads zeros outside
  }
  return v;
}

}  // namespace swcu::ptx
