// The simple_texture sample's kernel: NVIDIA's simpleTextureDrv transformKernel, which rotates
// an image by `theta` around its centre, reading it through a texture object (normalized
// coordinates, wrap, linear filtering).
#include <cuda_runtime.h>

extern "C" __global__ void transform_kernel(float* out, int width, int height, float theta,
                                            cudaTextureObject_t tex) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= static_cast<unsigned>(width) || y >= static_cast<unsigned>(height)) return;
  float u = static_cast<float>(x) - static_cast<float>(width) / 2;
  float v = static_cast<float>(y) - static_cast<float>(height) / 2;
  float tu = u * cosf(theta) - v * sinf(theta);
  float tv = v * cosf(theta) + u * sinf(theta);
  tu /= static_cast<float>(width);
  tv /= static_cast<float>(height);
  out[y * width + x] = tex2D<float>(tex, tu + 0.5f, tv + 0.5f);
}
