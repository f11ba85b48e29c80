// Every memory header: spans, buffers of each kind, copies and fills, pools, attributes.
#pragma once

#include "cuwrap/copy.hpp"            // IWYU pragma: export
#include "cuwrap/device_buffer.hpp"   // IWYU pragma: export
#include "cuwrap/device_span.hpp"     // IWYU pragma: export
#include "cuwrap/host_memory.hpp"     // IWYU pragma: export
#include "cuwrap/managed_buffer.hpp"  // IWYU pragma: export
#include "cuwrap/memory_pool.hpp"     // IWYU pragma: export
#include "cuwrap/pitched_buffer.hpp"  // IWYU pragma: export
#include "cuwrap/pointer.hpp"         // IWYU pragma: export
