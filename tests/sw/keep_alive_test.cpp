// keep_alive(): an owner handed to a stream outlives the work queued before it, and is
// destroyed off the driver's callback thread (host functions may not call the driver).
#include "cuwrap/keep_alive.hpp"

#include <doctest/doctest.h>

#include <latch>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/capture.hpp"
#include "cuwrap/cuwrap.hpp"
#include "cuwrap/memory_resource.hpp"
#include "fault_sweep.hpp"
#include "kernels_fixture.hpp"

using cuwrap::testing::check_calls;
using cuwrap::testing::kernels_fixture;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

int reports = 0;
void remember(std::error_code /*code*/, const char* /*api*/) noexcept { ++reports; }

// Counts what reaches the nothrow handler during a test.
struct remembering_handler {
  cuwrap::nothrow_error_handler previous = cuwrap::set_nothrow_error_handler(&remember);
  remembering_handler() { reports = 0; }
  ~remembering_handler() { cuwrap::set_nothrow_error_handler(previous); }
  remembering_handler(const remembering_handler&) = delete;
  remembering_handler& operator=(const remembering_handler&) = delete;
};

// Holds a stream: another thread enqueues a host function that waits until release(). The
// software driver runs stream work on the thread that enqueues it (SWCUDA_EXEC=immediate), so
// that thread drives the stream; work queued behind the host function meanwhile waits, as it
// would behind a long kernel on a GPU.
class stream_holder {
 public:
  explicit stream_holder(cuwrap::stream_ref s)
      : thread_{[this, s] {
          s.enqueue([this] {
            started_.count_down();
            gate_.wait();
          });
        }} {
    started_.wait();
  }
  /// Lets the stream go on (the holding thread runs what was queued behind it).
  void release() {
    gate_.count_down();
    thread_.join();
  }
  ~stream_holder() {
    if (thread_.joinable()) {
      release();
    }
  }
  stream_holder(const stream_holder&) = delete;
  stream_holder& operator=(const stream_holder&) = delete;

 private:
  std::latch started_{1};
  std::latch gate_{1};
  std::thread thread_;
};

}  // namespace

TEST_SUITE("keep_alive") {
  TEST_CASE_FIXTURE(kernels_fixture,
                    "a buffer handed to keep_alive outlives the kernel queued before it") {
    const remembering_handler handler;
    constexpr int n = 512;
    std::vector<float> x(n);
    std::iota(x.begin(), x.end(), 0.0f);
    const std::vector<float> ones(n, 1.0f);
    cuwrap::device_buffer<float> dx{ctx, n};
    cuwrap::device_buffer<float> dy{ctx, n};
    cuwrap::copy(dx, x);
    cuwrap::copy(dy, ones);
    const std::size_t allocations = swcuda().live_handles(SWCU_DEVICE_ALLOCATION);

    // Hold the stream: the kernel stays queued until the holder lets go.
    stream_holder holder{s};
    const auto k = mod.kernel<void(float, const float*, float*, int)>("saxpy");
    s.launch(k, cuwrap::launch_config::linear(n, 128), 2.0f, dx.data(), dy.data(), n);
    check_calls({"cuStreamGetCaptureInfo_v3", "cuLaunchHostFunc"},
                [&] { cuwrap::keep_alive(s, std::move(dx)); });
    CHECK(dx.moved_from());        // NOLINT(bugprone-use-after-move): the stream has it
    cuwrap::release_kept_alive();  // nothing is due: the kernel has not run
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == allocations);

    holder.release();
    s.synchronize();
    cuwrap::release_kept_alive();
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == allocations - 1);
    // cuMemFree ran where driver calls are allowed: nothing reached the nothrow handler (a
    // destructor run inside the host function would get CUDA_ERROR_NOT_PERMITTED).
    CHECK(reports == 0);
    std::vector<float> y(n);
    cuwrap::copy(y, dy);
    for (int i = 0; i < n; ++i) {
      REQUIRE(y[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i) + 1.0f);
    }
  }

  TEST_CASE_FIXTURE(sw_fixture, "any movable owner is kept, then destroyed once") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    auto shared = std::make_shared<int>(7);
    stream_holder holder{s};
    cuwrap::keep_alive(s, std::shared_ptr<int>{shared});
    cuwrap::keep_alive(s, cuwrap::mr::resource_buffer<int>{cuwrap::mr::device_resource{ctx}, 8});
    cuwrap::release_kept_alive();
    CHECK(shared.use_count() == 2);
    holder.release();
    s.synchronize();
    cuwrap::release_kept_alive();
    CHECK(shared.use_count() == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "while capturing, the captured graph owns the owner") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    auto shared = std::make_shared<int>(1);
    {
      auto capture = s.begin_capture();
      cuwrap::keep_alive(s, std::shared_ptr<int>{shared});
      const cuwrap::graph g = capture.end();
      const auto exec = g.instantiate();
      exec.launch(s);
      exec.launch(s);
      s.synchronize();
      cuwrap::release_kept_alive();
      CHECK(shared.use_count() == 2);  // the graph still holds it after its launches ran
    }
    s.synchronize();
    cuwrap::release_kept_alive();
    CHECK(shared.use_count() == 1);  // released with the graph and its executable graph
  }

  TEST_CASE_FIXTURE(sw_fixture, "a failed keep_alive throws and destroys the owner at once") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    auto shared = std::make_shared<int>(3);
    REQUIRE(swcuda().add_fault_rule("cuLaunchHostFunc:1:CUDA_ERROR_INVALID_VALUE") == 0);
    CHECK_THROWS_AS(cuwrap::keep_alive(s, std::shared_ptr<int>{shared}), cuwrap::error);
    CHECK(shared.use_count() == 1);
    cuwrap::stream moved{std::move(s)};
    CHECK_THROWS_WITH_AS(cuwrap::keep_alive(s, std::shared_ptr<int>{shared}),  // NOLINT
                         doctest::Contains("keep_alive"), cuwrap::usage_error);
    CHECK(shared.use_count() == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: keep_alive on a stream and in a capture") {
    const int points = cuwrap::testing::fault_sweep([] {
      // Declared first, destroyed last: once the stream and the graph are gone, whatever they
      // were keeping is due, also when a failure unwinds the scenario.
      struct release_at_exit {
        release_at_exit() = default;
        release_at_exit(const release_at_exit&) = delete;
        release_at_exit& operator=(const release_at_exit&) = delete;
        ~release_at_exit() { cuwrap::release_kept_alive(); }
      } release;
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::keep_alive(s, cuwrap::device_buffer<int>{ctx, 16});
      {
        auto capture = s.begin_capture();
        cuwrap::keep_alive(s, cuwrap::device_buffer<int>{ctx, 16});
        const cuwrap::graph g = capture.end();
      }
      s.synchronize();
      cuwrap::release_kept_alive();
    });
    CHECK(points >= 8);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture, "in deferred mode a kept buffer lives until its stream runs") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> buffer{ctx, 64};
    cuwrap::fill(s, buffer, 5);
    cuwrap::keep_alive(s, std::move(buffer));
    cuwrap::release_kept_alive();
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);  // nothing ran yet
    s.synchronize();
    cuwrap::release_kept_alive();
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 0);
  }
}
