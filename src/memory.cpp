// The out-of-line parts of the memory headers: allocations (cold paths that name the bytes and
// the device on failure), pools, attributes.
#include "cuwrap/memory.hpp"

#include <array>
#include <string>

#include "in_context.hpp"

namespace cuwrap {
namespace detail {
namespace {

std::string bytes_on_device(std::size_t bytes, CUdevice device) {
  return std::to_string(bytes) + " bytes on device " + std::to_string(device);
}

// Runs an allocation call with `ctx` current; failures name the bytes and the device.
template <class Allocate>
void allocate_in(const owning_context& ctx, const char* api, std::size_t bytes,
                 std::source_location where, Allocate&& allocate) {
  const scoped_current_context current{ctx, where};
  if (const CUresult r = allocate(driver()); r != CUDA_SUCCESS) [[unlikely]] {
    throw_allocation_error(r, api, bytes, ctx.lifetime()->device, where);
  }
}

}  // namespace

void throw_allocation_error(CUresult result, const char* api, std::size_t bytes, CUdevice device,
                            std::source_location where) {
  throw_error(make_error_code(result), api, bytes_on_device(bytes, device), where);
}

CUdeviceptr allocate_device(const owning_context& ctx, std::size_t bytes,
                            std::source_location where) {
  (void)ctx.lifetime_for("device_buffer", "device_buffer",
                         where);  // a moved-from context throws here
  CUdeviceptr address{};
  if (bytes != 0) {
    allocate_in(ctx, "cuMemAlloc", bytes, where,
                [&](const driver_table& d) { return d.cuMemAlloc(&address, bytes); });
  }
  return address;
}

void* allocate_pinned(const owning_context& ctx, std::size_t bytes, unsigned flags,
                      std::source_location where) {
  (void)ctx.lifetime_for("pinned_buffer", "pinned_buffer",
                         where);  // a moved-from context throws here
  void* host = nullptr;
  if (bytes != 0) {
    allocate_in(ctx, "cuMemHostAlloc", bytes, where,
                [&](const driver_table& d) { return d.cuMemHostAlloc(&host, bytes, flags); });
  }
  return host;
}

CUdeviceptr allocate_managed(const owning_context& ctx, std::size_t bytes, unsigned flags,
                             std::source_location where) {
  (void)ctx.lifetime_for("managed_buffer", "managed_buffer",
                         where);  // a moved-from context throws here
  CUdeviceptr address{};
  if (bytes != 0) {
    allocate_in(ctx, "cuMemAllocManaged", bytes, where,
                [&](const driver_table& d) { return d.cuMemAllocManaged(&address, bytes, flags); });
  }
  return address;
}

CUdeviceptr allocate_pitched(const owning_context& ctx, std::size_t width_bytes, std::size_t height,
                             unsigned element_size, std::size_t& pitch,
                             std::source_location where) {
  (void)ctx.lifetime_for("pitched_buffer", "pitched_buffer",
                         where);  // a moved-from context throws here
  CUdeviceptr address{};
  pitch = 0;
  if (width_bytes != 0 && height != 0) {
    allocate_in(ctx, "cuMemAllocPitch", width_bytes * height, where, [&](const driver_table& d) {
      return d.cuMemAllocPitch(&address, &pitch, width_bytes, height, element_size);
    });
  }
  return address;
}

CUdeviceptr mapped_device_address(const void* host, std::source_location where) {
  CUdeviceptr address{};
  check(driver().cuMemHostGetDevicePointer(&address, const_cast<void*>(host), 0),
        "cuMemHostGetDevicePointer", where);
  return address;
}

void throw_size_mismatch(const char* api, std::size_t dst, std::size_t src,
                         std::size_t element_size, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api,
              "destination has " + std::to_string(dst) + " elements, source has " +
                  std::to_string(src) + " (" + std::to_string(element_size) + " bytes each)",
              where);
}

void throw_shape_mismatch(const char* api, std::size_t dst_width, std::size_t dst_height,
                          std::size_t src_width, std::size_t src_height,
                          std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api,
              "destination is " + std::to_string(dst_width) + " x " + std::to_string(dst_height) +
                  " elements, source is " + std::to_string(src_width) + " x " +
                  std::to_string(src_height),
              where);
}

void check_sync(CUresult result, const char* api, std::source_location where) {
  if (result == CUDA_ERROR_INVALID_CONTEXT) [[unlikely]] {
    throw_error(make_error_code(result), api,
                "synchronous copies and fills run in the current context; make one current "
                "with cuwrap::scoped_current_context",
                where);
  }
  check(result, api, where);
}

CUDA_MEMCPY2D describe_2d(const void* dst, std::size_t dst_pitch, const void* src,
                          std::size_t src_pitch, std::size_t width_bytes, std::size_t height) {
  CUDA_MEMCPY2D desc{};
  desc.srcMemoryType = CU_MEMORYTYPE_UNIFIED;  // the driver tells host from device by address
  desc.srcDevice = reinterpret_cast<CUdeviceptr>(src);  // NOLINT: UVA address
  desc.srcPitch = src_pitch;
  desc.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  desc.dstDevice = reinterpret_cast<CUdeviceptr>(dst);  // NOLINT: UVA address
  desc.dstPitch = dst_pitch;
  desc.WidthInBytes = width_bytes;
  desc.Height = height;
  return desc;
}

