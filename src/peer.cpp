// Peer access and peer copies.
#include "cuwrap/peer.hpp"

#include <string>

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

std::string two_devices(CUdevice a, CUdevice b) {
  return "device " + std::to_string(a) + " and device " + std::to_string(b);
}

int p2p_attribute(const device& from, const device& to, CUdevice_P2PAttribute attribute,
                  std::source_location where) {
  int value = 0;
  const CUresult r = drv().cuDeviceGetP2PAttribute(&value, attribute, from.get(), to.get());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDeviceGetP2PAttribute",
                        two_devices(from.get(), to.get()), where);
  }
  return value;
}

}  // namespace

peer_attributes p2p_attributes(const device& from, const device& to, std::source_location where) {
  return {p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, where),
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, where) != 0,
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, where) != 0,
          p2p_attribute(from, to, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, where) != 0};
}

peer_topology peer_matrix(std::source_location where) {
  peer_topology t;
  t.devices = device::all(where);
  const auto n = t.devices.size();
  t.can_access.assign(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      t.can_access[i][j] = i != j && t.devices[i].can_access_peer(t.devices[j], where);
    }
  }
  return t;
}

peer_access::peer_access(const owning_context& from, const owning_context& to,
                         std::source_location where)
    : from_{from.lifetime_for("peer_access", "peer_access", where)},
      to_{to.lifetime_for("peer_access", "peer_access", where)} {
  const scoped_current_context current{from, where};
  const CUresult r = drv().cuCtxEnablePeerAccess(to.get(), 0);
  if (r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return;  // someone else enabled it; they decide when it ends
  }
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuCtxEnablePeerAccess",
                        "from " + two_devices(from_->device, to_->device) +
                            (r == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
                                 ? std::string{": these devices cannot access each other"}
                                 : std::string{}),
                        where);
  }
  enabled_here_ = true;
}

peer_access::~peer_access() {
  if (!enabled_here_) {
    return;
  }
  // Disabling acts on the current context: make `from` current without throwing.
  const auto& d = drv();
  CUcontext current{};
  if (const CUresult r = d.cuCtxGetCurrent(&current); r != CUDA_SUCCESS) {
    check_nothrow(r, "cuCtxGetCurrent");
    return;
  }
  const bool switched = current != from_->handle;
  if (switched) {
    if (const CUresult r = d.cuCtxPushCurrent(from_->handle); r != CUDA_SUCCESS) {
      check_nothrow(r, "cuCtxPushCurrent");
      return;
    }
  }
  check_nothrow(d.cuCtxDisablePeerAccess(to_->handle), "cuCtxDisablePeerAccess");
  if (switched) {
    CUcontext popped{};
    check_nothrow(d.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

namespace detail {

void copy_peer_bytes(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                     std::size_t bytes, CUstream s, bool async, std::source_location where) {
  if (async) {
    check(drv().cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, s), "cuMemcpyPeerAsync",
          where);
  } else {
    check(drv().cuMemcpyPeer(dst, dst_ctx, src, src_ctx, bytes), "cuMemcpyPeer", where);
  }
}

}  // namespace detail
}  // namespace cuwrap
