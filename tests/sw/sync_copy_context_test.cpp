// Synchronous copies (1D and 2D), fills and zeroing with no current context: they run in the
// context of the device memory they touch, or say which context they need; with a context current
// they make the one driver call they always made.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fill_checks.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
};

bool none_current() {
  CUcontext current = nullptr;
  REQUIRE(cuwrap::detail::driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  return current == nullptr;
}

}  // namespace

TEST_SUITE("sync copies without a current context") {
  TEST_CASE_FIXTURE(fixture, "copies host to device, device to device and device to host") {
    REQUIRE(none_current());
    cuwrap::device_buffer<int> a{ctx, 4}, b{ctx, 4};
    const std::vector<int> in{1, 2, 3, 4};
    std::vector<int> out(4);
    const auto calls = calls_made_by([&] { cuwrap::copy(a, in); });
    CHECK(calls.at("cuCtxPushCurrent_v2") == 1);  // made again in the buffer's context
    CHECK(calls.at("cuCtxPopCurrent_v2") == 1);
    cuwrap::copy(b, a);
    cuwrap::copy(out, b);
    CHECK(out == in);
    CHECK(none_current());  // the stack is as it was
  }

  TEST_CASE_FIXTURE(fixture, "the context is the destination's, else the source's") {
    cuwrap::context other{cuwrap::device::get(0)};  // not current: creating pops it again
    REQUIRE(none_current());
    cuwrap::device_buffer<float> here{ctx, 3};
    cuwrap::device_buffer<float> there{other, 3};
    std::vector<float> host{1.5f, 2.5f, 3.5f}, back(3);
    cuwrap::copy(there, host);  // into `other`'s memory
    cuwrap::copy(here, there);  // device to device across contexts
    cuwrap::copy(back, here);   // from the primary context's memory
    CHECK(back == host);
    cuwrap::managed_buffer<float> managed{other, 3};
    cuwrap::copy(managed, host);
    CHECK(managed[2] == 3.5f);
    CHECK(none_current());
  }

  TEST_CASE_FIXTURE(fixture, "fill and zero run in the memory's context") {
    REQUIRE(none_current());
    cuwrap::testing::check_fill_patterns(ctx);
    CHECK(none_current());
  }

  TEST_CASE_FIXTURE(fixture, "2D copies run in the context of the pitched memory") {
    cuwrap::pitched_buffer<int> pitched{ctx, 3, 2};
    const std::vector<int> in{1, 2, 3, 4, 5, 6};
    std::vector<int> out(6);
    REQUIRE(none_current());
    const auto calls = calls_made_by([&] {
      cuwrap::copy_2d(pitched.view(), cuwrap::pitched_span<const int>::dense(in.data(), 3, 2));
    });
    CHECK(calls.at("cuMemcpy2D_v2") == 2);  // refused for want of a context, then made again
    CHECK(calls.at("cuCtxPushCurrent_v2") == 1);
    cuwrap::copy_2d(cuwrap::pitched_span<int>::dense(out.data(), 3, 2), pitched);  // the source's
    CHECK(out == in);
    CHECK(none_current());
    std::vector<int> host(6);
    CHECK_THROWS_WITH_AS(cuwrap::copy_2d(cuwrap::pitched_span<int>::dense(host.data(), 3, 2),
                                         cuwrap::pitched_span<const int>::dense(in.data(), 3, 2)),
                         doctest::Contains("make one current with cuwrap::scoped_current_context"),
                         cuwrap::error);
    const cuwrap::scoped_current_context current{ctx};
    cuwrap::testing::check_one_call("cuMemcpy2D_v2",
                                    [&] { cuwrap::copy_2d(pitched.view(), pitched); });
  }

  TEST_CASE_FIXTURE(fixture, "copy_3d runs in the context of an owning array or device memory") {
    // cuMemcpy3D runs in the current context's default stream: the driver refuses it with no
    // context current (CUDA_ERROR_INVALID_CONTEXT, also with an array side: 580.159.04 on an
    // H200); copy_3d then makes it again in the context of the memory it touches, as copy and
    // copy_2d do.
    cuwrap::array<std::uint32_t> arr{ctx, {4, 2}};
    cuwrap::device_buffer<std::uint32_t> dev{ctx, 8};
    const std::vector<std::uint32_t> in{1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<std::uint32_t> out(8);
    REQUIRE(none_current());
    const auto calls = calls_made_by([&] {
      cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(in, {4, 2, 1}));
    });
    CHECK(calls.at("cuMemcpy3D_v2") == 2);  // refused for want of a context, then made again
    CHECK(calls.at("cuCtxPushCurrent_v2") == 1);
    cuwrap::copy_3d(cuwrap::volume_of(dev, {4, 2, 1}), cuwrap::volume<const std::uint32_t>(arr));
    cuwrap::copy_3d(cuwrap::volume_of(out, {4, 2, 1}),
                    cuwrap::volume_of(std::as_const(dev), {4, 2, 1}));
    CHECK(out == in);
    CHECK(none_current());
    // No context to take: host memory on both sides, an array known only by its view.
    std::vector<std::uint32_t> host(8);
    CHECK_THROWS_WITH_AS(
        cuwrap::copy_3d(cuwrap::volume_of(host, {4, 2, 1}), cuwrap::volume_of(in, {4, 2, 1})),
        doctest::Contains("make one current with cuwrap::scoped_current_context"), cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(arr.view()),
                                         cuwrap::volume_of(in, {4, 2, 1})),
                         doctest::Contains("an array_view does not say its context"),
                         cuwrap::error);
    CHECK(none_current());
    const cuwrap::scoped_current_context current{ctx};
    cuwrap::testing::check_one_call("cuMemcpy3D_v2", [&] {
      cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(in, {4, 2, 1}));
    });
  }

  TEST_CASE_FIXTURE(fixture, "with a context current they make exactly one driver call") {
    cuwrap::device_buffer<float> floats{ctx, 5};
    std::vector<float> host(5);
    const cuwrap::scoped_current_context current{ctx};
    cuwrap::testing::check_one_call("cuMemcpy", [&] { cuwrap::copy(floats, host); });
    cuwrap::testing::check_one_call("cuMemsetD32_v2", [&] { cuwrap::fill(floats, 2.0f); });
    cuwrap::testing::check_one_call("cuMemsetD8_v2", [&] { cuwrap::zero(floats); });
  }

  TEST_CASE_FIXTURE(fixture, "memory of no context: the error names the device to make current") {
    cuwrap::stream s{ctx};
    cuwrap::stream_ordered_buffer<int> ordered{s, 4};  // pool memory belongs to no context
    s.synchronize();
    std::vector<int> host(4);
    REQUIRE(none_current());
    try {
      cuwrap::copy(host, ordered);
      FAIL("no error");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::invalid_context);
      CHECK(std::string{e.api()} == "cuMemcpy");
      const std::string what = e.what();
      CHECK(what.find("a stream-ordered allocation of device 0") != std::string::npos);
      CHECK(what.find("make a context of device 0 current with cuwrap::scoped_current_context") !=
            std::string::npos);
    }
    CHECK_THROWS_WITH_AS(cuwrap::fill(ordered, 1), doctest::Contains("cuMemsetD32"), cuwrap::error);
    CHECK(none_current());
  }

  TEST_CASE_FIXTURE(fixture, "host memory alone: the error says to make a context current") {
    std::vector<int> a(4), b(4);
    REQUIRE(none_current());
    CHECK_THROWS_WITH_AS(cuwrap::copy(a, b),
                         doctest::Contains("is device memory of a context; synchronous copies and "
                                           "fills run in the current context: make one current "
                                           "with cuwrap::scoped_current_context"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "a failed push is reported and leaves the stack as it was") {
    cuwrap::device_buffer<int> device{ctx, 4};
    std::vector<int> host(4);
    REQUIRE(swcuda().add_fault_rule("cuCtxPushCurrent:1:CUDA_ERROR_UNKNOWN") == 0);
    try {
      cuwrap::copy(device, host);
      FAIL("no error");
    } catch (const cuwrap::error& e) {
      CHECK(std::string{e.api()} == "cuCtxPushCurrent");
      CHECK(std::string{e.where().file_name()}.ends_with("sync_copy_context_test.cpp"));
    }
    CHECK(none_current());
  }
}
