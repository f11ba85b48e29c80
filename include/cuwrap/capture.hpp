// Stream capture: record the work queued on a stream into a graph instead of running it.
#pragma once

#include <cuda.h>

#include <memory>
#include <source_location>

#include "cuwrap/graph.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// Whether a stream is capturing (CUstreamCaptureStatus).
enum class capture_status {
  none = CU_STREAM_CAPTURE_STATUS_NONE,                ///< not capturing
  active = CU_STREAM_CAPTURE_STATUS_ACTIVE,            ///< capturing
  invalidated = CU_STREAM_CAPTURE_STATUS_INVALIDATED,  ///< capturing, but an error spoiled it
};

/// A stream's capture state (cuStreamGetCaptureInfo).
struct capture_info {
  capture_status status = capture_status::none;
  unsigned long long id = 0;  ///< unique per capture sequence
  CUgraph graph = nullptr;    ///< the graph being built (owned by the capture)
};

/// The capture state of `s` (cuStreamGetCaptureInfo).
[[nodiscard]] capture_info capture_state(
    stream_ref s, std::source_location where = std::source_location::current());

/// A capture in progress. Made by stream::begin_capture; end() returns the graph. If the guard
/// is destroyed without end() (for example while an exception unwinds), it ends the capture
/// and discards the graph, without throwing.
class capture_guard {
 public:
  /// Starts capturing `s` (cuStreamBeginCapture).
  explicit capture_guard(const stream& s, capture_mode mode = capture_mode::global,
                         std::source_location where = std::source_location::current());
  capture_guard(const capture_guard&) = delete;
  capture_guard& operator=(const capture_guard&) = delete;
  ~capture_guard();

  /// Ends the capture and returns what was captured (cuStreamEndCapture). Throws if the
  /// capture was invalidated (for example by an illegal operation during capture). If the
  /// driver failed without ending the capture, the guard still ends it when destroyed.
  [[nodiscard]] graph end(std::source_location where = std::source_location::current());

 private:
  CUstream stream_;
  std::shared_ptr<const detail::context_owner> context_;
  bool active_ = true;
};

/// How update_capture_dependencies treats the nodes it is given
/// (CUstreamUpdateCaptureDependencies_flags).
enum class capture_dependencies : unsigned {
  add = CU_STREAM_ADD_CAPTURE_DEPENDENCIES,  ///< also depend on them
  set = CU_STREAM_SET_CAPTURE_DEPENDENCIES,  ///< depend on them instead
};

/// Changes the nodes the next work captured on `s` depends on
/// (cuStreamUpdateCaptureDependencies_v2): adds `nodes` to them or replaces them. `s` must be
/// capturing; the nodes must belong to the graph being captured.
void update_capture_dependencies(stream_ref s, dependencies nodes,
                                 capture_dependencies how = capture_dependencies::set,
                                 std::source_location where = std::source_location::current());

/// A capture into a graph that exists already (cuStreamBeginCaptureToGraph): the work queued on
/// the stream becomes nodes of `target` (a graph, a conditional node's body), after the nodes
/// `after`. end() stops it; if the guard is destroyed without end(), it stops the capture
/// without throwing. The nodes captured stay in `target` either way.
class capture_into_guard {
 public:
  /// Starts capturing `s` into `target` (cuStreamBeginCaptureToGraph, one driver call).
  capture_into_guard(const stream& s, graph_ref target, dependencies after = {},
                     capture_mode mode = capture_mode::global,
                     std::source_location where = std::source_location::current());
  capture_into_guard(const capture_into_guard&) = delete;
  capture_into_guard& operator=(const capture_into_guard&) = delete;
  ~capture_into_guard();

  /// Ends the capture (cuStreamEndCapture). Throws if the capture was invalidated (the nodes
  /// captured so far stay in the graph).
  void end(std::source_location where = std::source_location::current());

 private:
  CUstream stream_;
  std::shared_ptr<const detail::context_owner> context_;
  bool active_ = true;
};

/// Starts capturing `s` into `target` after `after` (see capture_into_guard).
[[nodiscard]] inline capture_into_guard capture_into(
    const stream& s, graph_ref target, dependencies after = {},
    capture_mode mode = capture_mode::global,
    std::source_location where = std::source_location::current()) {
  return capture_into_guard{s, target, after, mode, where};
}

inline capture_guard stream::begin_capture(capture_mode mode, std::source_location where) const {
  return capture_guard{*this, mode, where};
}

}  // namespace cuwrap
