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

inline capture_guard stream::begin_capture(capture_mode mode, std::source_location where) const {
  return capture_guard{*this, mode, where};
}

}  // namespace cuwrap
