// The out-of-line parts of the concrete memory resources (cuwrap/mr/*_resource.hpp): the driver
// calls, each naming the bytes (and the device, where the resource knows it) on failure.
#include <string>

#include "cuwrap/device_buffer.hpp"
#include "cuwrap/mr/device_resource.hpp"
#include "cuwrap/mr/managed_resource.hpp"
#include "cuwrap/mr/pinned_resource.hpp"
#include "cuwrap/mr/pool_resource.hpp"

namespace cuwrap::mr {
namespace detail {

void throw_bad_alignment(const char* type, std::size_t alignment, std::source_location where) {
  const std::string prefix =
      std::string{"cuwrap::"} + type + "::allocate: alignment " + std::to_string(alignment);
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw usage_error{prefix + " is not a power of two", where};
  }
  throw usage_error{prefix + " is more than the " + std::to_string(driver_alignment) +
                        " bytes driver allocations are aligned to",
                    where};
}

namespace {

using owner_ptr = std::shared_ptr<const cuwrap::detail::context_owner>;

// Runs an allocation call with the resource's context current; failures name the bytes and
// the device.
template <class Allocate>
void allocate_in(const owner_ptr& owner, const char* type, const char* api, std::size_t bytes,
                 std::source_location where, Allocate&& allocate) {
  cuwrap::detail::expect_not_moved_from(owner != nullptr, type, "allocate", where);
  const scoped_current_context current{context_ref{owner->handle}, where};
  if (const CUresult r = allocate(cuwrap::detail::driver()); r != CUDA_SUCCESS) [[unlikely]] {
    cuwrap::detail::throw_allocation_error(r, api, bytes, owner->device, where);
  }
}

}  // namespace

void* pool_allocate(CUmemoryPool pool, stream_ref s, std::size_t bytes, const char* /*type*/,
                    std::source_location where) {
  CUdeviceptr address{};
  const CUresult r =
      cuwrap::detail::driver().cuMemAllocFromPoolAsync(&address, bytes, pool, s.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    cuwrap::detail::throw_error(make_error_code(r), "cuMemAllocFromPoolAsync",
                                std::to_string(bytes) + " bytes", where);
  }
  return reinterpret_cast<void*>(address);  // NOLINT: device addresses are integers
}

void pool_deallocate(stream_ref s, void* p, std::source_location where) {
  cuwrap::detail::expect_argument_not_moved_from(!s.empty(), "pool_resource", "deallocate",
                                                 "stream", where);
  check(cuwrap::detail::driver().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(p), s.get()),
        "cuMemFreeAsync", where);
}

void synchronize(stream_ref s, std::source_location where) { s.synchronize(where); }

void free_now(void* p) noexcept {
  check_nothrow(cuwrap::detail::driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p)),  // NOLINT
                "cuMemFree");
}

}  // namespace detail

// ---- device_resource

device_resource::device_resource(const owning_context& ctx, std::source_location where)
    : context_{ctx.lifetime_for("device_resource", "device_resource", where)} {}

void* device_resource::allocate(std::size_t bytes, std::size_t alignment,
                                std::source_location where) {
  detail::check_alignment("device_resource", alignment, where);
  CUdeviceptr address{};
  if (bytes == 0) {
    cuwrap::detail::expect_not_moved_from(context_ != nullptr, "device_resource", "allocate",
                                          where);
    return nullptr;
  }
  detail::allocate_in(
      context_, "device_resource", "cuMemAlloc", bytes, where,
      [&](const cuwrap::detail::driver_table& d) { return d.cuMemAlloc(&address, bytes); });
  return reinterpret_cast<void*>(address);  // NOLINT: device addresses are integers
}

void device_resource::deallocate(void* p, std::size_t /*bytes*/,
                                 std::size_t /*alignment*/) noexcept {
  if (p != nullptr) {
    detail::free_now(p);
  }
}

