#include "cuwrap/capture.hpp"

#include <string>

namespace cuwrap {

capture_info capture_state(stream_ref s, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "capture_state", "stream", where);
  CUstreamCaptureStatus status{};
  cuuint64_t id = 0;
  CUgraph graph{};
  check(detail::driver().cuStreamGetCaptureInfo(s.get(), &status, &id, &graph, nullptr, nullptr,
                                                nullptr),
        "cuStreamGetCaptureInfo", where);
  return {static_cast<capture_status>(status), id, graph};
}

capture_guard::capture_guard(const stream& s, capture_mode mode, std::source_location where)
    : stream_{s.get()}, context_{s.context_lifetime("stream", "begin_capture", where)} {
  check(detail::driver().cuStreamBeginCapture(stream_, static_cast<CUstreamCaptureMode>(mode)),
        "cuStreamBeginCapture", where);
}

capture_guard::~capture_guard() {
  if (!active_) {
    return;
  }
  CUgraph discarded{};
  const CUresult r = detail::driver().cuStreamEndCapture(stream_, &discarded);
  if (discarded != nullptr) {
    check_nothrow(detail::driver().cuGraphDestroy(discarded), "cuGraphDestroy");
  }
  if (r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) {  // expected after an error during capture
    check_nothrow(r, "cuStreamEndCapture");
  }
}

graph capture_guard::end(std::source_location where) {
  if (!active_) {
    throw usage_error{"cuwrap::capture_guard::end: the capture has already ended", where};
  }
  CUgraph captured{};
  const CUresult r = detail::driver().cuStreamEndCapture(stream_, &captured);
  if (r != CUDA_SUCCESS) {
    if (captured != nullptr) {
      check_nothrow(detail::driver().cuGraphDestroy(captured), "cuGraphDestroy");
    }
    // A capture the driver did not end (a failure other than invalidation, such as ending a
    // capture from the wrong thread) is still this guard's to end in its destructor.
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    active_ = detail::driver().cuStreamIsCapturing(stream_, &status) == CUDA_SUCCESS &&
              status != CU_STREAM_CAPTURE_STATUS_NONE;
    detail::throw_error(make_error_code(r), "cuStreamEndCapture", {}, where);
  }
  active_ = false;
  return graph{captured, context_};
}

void update_capture_dependencies(stream_ref s, dependencies nodes, capture_dependencies how,
                                 std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "update_capture_dependencies",
                                         "stream", where);
  const CUresult r = detail::driver().cuStreamUpdateCaptureDependencies(
      s.get(), const_cast<CUgraphNode*>(nodes.data()), nullptr, nodes.size(),
      static_cast<unsigned>(how));
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuStreamUpdateCaptureDependencies",
                        std::string{how == capture_dependencies::set ? "setting" : "adding"} + " " +
                            std::to_string(nodes.size()) + " dependencies",
                        where);
  }
}

capture_into_guard::capture_into_guard(const stream& s, graph_ref target, dependencies after,
                                       capture_mode mode, std::source_location where)
    : stream_{s.get()}, context_{s.context_lifetime("stream", "capture_into", where)} {
  detail::expect_argument_not_moved_from(!target.empty(), "stream", "capture_into", "graph", where);
  check(detail::driver().cuStreamBeginCaptureToGraph(stream_, target.get(), after.data(), nullptr,
                                                     after.size(),
                                                     static_cast<CUstreamCaptureMode>(mode)),
        "cuStreamBeginCaptureToGraph", where);
}

capture_into_guard::~capture_into_guard() {
  if (!active_) {
    return;
  }
  CUgraph target{};  // the graph captured into: not ours to destroy
  const CUresult r = detail::driver().cuStreamEndCapture(stream_, &target);
  if (r != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) {
    check_nothrow(r, "cuStreamEndCapture");
  }
}

void capture_into_guard::end(std::source_location where) {
  if (!active_) {
    throw usage_error{"cuwrap::capture_into_guard::end: the capture has already ended", where};
  }
  CUgraph target{};
  const CUresult r = detail::driver().cuStreamEndCapture(stream_, &target);
  if (r != CUDA_SUCCESS) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    active_ = detail::driver().cuStreamIsCapturing(stream_, &status) == CUDA_SUCCESS &&
              status != CU_STREAM_CAPTURE_STATUS_NONE;
    detail::throw_error(make_error_code(r), "cuStreamEndCapture", {}, where);
  }
  active_ = false;
}

}  // namespace cuwrap
