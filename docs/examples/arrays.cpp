// docs/arrays.md: a 3D array filled from the host, a box of it read back, a layered array and a
// mipmap level, and a batch of copies as one driver call.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <numeric>
#include <vector>

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  const cuwrap::scoped_current_context current{ctx};
  cuwrap::stream s{ctx};

  // A 16 x 8 x 4 array of float: fill it from a dense host volume (one cuMemcpy3D).
  cuwrap::array<float> volume_array{ctx, {16, 8, 4}};
  std::vector<float> host(16 * 8 * 4);
  std::iota(host.begin(), host.end(), 0.0f);
  cuwrap::copy_3d(cuwrap::volume<float>(volume_array), cuwrap::volume_of(host, {16, 8, 4}));

  // Read a 4 x 2 x 2 box starting at (3, 5, 1) back into a pitched device buffer and the host.
  const cuwrap::volume<const float> whole = volume_array;
  std::vector<float> box(4 * 2 * 2);
  cuwrap::copy_3d(cuwrap::volume_of(box, {4, 2, 2}), whole.region({3, 5, 1}, {4, 2, 2}));
  const float first = box[0];  // element (3, 5, 1): (1 * 8 + 5) * 16 + 3 = 211
  std::printf("box starts with %g\n", static_cast<double>(first));

  // Layer 2 of a layered array of float4, written from the host.
  auto layers = cuwrap::array<float, 4>::layered(ctx, 8, 8, 3);
  std::vector<std::array<float, 4>> layer(8 * 8, std::array<float, 4>{1, 2, 3, 4});
  const cuwrap::volume<std::array<float, 4>> layered_volume = layers;
  cuwrap::copy_3d(layered_volume.region({0, 0, 2}, {8, 8, 1}), cuwrap::volume_of(layer, {8, 8, 1}));

  // Level 1 of a mipmapped array is a 4 x 4 array of its own.
  cuwrap::mipmapped_array<std::uint8_t> mip{ctx, {8, 8}, 4};
  const std::vector<std::uint8_t> texels(16, 7);
  cuwrap::copy_3d(cuwrap::volume<std::uint8_t>(mip.level(1)), cuwrap::volume_of(texels, {4, 4, 1}));

  // Two copies in one cuMemcpy3DBatchAsync: the array's first row to the host and a row of the
  // host volume into a pitched buffer.
  std::vector<float> row(16);
  cuwrap::pitched_buffer<float> pitched{ctx, 16, 1};
  const cuwrap::copy_3d_batch_op ops[] = {
      cuwrap::batch_copy_3d(cuwrap::volume_of(row, {16, 1, 1}), whole.region({}, {16, 1, 1})),
      cuwrap::batch_copy_3d(cuwrap::volume<float>(pitched),
                            cuwrap::volume_of(std::span{host}.first(16), {16, 1, 1})),
  };
  cuwrap::copy_3d_batch(s, ops);
  s.synchronize();
  std::printf("row[15] = %g\n", static_cast<double>(row[15]));
  return first == 211.0f && row[15] == 15.0f ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
