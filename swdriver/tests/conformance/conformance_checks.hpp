// Checks shared by the nvcc-built PTX tests and the NVRTC-built ones: each runs the kernels of
// one conformance source from a loaded module and compares every output with a host reference.
#pragma once

#include "conformance_support.hpp"

namespace conf {

void check_reduce_tree(Conformance& t, CUmodule m);
void check_reduce_shfl_down(Conformance& t, CUmodule m);
void check_reduce_shfl_xor(Conformance& t, CUmodule m);
void check_reduce_cg(Conformance& t, CUmodule m);
void check_scan_hillis_steele(Conformance& t, CUmodule m);
void check_scan_warp(Conformance& t, CUmodule m);
/// `name`: the function to look up (a mangled name for the templated kernels).
void check_bitonic_int(Conformance& t, CUmodule m);
void check_bitonic_float(Conformance& t, CUmodule m, const char* name);
void check_bitonic_u64(Conformance& t, CUmodule m, const char* name);
void check_recursion(Conformance& t, CUmodule m);
void check_divergent(Conformance& t, CUmodule m);
void check_local_array(Conformance& t, CUmodule m);
// Blocks that run together (conformance_coresident_test.cpp): coresident.cu, cooperative.cu.
void check_scan_lookback(Conformance& t, CUmodule m);
void check_persistent_queue(Conformance& t, CUmodule m);
void check_grid_sync_reduce(Conformance& t, CUmodule m);

}  // namespace conf
