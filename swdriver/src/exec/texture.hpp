// Texture and surface objects (cuTexObject*, cuSurfObject*): the 64-bit handles kernels pass,
// each with the descriptors it was created from and what the interpreter reads (ptx/texture.hpp).
#pragma once

#include <vector>

#include "core/state.hpp"
#include "ptx/texture.hpp"

namespace swcu {

/// The live texture and surface objects of `ctx` as a launch sees them, sorted by handle. An
/// object whose memory is gone (freed linear memory, a destroyed array) is left out, so a kernel
/// that uses it faults naming the handle.
[[nodiscard]] std::vector<ptx::Texture> launch_textures(State& s, const Context& ctx);

/// Destroys the texture and surface objects a destroyed context still has (they are not a
/// counted handle kind: like CUfunction handles, they live in their subsystem's own map).
void reclaim_textures(State& s, const Context& ctx) noexcept;

}  // namespace swcu
