// launch_config: the dimension checks and every launch attribute, validated where it is set.
#include "cuwrap/launch_config.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "cuwrap/error.hpp"

namespace cuwrap {
namespace {

std::string text(dims d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void invalid(const std::string& details, std::source_location where) {
  detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuwrap::launch_config", details,
                      where);
}

bool divides(dims part, dims whole) noexcept {
  return whole.x % part.x == 0 && whole.y % part.y == 0 && whole.z % part.z == 0;
}

// cuda.h on preferredClusterDim: x and y multiples of the cluster's, z equal to it.
void check_preferred(dims preferred, dims cluster, std::source_location where) {
  if (preferred.x % cluster.x != 0 || preferred.y % cluster.y != 0 || preferred.z != cluster.z) {
    invalid("preferred cluster " + text(preferred) + " is not a multiple of cluster " +
                text(cluster) + " (x and y multiples, z equal)",
            where);
  }
}

dims cluster_of(const CUlaunchAttribute& a) noexcept {
  return {a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z};
}

dims preferred_of(const CUlaunchAttribute& a) noexcept {
  return {a.value.preferredClusterDim.x, a.value.preferredClusterDim.y,
          a.value.preferredClusterDim.z};
}

void check_event(event_ref e, event_record_flags flags, const char* option,
                 std::source_location where) {
  if (e.get() == nullptr) {
    throw usage_error(std::string{"cuwrap::launch_config::"} + option +
                          ": the event is empty (moved from or released)",
                      where);
  }
  if (flags != event_record_flags::none) {
    invalid(std::string{option} + ": record flags " + std::to_string(static_cast<unsigned>(flags)) +
                " (only event_record_flags::none; cuda.h: it does not accept "
                "CU_EVENT_RECORD_EXTERNAL)",
            where);
  }
}

}  // namespace

launch_config::launch_config(dims grid, dims block, std::size_t dynamic_shared_bytes,
                             std::source_location where)
    : grid_{grid}, block_{block}, shared_{dynamic_shared_bytes} {
  if (grid.volume() == 0) {
    invalid("grid " + text(grid) + " has a zero dimension", where);
  }
  if (block.volume() == 0) {
    invalid("block " + text(block) + " has a zero dimension", where);
  }
  if (block.volume() > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64) {
    invalid("block " + text(block) + " exceeds CUDA's limits (1024 threads; x, y <= 1024; z <= 64)",
            where);
  }
  if (grid.x > 0x7fffffffU || grid.y > 65535 || grid.z > 65535) {
    invalid("grid " + text(grid) + " exceeds CUDA's limits (x < 2^31; y, z <= 65535)", where);
  }
  if (dynamic_shared_bytes > std::numeric_limits<unsigned>::max()) {
    invalid("dynamic shared memory of " + std::to_string(dynamic_shared_bytes) +
                " bytes does not fit the driver's 32-bit argument",
            where);
  }
}

launch_config::launch_config(const launch_config& other) noexcept
    : grid_{other.grid_}, block_{other.block_}, shared_{other.shared_}, count_{other.count_} {
  for (std::size_t i = 0; i < count_; ++i) attributes_[i] = other.attributes_[i];
}

launch_config& launch_config::operator=(const launch_config& other) noexcept {
  grid_ = other.grid_;
  block_ = other.block_;
  shared_ = other.shared_;
  count_ = other.count_;
  for (std::size_t i = 0; i < count_; ++i) attributes_[i] = other.attributes_[i];
  return *this;
}

launch_config launch_config::linear(std::size_t elements, unsigned block_size,
                                    std::size_t dynamic_shared_bytes, std::source_location where) {
  if (block_size == 0) {
    invalid("block size 0", where);
  }
  const std::size_t blocks = elements == 0 ? 1 : (elements + block_size - 1) / block_size;
  if (blocks > 0x7fffffffU) {
    invalid(std::to_string(elements) + " elements need " + std::to_string(blocks) + " blocks of " +
                std::to_string(block_size) + ", more than a grid can have",
            where);
  }
  return launch_config{{static_cast<unsigned>(blocks)}, {block_size}, dynamic_shared_bytes, where};
}

const CUlaunchAttribute* launch_config::find(CUlaunchAttributeID id) const noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (attributes_[i].id == id) return &attributes_[i];
  }
  return nullptr;
}

CUlaunchAttribute& launch_config::add(CUlaunchAttributeID id) noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (attributes_[i].id == id) {
      attributes_[i].value = CUlaunchAttributeValue{};  // setting it again replaces the value
      return attributes_[i];
    }
  }
  // One slot per attribute kind: each id is kept once, so count_ < max_attributes here.
  auto& attribute = attributes_[count_++];
  attribute = CUlaunchAttribute{};
  attribute.id = id;
  return attribute;
}

launch_config& launch_config::with_access_policy_window(const access_policy_window& window,
                                                        std::source_location where) {
  if (!(window.hit_ratio >= 0.0f && window.hit_ratio <= 1.0f)) {  // NaN too
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%g", static_cast<double>(window.hit_ratio));
    invalid(std::string{"access policy window: hit ratio "} + ratio + " is not in [0, 1]", where);
  }
  const int hit = static_cast<int>(window.hit);
  if (hit < CU_ACCESS_PROPERTY_NORMAL || hit > CU_ACCESS_PROPERTY_PERSISTING) {
    invalid(
        "access policy window: hit property " + std::to_string(hit) + " is not a CUaccessProperty",
        where);
  }
  if (window.miss != access_property::normal && window.miss != access_property::streaming) {
    invalid("access policy window: miss property " + std::to_string(static_cast<int>(window.miss)) +
                " must be normal or streaming (cuda.h)",
            where);
  }
  auto& w = add(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW).value.accessPolicyWindow;
  w.base_ptr = const_cast<void*>(window.base);  // NOLINT: the C field is not const
  w.num_bytes = window.bytes;
  w.hitRatio = window.hit_ratio;
  w.hitProp = static_cast<CUaccessProperty>(window.hit);
  w.missProp = static_cast<CUaccessProperty>(window.miss);
  return *this;
}

