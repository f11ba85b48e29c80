// Conformance kernels: warp votes, matches, reductions, shuffles and bit intrinsics.

// Per warp (block size a multiple of 32); per thread i, with v = in[i]:
//   out[i*8+0] ballot(v odd), +1 all(v < 1000), +2 any(v == 7), +3 match_any(v % 4),
//   +4 reduce_add(v), +5 reduce_min(v), +6 reduce_max(v), +7 match_all(v >> 30) with its pred
//   in bit 31 (mask in the rest... see host).
extern "C" __global__ void warp_votes(const unsigned* in, unsigned* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned v = in[i];
  unsigned* o = out + 8 * i;
  o[0] = __ballot_sync(0xffffffffu, v & 1u);
  o[1] = __all_sync(0xffffffffu, v < 1000u);
  o[2] = __any_sync(0xffffffffu, v == 7u);
  o[3] = __match_any_sync(0xffffffffu, v % 4u);
  o[4] = __reduce_add_sync(0xffffffffu, v);
  o[5] = __reduce_min_sync(0xffffffffu, v);
  o[6] = __reduce_max_sync(0xffffffffu, v);
  int pred = 0;
  const unsigned all = __match_all_sync(0xffffffffu, v >> 30, &pred);
  o[7] = all ^ (pred ? 0x5a5a5a5au : 0u);
}

// Votes inside a divergent branch: only even lanes take part.
extern "C" __global__ void warp_votes_divergent(const unsigned* in, unsigned* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned v = in[i];
  const unsigned lane = threadIdx.x & 31u;
  unsigned r0 = 0, r1 = 0, r2 = 0;
  if ((lane & 1u) == 0) {
    const unsigned mask = 0x55555555u;
    r0 = __ballot_sync(mask, v > 50u);
    r1 = __activemask();
    r2 = __reduce_or_sync(mask, v);
  } else {
    r0 = __ballot_sync(0xaaaaaaaau, v > 50u);
    r2 = __reduce_xor_sync(0xaaaaaaaau, v);
    r1 = __reduce_and_sync(0xaaaaaaaau, v | 0xf0u);
  }
  out[3 * i] = r0;
  out[3 * i + 1] = r1;
  out[3 * i + 2] = r2;
}

// Shuffle variants with widths: out[i*6+...] = shfl(idx lane^5), shfl width 8 (src lane 3 of
// each group), shfl_up width 16 by 3, shfl_down width 16 by 5, shfl_xor width 8 mask 2, and a
// shuffle of a double from lane 31 - lane.
extern "C" __global__ void warp_shuffles(const int* in, int* out, double* dout) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[i];
  const unsigned lane = threadIdx.x & 31u;
  int* o = out + 5 * i;
  o[0] = __shfl_sync(0xffffffffu, v, static_cast<int>(lane ^ 5u));
  o[1] = __shfl_sync(0xffffffffu, v, 3, 8);
  o[2] = __shfl_up_sync(0xffffffffu, v, 3, 16);
  o[3] = __shfl_down_sync(0xffffffffu, v, 5, 16);
  o[4] = __shfl_xor_sync(0xffffffffu, v, 2, 8);
  dout[i] = __shfl_sync(0xffffffffu, static_cast<double>(v) * 1.5, static_cast<int>(31 - lane));
}

// Bit intrinsics on 32- and 64-bit values: per input (a, b, c) 16 results.
extern "C" __global__ void bit_ops(const unsigned* a, const unsigned* b,
                                   const unsigned long long* c, unsigned long long* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = a[i];
  const unsigned y = b[i];
  const unsigned long long z = c[i];
  unsigned long long* o = out + 16 * i;
  o[0] = static_cast<unsigned>(__popc(x));
  o[1] = static_cast<unsigned>(__popcll(z));
  o[2] = static_cast<unsigned>(__clz(static_cast<int>(x)));
  o[3] = static_cast<unsigned>(__clzll(static_cast<long long>(z)));
  o[4] = static_cast<unsigned>(__ffs(static_cast<int>(x)));
  o[5] = static_cast<unsigned>(__ffsll(static_cast<long long>(z)));
  o[6] = __brev(x);
  o[7] = __brevll(z);
  o[8] = __byte_perm(x, y, y & 0x7777u);
  o[9] = __funnelshift_l(x, y, y & 63u);
  o[10] = __funnelshift_r(x, y, y & 63u);
  o[11] = __funnelshift_lc(x, y, y & 63u);
  o[12] = __funnelshift_rc(x, y, y & 63u);
  o[13] = static_cast<unsigned>(__mulhi(static_cast<int>(x), static_cast<int>(y)));
  o[14] = __umul64hi(z, static_cast<unsigned long long>(x) * 0x9e3779b97f4a7c15ull);
  o[15] =
      (static_cast<unsigned long long>(__sad(static_cast<int>(x), static_cast<int>(y), 7u)) << 32) |
      __usad(x, y, 3u) | (static_cast<unsigned long long>(__uhadd(x, y)) << 40);
}
