// Memcpy nodes whose copy has a CUDA array on a side or several slices (CopyNode::general,
// node.hpp), through cuGraphAddMemcpyNode, cuGraphAddNode, the Set/GetParams functions, exec
// updates and stream capture (the capture_copies hook of memory/copy_3d.hpp is defined in
// copy_nodes.cpp). Such a node keeps the resolved 3D copy (memory/copy_3d.hpp): arrays by
// handle, looked up again each time the node runs, so a node whose array was destroyed fails its
// launch with CUDA_ERROR_ILLEGAL_ADDRESS (sticky), as a copy enqueued in a stream does.
#pragma once

#include "graph/node.hpp"

namespace swcu {

/// Whether `p` needs the general form: an array side, Depth above 1 or a slice offset (z).
[[nodiscard]] bool general_copy(const CUDA_MEMCPY3D& p) noexcept;

/// Checks `p` and sets out.shape (rows between two addresses) or out.general; out.params and
/// out.ctx are left to the caller. CUDA_ERROR_INVALID_VALUE for Height or Depth 0 and for what
/// an enqueued copy refuses (copy_3d.hpp: extents outside a side, a pitch below the width...).
[[nodiscard]] CUresult make_copy_node(State& s, const CUDA_MEMCPY3D& p, CopyNode& out);

/// Whether an executable graph's memcpy node `old` cannot take `now`'s parameters. cuda.h's
/// cuGraphExecUpdate: "Changing either the source or destination memory type (i.e.
/// CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_ARRAY, etc.) is not supported", "The CUDA device(s) to
/// which the operand(s) was allocated/mapped cannot change", "The source/destination memory must
/// be allocated from the same contexts": an array side keeps its array's context (and device).
[[nodiscard]] bool copy_operands_changed(State& s, const CopyNode& old, const CopyNode& now);

/// Whether a node's copy is one non-empty row (cuGraphExecMemcpyNodeSetParams: "Both the
/// instantiation-time memory operands and the memory operands in copyParams must be
/// 1-dimensional. Zero-length operations are not supported.").
[[nodiscard]] bool one_dimensional(const CopyNode& c) noexcept;

/// Whether a node copies to or from a CUDA array (device launch refuses it: "Copies involving
/// CUDA arrays are not permitted").
[[nodiscard]] bool copies_array(const CopyNode& c) noexcept;

}  // namespace swcu
