// Conformance kernels: every integer and floating type, conversions between them, rounding
// intrinsics, half and bfloat16, and the single-precision math library.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Integer types: 28 results per 64-bit input, each widened to 64 bits.
extern "C" __global__ void int_types(const long long* in, unsigned long long* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long v = in[i];
  unsigned long long* o = out + 28 * i;
  const char c = static_cast<char>(v);
  const signed char sc = static_cast<signed char>(v >> 8);
  const unsigned char uc = static_cast<unsigned char>(v >> 3);
  const short s = static_cast<short>(v >> 5);
  const unsigned short us = static_cast<unsigned short>(v >> 17);
  const int x = static_cast<int>(v);
  const unsigned u = static_cast<unsigned>(v >> 13);
  const unsigned long long ull = static_cast<unsigned long long>(v);
  o[0] = static_cast<unsigned long long>(static_cast<long long>(c));
  o[1] = static_cast<unsigned long long>(static_cast<long long>(sc));
  o[2] = uc;
  o[3] = static_cast<unsigned long long>(static_cast<long long>(s));
  o[4] = us;
  o[5] = static_cast<unsigned long long>(static_cast<long long>(x));
  o[6] = u;
  o[7] = static_cast<unsigned long long>(static_cast<long long>(sc * c + uc));
  o[8] = static_cast<unsigned long long>(static_cast<long long>(s * us - x));
  const int d = static_cast<int>(((v >> 40) & 0xffff) | 3) - 30001;
  o[9] = static_cast<unsigned long long>(static_cast<long long>(x / d));
  o[10] = static_cast<unsigned long long>(static_cast<long long>(x % d));
  const unsigned ud = static_cast<unsigned>(d) | 1u;
  o[11] = u / ud;
  o[12] = u % ud;
  const long long d64 = (v >> 20) | 1;
  o[13] = static_cast<unsigned long long>(v / d64);
  o[14] = static_cast<unsigned long long>(v % d64);
  o[15] = ull / (static_cast<unsigned long long>(d64) | 5u);
  o[16] = static_cast<unsigned long long>(static_cast<long long>(x >> (v & 31)));
  o[17] = u >> (v & 31);
  o[18] = ull << (v & 63);
  o[19] = static_cast<unsigned long long>(v >> ((v >> 8) & 63));
  o[20] = static_cast<unsigned long long>(static_cast<long long>(static_cast<short>(s * 3 + c)));
  o[21] = static_cast<unsigned long long>(static_cast<long long>(max(x, d) + min(x, d)));
  o[22] =
      static_cast<unsigned long long>(static_cast<long long>(abs(x == (-2147483647 - 1) ? 0 : x)));
  o[23] = static_cast<unsigned long long>(llabs(v == (-9223372036854775807LL - 1) ? 0 : v));
  o[24] = __float_as_uint(static_cast<float>(x));
  o[25] = __float_as_uint(static_cast<float>(v));
  o[26] = __double_as_longlong(static_cast<double>(ull));
  o[27] = __float_as_uint(static_cast<float>(u)) |
          (static_cast<unsigned long long>(__float_as_uint(static_cast<float>(us))) << 32);
}

