// 3D and batch copies: the cold error paths and the batch calls.
#include "cuwrap/copy_3d.hpp"

#include <string>
#include <vector>

namespace cuwrap {
namespace detail {
namespace {

std::string text(extent_3d e) {
  return std::to_string(e.width) + " x " + std::to_string(e.height) + " x " +
         std::to_string(e.depth);
}

}  // namespace

void throw_extent_error(const char* api, const char* what, std::size_t offset, std::size_t size,
                        std::size_t limit, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api,
              std::string(what) + " " + std::to_string(offset) + " + " + std::to_string(size) +
                  " exceeds " + std::to_string(limit),
              where);
}

void throw_extent_mismatch(const char* api, extent_3d dst, extent_3d src,
                           std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api,
              "destination extent " + text(dst) + " differs from source extent " + text(src),
              where);
}

}  // namespace detail

void copy_3d_batch(stream_ref s, std::span<const copy_3d_batch_op> ops,
                   std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_3d_batch", "stream", where);
  if (ops.empty()) return;  // the driver refuses an empty batch; nothing to do
  // The driver takes a non-const list it does not write.
  check(detail::driver().cuMemcpy3DBatchAsync(ops.size(), const_cast<copy_3d_batch_op*>(ops.data()),
                                              0, s.get()),  // NOLINT
        "cuMemcpy3DBatchAsync", where);
}

void copy_batch(stream_ref s, std::span<const copy_batch_item> items, src_access_order order,
                std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), nullptr, "copy_batch", "stream", where);
  if (items.empty()) return;
  std::vector<CUdeviceptr> dsts(items.size()), srcs(items.size());
  std::vector<std::size_t> sizes(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    dsts[i] = items[i].dst;
    srcs[i] = items[i].src;
    sizes[i] = items[i].bytes;
  }
  CUmemcpyAttributes attributes{};
  attributes.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(order);
  std::size_t first = 0;
  check(detail::driver().cuMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), items.size(),
                                            &attributes, &first, 1, s.get()),
        "cuMemcpyBatchAsync", where);
}

}  // namespace cuwrap
