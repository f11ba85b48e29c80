// Texture and surface objects (conformance_texture_test.cpp): nvcc's unified-mode tex, tld4,
// txq, suld and sust on cudaTextureObject_t / cudaSurfaceObject_t handles.
#include <cuda_runtime.h>

// One tex2D<float4> per coordinate pair.
extern "C" __global__ void tex2d_sample(cudaTextureObject_t t, const float2* at, float4* out,
                                        int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}

// tex2D<int4> (element-type read mode) at float coordinates.
extern "C" __global__ void tex2d_sample_int(cudaTextureObject_t t, const float2* at, int4* out,
                                            int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<int4>(t, at[i].x, at[i].y);
}

// tex2Dgather<float4> of component `comp` (one tld4 per component).
extern "C" __global__ void tex2d_gather(cudaTextureObject_t t, const float2* at, float4* out, int n,
                                        int comp) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, at[i].x, at[i].y, comp);
}

// tex1Dfetch<int4> and tex1Dfetch<float4> at i + offset (integer coordinates, linear memory).
extern "C" __global__ void tex1d_fetch(cudaTextureObject_t ti, cudaTextureObject_t tf, int4* iout,
                                       float4* fout, int n, int offset) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    iout[i] = tex1Dfetch<int4>(ti, i + offset);
    fout[i] = tex1Dfetch<float4>(tf, i + offset);
  }
}

// tex1D<float> at float coordinates (a 1D texture over linear memory read through tex.1d.f32).
extern "C" __global__ void tex1d_sample(cudaTextureObject_t t, const float* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, at[i]);
}

// txq on a texture object: width, height, channel data type and order, normalized coordinates,
// filter mode, address modes, mipmap levels.
extern "C" __global__ void tex_query(cudaTextureObject_t t, unsigned* out) {
  asm("txq.width.b32 %0, [%1];" : "=r"(out[0]) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(out[1]) : "l"(t));
  asm("txq.channel_data_type.b32 %0, [%1];" : "=r"(out[2]) : "l"(t));
  asm("txq.channel_order.b32 %0, [%1];" : "=r"(out[3]) : "l"(t));
  asm("txq.normalized_coords.b32 %0, [%1];" : "=r"(out[4]) : "l"(t));
  asm("txq.filter_mode.b32 %0, [%1];" : "=r"(out[5]) : "l"(t));
  asm("txq.addr_mode_0.b32 %0, [%1];" : "=r"(out[6]) : "l"(t));
  asm("txq.addr_mode_1.b32 %0, [%1];" : "=r"(out[7]) : "l"(t));
  asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(out[8]) : "l"(t));
}

// tex2DLayered, tex3D and texCubemap<float> at (x, y, z | layer) per thread (CUDA arrays).
extern "C" __global__ void tex_layered(cudaTextureObject_t t, const float4* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, static_cast<int>(at[i].z));
}
extern "C" __global__ void tex_3d(cudaTextureObject_t t, const float4* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}
extern "C" __global__ void tex_cube(cudaTextureObject_t t, const float4* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float>(t, at[i].x, at[i].y, at[i].z);
}

// Each thread of a w x h grid doubles and increments its float element of a 2D surface.
extern "C" __global__ void surf_scale(cudaSurfaceObject_t s, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  const float v = surf2Dread<float>(s, x * 4, y);
  surf2Dwrite(v * 2 + 1, s, x * 4, y);
}
// Reads (x, y) of a 2D float surface in each boundary mode: out[0] zero, out[1] clamp, stores
// 7 there in zero mode, then (if `trap`) reads it in trap mode (which faults when outside).
extern "C" __global__ void surf_modes(cudaSurfaceObject_t s, int x, int y, float* out, int trap) {
  out[0] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeZero);
  out[1] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeClamp);
  surf2Dwrite(7.0f, s, x * 4, y, cudaBoundaryModeZero);  // dropped outside
  if (trap) out[2] = surf2Dread<float>(s, x * 4, y);
}
// surf1Dwrite of uchar4 (i, 2i, 3i, 4i) at element i.
extern "C" __global__ void surf_1d(cudaSurfaceObject_t s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    surf1Dwrite(make_uchar4(static_cast<unsigned char>(i), static_cast<unsigned char>(2 * i),
                            static_cast<unsigned char>(3 * i), static_cast<unsigned char>(4 * i)),
                s, i * 4);
  }
}

// tex2DLod<float4> at (x, y) with the level of detail in z (tex.level).
extern "C" __global__ void tex2d_lod(cudaTextureObject_t t, const float4* at, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLod<float4>(t, at[i].x, at[i].y, at[i].z);
}
// tex2DGrad<float4> at (x, y) with dPdx = (g.x, g.y) and dPdy = (g.z, g.w) (tex.grad).
extern "C" __global__ void tex2d_grad(cudaTextureObject_t t, const float2* at, const float4* g,
                                      float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = tex2DGrad<float4>(t, at[i].x, at[i].y, make_float2(g[i].x, g[i].y),
                               make_float2(g[i].z, g[i].w));
  }
}
// tex2D<float4> on a mipmapped texture: no mode, level of detail 0 (tex without .level).
extern "C" __global__ void tex2d_base(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
// The fetch of tex2D<float4> with half-precision results: tex.2d.v2.f16x2 into packed[2i],
// packed[2i + 1] and tex.2d.v4.f16 into halves[4i..4i + 3] (PTX ISA 4.2, sm_53).
extern "C" __global__ void tex2d_half(cudaTextureObject_t t, const float2* at, unsigned* packed,
                                      unsigned short* halves, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a, b;
  asm("tex.2d.v2.f16x2.f32 {%0, %1}, [%2, {%3, %4}];"
      : "=r"(a), "=r"(b)
      : "l"(t), "f"(at[i].x), "f"(at[i].y));
  packed[2 * i] = a;
  packed[2 * i + 1] = b;
  unsigned short h0, h1, h2, h3;
  asm("tex.2d.v4.f16.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
      : "=h"(h0), "=h"(h1), "=h"(h2), "=h"(h3)
      : "l"(t), "f"(at[i].x), "f"(at[i].y));
  halves[4 * i] = h0;
  halves[4 * i + 1] = h1;
  halves[4 * i + 2] = h2;
  halves[4 * i + 3] = h3;
}
// texCubemapGrad<float> at direction at[i] with dPdx = g[2i], dPdy = g[2i + 1] (tex.grad.cube).
extern "C" __global__ void tex_cube_grad(cudaTextureObject_t t, const float4* at, const float4* g,
                                         float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemapGrad<float>(t, at[i].x, at[i].y, at[i].z, g[2 * i], g[2 * i + 1]);
}
