// Peer-to-peer: which devices reach each other's memory, enabling that access, and copies
// between devices.
#pragma once

#include <cuda.h>

#include <memory>
#include <source_location>
#include <type_traits>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/copy.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// True if `from` can access `to`'s memory (cuDeviceCanAccessPeer).
[[nodiscard]] inline bool can_access_peer(
    const device& from, const device& to,
    std::source_location where = std::source_location::current()) {
  return from.can_access_peer(to, where);
}

/// How two devices reach each other (cuDeviceGetP2PAttribute).
struct peer_attributes {
  int performance_rank = 0;        ///< relative link performance (lower is better)
  bool access_supported = false;   ///< peer access can be enabled
  bool native_atomics = false;     ///< atomics over the link are native
  bool cuda_array_access = false;  ///< CUDA arrays can be accessed over the link
};

/// The link from `from` to `to` (four cuDeviceGetP2PAttribute calls). Two distinct devices.
[[nodiscard]] peer_attributes p2p_attributes(
    const device& from, const device& to,
    std::source_location where = std::source_location::current());

/// The peer-access matrix of all devices: `can_access[i][j]` for i != j (false on the
/// diagonal).
struct peer_topology {
  std::vector<device> devices;
  std::vector<std::vector<bool>> can_access;
};
/// Asks every ordered pair of devices (cuDeviceCanAccessPeer).
[[nodiscard]] peer_topology peer_matrix(
    std::source_location where = std::source_location::current());

/// Enables access from the context `from` to memory of the context `to` for this object's life
/// (cuCtxEnablePeerAccess, with `from` made current for the call only if it is not). If access
/// was already enabled, this guard leaves it alone and will not disable it. If the devices
/// cannot reach each other, throws errc::peer_access_unsupported naming both devices. The
/// destructor disables access (cuCtxDisablePeerAccess) if this guard enabled it.
class peer_access {
 public:
  peer_access(const owning_context& from, const owning_context& to,
              std::source_location where = std::source_location::current());
  peer_access(const peer_access&) = delete;
  peer_access& operator=(const peer_access&) = delete;
  ~peer_access();

  /// True if this guard enabled the access (and so will disable it).
  [[nodiscard]] bool enabled_here() const noexcept { return enabled_here_; }

 private:
  std::shared_ptr<const detail::context_owner> from_;
  std::shared_ptr<const detail::context_owner> to_;
  bool enabled_here_ = false;
};

namespace detail {
void copy_peer_bytes(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                     std::size_t bytes, CUstream s, bool async, std::source_location where);
}  // namespace detail

/// Copies device memory `src` in `src_ctx` into `dst` in `dst_ctx` (cuMemcpyPeer; sizes
/// checked before the call). Works without peer access enabled (the driver stages it).
template <device_memory Dst, device_memory Src>
void copy_peer(context_ref dst_ctx, Dst&& dst, context_ref src_ctx, Src&& src,
               std::source_location where = std::source_location::current()) {
  const auto d = as_device_span(dst, where);
  const auto s = as_device_span(src, where);
  const auto bytes = detail::checked_copy_size(d, s, "cuMemcpyPeer", where);
  detail::copy_peer_bytes(d.address(), dst_ctx.get(), s.address(), src_ctx.get(), bytes, nullptr,
                          false, where);
}

/// Queues the same copy on `s` (cuMemcpyPeerAsync; one driver call).
template <device_memory Dst, device_memory Src>
void copy_peer(stream_ref s, context_ref dst_ctx, Dst&& dst, context_ref src_ctx, Src&& src,
               std::source_location where = std::source_location::current()) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_peer", "stream", where);
  const auto d = as_device_span(dst, where);
  const auto sr = as_device_span(src, where);
  const auto bytes = detail::checked_copy_size(d, sr, "cuMemcpyPeerAsync", where);
  detail::copy_peer_bytes(d.address(), dst_ctx.get(), sr.address(), src_ctx.get(), bytes, s.get(),
                          true, where);
}

}  // namespace cuwrap
