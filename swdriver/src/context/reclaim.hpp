// Reclaiming a destroyed context's objects (reclaim.cpp).
#pragma once

#include "core/state.hpp"

namespace swcu {

/// Destroys what a context owns: its queues (pending work is dropped; waiters see it done),
/// streams, events and memory, each counted as reclaimed. Also clears its sticky error.
void reclaim_context(State& s, Context& ctx) noexcept;

}  // namespace swcu
