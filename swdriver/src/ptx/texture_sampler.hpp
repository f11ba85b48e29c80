// The texture sampler of tex and tld4 (texture_sampler.cpp), free of the interpreter's machine
// state: a lookup's coordinates and level-of-detail inputs in, the filtered channels out.
#pragma once

#include <cstdint>

#include "ptx/texture.hpp"

namespace swcu::ptx {

/// One element's channels: as floats (normalized integer, half and float formats) and as
/// integers (what a texture that returns integers gives). Missing channels are (0, 0, 0, 1).
struct Texel {
  float f[4] = {0, 0, 0, 1};
  std::uint32_t u[4] = {0, 0, 0, 1};
};

/// How a tex instruction chooses its level of detail (PTX ISA "Mipmaps").
enum class LodMode : std::uint8_t {
  base,   ///< no mode or .base: level of detail 0
  level,  ///< .level: an explicit level of detail
  grad,   ///< .grad: from the gradients dPdx and dPdy
};

/// One tex lookup: the coordinates and the level-of-detail inputs, as the instruction gives them.
struct TexLookup {
  unsigned dims = 1;            ///< spatial coordinates: 1, 2 or 3 (a cube's direction: 3)
  bool cube = false;            ///< coord is a direction from the cube's centre
  std::int64_t slice_base = 0;  ///< the first slice of the layer (layers x 6 for cube arrays)
  float coord[3] = {};
  LodMode lod_mode = LodMode::base;
  float lod = 0;          ///< .level
  float grad[2][3] = {};  ///< .grad: dPdx, dPdy in coordinate units
};

/// Whether `tx` returns integers (CU_TRSF_READ_AS_INTEGER on an 8- or 16-bit integer format, or
/// a 32-bit integer format): such a texture is never filtered.
[[nodiscard]] bool returns_integers(const Texture& tx) noexcept;

/// tex at float coordinates: the level of detail (bias and clamps applied), the probes of
/// anisotropic filtering, point or linear filtering on the level or levels chosen, mipmap
/// filtering between them, seamless cube map edges.
[[nodiscard]] Texel sample(const Texture& tx, const TexLookup& at);

/// tld4: component `comp` of the 2 x 2 footprint of linear filtering on level 0, in the order
/// (u0, v1), (u1, v1), (u1, v0), (u0, v0).
[[nodiscard]] Texel gather(const Texture& tx, const TexLookup& at, unsigned comp);

/// tex at integer coordinates on level `level`: the element itself, unfiltered, or the border
/// color outside (linear memory: zeros, as tex1Dfetch reads).
[[nodiscard]] Texel fetch_element(const Texture& tx, const TexLookup& at, const std::int64_t* idx,
                                  std::size_t level);

}  // namespace swcu::ptx
