// The managed memory batch operations (cuwrap/managed_buffer.hpp): prefetch, discard, discard
// and prefetch, each one driver call for the whole batch.
#include <string>
#include <vector>

#include "cuwrap/managed_buffer.hpp"

namespace cuwrap {
namespace {

// The driver takes the addresses and the sizes as two arrays: `call(addresses, sizes)` gets
// them, split on the stack for a batch of up to kInline ranges (left uninitialized past the
// batch: a batch is a hot path), else on the heap.
constexpr std::size_t kInline = 16;

template <class Call>
CUresult with_split(std::span<const managed_range> ranges, Call&& call) {
  if (ranges.size() <= kInline) [[likely]] {
    CUdeviceptr addresses[kInline];
    std::size_t sizes[kInline];
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      addresses[i] = ranges[i].address;
      sizes[i] = ranges[i].bytes;
    }
    return call(addresses, sizes);
  }
  std::vector<CUdeviceptr> addresses(ranges.size());
  std::vector<std::size_t> sizes(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    addresses[i] = ranges[i].address;
    sizes[i] = ranges[i].bytes;
  }
  return call(addresses.data(), sizes.data());
}

[[gnu::cold, gnu::noinline]] void throw_batch_error(CUresult r, const char* api, std::size_t count,
                                                    std::source_location where) {
  detail::throw_error(make_error_code(r), api,
                      std::to_string(count) +
                          " ranges: each must be managed memory, and the stream not the legacy "
                          "default stream",
                      where);
}

}  // namespace

void prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
              std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "prefetch", "stream", where);
  if (ranges.empty()) return;
  CUmemLocation location = to.native();
  std::size_t first = 0;
  const CUresult r = with_split(ranges, [&](CUdeviceptr* addresses, std::size_t* sizes) {
    return detail::driver().cuMemPrefetchBatchAsync(addresses, sizes, ranges.size(), &location,
                                                    &first, 1, 0, s.get());
  });
  if (r != CUDA_SUCCESS) [[unlikely]] {
    throw_batch_error(r, "cuMemPrefetchBatchAsync", ranges.size(), where);
  }
}

void discard(stream_ref s, std::span<const managed_range> ranges, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "discard", "stream", where);
  if (ranges.empty()) return;
  const CUresult r = with_split(ranges, [&](CUdeviceptr* addresses, std::size_t* sizes) {
    return detail::driver().cuMemDiscardBatchAsync(addresses, sizes, ranges.size(), 0, s.get());
  });
  if (r != CUDA_SUCCESS) [[unlikely]] {
    throw_batch_error(r, "cuMemDiscardBatchAsync", ranges.size(), where);
  }
}

void discard_and_prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
                          std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "discard_and_prefetch", "stream",
                                         where);
  if (ranges.empty()) return;
  CUmemLocation location = to.native();
  std::size_t first = 0;
  const CUresult r = with_split(ranges, [&](CUdeviceptr* addresses, std::size_t* sizes) {
    return detail::driver().cuMemDiscardAndPrefetchBatchAsync(addresses, sizes, ranges.size(),
                                                              &location, &first, 1, 0, s.get());
  });
  if (r != CUDA_SUCCESS) [[unlikely]] {
    throw_batch_error(r, "cuMemDiscardAndPrefetchBatchAsync", ranges.size(), where);
  }
}

}  // namespace cuwrap