void* device_resource::allocate(stream_ref s, std::size_t bytes, std::size_t alignment,
                                std::source_location where) {
  detail::check_alignment("device_resource", alignment, where);
  cuwrap::detail::expect_not_moved_from(context_ != nullptr, "device_resource", "allocate", where);
  cuwrap::detail::expect_argument_not_moved_from(!s.empty(), "device_resource", "allocate",
                                                 "stream", where);
  if (bytes == 0) {
    return nullptr;
  }
  CUdeviceptr address{};
  const CUresult r = cuwrap::detail::driver().cuMemAllocAsync(&address, bytes, s.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    cuwrap::detail::throw_allocation_error(r, "cuMemAllocAsync", bytes, context_->device, where);
  }
  return reinterpret_cast<void*>(address);  // NOLINT: device addresses are integers
}

void device_resource::deallocate(stream_ref s, void* p, std::size_t /*bytes*/,
                                 std::size_t /*alignment*/, std::source_location where) {
  if (p != nullptr) {
    cuwrap::detail::expect_argument_not_moved_from(!s.empty(), "device_resource", "deallocate",
                                                   "stream", where);
    check(cuwrap::detail::driver().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(p), s.get()),
          "cuMemFreeAsync", where);
  }
}

cuwrap::device device_resource::device(std::source_location where) const {
  cuwrap::detail::expect_not_moved_from(context_ != nullptr, "device_resource", "device", where);
  return cuwrap::device::get(context_->device, where);
}

// ---- pinned_resource

pinned_resource::pinned_resource(const owning_context& ctx, pinned_flags flags,
                                 std::source_location where)
    : context_{ctx.lifetime_for("pinned_resource", "pinned_resource", where)}, flags_{flags} {}

void* pinned_resource::allocate(std::size_t bytes, std::size_t alignment,
                                std::source_location where) {
  detail::check_alignment("pinned_resource", alignment, where);
  void* host = nullptr;
  if (bytes == 0) {
    cuwrap::detail::expect_not_moved_from(context_ != nullptr, "pinned_resource", "allocate",
                                          where);
    return nullptr;
  }
  detail::allocate_in(context_, "pinned_resource", "cuMemHostAlloc", bytes, where,
                      [&](const cuwrap::detail::driver_table& d) {
                        return d.cuMemHostAlloc(&host, bytes, static_cast<unsigned>(flags_));
                      });
  return host;
}

void pinned_resource::deallocate(void* p, std::size_t /*bytes*/,
                                 std::size_t /*alignment*/) noexcept {
  if (p != nullptr) {
    check_nothrow(cuwrap::detail::driver().cuMemFreeHost(p), "cuMemFreeHost");
  }
}

// ---- managed_resource

managed_resource::managed_resource(const owning_context& ctx, managed_attach attach,
                                   std::source_location where)
    : context_{ctx.lifetime_for("managed_resource", "managed_resource", where)}, attach_{attach} {}

void* managed_resource::allocate(std::size_t bytes, std::size_t alignment,
                                 std::source_location where) {
  detail::check_alignment("managed_resource", alignment, where);
  CUdeviceptr address{};
  if (bytes == 0) {
    cuwrap::detail::expect_not_moved_from(context_ != nullptr, "managed_resource", "allocate",
                                          where);
    return nullptr;
  }
  detail::allocate_in(context_, "managed_resource", "cuMemAllocManaged", bytes, where,
                      [&](const cuwrap::detail::driver_table& d) {
                        return d.cuMemAllocManaged(&address, bytes, static_cast<unsigned>(attach_));
                      });
  return reinterpret_cast<void*>(address);  // NOLINT: device addresses are integers
}

void managed_resource::deallocate(void* p, std::size_t /*bytes*/,
                                  std::size_t /*alignment*/) noexcept {
  if (p != nullptr) {
    detail::free_now(p);
  }
}

}  // namespace cuwrap::mr
