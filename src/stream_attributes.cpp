// stream_ref's attributes (cuStreamGetAttribute / cuStreamSetAttribute / cuStreamCopyAttributes),
// its device (cuStreamGetDevice), and the cold paths of stream memory operations
// (<cuwrap/stream_memops.hpp>).
#include <cstdio>
#include <string>

#include "cuwrap/stream.hpp"

namespace cuwrap {
namespace detail {

void throw_bad_memop_word(const char* operation, CUdeviceptr address, std::size_t size, bool empty,
                          std::source_location where) {
  std::string message = std::string{"cuwrap::"} + operation + ": ";
  if (empty) {
    message += "the word span is empty (a stream memory operation uses its first element)";
  } else {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    message += address == 0 ? std::string{"the word's address is null"}
                            : "the word's address " + std::string{text} + " is not aligned to " +
                                  std::to_string(size) + " bytes";
  }
  throw usage_error(message, where);
}

}  // namespace detail

CUstreamBatchMemOpParams& memop_batch::add(const char* operation, std::source_location where) {
  if (ops_.size() == max_size()) [[unlikely]] {
    throw usage_error(std::string{"cuwrap::memop_batch::"} + operation +
                          ": a batch holds at most " + std::to_string(max_size()) +
                          " operations (cuStreamBatchMemOp)",
                      where);
  }
  return ops_.emplace_back();
}

namespace {

CUstreamAttrValue get_attribute(CUstream stream, CUstreamAttrID attr, std::source_location where) {
  CUstreamAttrValue value{};
  check(detail::driver().cuStreamGetAttribute(stream, attr, &value), "cuStreamGetAttribute", where);
  return value;
}

void set_attribute(CUstream stream, CUstreamAttrID attr, const CUstreamAttrValue& value,
                   std::source_location where) {
  check(detail::driver().cuStreamSetAttribute(stream, attr, &value), "cuStreamSetAttribute", where);
}

}  // namespace

cuwrap::device stream_ref::device(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "device", where);
  CUdevice dev{};
  check(detail::driver().cuStreamGetDevice(handle_, &dev), "cuStreamGetDevice", where);
  return cuwrap::device::get(dev, where);  // the driver's CUdevice is the ordinal
}

cuwrap::access_policy_window stream_ref::access_policy_window(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "access_policy_window", where);
  const CUaccessPolicyWindow w =
      get_attribute(handle_, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, where).accessPolicyWindow;
  return {w.base_ptr, w.num_bytes, w.hitRatio, static_cast<access_property>(w.hitProp),
          static_cast<access_property>(w.missProp)};
}

void stream_ref::set_access_policy_window(const cuwrap::access_policy_window& window,
                                          std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "set_access_policy_window", where);
  CUstreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(window.base);  // NOLINT: the C field
  value.accessPolicyWindow.num_bytes = window.bytes;
  value.accessPolicyWindow.hitRatio = window.hit_ratio;
  value.accessPolicyWindow.hitProp = static_cast<CUaccessProperty>(window.hit);
  value.accessPolicyWindow.missProp = static_cast<CUaccessProperty>(window.miss);
  set_attribute(handle_, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, value, where);
}

cuwrap::synchronization_policy stream_ref::synchronization_policy(
    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "synchronization_policy", where);
  return static_cast<cuwrap::synchronization_policy>(
      get_attribute(handle_, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, where).syncPolicy);
}

void stream_ref::set_synchronization_policy(cuwrap::synchronization_policy policy,
                                            std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "set_synchronization_policy", where);
  CUstreamAttrValue value{};
  value.syncPolicy = static_cast<CUsynchronizationPolicy>(policy);
  set_attribute(handle_, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, value, where);
}

void stream_ref::set_priority(int priority, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "set_priority", where);
  CUstreamAttrValue value{};
  value.priority = priority;
  set_attribute(handle_, CU_STREAM_ATTRIBUTE_PRIORITY, value, where);
}

cuwrap::memory_sync_domain stream_ref::memory_sync_domain(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "memory_sync_domain", where);
  return static_cast<cuwrap::memory_sync_domain>(
      get_attribute(handle_, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, where).memSyncDomain);
}

void stream_ref::set_memory_sync_domain(cuwrap::memory_sync_domain domain,
                                        std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "set_memory_sync_domain", where);
  CUstreamAttrValue value{};
  value.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(domain);
  set_attribute(handle_, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, value, where);
}

cuwrap::memory_sync_domain_map stream_ref::memory_sync_domain_map(
    std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "memory_sync_domain_map", where);
  const CUlaunchMemSyncDomainMap map =
      get_attribute(handle_, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, where).memSyncDomainMap;
  return {map.default_, map.remote};
}

void stream_ref::set_memory_sync_domain_map(cuwrap::memory_sync_domain_map map,
                                            std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "set_memory_sync_domain_map", where);
  CUstreamAttrValue value{};
  value.memSyncDomainMap.default_ = map.default_domain;
  value.memSyncDomainMap.remote = map.remote;
  set_attribute(handle_, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, value, where);
}

void stream_ref::copy_attributes_from(stream_ref source, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "copy_attributes_from", where);
  detail::expect_argument_not_moved_from(!source.empty(), "stream", "copy_attributes_from",
                                         "source stream", where);
  check(detail::driver().cuStreamCopyAttributes(handle_, source.handle_), "cuStreamCopyAttributes",
        where);
}

}  // namespace cuwrap
