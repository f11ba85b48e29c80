// The shape of a copy or memset (rows of bytes at two addresses) and a stream memory operation,
// as the code that runs them has them and a graph node (graph/node.hpp) or a stream capture
// (capture_hooks.hpp) records them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace swcu {

/// A copy as a stream or a graph node does it: rows of `width` bytes (Depth 1).
struct CopyShape {
  std::uintptr_t dst = 0, src = 0;
  std::size_t dst_pitch = 0, src_pitch = 0;
  std::size_t width = 0, height = 0;
};

/// A memset as a stream or a graph node does it.
struct FillShape {
  std::uintptr_t dst = 0;
  std::size_t pitch = 0;
  unsigned value = 0;
  unsigned element_size = 1;
  std::size_t width = 0, height = 1;
};

/// One stream memory operation (CUstreamBatchMemOpParams decoded; exec/memops.hpp checks and
/// runs it).
struct MemOp {
  unsigned kind = 0;  ///< CUstreamBatchMemOpType, as the caller gave it
  std::uint64_t address = 0;
  std::uint64_t value = 0;
  unsigned flags = 0;
};

}  // namespace swcu
