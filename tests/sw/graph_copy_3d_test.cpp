// Memcpy nodes with CUDA arrays and several slices through the library: add_copy_3d and
// set_copy_3d (<cuwrap/graph_copy_3d.hpp>), and stream captures of copy_3d, each launch checked
// against a host reference.
#include "cuwrap/graph_copy_3d.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/capture.hpp"
#include "cuwrap/memory.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;

namespace {

using words = std::vector<std::uint32_t>;

words iota_vector(std::size_t n, std::uint32_t first = 1) {
  words v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
};

}  // namespace

TEST_SUITE("graph copy_3d") {
  TEST_CASE_FIXTURE(fixture, "add_copy_3d makes memcpy nodes over arrays and several slices") {
    constexpr std::size_t w = 6, h = 4, d = 3;
    words input = iota_vector(w * h * d);
    cuwrap::array<std::uint32_t> arr{ctx, {w, h, d}};
    cuwrap::device_buffer<std::uint32_t> slab{ctx, w * h * d};
    words box(4 * 2 * 2, 0), back(w * h * d, 0);
    cuwrap::graph g{ctx};
    const cuwrap::volume<const std::uint32_t> whole = arr;
    // host -> array, a 4x2x2 box of the array at (1, 2, 1) -> host, the array -> device (3
    // slices) -> host.
    cuwrap::graph_node put{nullptr};
    check_one_call("cuGraphAddMemcpyNode", [&] {
      put = cuwrap::add_copy_3d(g, cuwrap::volume<std::uint32_t>(arr),
                                cuwrap::volume_of(input, {w, h, d}));
    });
    const auto boxed = cuwrap::add_copy_3d(g, cuwrap::volume_of(box, {4, 2, 2}),
                                           whole.region({1, 2, 1}, {4, 2, 2}), {put});
    const auto to_device = cuwrap::add_copy_3d(g, cuwrap::volume_of(slab, {w, h, d}), whole, {put});
    cuwrap::add_copy_3d(g, cuwrap::volume_of(back, {w, h, d}),
                        cuwrap::volume_of(std::as_const(slab), {w, h, d}), {to_device});
    CHECK(boxed.kind() == cuwrap::node_kind::memcpy);
    // Extents are compared before the driver.
    CHECK_THROWS_WITH_AS(
        (void)cuwrap::add_copy_3d(g, cuwrap::volume_of(box, {4, 2, 2}), whole),
        doctest::Contains("destination extent 4 x 2 x 2 differs from source extent 6 x 4 x 3"),
        cuwrap::error);

    auto exec = g.instantiate();
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        for (auto& v : input) v = v * 7 + 1;  // a launch reads the host source again
      }
      exec.launch(s);
      s.synchronize();
      CHECK(back == input);
      for (std::size_t z = 0; z < 2; ++z) {
        for (std::size_t y = 0; y < 2; ++y) {
          for (std::size_t x = 0; x < 4; ++x) {
            CHECK(box[(z * 2 + y) * 4 + x] == input[((z + 1) * h + y + 2) * w + x + 1]);
          }
        }
      }
    }
  }

  TEST_CASE_FIXTURE(fixture, "set_copy_3d moves a 1D array node to another array") {
    const words first = iota_vector(16), second = iota_vector(16, 300);
    words out(16, 0);
    cuwrap::array<std::uint32_t> a{ctx, {16}}, b{ctx, {16}};
    cuwrap::array<std::uint32_t> flat{ctx, {4, 4}};
    cuwrap::graph g{ctx};
    const auto put =
        cuwrap::add_copy_3d(g, cuwrap::volume<std::uint32_t>(a), cuwrap::volume_of(first, {16}));
    const auto get = cuwrap::add_copy_3d(g, cuwrap::volume_of(out, {16}),
                                         cuwrap::volume<const std::uint32_t>(a), {put});
    auto exec = g.instantiate();
    exec.launch(s);
    s.synchronize();
    CHECK(out == first);
    check_one_call("cuGraphExecMemcpyNodeSetParams", [&] {
      cuwrap::set_copy_3d(exec, put, cuwrap::volume<std::uint32_t>(b),
                          cuwrap::volume_of(second, {16}));
    });
    cuwrap::set_copy_3d(exec, get, cuwrap::volume_of(out, {16}),
                        cuwrap::volume<const std::uint32_t>(b));
    exec.launch(s);
    s.synchronize();
    CHECK(out == second);
    // The driver updates rows only: a 2D copy is refused, naming the call.
    CHECK_THROWS_WITH_AS(cuwrap::set_copy_3d(exec, put, cuwrap::volume<std::uint32_t>(flat),
                                             cuwrap::volume_of(first, {4, 4})),
                         doctest::Contains("cuGraphExecMemcpyNodeSetParams"), cuwrap::error);
    exec.launch(s);
    s.synchronize();
    CHECK(out == second);
  }

  TEST_CASE_FIXTURE(fixture, "a captured copy_3d with arrays becomes memcpy nodes") {
    constexpr std::size_t w = 4, h = 4, d = 2;
    words input = iota_vector(w * h * d), box(2 * 2 * 2, 0);
    cuwrap::array<std::uint32_t> arr{ctx, {w, h, d}};
    const cuwrap::volume<const std::uint32_t> whole = arr;
    auto capture = s.begin_capture();
    cuwrap::copy_3d(s, cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(input, {w, h, d}));
    cuwrap::copy_3d(s, cuwrap::volume_of(box, {2, 2, 2}), whole.region({1, 1, 0}, {2, 2, 2}));
    // The driver refuses batches while a stream captures (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    // and the capture goes on.
    const cuwrap::copy_3d_batch_op ops[] = {cuwrap::batch_copy_3d(
        cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(input, {w, h, d}))};
    CHECK_THROWS_WITH_AS(cuwrap::copy_3d_batch(s, ops), doctest::Contains("cuMemcpy3DBatchAsync"),
                         cuwrap::error);
    cuwrap::graph g = capture.end();
    const auto nodes = g.nodes();
    REQUIRE(nodes.size() == 2);
    for (const auto& n : nodes) CHECK(n.kind() == cuwrap::node_kind::memcpy);
    CHECK(box == words(8, 0));  // captured, not run

    auto exec = g.instantiate();
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        for (auto& v : input) v += 50;
      }
      exec.launch(s);
      s.synchronize();
      for (std::size_t z = 0; z < 2; ++z) {
        for (std::size_t y = 0; y < 2; ++y) {
          for (std::size_t x = 0; x < 2; ++x) {
            CHECK(box[(z * 2 + y) * 2 + x] == input[(z * h + y + 1) * w + x + 1]);
          }
        }
      }
    }
  }
}
