// Textures and surfaces (exec_machine.hpp): tex, tld4, txq, suld.b, sust.b, sust.p, sured and
// suq on the objects of the launch (Launch::textures, texture.hpp), as the CUDA C++ Programming
// Guide's "Texture Fetching" appendix and the PTX ISA's texture and surface instructions
// describe them:
//
// - Normalized coordinates are scaled by the size; wrap takes the fraction of a normalized
//   coordinate and mirror reflects it on odd periods (with unnormalized coordinates both act as
//   clamp); clamp clamps the texel index, border gives the border color outside [0, N).
// - Point filtering reads T[floor(x)]; linear filtering reads the two (four, eight) texels around
//   x - 0.5 and weighs them by the fraction, held in 9-bit fixed point with 8 fractional bits
//   (1.8: 0, 1/256, ..., 1), in float arithmetic. Only floating-point results are filtered.
// - 8- and 16-bit integer formats read as normalized floats ([0, 1], [-1, 1]) unless the object
//   reads them as integers; sRGB converts the first three channels of unsigned 8-bit ones to
//   linear. Missing channels read as (0, 0, 0, 1).
// - Cubemap coordinates pick a face by their largest component (face = 2 axis + sign) and
//   (s / m + 1) / 2, (t / m + 1) / 2 in it; layers are clamped to the object's.
// - Surfaces: x is a byte offset for .b, an element index for .p; an access outside the surface
//   faults under .trap, clamps under .clamp, and under .zero reads zeros and drops the store.
#include <atomic>
#include <cmath>

#include "ptx/alu_internal.hpp"
#include "ptx/exec_machine.hpp"
#include "ptx/texture.hpp"

namespace swcu::ptx::detail {
namespace {

// The geometry's number of spatial coordinates, and whether it has a layer index first.
unsigned spatial(TexGeom g) {
  switch (g) {
    case TexGeom::d1:
    case TexGeom::a1d: return 1;
    case TexGeom::d2:
    case TexGeom::a2d: return 2;
    default: return 3;
  }
}
bool layered(TexGeom g) { return g == TexGeom::a1d || g == TexGeom::a2d || g == TexGeom::acube; }

float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

// One element's channels: floats (normalized or float formats) or integers.
struct Texel {
  float f[4] = {0, 0, 0, 1};
  std::uint32_t u[4] = {0, 0, 0, 1};
};

// The 8-bit fraction of the 1.8 fixed-point weight of x (rounded to the nearest 1/256).
float weight(double frac) { return static_cast<float>(std::nearbyint(frac * 256.0) / 256.0); }

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

}  // namespace

const Texture& Machine::texture_object(Thread& t, const Inst& in, int op, bool surface) {
  const std::uint64_t handle = address(t, in.ops[op]);
  const auto it = std::lower_bound(l_.textures.begin(), l_.textures.end(), handle,
                                   [](const Texture& x, std::uint64_t h) { return x.handle < h; });
  const char* name = in.op == Op::tex     ? "tex"
                     : in.op == Op::tld4  ? "tld4"
                     : in.op == Op::txq   ? "txq"
                     : in.op == Op::suld  ? "suld"
                     : in.op == Op::sust  ? "sust"
                     : in.op == Op::sured ? "sured"
                                          : "suq";
  if (it == l_.textures.end() || it->handle != handle) {
    fault(Fault::illegal_address,
          std::string(name) + " with " + hex(handle) + ", which is no live " +
              (surface ? "surface" : "texture") +
              " object of the context (destroyed, never created, or its memory was freed)");
  }
  if (it->surface != surface) {
    fault(Fault::illegal_address, std::string(name) + " with " + hex(handle) + ", which is a " +
                                      (it->surface ? "surface" : "texture") + " object");
  }
  return *it;
}

// The channels of element (x, y, z) of level `lv` (z: the slice: depth, layer or face).
static Texel fetch(const Texture& tx, const TexLevel& lv, std::int64_t x, std::int64_t y,
                   std::int64_t z) {
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
      case kFormatFloat: std::memcpy(&f, &bits, 4); break;
      default: std::memcpy(&f, &bits, 4); break;  // 32-bit integers: no normalized form
    }
    if (tx.srgb && tx.format == kFormatU8 && c < 3) f = srgb_to_linear(f);
    out.f[c] = f;
    out.u[c] = u;
  }
  return out;
}

