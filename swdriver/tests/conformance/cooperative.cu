// Conformance kernel: a grid-wide barrier (cooperative_groups::this_grid().sync()), launched
// with cuLaunchCooperativeKernel.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Phase 1 writes buf; after the grid barrier each thread reads a value another block wrote;
// then a second round in the other direction.
extern "C" __global__ void grid_sync_neighbors(const int* in, int* buf, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  const int i = static_cast<int>(grid.thread_rank());
  if (i < n) buf[i] = in[i] * 2;
  grid.sync();
  int v = 0;
  if (i < n) v = buf[(i + 97) % n];
  grid.sync();
  if (i < n) buf[i] = v + 1;
  grid.sync();
  if (i < n) out[i] = buf[(i + n - 13) % n] - v;
}