// Float conversions and operations: 48 results per input pair (x, y), each as the bits of the
// result widened to 64 bits. The host test knows which are exact and which have a tolerance.
extern "C" __global__ void float_types(const float* xs, const float* ys, unsigned long long* out,
                                       int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = xs[i];
  const float y = ys[i];
  unsigned long long* o = out + 48 * i;
  // Exact IEEE operations.
  o[0] = __float_as_uint(x + y);
  o[1] = __float_as_uint(x * y);
  o[2] = __float_as_uint(x / y);
  o[3] = __float_as_uint(__fdiv_rn(x, y));
  o[4] = __float_as_uint(fmaf(x, y, 1.5f));
  o[5] = __float_as_uint(sqrtf(fabsf(x)));
  o[6] = __float_as_uint(__fmul_rz(x, y));
  o[7] = __float_as_uint(__fmul_ru(x, y));
  o[8] = __float_as_uint(__fmul_rd(x, y));
  o[9] = __float_as_uint(fminf(x, y));
  o[10] = __float_as_uint(fmaxf(x, y));
  o[11] = __float_as_uint(floorf(x));
  o[12] = __float_as_uint(ceilf(x));
  o[13] = __float_as_uint(truncf(x));
  o[14] = __float_as_uint(rintf(x));
  o[15] = __float_as_uint(roundf(x));
  // Float to integer (saturating; NaN gives 0).
  o[16] = static_cast<unsigned>(static_cast<int>(x));
  o[17] = static_cast<unsigned>(__float2int_rn(x));
  o[18] = static_cast<unsigned>(__float2int_rz(x));
  o[19] = static_cast<unsigned>(__float2int_rd(x));
  o[20] = static_cast<unsigned>(__float2int_ru(x));
  o[21] = __float2uint_rn(x);
  o[22] = static_cast<unsigned>(x);
  o[23] = static_cast<unsigned long long>(static_cast<long long>(x));
  o[24] = static_cast<unsigned long long>(__float2ll_rn(x));
  o[25] = static_cast<unsigned long long>(x);
  o[26] = static_cast<unsigned long long>(
      static_cast<long long>(static_cast<short>(__float2int_rz(x))));
  // Float and double.
  o[27] = __double_as_longlong(static_cast<double>(x));
  o[28] = __float_as_uint(static_cast<float>(static_cast<double>(x) * static_cast<double>(y)));
  o[29] = __double_as_longlong(static_cast<double>(x) / static_cast<double>(y));
  o[30] = __float_as_uint(__double2float_rz(static_cast<double>(x) / 3.0));
  // Half and bfloat16.
  const __half hx = __float2half(x);
  const __half hy = __float2half(y);
  o[31] = __half_as_ushort(hx);
  o[32] = __float_as_uint(__half2float(hx));
  o[33] = __half_as_ushort(__hadd(hx, hy));
  o[34] = __half_as_ushort(__hmul(hx, hy));
  o[35] = __half_as_ushort(__float2half_rz(x));
  const __nv_bfloat16 bx = __float2bfloat16(x);
  const __nv_bfloat16 by = __float2bfloat16(y);
  o[36] = __bfloat16_as_ushort(bx);
  o[37] = __float_as_uint(__bfloat162float(bx));
  o[38] = __bfloat16_as_ushort(__hadd(bx, by));
  o[39] = __bfloat16_as_ushort(__hmul(bx, by));
  // Transcendentals (compared within a few ulp).
  o[40] = __float_as_uint(rsqrtf(fabsf(x)));
  o[41] = __float_as_uint(expf(x));
  o[42] = __float_as_uint(logf(fabsf(x)));
  o[43] = __float_as_uint(sinf(x));
  o[44] = __float_as_uint(cosf(x));
  o[45] = __float_as_uint(powf(fabsf(x), y));
  o[46] = __float_as_uint(exp2f(y));
  o[47] = __float_as_uint(tanhf(y));
}

// Double precision: 12 results per input pair.
extern "C" __global__ void double_types(const double* xs, const double* ys, unsigned long long* out,
                                        int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double x = xs[i];
  const double y = ys[i];
  unsigned long long* o = out + 12 * i;
  o[0] = __double_as_longlong(x + y);
  o[1] = __double_as_longlong(x * y);
  o[2] = __double_as_longlong(x / y);
  o[3] = __double_as_longlong(fma(x, y, -0.25));
  o[4] = __double_as_longlong(sqrt(fabs(x)));
  o[5] = static_cast<unsigned long long>(static_cast<long long>(static_cast<int>(x)));
  o[6] = static_cast<unsigned long long>(static_cast<long long>(x));
  o[7] = __float_as_uint(static_cast<float>(x));
  o[8] = __double_as_longlong(floor(x));
  o[9] = __double_as_longlong(rint(y));
  o[10] = static_cast<unsigned long long>(__double2ll_rn(x));
  o[11] = __double_as_longlong(exp(y));  // within a few ulp
}