void Machine::texture(Thread& t, const Inst& in) {
  const Texture& tx = texture_object(t, in, 1, false);
  const auto geom = static_cast<TexGeom>(in.form & kTexGeomMask);
  const bool cube = geom == TexGeom::cube || geom == TexGeom::acube;
  const unsigned n = spatial(geom);
  const bool want_layers = layered(geom);
  if (cube != tx.cubemap || want_layers != (tx.layers != 0) || (!cube && n != tx.dims)) {
    fault(Fault::illegal_instruction,
          std::string(in.op == Op::tex ? "tex" : "tld4") + " of geometry " + std::to_string(n) +
              "d" + (want_layers ? " layered" : "") + (cube ? " cube" : "") +
              " on a texture object of " + std::to_string(tx.dims) + " dimension(s)" +
              (tx.layers != 0 ? ", layered" : "") + (tx.cubemap ? ", cubemap" : ""));
  }
  const std::uint32_t* c = &p_.vec_regs[in.ops[5].reg];
  const bool int_coords = in.type2 == Type::s32;
  std::uint32_t first = 0;
  std::int64_t layer = 0;
  if (want_layers) {
    layer = static_cast<std::int32_t>(t.rf[c[0]]);
    first = 1;
  }
  float coord[3] = {};
  std::int64_t icoord[3] = {};
  for (unsigned i = 0; i < n; ++i) {
    const std::uint32_t bits = static_cast<std::uint32_t>(t.rf[c[first + i]]);
    if (int_coords) {
      icoord[i] = static_cast<std::int32_t>(bits);
    } else {
      std::memcpy(&coord[i], &bits, 4);
    }
  }
  // Cubemaps: the face and its coordinates.
  std::int64_t slice_base = 0;
  unsigned dims = n;
  bool normalized = tx.normalized_coords;
  if (cube) {
    const float x = coord[0], y = coord[1], z = coord[2];
    const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
    unsigned face = 0;
    float s = 0, tt = 0, m = 1;
    if (ax >= ay && ax >= az) {
      m = ax;
      face = x >= 0 ? 0 : 1;
      s = x >= 0 ? -z : z;
      tt = -y;
    } else if (ay >= az) {
      m = ay;
      face = y >= 0 ? 2 : 3;
      s = x;
      tt = y >= 0 ? z : -z;
    } else {
      m = az;
      face = z >= 0 ? 4 : 5;
      s = z >= 0 ? x : -x;
      tt = -y;
    }
    coord[0] = (s / m + 1) / 2;
    coord[1] = (tt / m + 1) / 2;
    dims = 2;
    normalized = true;
    slice_base = face;
  }
  if (want_layers) {
    const std::int64_t count = cube ? tx.layers / 6 : tx.layers;
    layer = std::clamp<std::int64_t>(layer, 0, std::max<std::int64_t>(count - 1, 0));
    slice_base += cube ? layer * 6 : layer;
  }
  // The level of detail: explicit, from gradients, else 0 (a kernel has no implicit one).
  const TexLevel* lv = &tx.levels[0];
  if (tx.levels.size() > 1 && (in.form & (kTexLevel | kTexGrad))) {
    float lod = 0;
    if (in.form & kTexLevel) {
      const auto bits = static_cast<std::uint32_t>(read(t, in.ops[2]));
      std::memcpy(&lod, &bits, 4);
    } else {
      float rho = 0;
      for (int k = 2; k <= 3; ++k) {
        float len = 0;
        for (unsigned i = 0; i < std::min(dims, 3u); ++i) {
          float g = 0;
          const auto bits = static_cast<std::uint32_t>(t.rf[p_.vec_regs[in.ops[k].reg + i]]);
          std::memcpy(&g, &bits, 4);
          const std::uint32_t size = i == 0   ? tx.levels[0].width
                                     : i == 1 ? tx.levels[0].height
                                              : tx.levels[0].depth;
          g *= normalized ? static_cast<float>(size) : 1.0f;
          len += g * g;
        }
        rho = std::max(rho, std::sqrt(len));
      }
      lod = rho > 0 ? std::log2(rho) : -1000.0f;
    }
    lod = std::clamp(lod + tx.mip_bias, tx.min_lod, tx.max_lod);
    const auto last = static_cast<float>(tx.levels.size() - 1);
    lod = std::clamp(lod, 0.0f, last);
    lv = &tx.levels[static_cast<std::size_t>(std::nearbyint(lod))];
  }
  const std::int64_t size[3] = {lv->width, lv->height, lv->depth};
  const bool integer_result =
      tx.read_as_integer || tx.format == kFormatU32 || tx.format == kFormatS32;
  const auto read_at = [&](const std::int64_t* idx, bool& inside) {
    std::int64_t p[3] = {idx[0], 0, 0};
    inside = true;
    for (unsigned i = 0; i < dims; ++i) {
      p[i] = idx[i];
      if (!wrap_index(p[i], size[i], cube ? 1 : tx.address_mode[i], normalized)) inside = false;
    }
    if (!inside) return Texel{};
    const std::int64_t slice = dims == 3 ? p[2] : slice_base;
    return fetch(tx, *lv, p[0], p[1], slice);
  };
  const auto border = [&] {
    Texel b;
    for (int k = 0; k < 4; ++k) {
      b.f[k] = tx.border[k];
      b.u[k] = static_cast<std::uint32_t>(static_cast<std::int64_t>(tx.border[k]));
    }
    return b;
  };
  const auto one = [&](const std::int64_t* idx) {
    bool inside = true;
    const Texel v = read_at(idx, inside);
    return inside ? v : border();
  };
  std::uint32_t result[4] = {};
  const auto put = [&](const Texel& v) {
    for (int k = 0; k < 4; ++k) {
      if (integer_result) {
        result[k] = v.u[k];
      } else {
        std::memcpy(&result[k], &v.f[k], 4);
      }
    }
  };
  if (int_coords) {
    // Integer coordinates: the texel itself, unfiltered. Linear memory (tex1Dfetch) reads zero
    // outside the resource.
    bool inside = true;
    Texel v = read_at(icoord, inside);
    if (!inside || (tx.resource == 2 && (icoord[0] < 0 || icoord[0] >= size[0]))) {
      v = tx.resource == 2 ? Texel{{0, 0, 0, 0}, {0, 0, 0, 0}} : border();
    }
    put(v);
  } else if (in.op == Op::tld4 || (tx.linear_filter && !integer_result)) {
    // The texels around x - 0.5 and their weights.
    std::int64_t base[3] = {};
    float w[3] = {};
    for (unsigned i = 0; i < dims; ++i) {
      const double x = scaled(coord[i], size[i], cube ? 1 : tx.address_mode[i], normalized) - 0.5;
      const double f = std::floor(x);
      base[i] = static_cast<std::int64_t>(f);
      w[i] = weight(x - f);
    }
    const unsigned corners = 1u << dims;
    Texel texels[8];
    for (unsigned k = 0; k < corners; ++k) {
      std::int64_t idx[3] = {};
      for (unsigned i = 0; i < dims; ++i) idx[i] = base[i] + ((k >> i) & 1);
      texels[k] = one(idx);
    }
    if (in.op == Op::tld4) {
      // (u0, v1), (u1, v1), (u1, v0), (u0, v0) of the component asked for.
      const unsigned comp = (in.form >> kDetailShift) & 3;
      static constexpr unsigned kOrder[4] = {2, 3, 1, 0};
      Texel g;
      for (int k = 0; k < 4; ++k) {
        g.f[k] = texels[kOrder[k]].f[comp];
        g.u[k] = texels[kOrder[k]].u[comp];
      }
      put(g);
    } else {
      Texel v;
      for (int ch = 0; ch < 4; ++ch) {
        float acc = 0;
        for (unsigned k = 0; k < corners; ++k) {
          float wk = 1;
          for (unsigned i = 0; i < dims; ++i) wk *= ((k >> i) & 1) ? w[i] : 1.0f - w[i];
          acc += wk * texels[k].f[ch];
        }
        v.f[ch] = acc;
      }
      put(v);
    }
  } else {
    std::int64_t idx[3] = {};
    for (unsigned i = 0; i < dims; ++i) {
      const double x = scaled(coord[i], size[i], cube ? 1 : tx.address_mode[i], normalized);
      idx[i] = static_cast<std::int64_t>(std::floor(x));
    }
    put(one(idx));
  }
  for (unsigned k = 0; k < 4; ++k) {
    const std::uint32_t r = p_.vec_regs[in.ops[0].reg + k];
    if (r != UINT32_MAX) t.rf[r] = result[k];
  }
}