launch_config& launch_config::with_cooperative(bool cooperative) noexcept {
  add(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).value.cooperative = cooperative ? 1 : 0;
  return *this;
}

launch_config& launch_config::with_synchronization_policy(synchronization_policy policy,
                                                          std::source_location where) {
  const int value = static_cast<int>(policy);
  if (value < CU_SYNC_POLICY_AUTO || value > CU_SYNC_POLICY_BLOCKING_SYNC) {
    invalid("synchronization policy " + std::to_string(value) + " is not a CUsynchronizationPolicy",
            where);
  }
  add(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY).value.syncPolicy =
      static_cast<CUsynchronizationPolicy>(value);
  return *this;
}

launch_config& launch_config::with_cluster(dims cluster, std::source_location where) {
  if (cluster.volume() == 0) {
    invalid("cluster " + text(cluster) + " has a zero dimension", where);
  }
  if (!divides(cluster, grid_)) {
    invalid("cluster " + text(cluster) + " does not divide grid " + text(grid_), where);
  }
  if (const CUlaunchAttribute* p = find(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION)) {
    check_preferred(preferred_of(*p), cluster, where);
  }
  auto& a = add(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  a.value.clusterDim.x = cluster.x;
  a.value.clusterDim.y = cluster.y;
  a.value.clusterDim.z = cluster.z;
  return *this;
}

launch_config& launch_config::with_cluster_scheduling_policy(cluster_scheduling_policy policy,
                                                             std::source_location where) {
  const int value = static_cast<int>(policy);
  if (value < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT ||
      value > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING) {
    invalid("cluster scheduling policy " + std::to_string(value) +
                " is not a CUclusterSchedulingPolicy",
            where);
  }
  add(CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
      .value.clusterSchedulingPolicyPreference = static_cast<CUclusterSchedulingPolicy>(value);
  return *this;
}

launch_config& launch_config::with_programmatic_serialization(bool allowed) noexcept {
  add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      .value.programmaticStreamSerializationAllowed = allowed ? 1 : 0;
  return *this;
}

launch_config& launch_config::with_programmatic_event(event_ref e, bool trigger_at_block_start,
                                                      event_record_flags flags,
                                                      std::source_location where) {
  check_event(e, flags, "with_programmatic_event", where);
  auto& v = add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT).value.programmaticEvent;
  v.event = e.get();
  v.flags = static_cast<int>(flags);
  v.triggerAtBlockStart = trigger_at_block_start ? 1 : 0;
  return *this;
}

launch_config& launch_config::with_priority(int priority) noexcept {
  add(CU_LAUNCH_ATTRIBUTE_PRIORITY).value.priority = priority;
  return *this;
}

launch_config& launch_config::with_memory_sync_domain_map(memory_sync_domain_map map) noexcept {
  auto& v = add(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP).value.memSyncDomainMap;
  v.default_ = map.default_domain;
  v.remote = map.remote;
  return *this;
}

launch_config& launch_config::with_memory_sync_domain(memory_sync_domain domain,
                                                      std::source_location where) {
  const int value = static_cast<int>(domain);
  if (value != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT && value != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE) {
    invalid("memory sync domain " + std::to_string(value) + " is not a CUlaunchMemSyncDomain",
            where);
  }
  add(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN).value.memSyncDomain =
      static_cast<CUlaunchMemSyncDomain>(value);
  return *this;
}

launch_config& launch_config::with_preferred_cluster(dims preferred, std::source_location where) {
  if (preferred.volume() == 0) {
    invalid("preferred cluster " + text(preferred) + " has a zero dimension", where);
  }
  if (!divides(preferred, grid_)) {
    invalid("preferred cluster " + text(preferred) + " does not divide grid " + text(grid_), where);
  }
  if (const CUlaunchAttribute* c = find(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)) {
    check_preferred(preferred, cluster_of(*c), where);
  }
  auto& v = add(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION).value.preferredClusterDim;
  v.x = preferred.x;
  v.y = preferred.y;
  v.z = preferred.z;
  return *this;
}

launch_config& launch_config::with_launch_completion_event(event_ref e, event_record_flags flags,
                                                           std::source_location where) {
  check_event(e, flags, "with_launch_completion_event", where);
  auto& v = add(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT).value.launchCompletionEvent;
  v.event = e.get();
  v.flags = static_cast<int>(flags);
  return *this;
}

launch_config& launch_config::with_device_updatable_kernel_node() noexcept {
  add(CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
      .value.deviceUpdatableKernelNode.deviceUpdatable = 1;
  return *this;
}

launch_config& launch_config::with_shared_memory_carveout(unsigned percent,
                                                          std::source_location where) {
  if (percent > 100) {
    invalid("shared memory carveout " + std::to_string(percent) +
                " is not a percentage 0..100 (or shared_memory_carveout::max_l1/max_shared)",
            where);
  }
  add(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT).value.sharedMemCarveout = percent;
  return *this;
}

launch_config& launch_config::with_shared_memory_carveout(shared_memory_carveout carveout,
                                                          std::source_location where) {
  return with_shared_memory_carveout(static_cast<unsigned>(carveout), where);
}

launch_config& launch_config::with_nvlink_util_centric_scheduling(bool enabled) noexcept {
  add(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING).value.nvlinkUtilCentricScheduling =
      enabled ? 1 : 0;
  return *this;
}

}  // namespace cuwrap
