// Stream capture: while a stream captures, what is enqueued in it becomes nodes of a graph
// instead of running. The enqueueing code of streams, events, copies, memsets, launches and
// the stream-ordered allocator asks here first (the capture_* hooks below) and goes on as usual
// when the answer is std::nullopt.
//
// A capture starts in one stream (cuStreamBeginCapture) and spreads to every stream that waits
// on an event recorded in a stream that takes part (cross-stream capture); each stream keeps
// its own dependency set, the nodes the next captured operation depends on. The legacy default
// stream never captures: using it while a blocking stream of its context captures would give it
// an implicit dependency on the capture, so that is CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and
// invalidates the capture, as are other operations the capture cannot represent (synchronizing
// or querying a capturing stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). An invalidated capture
// refuses further work with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED until it is ended.
#pragma once

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "graph/graph.hpp"
#include "swcuda/control.h"

namespace swcu {

/// A stream capture in progress.
struct Capture {
  unsigned long long id = 0;  ///< unique in the process
  Graph* graph = nullptr;     ///< what it records into (a program's graph)
  bool owns_graph = true;     ///< made by cuStreamBeginCapture (not ...ToGraph)
  int mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;  ///< the thread that began it
  Queue* origin = nullptr;
  bool invalidated = false;
  bool ended = false;
  /// A stream taking part: its dependency set, and the copy cuStreamGetCaptureInfo hands out.
  struct Member {
    Queue* queue = nullptr;
    std::vector<Node*> deps;
    std::vector<CUgraphNode> exported;
    std::vector<CUgraphEdgeData> exported_data;
  };
  std::vector<Member> members;  ///< the origin first
};

/// An event's last record, made in a capturing stream: the nodes it stands for.
struct CapturedRecord {
  std::weak_ptr<Capture> capture;
  std::vector<Node*> nodes;
};

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
/// cuGraphLaunch: a child graph node with a copy of the executable graph.
[[nodiscard]] Captured capture_graph(State& s, Queue& q, const Graph& plan);
/// An operation a capture cannot represent (cuStreamAddCallback, prefetches): refused while
/// `q` captures.
[[nodiscard]] Captured capture_other(State& s, Queue& q);
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
/// A stream destroyed while it captures: for the stream that began it, the capture is
/// invalidated and ended, its graph destroyed; a stream that joined it leaves it, invalidating it
/// unless its work has joined back into the first stream.
void capture_stream_destroyed(State& s, Queue& q) noexcept;

}  // namespace swcu
