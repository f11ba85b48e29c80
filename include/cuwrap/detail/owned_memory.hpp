// The common part of the memory-owning types (device_buffer, stream_ordered_buffer,
// managed_buffer, pinned_buffer, pitched_buffer, host_registration, ipc_mapping,
// ipc_pool_memory): a pointer, a count, the context's lifetime, move semantics that free the
// old memory, and the moved-from state. Each type supplies how its memory is freed.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::detail {

/// Owns `size()` elements at `data()`, freed with `free.release(data)` (noexcept; `Free` may
/// carry state, such as the stream of a stream-ordered allocation). `Free::name` names the
/// owning type in errors ("device_buffer").
///
/// A moved-from or released owner holds no context: data() and everything built on it (spans,
/// addresses, host access) throw cuwrap::usage_error rather than hand out a null pointer, so
/// a moved-from buffer never reaches a kernel or the driver. A zero-element owner is not
/// moved from: its data() is null and its size() 0. Destroying or assigning to a moved-from
/// owner does nothing and never throws.
template <class T, class Free>
class owned_memory {
 public:
  owned_memory(const owned_memory&) = delete;
  owned_memory& operator=(const owned_memory&) = delete;
  owned_memory(owned_memory&& other) noexcept
      : data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)},
        context_{std::move(other.context_)},
        free_{other.free_} {}
  owned_memory& operator=(owned_memory&& other) noexcept {
    if (this != &other) {
      owned_memory old{std::move(*this)};  // frees the previous memory
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      context_ = std::move(other.context_);
      free_ = other.free_;
    }
    return *this;
  }
  ~owned_memory() {
    if (data_ != nullptr) {
      free_.release(data_);
    }
  }

  /// The pointer (a device pointer unless the type says otherwise). Throws
  /// cuwrap::usage_error at `where` if the owner was moved from or released.
  [[nodiscard]] T* data(std::source_location where = std::source_location::current()) const {
    expect_not_moved_from(!moved_from(), Free::name, "data", where);
    return data_;
  }
  /// The number of elements (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The number of bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// True if there are no elements (also after a move).
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// True once moved from or released: the owner owns nothing.
  [[nodiscard]] bool moved_from() const noexcept { return context_ == nullptr; }

 protected:
  owned_memory(T* data, std::size_t size, std::shared_ptr<const context_owner> context,
               Free free = {}) noexcept
      : data_{data}, size_{size}, context_{std::move(context)}, free_{free} {}

  /// Gives up ownership of the memory (and of the context's lifetime).
  std::pair<T*, std::size_t> release_memory() noexcept {
    context_.reset();
    return {std::exchange(data_, nullptr), std::exchange(size_, 0)};
  }
  /// The context's lifetime (null once moved from).
  [[nodiscard]] const std::shared_ptr<const context_owner>& context_lifetime() const noexcept {
    return context_;
  }
  /// How the memory is freed.
  [[nodiscard]] const Free& freer() const noexcept { return free_; }

 private:
  T* data_;
  std::size_t size_;
  std::shared_ptr<const context_owner> context_;
  [[no_unique_address]] Free free_;
};

/// cuMemFree: device, managed, pitched and imported pool memory. `Name` names the owner.
template <class Name>
struct free_device_memory {
  static constexpr const char* name = Name::value;
  static void release(const void* p) noexcept {
    check_nothrow(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p)), "cuMemFree");  // NOLINT
  }
};
/// cuMemFreeHost: pinned memory.
struct free_pinned_memory {
  static constexpr const char* name = "pinned_buffer";
  static void release(void* p) noexcept {
    check_nothrow(driver().cuMemFreeHost(p), "cuMemFreeHost");
  }
};
/// cuMemHostUnregister: a registered host range.
struct unregister_host_memory {
  static constexpr const char* name = "host_registration";
  static void release(void* p) noexcept {
    check_nothrow(driver().cuMemHostUnregister(p), "cuMemHostUnregister");
  }
};
/// cuIpcCloseMemHandle: memory mapped from another process.
/// cuIpcCloseMemHandle: IPC mappings. The close acts in the current context, so `context` (the
/// one the mapping was opened in) is made current for it when another is (src/ipc.cpp).
struct close_ipc_memory {
  static constexpr const char* name = "ipc_mapping";
  CUcontext context = nullptr;
  void release(const void* p) const noexcept;
};

/// Owner names for free_device_memory.
struct device_buffer_name {
  static constexpr const char* value = "device_buffer";
};
struct managed_buffer_name {
  static constexpr const char* value = "managed_buffer";
};
struct pitched_buffer_name {
  static constexpr const char* value = "pitched_buffer";
};
struct ipc_pool_memory_name {
  static constexpr const char* value = "ipc_pool_memory";
};

}  // namespace cuwrap::detail
