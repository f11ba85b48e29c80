// The managed memory batch operations (cuwrap/managed_buffer.hpp): prefetch, discard, discard
// and prefetch, each one driver call for the whole batch.
#include <array>
#include <string>
#include <vector>

#include "cuwrap/managed_buffer.hpp"

namespace cuwrap {
namespace {

// The driver takes the addresses and the sizes as two arrays; a batch of up to kInline ranges
// is split on the stack.
constexpr std::size_t kInline = 16;

class split_ranges {
 public:
  explicit split_ranges(std::span<const managed_range> ranges) : count_{ranges.size()} {
    if (count_ > kInline) {
      heap_addresses_.resize(count_);
      heap_sizes_.resize(count_);
    }
    CUdeviceptr* const a = addresses();
    std::size_t* const b = sizes();
    for (std::size_t i = 0; i < count_; ++i) {
      a[i] = ranges[i].address;
      b[i] = ranges[i].bytes;
    }
  }
  CUdeviceptr* addresses() noexcept {
    return count_ > kInline ? heap_addresses_.data() : addresses_.data();
  }
  std::size_t* sizes() noexcept { return count_ > kInline ? heap_sizes_.data() : sizes_.data(); }

 private:
  std::size_t count_;
  std::array<CUdeviceptr, kInline> addresses_{};
  std::array<std::size_t, kInline> sizes_{};
  std::vector<CUdeviceptr> heap_addresses_;
  std::vector<std::size_t> heap_sizes_;
};

void check_batch(CUresult r, const char* api, std::size_t count, std::source_location where) {
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), api,
                        std::to_string(count) +
                            " ranges: each must be managed memory, and the stream not the legacy "
                            "default stream",
                        where);
  }
}

}  // namespace

void prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
              std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "prefetch", "stream", where);
  if (ranges.empty()) return;
  split_ranges split{ranges};
  CUmemLocation location = to.native();
  std::size_t first = 0;
  check_batch(
      detail::driver().cuMemPrefetchBatchAsync(split.addresses(), split.sizes(), ranges.size(),
                                               &location, &first, 1, 0, s.get()),
      "cuMemPrefetchBatchAsync", ranges.size(), where);
}

void discard(stream_ref s, std::span<const managed_range> ranges, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "discard", "stream", where);
  if (ranges.empty()) return;
  split_ranges split{ranges};
  check_batch(detail::driver().cuMemDiscardBatchAsync(split.addresses(), split.sizes(),
                                                      ranges.size(), 0, s.get()),
              "cuMemDiscardBatchAsync", ranges.size(), where);
}

void discard_and_prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
                          std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "discard_and_prefetch", "stream",
                                         where);
  if (ranges.empty()) return;
  split_ranges split{ranges};
  CUmemLocation location = to.native();
  std::size_t first = 0;
  check_batch(
      detail::driver().cuMemDiscardAndPrefetchBatchAsync(
          split.addresses(), split.sizes(), ranges.size(), &location, &first, 1, 0, s.get()),
      "cuMemDiscardAndPrefetchBatchAsync", ranges.size(), where);
}

}  // namespace cuwrap
