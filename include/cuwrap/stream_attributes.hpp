// The typed values of stream attributes (cuStreamSetAttribute / cuStreamGetAttribute): the
// L2 access-policy window, the synchronization policy and the memory synchronization domain and
// its map. stream_ref gets and sets them (<cuwrap/stream.hpp>).
#pragma once

#include <cuda.h>

#include <cstddef>

namespace cuwrap {

/// How the L2 cache treats accesses (CUaccessProperty).
enum class access_property : int {
  normal = CU_ACCESS_PROPERTY_NORMAL,          ///< normal cache persistence
  streaming = CU_ACCESS_PROPERTY_STREAMING,    ///< less likely to persist in the cache
  persisting = CU_ACCESS_PROPERTY_PERSISTING,  ///< more likely to persist in the cache
};

/// An L2 access-policy window (CUaccessPolicyWindow): accesses to [base, base + bytes) get
/// `hit` with probability `hit_ratio`, `miss` otherwise. The driver checks `bytes` against
/// CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, `hit_ratio` in [0, 1] and `miss` normal or
/// streaming.
struct access_policy_window {
  const void* base = nullptr;                      ///< the window's start (a device address)
  std::size_t bytes = 0;                           ///< 0: no window
  float hit_ratio = 0.0f;                          ///< the fraction of accesses that get `hit`
  access_property hit = access_property::normal;   ///< the property of hits
  access_property miss = access_property::normal;  ///< the property of misses

  friend bool operator==(const access_policy_window&, const access_policy_window&) = default;
};

/// How a synchronizing call on the stream waits (CUsynchronizationPolicy).
enum class synchronization_policy : int {
  automatic = CU_SYNC_POLICY_AUTO,              ///< the driver chooses
  spin = CU_SYNC_POLICY_SPIN,                   ///< spin
  yield = CU_SYNC_POLICY_YIELD,                 ///< yield the thread while waiting
  blocking_sync = CU_SYNC_POLICY_BLOCKING_SYNC  ///< block the thread
};

/// The memory synchronization domain of the stream's kernels (CUlaunchMemSyncDomain).
enum class memory_sync_domain : int {
  default_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT,  ///< the default domain
  remote = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE,           ///< the remote domain
};

/// The domain ids the logical domains map to (CUlaunchMemSyncDomainMap); each below
/// CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT.
struct memory_sync_domain_map {
  unsigned char default_domain = 0;  ///< the id of memory_sync_domain::default_domain
  unsigned char remote = 1;          ///< the id of memory_sync_domain::remote

  friend bool operator==(const memory_sync_domain_map&, const memory_sync_domain_map&) = default;
};

}  // namespace cuwrap