void prefetch(CUdeviceptr address, std::size_t bytes, memory_location to, stream_ref s,
              std::source_location where) {
  expect_argument_not_moved_from(!s.empty(), "managed_buffer", "prefetch", "stream", where);
  check(driver().cuMemPrefetchAsync(address, bytes, to.native(), 0, s.get()), "cuMemPrefetchAsync",
        where);
}

namespace {

// `call()`, one driver call. NVIDIA's driver refuses cuMemAdvise and cuMemRangeGetAttribute
// without a current context (CUDA_ERROR_INVALID_CONTEXT, seen on an H200): when none is current,
// the call is made again in the context of the memory at `address` (cuPointerGetAttributes,
// then as in_context.hpp).
template <class Call>
CUresult in_memory_context(CUdeviceptr address, Call&& call, std::source_location where) {
  return call_in_context_of(
      [&] {
        CUcontext ctx = nullptr;
        CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_CONTEXT;
        void* value = &ctx;
        check(driver().cuPointerGetAttributes(1, &attribute, &value, address),
              "cuPointerGetAttributes", where);
        return ctx;
      },
      std::forward<Call>(call), where);
}

}  // namespace

void advise(CUdeviceptr address, std::size_t bytes, memory_advice advice, memory_location location,
            std::source_location where) {
  check(in_memory_context(
            address,
            [&] {
              return driver().cuMemAdvise(address, bytes, static_cast<CUmem_advise>(advice),
                                          location.native());
            },
            where),
        "cuMemAdvise", where);
}

int range_attribute(CUdeviceptr address, std::size_t bytes, CUmem_range_attribute attribute,
                    std::source_location where) {
  int value = 0;
  check(in_memory_context(
            address,
            [&] {
              return driver().cuMemRangeGetAttribute(&value, sizeof(value), attribute, address,
                                                     bytes);
            },
            where),
        "cuMemRangeGetAttribute", where);
  return value;
}

memory_location range_location(CUdeviceptr address, std::size_t bytes,
                               CUmem_range_attribute type_attribute,
                               CUmem_range_attribute id_attribute, std::source_location where) {
  return {static_cast<CUmemLocationType>(range_attribute(address, bytes, type_attribute, where)),
          range_attribute(address, bytes, id_attribute, where)};
}

CUdeviceptr pool_allocate(CUmemoryPool pool, std::size_t bytes, const stream& s,
                          std::source_location where) {
  expect_argument_not_moved_from(!s.empty(), "memory_pool", "allocate", "stream", where);
  CUdeviceptr address{};
  const CUresult r = driver().cuMemAllocFromPoolAsync(&address, bytes, pool, s.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    const auto& owner = s.context_lifetime("memory_pool", "allocate", where);
    throw_allocation_error(r, "cuMemAllocFromPoolAsync", bytes, owner ? owner->device : CUdevice{},
                           where);
  }
  return address;
}

}  // namespace detail

std::byte* host_registration::register_range(const owning_context& ctx, void* data,
                                             std::size_t bytes, registration_flags flags,
                                             std::source_location where) {
  (void)ctx.lifetime_for("host_registration", "host_registration", where);
  const scoped_current_context current{ctx, where};
  const CUresult r = detail::driver().cuMemHostRegister(data, bytes, static_cast<unsigned>(flags));
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemHostRegister", std::to_string(bytes) + " bytes",
                        where);
  }
  return static_cast<std::byte*>(data);
}

host_registration::host_registration(const owning_context& ctx, void* data, std::size_t bytes,
                                     registration_flags flags, std::source_location where)
    : base{register_range(ctx, data, bytes, flags, where), bytes, ctx.lifetime()} {}

pointer_info pointer_attributes(CUdeviceptr address, std::source_location where) {
  unsigned type = 0;
  int ordinal = -1;
  CUcontext context{};
  CUdeviceptr start = 0;
  std::size_t size = 0;
  int managed = 0;
  std::array attributes{CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                        CU_POINTER_ATTRIBUTE_CONTEXT,     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                        CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  std::array<void*, attributes.size()> values{&type, &ordinal, &context, &start, &size, &managed};
  check(detail::driver().cuPointerGetAttributes(static_cast<unsigned>(attributes.size()),
                                                attributes.data(), values.data(), address),
        "cuPointerGetAttributes", where);
  pointer_info info;
  info.context = context;
  info.range_start = start;
  info.range_size = size;
  info.device = type == 0 ? -1 : ordinal;
  if (managed != 0) {
    info.type = memory_type::managed;
  } else if (type == CU_MEMORYTYPE_DEVICE) {
    info.type = memory_type::device;
  } else if (type == CU_MEMORYTYPE_HOST) {
    info.type = memory_type::host;
  }
  return info;
}

memory_usage memory_info(context_ref ctx, std::source_location where) {
  const scoped_current_context current{ctx, where};
  memory_usage usage;
  check(detail::driver().cuMemGetInfo(&usage.free, &usage.total), "cuMemGetInfo", where);
  return usage;
}

}  // namespace cuwrap
