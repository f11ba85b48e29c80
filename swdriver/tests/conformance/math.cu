// Conformance kernels: the math library beyond the basics (float and double), fast-math
// intrinsics, half2/bfloat162 vector arithmetic and half conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// 25 float results per (x, y), as bits.
extern "C" __global__ void float_math(const float* xs, const float* ys, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = xs[i], y = ys[i];
  unsigned* o = out + 25 * i;
  int e = 0;
  o[0] = __float_as_uint(fmodf(x, y));
  o[1] = __float_as_uint(remainderf(x, y));
  o[2] = __float_as_uint(frexpf(x, &e));
  o[3] = static_cast<unsigned>(e);
  o[4] = __float_as_uint(ldexpf(x, static_cast<int>(y)));
  o[5] = static_cast<unsigned>(ilogbf(x));
  o[6] = __float_as_uint(nextafterf(x, y));
  o[7] = __float_as_uint(fdimf(x, y));
  o[8] = __float_as_uint(copysignf(x, y));
  o[9] = __float_as_uint(__saturatef(x));
  o[10] = __float_as_uint(__frcp_rn(x));
  o[11] = __float_as_uint(__fsqrt_rd(fabsf(x)));
  o[12] = __float_as_uint(__fadd_rd(x, y));
  o[13] = __float_as_uint(__fadd_ru(x, y));
  o[14] = __float_as_uint(__fmaf_rz(x, y, 0.1f));
  // Within a few ulp.
  o[15] = __float_as_uint(atan2f(x, y));
  o[16] = __float_as_uint(hypotf(x, y));
  o[17] = __float_as_uint(cbrtf(x));
  o[18] = __float_as_uint(erff(y));
  o[19] = __float_as_uint(log1pf(fabsf(x)));
  o[20] = __float_as_uint(expm1f(y));
  o[21] = __float_as_uint(asinf(y / 40.0f));
  o[22] = __float_as_uint(atanf(x));
  float s = 0.0f, c = 0.0f;
  sincosf(y, &s, &c);
  o[23] = __float_as_uint(s);
  o[24] = __float_as_uint(c);
}

// Fast intrinsics (hardware approximations; compared with a looser tolerance).
extern "C" __global__ void fast_math(const float* xs, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = xs[i];
  float* o = out + 6 * i;
  o[0] = __expf(x);
  o[1] = __logf(fabsf(x) + 1.0f);
  o[2] = __sinf(x);
  o[3] = __cosf(x);
  o[4] = __fdividef(x, 3.0f);
  o[5] = __powf(fabsf(x) + 1.0f, 0.5f);
}

// 10 double results per (x, y), as bits; all within a few ulp except [0..2].
extern "C" __global__ void double_math(const double* xs, const double* ys, unsigned long long* out,
                                       int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double x = xs[i], y = ys[i];
  unsigned long long* o = out + 10 * i;
  o[0] = __double_as_longlong(fmod(x, y));
  o[1] = __double_as_longlong(__drcp_rn(x));
  o[2] = __double_as_longlong(__dadd_rz(x, y));
  o[3] = __double_as_longlong(sin(x));
  o[4] = __double_as_longlong(cos(x));
  o[5] = __double_as_longlong(log(fabs(x)));
  o[6] = __double_as_longlong(pow(fabs(x), y / 8.0));
  o[7] = __double_as_longlong(atan2(x, y));
  o[8] = __double_as_longlong(tanh(y / 4.0));
  o[9] = __double_as_longlong(rsqrt(fabs(x)));
}

// half2 and bfloat162 lanes, half comparisons and half/int conversions: 14 results per pair.
extern "C" __global__ void half_vectors(const float* xs, const float* ys, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = xs[i], y = ys[i];
  // Pairs built from separate conversions; the packed conversions are results 12 and 13.
  const __half2 a = __halves2half2(__float2half(x), __float2half(y));
  const __half2 b = __halves2half2(__float2half(y), __float2half(0.5f));
  unsigned* o = out + 14 * i;
  const __half2 sum = __hadd2(a, b);
  const __half2 prod = __hmul2(a, b);
  const __half2 fma = __hfma2(a, b, __float2half2_rn(1.0f));
  o[0] = *reinterpret_cast<const unsigned*>(&sum);
  o[1] = *reinterpret_cast<const unsigned*>(&prod);
  o[2] = *reinterpret_cast<const unsigned*>(&fma);
  o[3] = __hlt(__low2half(a), __high2half(a)) | (__heq(__low2half(a), __low2half(b)) << 1) |
         (__hisnan(__low2half(a)) << 2) | (__hisinf(__low2half(a)) << 3);
  o[4] = static_cast<unsigned>(__half2int_rn(__low2half(a)));
  o[5] = __half_as_ushort(__int2half_rn(static_cast<int>(x * 100.0f)));
  o[6] = __half_as_ushort(__float2half_rd(x)) | (__half_as_ushort(__float2half_ru(x)) << 16);
  const __nv_bfloat162 c = __halves2bfloat162(__float2bfloat16(x), __float2bfloat16(y));
  const __nv_bfloat162 d = __halves2bfloat162(__float2bfloat16(y), __float2bfloat16(2.0f));
  const __nv_bfloat162 bs = __hadd2(c, d);
  const __nv_bfloat162 bp = __hmul2(c, d);
  o[7] = *reinterpret_cast<const unsigned*>(&bs);
  o[8] = *reinterpret_cast<const unsigned*>(&bp);
  o[9] = __bfloat16_as_ushort(__double2bfloat16(static_cast<double>(x) * 1.0000001));
  o[10] = __half_as_ushort(__hmax(__low2half(a), __high2half(a))) |
          (__half_as_ushort(__habs(__low2half(a))) << 16);
  o[11] = __half_as_ushort(__hneg(__high2half(prod)));
  const __half2 packed = __floats2half2_rn(x, y);              // cvt.rn.f16x2.f32
  const __nv_bfloat162 bpacked = __floats2bfloat162_rn(x, y);  // cvt.rn.bf16x2.f32
  o[12] = *reinterpret_cast<const unsigned*>(&packed);
  o[13] = *reinterpret_cast<const unsigned*>(&bpacked);
}
