// logging_resource: an adaptor that reports every call to a resource, to a std::ostream or a
// callback.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <utility>

#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// One call a logging_resource saw.
struct resource_call {
  enum class kind { allocate, deallocate };
  kind operation = kind::allocate;   ///< which call
  void* pointer = nullptr;           ///< what allocate returned (null if it threw), or freed
  std::size_t bytes = 0;             ///< the size passed
  std::size_t alignment = 0;         ///< the alignment passed
  std::optional<stream_ref> stream;  ///< the stream of a stream-ordered call
  bool failed = false;               ///< the allocation threw (the exception propagates)
};

/// Writes `call` as one line, e.g. "allocate 256 bytes (alignment 16) on stream 0x5... ->
/// 0x7f...", "deallocate 0x7f... 256 bytes (alignment 16)", "allocate 256 bytes (alignment 16)
/// failed".
std::ostream& operator<<(std::ostream& out, const resource_call& call);

/// Forwards every call to `Upstream` and reports it to a sink: a callback taking a
/// resource_call, or a std::ostream that gets one line per call (the stream must outlive the
/// resource; calls from several threads need a sink that copes with that). Deallocations are
/// reported before they are forwarded, allocations after (failed ones too, then the exception
/// propagates). A sink that throws from an allocation's report makes the allocation fail (the
/// memory is deallocated, the sink's exception propagates); one must not throw from a
/// deallocation's report: deallocate is noexcept.
/// Copyable: copies share the sink. Declares the upstream's properties; stream-ordered when the
/// upstream is. Equal when the upstreams are equal.
template <resource Upstream>
class logging_resource : public detail::cccl_async_names<logging_resource<Upstream>> {
 public:
  /// Where calls are reported.
  using sink = std::function<void(const resource_call&)>;

  /// Reports calls to `upstream` (a copy of it) to `report`.
  logging_resource(Upstream upstream, sink report)
      : upstream_{std::move(upstream)}, sink_{std::make_shared<sink>(std::move(report))} {}
  /// Writes a line per call to `upstream` (a copy of it) to `out`.
  logging_resource(Upstream upstream, std::ostream& out)
      : logging_resource{std::move(upstream),
                         [&out](const resource_call& c) { out << c << '\n'; }} {}

  /// upstream.allocate(bytes, alignment), then reported.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    return logged({resource_call::kind::allocate, nullptr, bytes, alignment, std::nullopt},
                  [&] { return upstream_.allocate(bytes, alignment); });
  }
  /// Reported, then upstream.deallocate(p, bytes, alignment).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    (*sink_)({resource_call::kind::deallocate, p, bytes, alignment, std::nullopt});
    upstream_.deallocate(p, bytes, alignment);
  }
  /// upstream.allocate(s, bytes, alignment), then reported.
  [[nodiscard]] void* allocate(stream_ref s, std::size_t bytes,
                               std::size_t alignment = default_alignment) requires
      stream_ordered_resource<Upstream> {
    return logged({resource_call::kind::allocate, nullptr, bytes, alignment, s},
                  [&] { return upstream_.allocate(s, bytes, alignment); });
  }
  /// Reported, then upstream.deallocate(s, p, bytes, alignment).
  void deallocate(stream_ref s, void* p, std::size_t bytes,
                  std::size_t alignment = default_alignment) requires
      stream_ordered_resource<Upstream> {
    (*sink_)({resource_call::kind::deallocate, p, bytes, alignment, s});
    upstream_.deallocate(s, p, bytes, alignment);
  }

  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }
  /// The upstream resource.
  [[nodiscard]] const Upstream& upstream() const noexcept { return upstream_; }

  /// Equal when the upstreams are equal.
  friend bool operator==(const logging_resource& a, const logging_resource& b) {
    return a.upstream_ == b.upstream_;
  }
  /// Device-accessible when the upstream is.
  friend constexpr void get_property(const logging_resource&, device_accessible) noexcept requires
      has_property<Upstream, device_accessible> {}
  /// Host-accessible when the upstream is.
  friend constexpr void get_property(const logging_resource&, host_accessible) noexcept requires
      has_property<Upstream, host_accessible> {}

 private:
  template <class Allocate>
  void* logged(resource_call call, Allocate&& allocate) {
    try {
      call.pointer = allocate();
    } catch (...) {
      call.failed = true;
      (*sink_)(call);
      throw;
    }
    try {
      (*sink_)(call);
    } catch (...) {
      // The sink failed to report a successful allocation: free it, so nothing leaks.
      if constexpr (stream_ordered_resource<Upstream>) {
        if (call.stream) {
          try {
            upstream_.deallocate(*call.stream, call.pointer, call.bytes, call.alignment);
          } catch (...) {
            // The stream-ordered free failed too; the sink's exception is the one to report.
          }
          throw;
        }
      }
      upstream_.deallocate(call.pointer, call.bytes, call.alignment);
      throw;
    }
    return call.pointer;
  }

  Upstream upstream_;
  std::shared_ptr<sink> sink_;
};

}  // namespace cuwrap::mr