void Machine::texture_query(Thread& t, const Inst& in) {
  const bool surface = in.op == Op::suq;
  const Texture& tx = texture_object(t, in, 1, surface);
  std::size_t level = 0;
  if (in.form & kTexLevel) {
    level = static_cast<std::uint32_t>(read(t, in.ops[2]));
    if (level >= tx.levels.size()) level = tx.levels.size() - 1;
  }
  const TexLevel& lv = tx.levels[level];
  std::uint32_t v = 0;
  switch (static_cast<TexQuery>((in.form >> kDetailShift) & 0xf)) {
    case TexQuery::width: v = lv.width; break;
    case TexQuery::height: v = lv.height; break;
    case TexQuery::depth: v = lv.depth; break;
    case TexQuery::channel_data_type: v = tx.format; break;
    case TexQuery::channel_order: v = tx.channels; break;
    case TexQuery::normalized_coords: v = tx.normalized_coords ? 1 : 0; break;
    case TexQuery::filter_mode: v = tx.linear_filter ? 1 : 0; break;
    case TexQuery::addr_mode_0: v = tx.address_mode[0]; break;
    case TexQuery::addr_mode_1: v = tx.address_mode[1]; break;
    case TexQuery::addr_mode_2: v = tx.address_mode[2]; break;
    case TexQuery::num_mipmap_levels: v = static_cast<std::uint32_t>(tx.levels.size()); break;
    case TexQuery::num_samples: v = 0; break;
    case TexQuery::array_size: v = tx.cubemap ? tx.layers / 6 : tx.layers; break;
    case TexQuery::memory_layout: v = tx.resource == 2 || tx.resource == 3 ? 1 : 0; break;
  }
  write(t, in.ops[0], v);
}

