// NVTX v3 annotations for profilers (Nsight Systems and others): ranges, marks, and names of
// devices, contexts, streams and events. Header-only, from the CUDA toolkit's nvtx3 (no
// libnvToolsExt to link); opt-in: only code that includes this header makes NVTX calls. Without
// a tool attached (no NVTX_INJECTION64_PATH) every call is a near no-op; NVTX initializes once
// with atomics, without a global lock.
#pragma once

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::nvtx {

/// A range on the calling thread's NVTX range stack for this object's life (nvtxRangePushA /
/// nvtxRangePop): shown as a bar named `message` on the thread's timeline. Ranges nest.
class scoped_range {
 public:
  /// Pushes a range named `message` (copied by the tool).
  explicit scoped_range(const char* message) noexcept { nvtxRangePushA(message); }
  ~scoped_range() { nvtxRangePop(); }
  scoped_range(const scoped_range&) = delete;
  scoped_range& operator=(const scoped_range&) = delete;
};

/// An instantaneous marker named `message` (nvtxMarkA).
inline void mark(const char* message) noexcept { nvtxMarkA(message); }

/// Names a device in the tool's views (nvtxNameCuDeviceA).
inline void name(device d, const char* name) noexcept { nvtxNameCuDeviceA(d.get(), name); }
/// Names a context (nvtxNameCuContextA).
inline void name(context_ref c, const char* name) noexcept { nvtxNameCuContextA(c.get(), name); }
/// Names a stream (nvtxNameCuStreamA).
inline void name(stream_ref s, const char* name) noexcept { nvtxNameCuStreamA(s.get(), name); }
/// Names an event (nvtxNameCuEventA).
inline void name(event_ref e, const char* name) noexcept { nvtxNameCuEventA(e.get(), name); }

}  // namespace cuwrap::nvtx
