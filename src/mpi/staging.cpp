#include "cuwrap/mpi/detail/staging.hpp"

#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::mpi::detail {

staging_buffer::staging_buffer(stream_ref s, std::size_t bytes, std::source_location where) {
  if (bytes == 0) return;
  const context_ref ctx = s.context(where);
  const scoped_current_context current{ctx, where};
  cuwrap::check(cuwrap::detail::driver().cuMemHostAlloc(&data_, bytes, 0), "cuMemHostAlloc", where);
  bytes_ = bytes;
  ctx_ = ctx.get();
}

staging_buffer::staging_buffer(staging_buffer&& other) noexcept
    : data_{std::exchange(other.data_, nullptr)},
      bytes_{std::exchange(other.bytes_, 0)},
      ctx_{std::exchange(other.ctx_, nullptr)} {}

staging_buffer& staging_buffer::operator=(staging_buffer&& other) noexcept {
  if (this != &other) {
    staging_buffer old{std::move(*this)};
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

staging_buffer::~staging_buffer() {
  if (data_ == nullptr) return;
  const auto& drv = cuwrap::detail::driver();
  CUcontext previous = nullptr;
  drv.cuCtxGetCurrent(&previous);
  const bool push = previous != ctx_ && drv.cuCtxPushCurrent(ctx_) == CUDA_SUCCESS;
  cuwrap::check_nothrow(drv.cuMemFreeHost(data_), "cuMemFreeHost");
  if (push) drv.cuCtxPopCurrent(&previous);
}

void staging_buffer::fill_from(stream_ref s, CUdeviceptr from, std::size_t bytes,
                               std::source_location where) const {
  if (bytes == 0) return;
  cuwrap::check(cuwrap::detail::driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(data_), from,
                                                       bytes, s.get()),
                "cuMemcpyAsync", where);
  s.synchronize(where);
}

void staging_buffer::drain_to(stream_ref s, CUdeviceptr to, std::size_t bytes,
                              std::source_location where) const {
  if (bytes == 0) return;
  cuwrap::check(cuwrap::detail::driver().cuMemcpyAsync(to, reinterpret_cast<CUdeviceptr>(data_),
                                                       bytes, s.get()),
                "cuMemcpyAsync", where);
  s.synchronize(where);
}

}  // namespace cuwrap::mpi::detail
