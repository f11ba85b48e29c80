// Conformance kernels: block scans (Hillis-Steele in shared memory, warp-shuffle scan).

// Hillis-Steele inclusive and exclusive scans of each block's segment, double-buffered in
// dynamic shared memory (2 * blockDim.x ints); any block size.
extern "C" __global__ void scan_hillis_steele(const int* in, int* inclusive, int* exclusive,
                                              int n) {
  extern __shared__ int buffer[];
  const unsigned t = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + t;
  int* src = buffer;
  int* dst = buffer + blockDim.x;
  const int x = i < static_cast<unsigned>(n) ? in[i] : 0;
  src[t] = x;
  __syncthreads();
  for (unsigned offset = 1; offset < blockDim.x; offset <<= 1) {
    dst[t] = t >= offset ? src[t] + src[t - offset] : src[t];
    __syncthreads();
    int* tmp = src;
    src = dst;
    dst = tmp;
  }
  if (i < static_cast<unsigned>(n)) {
    inclusive[i] = src[t];
    exclusive[i] = src[t] - x;
  }
}

// Warp-shuffle scan (__shfl_up_sync) within warps, warp totals scanned by warp 0; block size a
// multiple of 32. Inclusive and exclusive results of each block's segment.
extern "C" __global__ void scan_warp(const long long* in, long long* inclusive,
                                     long long* exclusive) {
  __shared__ long long totals[32];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const long long x = in[i];
  long long v = x;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const long long up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= static_cast<unsigned>(offset)) v += up;
  }
  if (lane == 31) totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x >> 5;
    long long w = lane < warps ? totals[lane] : 0;
    for (int offset = 1; offset < 32; offset <<= 1) {
      const long long up = __shfl_up_sync(0xffffffffu, w, offset);
      if (lane >= static_cast<unsigned>(offset)) w += up;
    }
    totals[lane] = w;
  }
  __syncthreads();
  if (warp > 0) v += totals[warp - 1];
  inclusive[i] = v;
  exclusive[i] = v - x;
}
