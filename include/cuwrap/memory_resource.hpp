// Memory resources (docs/memory-resources.md): the concepts, the concrete resources, the
// type-erased wrappers, the adaptors and the resource-backed buffers. CCCL interop is in
// <cuwrap/mr/cccl.hpp>, which needs the toolkit's CCCL on the include path, so it is not here.
#pragma once

#include "cuwrap/keep_alive.hpp"                  // IWYU pragma: export
#include "cuwrap/mr/any_resource.hpp"             // IWYU pragma: export
#include "cuwrap/mr/concepts.hpp"                 // IWYU pragma: export
#include "cuwrap/mr/device_resource.hpp"          // IWYU pragma: export
#include "cuwrap/mr/logging_resource.hpp"         // IWYU pragma: export
#include "cuwrap/mr/managed_resource.hpp"         // IWYU pragma: export
#include "cuwrap/mr/pinned_resource.hpp"          // IWYU pragma: export
#include "cuwrap/mr/pmr_resource.hpp"             // IWYU pragma: export
#include "cuwrap/mr/pool_resource.hpp"            // IWYU pragma: export
#include "cuwrap/mr/resource_buffer.hpp"          // IWYU pragma: export
#include "cuwrap/mr/resource_ref.hpp"             // IWYU pragma: export
#include "cuwrap/mr/statistics_resource.hpp"      // IWYU pragma: export
#include "cuwrap/mr/virtual_memory_resource.hpp"  // IWYU pragma: export
