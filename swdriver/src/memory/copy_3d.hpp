// 3D copies between any mix of host, device, pitched and array memory: cuMemcpy3D(Async),
// cuMemcpy3DPeer(Async), the array forms of cuMemcpy2D (copy.cpp forwards them here),
// cuMemcpyAtoH/HtoA/AtoD/DtoA/AtoA, and the batches cuMemcpyBatchAsync and cuMemcpy3DBatchAsync
// (copy_batch.cpp).
//
// A copy is `depth` slices of `height` rows of `width` bytes. A linear side is a start address,
// a row pitch and a slice pitch; an array side is an array handle and the byte/row/slice offset of
// the first element (array.hpp: each array row is contiguous, so a copied row is one memmove).
// Everything is checked at the call (the real driver's CUDA_ERROR_INVALID_VALUE for extents
// outside a side); an executing copy looks its arrays up again and checks its ranges again, and
// fails with CUDA_ERROR_ILLEGAL_ADDRESS (sticky) when one went meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/api.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {

/// One side of a 3D copy, resolved and checked.
struct CopySide {
  bool is_array = false;
  CUarray array = nullptr;           ///< an array side's handle (looked up again when it runs)
  std::size_t x = 0, y = 0, z = 0;   ///< an array side's offset: bytes, rows, slices
  std::uintptr_t address = 0;        ///< a linear side's first byte
  std::size_t pitch = 0, slice = 0;  ///< a linear side's row and slice pitch in bytes
  std::size_t span = 0;              ///< a linear side's bytes from `address` (0: empty copy)
  bool checked = false;              ///< driver memory: checked again when the copy runs
  bool device = false;               ///< device memory or an array (not host memory)
  bool pageable = false;             ///< host memory the driver does not know
};

/// A resolved 3D copy.
struct Copy3D {
  CopySide dst, src;
  std::size_t width = 0, height = 0, depth = 0;  ///< bytes, rows, slices
  /// The source, copied at the call (pageable memory of an Async call, or a batch copy whose
  /// source access order lets it be read during the call); tightly packed.
  std::shared_ptr<std::vector<unsigned char>> staged;

  [[nodiscard]] std::size_t bytes() const noexcept { return width * height * depth; }
};

/// Whether a call is synchronous (it waits) or enqueues in a stream.
enum class CopyMode { sync, async };

/// Resolves a linear side: memory type CU_MEMORYTYPE_HOST, DEVICE or UNIFIED, offset
/// (x bytes, y rows, z slices), pitch and slice height (0: `height`, for a single slice).
/// CUDA_ERROR_INVALID_VALUE for a pitch or slice height smaller than the copy, a pitch above
/// CU_DEVICE_ATTRIBUTE_MAX_PITCH (unless `unaligned`), or device memory the range leaves.
[[nodiscard]] CUresult resolve_linear(State& s, int type, std::uintptr_t base, std::size_t x,
                                      std::size_t y, std::size_t z, std::size_t pitch,
                                      std::size_t slice_height, std::size_t width,
                                      std::size_t height, std::size_t depth, bool unaligned,
                                      CopyMode mode, CopySide& out);

/// Resolves an array side at (x bytes, y, z): CUDA_ERROR_INVALID_VALUE for a handle that is not
/// a live array, an x or width that is not a multiple of the element size, or a region outside
/// the array.
[[nodiscard]] CUresult resolve_array(State& s, CUarray handle, std::size_t x, std::size_t y,
                                     std::size_t z, std::size_t width, std::size_t height,
                                     std::size_t depth, CopySide& out);

/// Resolves both sides of a CUDA_MEMCPY3D (`unaligned`: cuMemcpy2DUnaligned's pitch rules).
[[nodiscard]] CUresult resolve_memcpy3d(State& s, const CUDA_MEMCPY3D& p, bool unaligned,
                                        CopyMode mode, Copy3D& out);

/// Copies the source of `c` into c.staged now.
void stage_source(State& s, Copy3D& c);

/// Runs `c` now on `device`'s behalf (a stream operation, a graph's memcpy node):
/// CUDA_ERROR_ILLEGAL_ADDRESS when an array or driver memory it names is gone or `device` may
/// not access it.
[[nodiscard]] CUresult run_copy_3d(State& s, const Copy3D& c, int device);

/// One stream operation that runs `copies` (all or nothing checked first), on `device`'s behalf.
[[nodiscard]] Op copies_op(std::vector<Copy3D> copies, int device);

/// Enqueues (or, `wait`, runs to completion) the copies in `q` as one operation, or records them
/// when `q` captures: a single linear copy of one slice through capture_copy, anything else
/// (array sides, several slices) through capture_copies. (Batches refuse a capture first.)
[[nodiscard]] CUresult submit_copies(State& s, Lock& lock, Queue& q, std::vector<Copy3D> copies,
                                     bool wait);

/// The capture hook of copies with array sides or several slices (defined by
/// graph/copy_nodes.cpp, like the hooks of sched/capture_hooks.hpp): each copy becomes one memcpy
/// node after the stream's capture dependencies, with no edges between copies of one call, and
/// they all become its dependencies. A synchronous call is CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
/// and invalidates the capture.
[[nodiscard]] Captured capture_copies(State& s, Queue& q, bool sync,
                                      const std::vector<Copy3D>& copies);

/// A whole CUDA_MEMCPY3D call: sync (current context's default stream) or Async in `stream`.
[[nodiscard]] CUresult memcpy3d(Sym sym, CopyMode mode, NullStream null, CUstream stream,
                                const CUDA_MEMCPY3D* p, bool unaligned);

}  // namespace swcu
