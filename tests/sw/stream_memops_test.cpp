// Stream memory operations (stream_ref::wait_value, write_value, batch), stream_waiter, and
// the stream's attributes and device.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "kernels_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

using fixture = cuwrap::testing::kernels_fixture;

template <class T>
std::vector<T> read(const cuwrap::device_buffer<T>& buffer) {
  std::vector<T> out(buffer.size());
  cuwrap::copy(out, buffer);
  return out;
}

}  // namespace

TEST_SUITE("stream memory operations") {
  TEST_CASE_FIXTURE(fixture, "write_value and wait_value are one driver call each") {
    cuwrap::device_buffer<std::uint32_t> words{ctx, 2};
    cuwrap::device_buffer<std::uint64_t> wide{ctx, 1};
    cuwrap::fill(words.span(), 0u);
    cuwrap::copy(wide, std::vector<std::uint64_t>{0});
    check_one_call("cuStreamWriteValue32_v2", [&] { s.write_value(words.span(), 5u); });
    check_one_call("cuStreamWriteValue64_v2",
                   [&] { s.write_value(wide.span(), std::uint64_t{1} << 40); });
    check_one_call("cuStreamWaitValue32_v2",
                   [&] { s.wait_value(words.span(), 5u, cuwrap::wait_condition::equal); });
    check_one_call("cuStreamWaitValue64_v2", [&] {
      s.wait_value(wide.span(), std::uint64_t{1} << 40, cuwrap::wait_condition::greater_equal,
                   cuwrap::wait_flags::flush);
    });
    s.write_value(words.span().subspan(1), 9u, cuwrap::write_flags::no_memory_barrier);
    s.synchronize();
    CHECK(read(words) == std::vector<std::uint32_t>{5, 9});
    CHECK(read(wide) == std::vector<std::uint64_t>{std::uint64_t{1} << 40});
  }

  TEST_CASE_FIXTURE(fixture, "a wait holds back only its stream until another stream writes") {
    cuwrap::stream other{ctx};
    cuwrap::device_buffer<std::uint32_t> flag{ctx, 2};
    cuwrap::fill(flag.span(), 0u);
    s.wait_value(flag.span(), 1u, cuwrap::wait_condition::equal);
    s.write_value(flag.span().subspan(1), 2u);  // runs only after the wait
    other.synchronize();
    CHECK_FALSE(s.is_done());
    CHECK(read(flag) == std::vector<std::uint32_t>{0, 0});
    other.write_value(flag.span(), 1u);
    s.synchronize();
    CHECK(read(flag) == std::vector<std::uint32_t>{1, 2});
  }

  // saxpy writes y = 1 * 1 + 0 = 1.0f, whose bits are 0x3f800000: a wait for those bits in the
  // waiting stream is released by the kernel in the other stream.
  TEST_CASE_FIXTURE(fixture, "a kernel in another stream releases a wait") {
    cuwrap::stream producer{ctx};
    cuwrap::device_buffer<float> x{ctx, 1}, y{ctx, 1};
    cuwrap::fill(x.span(), 1.0f);
    cuwrap::fill(y.span(), 0.0f);
    cuwrap::device_buffer<std::uint32_t> after{ctx, 1};
    cuwrap::fill(after.span(), 0u);
    const auto bits = cuwrap::device_span<std::uint32_t>::from_address(y.address(), 1);
    s.wait_value(bits, 0x3f800000u, cuwrap::wait_condition::equal);
    s.write_value(after.span(), 7u);
    CHECK_FALSE(s.is_done());
    const auto k = mod.kernel<void(float, const float*, float*, int)>("saxpy");
    producer.launch(k, cuwrap::launch_config::linear(1, 32), 1.0f, x.data(), y.data(), 1);
    s.synchronize();
    CHECK(read(y) == std::vector<float>{1.0f});
    CHECK(read(after) == std::vector<std::uint32_t>{7});
  }

  // The host thread writes mapped pinned memory while this thread is in synchronize(): the
  // driver polls the word, it does not block the process.
  TEST_CASE_FIXTURE(fixture, "a host thread releases a wait through mapped pinned memory") {
    cuwrap::pinned_buffer<std::uint64_t> host{ctx, 2, cuwrap::pinned_flags::device_mapped};
    host[0] = 0;
    host[1] = 0;
    const auto words = [&] {
      const cuwrap::scoped_current_context current{ctx};  // cuMemHostGetDevicePointer needs it
      return host.device();
    }();
    s.wait_value(words.subspan(0, 1), std::uint64_t{3});
    s.write_value(words.subspan(1, 1), std::uint64_t{42});
    std::atomic<bool> synchronizing{false};
    std::thread writer([&] {
      while (!synchronizing.load()) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it block first
      std::atomic_ref<std::uint64_t>(host[0]).store(3);
    });
    synchronizing.store(true);
    s.synchronize();
    writer.join();
    CHECK(host[1] == 42);
  }

  TEST_CASE_FIXTURE(fixture, "a batch is one driver call and runs its operations in order") {
    cuwrap::device_buffer<std::uint32_t> a{ctx, 1};
    cuwrap::device_buffer<std::uint64_t> b{ctx, 1};
    cuwrap::fill(a.span(), 0u);
    cuwrap::copy(b, std::vector<std::uint64_t>{0});
    cuwrap::memop_batch ops;
    ops.write(a.span(), 4u)
        .wait(a.span(), 4u, cuwrap::wait_condition::equal)
        .write(b.span(), std::uint64_t{1} << 50)
        .flush_remote_writes()
        .barrier(cuwrap::memory_barrier_scope::device);
    CHECK(ops.size() == 5);
    check_one_call("cuStreamBatchMemOp_v2", [&] { s.batch(ops); });
    s.synchronize();
    CHECK(read(a) == std::vector<std::uint32_t>{4});
    CHECK(read(b) == std::vector<std::uint64_t>{std::uint64_t{1} << 50});
    ops.clear();
    check_calls({}, [&] { s.batch(ops); });  // nothing to enqueue, no call
    s.batch(cuwrap::memop_batch{}.write(a.span(), 6u));
    s.synchronize();
    CHECK(read(a) == std::vector<std::uint32_t>{6});
  }

  TEST_CASE_FIXTURE(fixture, "bad words are refused before the driver") {
    cuwrap::device_buffer<std::uint32_t> words{ctx, 4};
    const auto odd = cuwrap::device_span<std::uint32_t>::from_address(words.address() + 2, 1);
    const auto unaligned64 =
        cuwrap::device_span<std::uint64_t>::from_address(words.address() + 4, 1);
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS(s.write_value(odd, 1u),
                           doctest::Contains("stream::write_value: the word's address 0x"),
                           cuwrap::usage_error);
      CHECK_THROWS_WITH_AS(s.wait_value(unaligned64, std::uint64_t{1}),
                           doctest::Contains("is not aligned to 8 bytes"), cuwrap::usage_error);
      CHECK_THROWS_WITH_AS(s.wait_value(cuwrap::device_span<const std::uint32_t>{}, 1u),
                           doctest::Contains("the word span is empty"), cuwrap::usage_error);
      cuwrap::memop_batch ops;
      CHECK_THROWS_WITH_AS(ops.write(odd, 1u), doctest::Contains("memop_batch::write"),
                           cuwrap::usage_error);
      CHECK(ops.empty());  // nothing added
      for (std::size_t i = 0; i < cuwrap::memop_batch::max_size(); ++i) ops.flush_remote_writes();
      CHECK_THROWS_WITH_AS(ops.barrier(), doctest::Contains("at most 255 operations"),
                           cuwrap::usage_error);
    });
    CHECK(calls.empty());
    // What only the driver knows: managed memory is refused.
    cuwrap::managed_buffer<std::uint32_t> managed{ctx, 1};
    CHECK_THROWS_WITH_AS(s.write_value(managed.span(), 1u),
                         doctest::Contains("cuStreamWriteValue32"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "memory operations on a moved-from stream throw usage_error") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::stream moved{std::move(s)};
    cuwrap::device_buffer<std::uint32_t> word{ctx, 1};
    const cuwrap::stream_ref view = s;  // NOLINT(bugprone-use-after-move): what is tested
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_AS(view.write_value(word.span(), 1u), cuwrap::usage_error);
      CHECK_THROWS_AS(view.wait_value(word.span(), 1u), cuwrap::usage_error);
      CHECK_THROWS_AS(view.batch(cuwrap::memop_batch{}), cuwrap::usage_error);
      CHECK_THROWS_AS((void)view.device(), cuwrap::usage_error);
      CHECK_THROWS_AS(view.set_priority(0), cuwrap::usage_error);
      CHECK_THROWS_AS((void)view.access_policy_window(), cuwrap::usage_error);
      CHECK_THROWS_AS(moved.copy_attributes_from(view), cuwrap::usage_error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(fixture, "a stream_waiter orders streams without creating events") {
    cuwrap::stream other{ctx};
    cuwrap::stream third{ctx};
    cuwrap::stream_waiter waiter{ctx};
    cuwrap::device_buffer<std::uint32_t> flag{ctx, 2};
    cuwrap::fill(flag.span(), 0u);
    other.wait_value(flag.span(), 1u);  // `other` is held back until flag[0] >= 1
    check_calls({"cuEventRecord", "cuStreamWaitEvent"}, [&] { waiter(s, other); });
    s.write_value(flag.span().subspan(1), 5u);  // so s is too
    third.synchronize();
    CHECK_FALSE(s.is_done());
    CHECK(read(flag) == std::vector<std::uint32_t>{0, 0});
    third.write_value(flag.span(), 1u);
    s.synchronize();
    CHECK(read(flag) == std::vector<std::uint32_t>{1, 5});
    // The event is reused: the next wait creates nothing either.
    check_calls({"cuEventRecord", "cuStreamWaitEvent"}, [&] { waiter(other, s); });
    other.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: a stream_waiter and memory operations") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream a{ctx};
      cuwrap::stream b{ctx};
      cuwrap::stream_waiter waiter{ctx};
      cuwrap::device_buffer<std::uint32_t> word{ctx, 1};
      a.write_value(word.span(), 1u);
      waiter(b, a);
      b.wait_value(word.span(), 1u);
      b.synchronize();
    });
    CHECK(points >= 8);
  }
}

