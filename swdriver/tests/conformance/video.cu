// Conformance kernel: SIMD-within-a-word (video) intrinsics, dp4a/dp2a and 24-bit multiplies
// (a module of its own: on sm_90 nvcc uses the packed add/min/max .s16x2/.u16x2 forms).

// 16 results per (x, y) pair.
extern "C" __global__ void simd_ops(const unsigned* xs, const unsigned* ys, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = xs[i], y = ys[i];
  unsigned* o = out + 16 * i;
  o[0] = __vadd4(x, y);
  o[1] = __vsub2(x, y);
  o[2] = __vabsdiffu4(x, y);
  o[3] = __vmaxs2(x, y);
  o[4] = __vminu4(x, y);
  o[5] = __vcmpgtu4(x, y);
  o[6] = __vcmpeq2(x, y);
  o[7] = __vavgu4(x, y);
  o[8] = __vsads2(x, y);
  o[9] = static_cast<unsigned>(__dp4a(static_cast<int>(x), static_cast<int>(y), 1000));
  o[10] = __dp4a(x, y, 7u);
  o[11] = static_cast<unsigned>(__dp2a_lo(static_cast<int>(x), static_cast<int>(y), -5));
  o[12] = __dp2a_hi(x, y, 9u);
  o[13] = __vaddss2(x, y);
  o[14] = __vsetles4(x, y);
  o[15] = static_cast<unsigned>(__mul24(static_cast<int>(x), static_cast<int>(y))) ^
          __umul24(x, y) ^ __umulhi(x, y) ^
          static_cast<unsigned>(__rhadd(static_cast<int>(x), static_cast<int>(y)));
}
