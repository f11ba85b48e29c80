// Stream capture: while a stream captures, what is enqueued in it becomes nodes of a graph
// instead of running. The enqueueing code of streams, events, copies, memsets, launches and
// the stream-ordered allocator asks first (the capture_* hooks of sched/capture_hooks.hpp,
// defined in capture.cpp) and goes on as usual when the answer is std::nullopt.
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

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "graph/graph.hpp"
#include "sched/capture_hooks.hpp"
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

// The hooks the enqueueing code calls (capture_copy and the rest) are declared in
// sched/capture_hooks.hpp, below the layers that call them, and defined in capture.cpp.

/// Makes the nodes of one captured call (not yet in a graph); an error refuses the call and
/// invalidates the capture.
using MakeNodes = std::function<CUresult(std::vector<std::unique_ptr<Node>>&)>;

/// The hook of the calls whose capture the layers below build as nodes themselves (copies with
/// arrays or several slices, external semaphores: graph/copy_nodes.cpp,
/// graph/ext_semaphore_nodes.cpp). While `q` captures, records the nodes `make` makes side by
/// side: each after the stream's dependency set, none after another, and then they are its
/// dependency set. `sync`, or a kind a conditional body refuses while capturing into one, is
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture.
[[nodiscard]] Captured capture_nodes(State& s, Queue& q, bool sync, const MakeNodes& make);

/// cuGraphLaunch: a child graph node with a copy of the executable graph.
[[nodiscard]] Captured capture_graph(State& s, Queue& q, const Graph& plan);

}  // namespace swcu