TEST_SUITE("stream attributes") {
  TEST_CASE_FIXTURE(sw_fixture, "typed stream attributes round-trip through the driver") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    CHECK(s.access_policy_window() == cuwrap::access_policy_window{});
    CHECK(s.synchronization_policy() == cuwrap::synchronization_policy::automatic);
    CHECK(s.memory_sync_domain() == cuwrap::memory_sync_domain::default_domain);
    CHECK(s.memory_sync_domain_map() == cuwrap::memory_sync_domain_map{});
    cuwrap::device_buffer<float> data{ctx, 1024};
    const cuwrap::access_policy_window window{data.data(), data.size_bytes(), 0.75f,
                                              cuwrap::access_property::persisting,
                                              cuwrap::access_property::streaming};
    check_one_call("cuStreamSetAttribute", [&] { s.set_access_policy_window(window); });
    check_one_call("cuStreamGetAttribute", [&] { CHECK(s.access_policy_window() == window); });
    s.set_synchronization_policy(cuwrap::synchronization_policy::blocking_sync);
    CHECK(s.synchronization_policy() == cuwrap::synchronization_policy::blocking_sync);
    s.set_memory_sync_domain(cuwrap::memory_sync_domain::remote);
    CHECK(s.memory_sync_domain() == cuwrap::memory_sync_domain::remote);
    s.set_memory_sync_domain_map({.default_domain = 2, .remote = 3});
    CHECK(s.memory_sync_domain_map() == cuwrap::memory_sync_domain_map{2, 3});
    const auto range = ctx.stream_priorities();
    s.set_priority(range.greatest);
    CHECK(s.priority() == range.greatest);
    cuwrap::stream copy{ctx};
    check_one_call("cuStreamCopyAttributes", [&] { copy.copy_attributes_from(s); });
    CHECK(copy.access_policy_window() == window);
    CHECK(copy.priority() == range.greatest);
    CHECK(copy.memory_sync_domain_map() == cuwrap::memory_sync_domain_map{2, 3});
  }

  TEST_CASE_FIXTURE(sw_fixture, "invalid attribute values are reported by the driver call") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::access_policy_window window{};
    window.hit_ratio = 2.0f;
    CHECK_THROWS_WITH_AS(s.set_access_policy_window(window),
                         doctest::Contains("cuStreamSetAttribute"), cuwrap::error);
    window = {};
    window.miss = cuwrap::access_property::persisting;
    CHECK_THROWS_AS(s.set_access_policy_window(window), cuwrap::error);
    CHECK_THROWS_AS(s.set_memory_sync_domain_map({.default_domain = 4, .remote = 0}),
                    cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a stream's device and context") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    CHECK(s.device().ordinal() == 0);
    CHECK(s.context() == ctx);
  }
}