void Machine::surface(Thread& t, const Inst& in) {
  const bool load = in.op == Op::suld;
  const Texture& sf = texture_object(t, in, load ? 1 : 0, true);
  const auto geom = static_cast<TexGeom>(in.form & kTexGeomMask);
  const unsigned n = spatial(geom);
  const bool want_layers = layered(geom);
  const char* name = load ? "suld" : in.op == Op::sust ? "sust" : "sured";
  if (want_layers != (sf.layers != 0) || n != sf.dims) {
    fault(Fault::illegal_instruction, std::string(name) + " of geometry " + std::to_string(n) +
                                          "d" + (want_layers ? " layered" : "") +
                                          " on a surface object of " + std::to_string(sf.dims) +
                                          " dimension(s)" + (sf.layers != 0 ? ", layered" : ""));
  }
  const std::uint32_t* c = &p_.vec_regs[in.ops[5].reg];
  std::int64_t pos[4] = {};  // x, y, z, layer
  std::uint32_t first = 0;
  if (want_layers) {
    pos[3] = static_cast<std::int32_t>(t.rf[c[0]]);
    first = 1;
  }
  for (unsigned i = 0; i < n; ++i) pos[i] = static_cast<std::int32_t>(t.rf[c[first + i]]);
  const TexLevel& lv = sf.levels[0];
  const unsigned es = sf.element_size();
  const bool formatted = (in.form & kSurfFormat) != 0;
  const unsigned size = formatted ? es : type_size(in.type) * in.vec;
  // x in bytes (.b) or elements (.p)
  std::int64_t xb = formatted ? pos[0] * es : pos[0];
  const std::int64_t extent[4] = {static_cast<std::int64_t>(lv.width) * es, lv.height, lv.depth,
                                  sf.layers == 0 ? 1 : sf.layers};
  bool outside = xb < 0 || xb + size > extent[0];
  for (int i = 1; i < 4; ++i) outside = outside || pos[i] < 0 || pos[i] >= extent[i];
  const unsigned mode = (in.form >> kClampShift) & 3;
  if (outside) {
    if (mode == 0) {
      fault(Fault::illegal_address,
            std::string(name) + ".trap outside surface object " + hex(sf.handle) + ": x " +
                std::to_string(pos[0]) + (formatted ? " (elements)" : " (bytes)") + ", y " +
                std::to_string(pos[1]) + ", z " + std::to_string(pos[2]) +
                (want_layers ? ", layer " + std::to_string(pos[3]) : std::string()) + " of " +
                std::to_string(lv.width) + " x " + std::to_string(lv.height) + " x " +
                std::to_string(lv.depth) + " elements of " + std::to_string(es) + " bytes" +
                (sf.layers != 0 ? ", " + std::to_string(sf.layers) + " layers" : ""));
    }
    if (mode == 2) {  // .zero: loads read zeros, stores are dropped
      if (load) {
        for (unsigned k = 0; k < in.vec; ++k) {
          const std::uint32_t r = p_.vec_regs[in.ops[0].reg + k];
          if (r != UINT32_MAX) t.rf[r] = 0;
        }
      }
      return;
    }
    xb = std::clamp<std::int64_t>(xb, 0, extent[0] - size);  // .clamp: the nearest element
    xb -= xb % std::max(1u, std::min(size, es));
    for (int i = 1; i < 4; ++i) pos[i] = std::clamp<std::int64_t>(pos[i], 0, extent[i] - 1);
  }
  const std::int64_t slice = sf.dims == 3 ? pos[2] : pos[3];
  unsigned char* p = reinterpret_cast<unsigned char*>(lv.address) +
                     static_cast<std::uint64_t>(slice) * lv.slice +
                     static_cast<std::uint64_t>(pos[1]) * lv.pitch + static_cast<std::uint64_t>(xb);
  const unsigned ts = type_size(in.type);
  if (load) {
    for (unsigned k = 0; k < in.vec; ++k) {
      const std::uint32_t r = p_.vec_regs[in.ops[0].reg + k];
      if (r != UINT32_MAX) t.rf[r] = load_bits(p + k * ts, ts);
    }
    return;
  }
  if (in.op == Op::sured) {
    const std::uint64_t v = read(t, in.ops[1]);
    const auto apply = [&](auto* cell) {
      using T = std::remove_pointer_t<decltype(cell)>;
      std::atomic_ref<T> a(*cell);
      const T x = static_cast<T>(v);
      T old = a.load();
      T next{};
      do {
        switch (in.sub) {
          case Sub::a_add: next = static_cast<T>(old + x); break;
          case Sub::a_min: next = std::min(old, x); break;
          case Sub::a_max: next = std::max(old, x); break;
          case Sub::a_and: next = old & x; break;
          default: next = old | x; break;
        }
      } while (!a.compare_exchange_weak(old, next));
    };
    if (reinterpret_cast<std::uintptr_t>(p) % ts != 0) {
      fault(Fault::misaligned, std::string(name) + " at byte " + std::to_string(xb) +
                                   ", not a multiple of its " + std::to_string(ts) + " bytes");
    }
    if (in.type == Type::s32) {
      apply(reinterpret_cast<std::int32_t*>(p));
    } else if (ts == 4) {
      apply(reinterpret_cast<std::uint32_t*>(p));
    } else {
      apply(reinterpret_cast<std::uint64_t*>(p));
    }
    return;
  }
  if (!formatted) {
    for (unsigned k = 0; k < in.vec; ++k) {
      const std::uint32_t r = p_.vec_regs[in.ops[1].reg + k];
      store_bits(p + k * ts, ts, r == UINT32_MAX ? 0 : t.rf[r]);
    }
    return;
  }
  // sust.p: each .b32 value converted to the surface's channel format (floats for the float and
  // half formats, integers for the integer ones).
  const unsigned cs = channel_size(sf.format);
  for (unsigned k = 0; k < std::min<unsigned>(in.vec, sf.channels); ++k) {
    const std::uint32_t r = p_.vec_regs[in.ops[1].reg + k];
    const auto bits = static_cast<std::uint32_t>(r == UINT32_MAX ? 0 : t.rf[r]);
    std::uint64_t out = bits;
    if (sf.format == kFormatHalf) {
      float f = 0;
      std::memcpy(&f, &bits, 4);
      out = fencode(FKind::f16, f, Round::rn, 0);
    }
    store_bits(p + k * cs, cs, out);
  }
}

}  // namespace swcu::ptx::detail
