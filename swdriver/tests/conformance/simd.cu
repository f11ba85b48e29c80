// Conformance kernels: 128-bit integers, vector loads and stores, block-wide vote barriers,
// and warps of a 2D block that is not a multiple of 32 threads.

// 128-bit integer arithmetic: product, sum with carries, quotient, shifts.
extern "C" __global__ void int128_ops(const unsigned long long* a, const unsigned long long* b,
                                      unsigned long long* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned __int128 x = (static_cast<unsigned __int128>(a[2 * i + 1]) << 64) | a[2 * i];
  const unsigned __int128 y = (static_cast<unsigned __int128>(b[2 * i + 1]) << 64) | b[2 * i];
  const unsigned __int128 p = x * y;
  const unsigned __int128 s = x + y;
  const unsigned __int128 d = x - y;
  const unsigned __int128 q = x / ((y >> 70) | 1);
  const __int128 sx = static_cast<__int128>(x) >> (b[2 * i] & 127);
  const unsigned __int128 r[5] = {p, s, d, q, static_cast<unsigned __int128>(sx)};
  for (int k = 0; k < 5; ++k) {
    out[10 * i + 2 * k] = static_cast<unsigned long long>(r[k]);
    out[10 * i + 2 * k + 1] = static_cast<unsigned long long>(r[k] >> 64);
  }
}

// Vector loads and stores: float4, int4, double2, and char4/short2 packing.
extern "C" __global__ void vector_access(const float4* f, const int4* v, const double2* d,
                                         float4* fo, int4* vo, double2* dout, char4* co, short2* so,
                                         int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 a = f[i];
  const int4 b = v[i];
  const double2 c = d[i];
  fo[i] = make_float4(a.w, a.x * 2.0f, a.y - a.z, a.x + a.w);
  vo[i] = make_int4(b.x + b.y, b.y ^ b.z, b.z * b.w, b.w - b.x);
  dout[i] = make_double2(c.y, c.x * c.y);
  co[i] = make_char4(static_cast<signed char>(b.x), static_cast<signed char>(b.y >> 8),
                     static_cast<signed char>(-b.z), static_cast<signed char>(i));
  so[i] = make_short2(static_cast<short>(b.w), static_cast<short>(b.x >> 16));
}

// __syncthreads_count / _and / _or over a 2D block of 10 x 10 (four warps, the last partial),
// and warp votes with __activemask in the partial warp; lane ids from %laneid.
extern "C" __global__ void block_votes(const int* in, int* out) {
  const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned threads = blockDim.x * blockDim.y;
  const int v = in[blockIdx.x * threads + t];
  const int count = __syncthreads_count(v > 0);
  const int all = __syncthreads_and(v > -50);
  const int any = __syncthreads_or(v == 42);
  const unsigned active = __activemask();
  const unsigned ballot = __ballot_sync(active, v & 1);
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  const int warp_sum = __reduce_add_sync(active, static_cast<unsigned>(v));
  int* o = out + 7 * (blockIdx.x * threads + t);
  o[0] = count;
  o[1] = all;
  o[2] = any;
  o[3] = static_cast<int>(active);
  o[4] = static_cast<int>(ballot);
  o[5] = static_cast<int>(lane);
  o[6] = warp_sum;
}
