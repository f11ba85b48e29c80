// The common part of the memory-owning types: a pointer, a count, the context's lifetime, and
// move semantics that free the old memory. Each type supplies how its memory is freed.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::detail {

/// Owns `size()` elements at `data()`; `Free::release(data)` (noexcept) frees them.
template <class T, class Free>
class owned_memory {
 public:
  owned_memory(owned_memory&& other) noexcept
      : data_{std::exchange(other.data_, nullptr)},
        size_{std::exchange(other.size_, 0)},
        context_{std::move(other.context_)} {}
  owned_memory& operator=(owned_memory&& other) noexcept {
    if (this != &other) {
      owned_memory old{std::move(*this)};  // frees the previous memory
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      context_ = std::move(other.context_);
    }
    return *this;
  }
  ~owned_memory() {
    if (data_ != nullptr) {
      Free::release(data_);
    }
  }

  /// The pointer (a device pointer unless the type says otherwise).
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// The number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The number of bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// True if there are no elements.
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

 protected:
  owned_memory(T* data, std::size_t size, std::shared_ptr<const context_owner> context) noexcept
      : data_{data}, size_{size}, context_{std::move(context)} {}

  /// Gives up ownership of the memory (and of the context's lifetime).
  std::pair<T*, std::size_t> release_memory() noexcept {
    context_.reset();
    return {std::exchange(data_, nullptr), std::exchange(size_, 0)};
  }

 private:
  T* data_;
  std::size_t size_;
  std::shared_ptr<const context_owner> context_;
};

/// cuMemFree: device, managed and pitched memory.
struct free_device_memory {
  static void release(const void* p) noexcept {
    check_nothrow(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p)), "cuMemFree");  // NOLINT
  }
};
/// cuMemFreeHost: pinned memory.
struct free_pinned_memory {
  static void release(void* p) noexcept {
    check_nothrow(driver().cuMemFreeHost(p), "cuMemFreeHost");
  }
};
/// cuIpcCloseMemHandle: memory mapped from another process.
struct close_ipc_memory {
  static void release(const void* p) noexcept {
    check_nothrow(driver().cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(p)),  // NOLINT
                  "cuIpcCloseMemHandle");
  }
};

}  // namespace cuwrap::detail
