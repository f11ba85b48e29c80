// Memory pools of every location (cuwrap/memory_pool.hpp): creation, attributes, access, and
// the default and current pools of devices and locations.
#include "cuwrap/memory_pool.hpp"

#include <string>

namespace cuwrap {
namespace {

std::uint64_t pool_attribute(CUmemoryPool pool, CUmemPool_attribute attribute,
                             std::source_location where) {
  std::uint64_t value = 0;
  check(detail::driver().cuMemPoolGetAttribute(pool, attribute, &value), "cuMemPoolGetAttribute",
        where);
  return value;
}

void set_pool_attribute(CUmemoryPool pool, CUmemPool_attribute attribute, std::uint64_t value,
                        std::source_location where) {
  check(detail::driver().cuMemPoolSetAttribute(pool, attribute, &value), "cuMemPoolSetAttribute",
        where);
}

CUmemLocation device_location(const device& dev) {
  return CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal()};
}

// A location as error messages name it ("pinned memory of device 0").
std::string describe(pool_location location) {
  std::string kind = location.is_managed() ? "managed memory" : "pinned memory";
  switch (location.location_type()) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return kind + " of device " + std::to_string(location.id());
    case CU_MEM_LOCATION_TYPE_HOST: return kind + " of the host";
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      return kind + " of host NUMA node " + std::to_string(location.id());
    case CU_MEM_LOCATION_TYPE_NONE: return kind + " with no preferred location";
    default: return kind + " of location type " + std::to_string(location.location_type());
  }
}

}  // namespace

void memory_pool_ref::trim(std::size_t keep_bytes, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "trim", where);
  check(detail::driver().cuMemPoolTrimTo(handle_, keep_bytes), "cuMemPoolTrimTo", where);
}

std::uint64_t memory_pool_ref::release_threshold(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "release_threshold", where);
  return pool_attribute(handle_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, where);
}

void memory_pool_ref::set_release_threshold(std::uint64_t bytes, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "set_release_threshold", where);
  set_pool_attribute(handle_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, bytes, where);
}

pool_usage memory_pool_ref::usage(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "usage", where);
  return {pool_attribute(handle_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, where),
          pool_attribute(handle_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, where),
          pool_attribute(handle_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, where),
          pool_attribute(handle_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, where)};
}

// The reuse attributes are ints (cuda.h: "value = int"), not 64-bit values.
bool memory_pool_ref::reuse(pool_reuse policy, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "reuse", where);
  int value = 0;
  check(detail::driver().cuMemPoolGetAttribute(handle_, static_cast<CUmemPool_attribute>(policy),
                                               &value),
        "cuMemPoolGetAttribute", where);
  return value != 0;
}

void memory_pool_ref::set_reuse(pool_reuse policy, bool enabled, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "set_reuse", where);
  int value = enabled ? 1 : 0;
  check(detail::driver().cuMemPoolSetAttribute(handle_, static_cast<CUmemPool_attribute>(policy),
                                               &value),
        "cuMemPoolSetAttribute", where);
}

void memory_pool_ref::reset_high_watermarks(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "reset_high_watermarks", where);
  // The driver only accepts 0 for the high-water marks: it means "reset to current".
  set_pool_attribute(handle_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0, where);
  set_pool_attribute(handle_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0, where);
}

void memory_pool_ref::allow_access(const device& dev, pool_access access,
                                   std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "allow_access", where);
  const CUmemAccessDesc desc{device_location(dev), static_cast<CUmemAccess_flags>(access)};
  const CUresult r = detail::driver().cuMemPoolSetAccess(handle_, &desc, 1);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolSetAccess",
                        "device " + std::to_string(dev.ordinal()), where);
  }
}

pool_access memory_pool_ref::access(const device& dev, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_pool", "access", where);
  CUmemAccess_flags flags{};
  CUmemLocation location = device_location(dev);
  check(detail::driver().cuMemPoolGetAccess(&flags, handle_, &location), "cuMemPoolGetAccess",
        where);
  return static_cast<pool_access>(flags);
}

namespace {

CUmemoryPool create_pool(pool_location location, const memory_pool_options& options,
                         std::source_location where) {
  CUmemPoolProps props{};
  props.allocType = location.allocation_type();
  props.handleTypes = static_cast<CUmemAllocationHandleType>(options.sharing);
  props.location = location.native();
  props.maxSize = options.max_size;
  CUmemoryPool pool{};
  const CUresult r = detail::driver().cuMemPoolCreate(&pool, &props);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemPoolCreate",
                        describe(location) + (options.sharing == pool_sharing::posix_fd
                                                  ? ", shareable as a POSIX file descriptor"
                                                  : ""),
                        where);
  }
  return pool;
}

}  // namespace

memory_pool::memory_pool(const device& dev, memory_pool_options options, std::source_location where)
    : memory_pool{pool_location::device(dev), options, where} {}

memory_pool::memory_pool(pool_location location, memory_pool_options options,
                         std::source_location where)
    : unique_handle{create_pool(location, options, where), options.sharing} {
  // Should this throw, the constructed base destroys the pool.
  set_pool_attribute(handle_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, options.release_threshold, where);
}

memory_pool_ref memory_pool::default_pool(const device& dev, std::source_location where) {
  CUmemoryPool pool{};
  check(detail::driver().cuDeviceGetDefaultMemPool(&pool, dev.get()), "cuDeviceGetDefaultMemPool",
        where);
  return memory_pool_ref{pool};
}

memory_pool_ref current_pool(const device& dev, std::source_location where) {
  CUmemoryPool pool{};
  check(detail::driver().cuDeviceGetMemPool(&pool, dev.get()), "cuDeviceGetMemPool", where);
  return memory_pool_ref{pool};
}

void set_current_pool(const device& dev, memory_pool_ref pool, std::source_location where) {
  detail::expect_argument_not_moved_from(!pool.empty(), nullptr, "set_current_pool", "memory_pool",
                                         where);
  const CUresult r = detail::driver().cuDeviceSetMemPool(dev.get(), pool.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuDeviceSetMemPool",
                        "device " + std::to_string(dev.ordinal()) +
                            ": the pool must be a pool of pinned memory of that device",
                        where);
  }
}

memory_pool_ref default_pool(pool_location location, std::source_location where) {
  CUmemoryPool pool{};
  CUmemLocation native = location.native();
  const CUresult r =
      detail::driver().cuMemGetDefaultMemPool(&pool, &native, location.allocation_type());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemGetDefaultMemPool", describe(location), where);
  }
  return memory_pool_ref{pool};
}

memory_pool_ref current_pool(pool_location location, std::source_location where) {
  CUmemoryPool pool{};
  CUmemLocation native = location.native();
  const CUresult r = detail::driver().cuMemGetMemPool(&pool, &native, location.allocation_type());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemGetMemPool", describe(location), where);
  }
  return memory_pool_ref{pool};
}

void set_current_pool(pool_location location, memory_pool_ref pool, std::source_location where) {
  detail::expect_argument_not_moved_from(!pool.empty(), nullptr, "set_current_pool", "memory_pool",
                                         where);
  CUmemLocation native = location.native();
  const CUresult r =
      detail::driver().cuMemSetMemPool(&native, location.allocation_type(), pool.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemSetMemPool",
                        describe(location) + ": the pool must be of that location and kind", where);
  }
}

}  // namespace cuwrap
