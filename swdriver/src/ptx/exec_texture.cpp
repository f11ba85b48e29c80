// Textures and surfaces (exec_machine.hpp): tex, tld4, txq, suld.b, sust.b, sust.p, sured and
// suq on the objects of the launch (Launch::textures, texture.hpp), as the PTX ISA's texture and
// surface instructions describe them. tex and tld4 read their operands here and leave the
// sampling to texture_sampler.cpp (which states the filtering rules).
//
// - .f16 and .f16x2 results (tex only: tld4 has none) are the filtered floats converted to half
//   precision, round to nearest even; .f16x2 packs (r, g) and (b, a), the first in the low half.
// - Surfaces: x is a byte offset for .b, an element index for .p; an access outside the surface
//   faults under .trap, clamps under .clamp, and under .zero reads zeros and drops the store.
#include <atomic>
#include <cmath>

#include "ptx/alu_internal.hpp"
#include "ptx/exec_machine.hpp"
#include "ptx/texture.hpp"
#include "ptx/texture_sampler.hpp"

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

void Machine::texture(Thread& t, const Inst& in) {
  const Texture& tx = texture_object(t, in, 1, false);
  const auto geom = static_cast<TexGeom>(in.form & kTexGeomMask);
  const bool cube = geom == TexGeom::cube || geom == TexGeom::acube;
  const unsigned n = spatial(geom);
  const bool want_layers = layered(geom);
  const char* name = in.op == Op::tex ? "tex" : "tld4";
  if (cube != tx.cubemap || want_layers != (tx.layers != 0) || (!cube && n != tx.dims)) {
    fault(Fault::illegal_instruction,
          std::string(name) + " of geometry " + std::to_string(n) + "d" +
              (want_layers ? " layered" : "") + (cube ? " cube" : "") + " on a texture object of " +
              std::to_string(tx.dims) + " dimension(s)" + (tx.layers != 0 ? ", layered" : "") +
              (tx.cubemap ? ", cubemap" : ""));
  }
  const bool half_result = in.type == Type::f16 || in.type == Type::f16x2;
  if (half_result && returns_integers(tx)) {
    fault(Fault::illegal_instruction,
          std::string(name) + " with a ." + (in.type == Type::f16 ? "f16" : "f16x2") +
              " result on texture object " + hex(tx.handle) +
              ", which returns integers (an integer format read as integers)");
  }
  const auto f32_at = [&](std::uint32_t reg) {
    const auto bits = static_cast<std::uint32_t>(t.rf[reg]);
    float f = 0;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  const std::uint32_t* c = &p_.vec_regs[in.ops[5].reg];
  const bool int_coords = in.type2 == Type::s32;
  TexLookup at;
  at.dims = n;
  at.cube = cube;
  std::uint32_t first = 0;
  if (want_layers) {
    const std::int64_t count = cube ? tx.layers / 6 : tx.layers;
    const std::int64_t layer = std::clamp<std::int64_t>(static_cast<std::int32_t>(t.rf[c[0]]), 0,
                                                        std::max<std::int64_t>(count - 1, 0));
    at.slice_base = cube ? layer * 6 : layer;
    first = 1;
  }
  std::int64_t icoord[3] = {};
  for (unsigned i = 0; i < n; ++i) {
    if (int_coords) {
      icoord[i] = static_cast<std::int32_t>(t.rf[c[first + i]]);
    } else {
      at.coord[i] = f32_at(c[first + i]);
    }
  }
  // The level of detail: .level's operand follows the coordinate type (PTX ISA "Mipmaps").
  if (in.form & kTexLevel) {
    at.lod_mode = LodMode::level;
    const auto bits = static_cast<std::uint32_t>(read(t, in.ops[2]));
    if (int_coords) {
      at.lod = static_cast<float>(static_cast<std::int32_t>(bits));
    } else {
      std::memcpy(&at.lod, &bits, 4);
    }
  } else if (in.form & kTexGrad) {
    at.lod_mode = LodMode::grad;
    for (int k = 0; k < 2; ++k) {
      for (unsigned i = 0; i < std::min(cube ? 3u : n, 3u); ++i) {
        at.grad[k][i] = f32_at(p_.vec_regs[in.ops[2 + k].reg + i]);
      }
    }
  }
  Texel v;
  if (int_coords) {
    const auto level = at.lod_mode == LodMode::level && at.lod > 0
                           ? static_cast<std::size_t>(at.lod)
                           : std::size_t{0};
    v = fetch_element(tx, at, icoord, level);
  } else if (in.op == Op::tld4) {
    v = gather(tx, at, (in.form >> kDetailShift) & 3);
  } else {
    v = sample(tx, at);
  }
  const bool integers = returns_integers(tx);
  std::uint32_t result[4] = {};
  for (int k = 0; k < 4; ++k) {
    if (integers) {
      result[k] = v.u[k];
    } else if (half_result) {
      result[k] = static_cast<std::uint32_t>(fencode(FKind::f16, v.f[k], Round::rn, 0));
    } else {
      std::memcpy(&result[k], &v.f[k], 4);
    }
  }
  if (in.type == Type::f16x2) {  // (r, g), (b, a): the first channel in the low half
    result[0] |= result[1] << 16;
    result[1] = result[2] | result[3] << 16;
  }
  for (unsigned k = 0; k < in.vec; ++k) {
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
