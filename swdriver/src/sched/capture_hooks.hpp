// Stream capture as the operations it records see it. Before a stream operation is enqueued,
// the code that enqueues it (memory/copy.cpp, memory/pool.cpp, exec/stream.cpp, exec/event.cpp,
// exec/launch.cpp) asks the hook for its kind; std::nullopt means the stream does not capture
// and the operation is enqueued as usual. The hooks are declared here, at the scheduler's layer,
// so that those layers need nothing of graph/; the graph layer defines them
// (graph/capture.cpp, which has the capture's state: graph/capture.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/api.hpp"
#include "sched/sched.hpp"
#include "sched/shapes.hpp"
#include "swcuda/control.h"

namespace swcu {

/// The fate of an operation about to be enqueued in a stream: std::nullopt to enqueue it as
/// usual; else the call returns this (CUDA_SUCCESS: it became a node of the capture).
using Captured = std::optional<CUresult>;

/// A copy or memset (`sync`: of a synchronous call).
[[nodiscard]] Captured capture_copy(State& s, Queue& q, bool sync, const CopyShape& shape);
[[nodiscard]] Captured capture_fill(State& s, Queue& q, bool sync, const FillShape& shape);
/// cuLaunchHostFunc.
[[nodiscard]] Captured capture_host_function(State& s, Queue& q, CUhostFn fn, void* data);
/// A kernel launch, checked and packed (`launch`: as the launch log would record it).
[[nodiscard]] Captured capture_kernel(State& s, Queue& q, CUfunction f, const swcu_launch& launch);
/// cuMemAllocAsync/cuMemAllocFromPoolAsync and cuMemFreeAsync.
[[nodiscard]] Captured capture_alloc(State& s, Queue& q, std::size_t bytes, int device,
                                     CUdeviceptr* out);
[[nodiscard]] Captured capture_free(State& s, Queue& q, CUdeviceptr address);
/// cuStreamWaitValue*, cuStreamWriteValue*, cuStreamBatchMemOp (checked): one batch memory
/// operation node holding `ops`.
[[nodiscard]] Captured capture_memops(State& s, Queue& q, const std::vector<MemOp>& ops);
/// An operation a capture cannot represent (cuStreamAddCallback, prefetches): refused while
/// `q` captures.
[[nodiscard]] Captured capture_other(State& s, Queue& q);
/// An operation the driver refuses while `q` captures without ending the capture
/// (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the
/// capture goes on, as the driver does); std::nullopt when `q` does not capture.
[[nodiscard]] Captured capture_refused(State& s, Queue& q);
/// cuEventRecord(WithFlags) and cuStreamWaitEvent.
[[nodiscard]] Captured capture_record(State& s, Queue& q, Event& e, unsigned flags);
[[nodiscard]] Captured capture_wait(State& s, Queue& q, const Event& e, unsigned flags);

/// Synchronizing or querying `q`: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for a capturing stream,
/// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT for the legacy stream while a blocking stream of its
/// context captures (both invalidate the capture); else CUDA_SUCCESS.
[[nodiscard]] CUresult capture_sync_check(State& s, Queue& q);
/// Querying, synchronizing or timing `e`: CUDA_ERROR_CAPTURED_EVENT when its last record was
/// captured; else CUDA_SUCCESS.
[[nodiscard]] CUresult captured_event_check(State& s, const Event& e);
/// cuCtxWaitEvent on `e`: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED when its last record belongs
/// to a capture still going on (which is invalidated), CUDA_ERROR_CAPTURED_EVENT when it belongs
/// to a finished one; else CUDA_SUCCESS.
[[nodiscard]] CUresult captured_event_wait_check(State& s, const Event& e);
/// A stream destroyed while it captures: for the stream that began it, the capture is
/// invalidated and ended, its graph destroyed; a stream that joined it leaves it, invalidating it
/// unless its work has joined back into the first stream.
void capture_stream_destroyed(State& s, Queue& q) noexcept;

}  // namespace swcu
