// Kernels of the jacobi_halo sample.

// One Jacobi sweep over rows 1..rows of a (rows + 2) x nx block of the grid (rows 0 and
// rows + 1 are halos: a neighbour's rows, or the grid's fixed boundary). Columns 0 and nx - 1
// are the fixed boundary: copied. out = the average of the four neighbours of in.
extern "C" __global__ void jacobi_step(const float* in, float* out, int nx, int rows) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x >= nx || y > rows) return;
  const int i = y * nx + x;
  if (x == 0 || x == nx - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.25f * (in[i - nx] + in[i + nx] + in[i - 1] + in[i + 1]);
}
