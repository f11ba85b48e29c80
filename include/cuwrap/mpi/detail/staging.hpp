// Pinned host memory that the staged data path copies device buffers through.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <source_location>

#include "cuwrap/stream.hpp"

namespace cuwrap::mpi::detail {

/// `bytes` of page-locked host memory (cuMemHostAlloc in the context of the stream it is made
/// for, freed with cuMemFreeHost in that context). Move-only; empty for zero bytes.
class staging_buffer {
 public:
  staging_buffer() noexcept = default;
  staging_buffer(stream_ref s, std::size_t bytes, std::source_location where);
  staging_buffer(staging_buffer&& other) noexcept;
  staging_buffer& operator=(staging_buffer&& other) noexcept;
  staging_buffer(const staging_buffer&) = delete;
  staging_buffer& operator=(const staging_buffer&) = delete;
  ~staging_buffer();

  /// The host memory.
  [[nodiscard]] void* data() const noexcept { return data_; }
  /// Its size.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  /// Queues a copy of `bytes` from device `from` into this buffer on `s`, then synchronizes `s`.
  void fill_from(stream_ref s, CUdeviceptr from, std::size_t bytes,
                 std::source_location where) const;
  /// Queues a copy of `bytes` from this buffer to device `to` on `s`, then synchronizes `s`.
  void drain_to(stream_ref s, CUdeviceptr to, std::size_t bytes, std::source_location where) const;

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  CUcontext ctx_ = nullptr;
};

}  // namespace cuwrap::mpi::detail
