#include "cuwrap/dlpack.hpp"

#include <doctest/doctest.h>

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/copy.hpp"
#include "cuwrap/host_memory.hpp"
#include "cuwrap/pointer.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
namespace dl = cuwrap::dlpack;

namespace {

// A 16-bit float as a framework defines it: a type of the right size with no arithmetic.
struct half {
  std::uint16_t bits;
};

std::vector<int> iota_vector(std::size_t n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

// Counts the destructions of the objects it is copied into (a shared_ptr's deleter).
std::shared_ptr<int> counted_owner(int& deletions) {
  return {new int{0}, [&deletions](const int* p) {
            ++deletions;
            delete p;
          }};
}

constexpr bool same(dl::DLDataType a, dl::DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// A hand-made versioned tensor of `n` ints at `data` (no deleter), for the import checks.
struct fake_tensor {
  std::array<std::int64_t, 2> shape{};
  std::array<std::int64_t, 2> strides{};
  dl::DLManagedTensorVersioned t{};
  fake_tensor(void* data, std::int64_t n, dl::DLDeviceType type, std::int32_t id = 0) {
    shape = {n, 1};
    strides = {1, 1};
    t.version = {1, 1};
    t.dl_tensor.data = data;
    t.dl_tensor.device = {type, id};
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype = dl::dtype_of<int>;
    t.dl_tensor.shape = shape.data();
    t.dl_tensor.strides = strides.data();
  }
};

}  // namespace

template <>
struct cuwrap::dlpack::element_type<half> {
  static constexpr DLDataType value{kDLFloat, 16, 1};
};

static_assert(same(dl::dtype_of<float>, {dl::kDLFloat, 32, 1}));
static_assert(same(dl::dtype_of<double>, {dl::kDLFloat, 64, 1}));
static_assert(same(dl::dtype_of<const half>, {dl::kDLFloat, 16, 1}));
static_assert(same(dl::dtype_of<std::int8_t>, {dl::kDLInt, 8, 1}));
static_assert(same(dl::dtype_of<std::uint16_t>, {dl::kDLUInt, 16, 1}));
static_assert(same(dl::dtype_of<std::int64_t>, {dl::kDLInt, 64, 1}));
static_assert(same(dl::dtype_of<bool>, {dl::kDLBool, 8, 1}));
static_assert(same(dl::dtype_of<std::complex<float>>, {dl::kDLComplex, 64, 1}));
static_assert(same(dl::dtype_of<std::complex<double>>, {dl::kDLComplex, 128, 1}));
static_assert(!dl::exportable<std::string>);

TEST_SUITE("dlpack") {
  TEST_CASE_FIXTURE(sw_fixture, "a device_buffer exports as kDLCUDA and imports as the same span") {
    current_primary p;
    cuwrap::device_buffer<int> buffer{p.ctx, 8};
    const auto host = iota_vector(8, 10);
    cuwrap::copy(buffer, host);
    const auto span = buffer.span();
    dl::unique_tensor t;
    // The device ordinal comes from the driver: one query.
    check_one_call("cuPointerGetAttributes", [&] { t = dl::to_dlpack(std::move(buffer)); });
    CHECK(buffer.moved_from());
    REQUIRE(t);
    CHECK(t->version.major == 1);
    CHECK(t->version.minor == 1);
    CHECK(t->flags == 0);
    CHECK(static_cast<bool>(t->deleter));
    CHECK(t->dl_tensor.data == span.data());
    CHECK(t->dl_tensor.device.device_type == dl::kDLCUDA);
    CHECK(t->dl_tensor.device.device_id == 0);
    CHECK(t->dl_tensor.ndim == 1);
    CHECK(t->dl_tensor.shape[0] == 8);
    CHECK(t->dl_tensor.strides[0] == 1);
    CHECK(t->dl_tensor.byte_offset == 0);
    CHECK(same(t->dl_tensor.dtype, {dl::kDLInt, 32, 1}));

    const auto view = dl::device_view<int>(t.get(), 0);
    CHECK(view == span);
    std::vector<int> back(8);
    cuwrap::copy(back, view);
    CHECK(back == host);
    // The tensor owns the buffer: deleting it frees the memory, once.
    check_one_call("cuMemFree_v2", [&] { t.reset(); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "an empty buffer exports as an empty tensor, with no call") {
    current_primary p;
    cuwrap::device_buffer<int> empty{p.ctx, 0};
    dl::unique_tensor t;
    // No address to ask the driver about: device_id stays 0.
    CHECK(calls_made_by([&] { t = dl::to_dlpack(std::move(empty)); }).empty());
    CHECK(t->dl_tensor.data == nullptr);
    CHECK(t->dl_tensor.shape[0] == 0);
    CHECK(t->dl_tensor.device.device_type == dl::kDLCUDA);
    CHECK(dl::device_view<int>(t.get(), 0).empty());
    CHECK(calls_made_by([&] { t.reset(); }).empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "pinned and managed buffers export without a driver call") {
    current_primary p;
    cuwrap::pinned_buffer<float> pinned{p.ctx, 4};
    std::iota(pinned.begin(), pinned.end(), 1.0F);
    float* const pinned_data = pinned.data();
    dl::unique_tensor tp;
    CHECK(calls_made_by([&] { tp = dl::to_dlpack(std::move(pinned)); }).empty());
    CHECK(tp->dl_tensor.device.device_type == dl::kDLCUDAHost);
    CHECK(tp->dl_tensor.device.device_id == 0);  // DLPack: 0 for pinned memory
    const auto host = dl::host_view<float>(tp.get());
    CHECK(host.data() == pinned_data);
    CHECK(host[3] == 4.0F);
    CHECK(dl::device_view<const float>(tp.get()).data() == pinned_data);  // UVA: same address
    check_one_call("cuMemFreeHost", [&] { tp.reset(); });

    cuwrap::managed_buffer<double> managed{p.ctx, 3};
    managed[2] = 2.5;
    dl::unique_tensor tm;
    CHECK(calls_made_by([&] { tm = dl::to_dlpack(std::move(managed)); }).empty());
    CHECK(tm->dl_tensor.device.device_type == dl::kDLCUDAManaged);
    CHECK(tm->dl_tensor.device.device_id == 0);  // DLPack: 0 for managed memory
    CHECK(dl::host_view<double>(tm.get())[2] == 2.5);
    CHECK(dl::device_view<double>(tm.get()).size() == 3);
    check_one_call("cuMemFree_v2", [&] { tm.reset(); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "a stream_ordered_buffer exports with the stream handshake") {
    current_primary p;
    cuwrap::stream producer{p.ctx};
    cuwrap::stream consumer{p.ctx};
    const auto host = iota_vector(64, 3);
    cuwrap::stream_ordered_buffer<int> buffer{producer, 64};
    cuwrap::copy(producer, buffer, host);  // pending on the producer
    dl::export_options options;
    options.consumer = consumer;
    dl::unique_tensor t;
    // The pointer query, then the handshake: an event recorded on the buffer's stream (the
    // producer by default) that the consumer waits for. The context is current: no push.
    check_calls({"cuPointerGetAttributes", "cuStreamGetCtx", "cuCtxGetCurrent", "cuEventCreate",
                 "cuEventRecord", "cuStreamWaitEvent", "cuEventDestroy_v2"},
                [&] { t = dl::to_dlpack(std::move(buffer), options); });
    std::vector<int> back(64);
    cuwrap::copy(consumer, back, dl::device_view<const int>(t.get()));
    consumer.synchronize();
    CHECK(back == host);
    // The buffer frees itself in its stream's order.
    check_one_call("cuMemFreeAsync", [&] { t.reset(); });
    producer.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "the handshake costs nothing on one stream and pushes the context") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::stream other{ctx};
    CHECK(calls_made_by([&] { dl::wait_for_producer(s, s); }).empty());
    // No context current: the producer's is pushed for the event and popped.
    check_calls({"cuStreamGetCtx", "cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuEventCreate",
                 "cuEventRecord", "cuStreamWaitEvent", "cuEventDestroy_v2", "cuCtxPopCurrent_v2"},
                [&] { dl::wait_for_producer(s, other); });
    cuwrap::stream moved{std::move(other)};
    CHECK_THROWS_WITH_AS(dl::wait_for_producer(s, other),
                         doctest::Contains("the consumer stream was moved from"),
                         cuwrap::usage_error);
  }

  TEST_CASE("Python's stream argument decodes as the DLPack protocol says") {
    CHECK(dl::consumer_stream(std::nullopt)->get() == CU_STREAM_LEGACY);
    CHECK(dl::consumer_stream(1)->get() == CU_STREAM_LEGACY);
    CHECK(dl::consumer_stream(2)->get() == CU_STREAM_PER_THREAD);
    CHECK_FALSE(dl::consumer_stream(-1).has_value());
    CHECK(dl::consumer_stream(0x1234)->get() == reinterpret_cast<CUstream>(0x1234));  // NOLINT
    CHECK_THROWS_WITH_AS((void)dl::consumer_stream(0), doctest::Contains("0 is ambiguous"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::consumer_stream(-5), doctest::Contains("stream -5"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a span's owner lives until the deleter, which runs once") {
    current_primary p;
    int deletions = 0;
    auto buffer = std::make_shared<cuwrap::device_buffer<half>>(p.ctx, 6);
    const auto span = buffer->span();
    const std::array<std::int64_t, 2> shape{2, 3};
    dl::export_options options;
    options.shape = shape;
    auto t =
        dl::to_dlpack(span, std::make_pair(std::move(buffer), counted_owner(deletions)), options);
    CHECK(buffer == nullptr);  // the tensor holds the only reference
    CHECK(cuwrap::pointer_attributes(span.data()).type == cuwrap::memory_type::device);
    CHECK(same(t->dl_tensor.dtype, {dl::kDLFloat, 16, 1}));
    CHECK(t->dl_tensor.ndim == 2);
    CHECK(t->dl_tensor.strides[0] == 3);
    CHECK(t->dl_tensor.strides[1] == 1);
    CHECK(dl::device_view<half>(t.get()).size() == 6);
    CHECK(deletions == 0);
    check_one_call("cuMemFree_v2", [&] { t.reset(); });
    CHECK(deletions == 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "an exported buffer keeps its context alive after the context") {
    int deletions = 0;
    const auto owner = counted_owner(deletions);  // an lvalue owner is copied in
    dl::unique_tensor t;
    dl::unique_tensor shared;
    {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::device_buffer<int> buffer{ctx, 4};
      cuwrap::fill(buffer.span(), 7);  // synchronous: runs in the buffer's context
      shared = dl::to_dlpack(buffer.span(), owner);
      t = dl::to_dlpack(std::move(buffer));
    }  // the primary context variable is gone; the buffer in the tensor still holds it
    CHECK(cuwrap::primary_context::is_active(cuwrap::device::get(0)));
    std::vector<int> back(4);
    cuwrap::copy(back, dl::device_view<const int>(t.get()));
    CHECK(back == std::vector<int>(4, 7));
    shared.reset();
    CHECK(deletions == 0);  // `owner` still holds a reference
    t.reset();              // frees the buffer, then releases the primary context
    CHECK_FALSE(cuwrap::primary_context::is_active(cuwrap::device::get(0)));
  }

  TEST_CASE_FIXTURE(sw_fixture, "host spans export as kDLCPU or kDLCUDAHost by what CUDA knows") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    std::vector<int> v = iota_vector(5);
    auto plain = dl::to_dlpack_unowned(std::span{v});
    CHECK(plain->dl_tensor.device.device_type == dl::kDLCPU);
    CHECK(dl::host_view<int>(plain.get()).data() == v.data());
    CHECK_THROWS_WITH_AS((void)dl::device_view<int>(plain.get()),
                         doctest::Contains("kDLCPU, which CUDA devices cannot access"),
                         cuwrap::error);
    {
      cuwrap::host_registration registration{ctx, std::span{v}};
      auto pinned = dl::to_dlpack_unowned(std::span<const int>{v});
      CHECK(pinned->dl_tensor.device.device_type == dl::kDLCUDAHost);
      CHECK(pinned->flags == dl::flag_read_only);  // a span of const T
    }
    cuwrap::device_buffer<int> device{ctx, 4};
    const auto host_looking = std::span<int>{device.data(), device.size()};
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(host_looking),
                         doctest::Contains("a host span points to device memory (device 0)"),
                         cuwrap::error);
    int unknown[4] = {};
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(cuwrap::device_span<int>{unknown, 4}),
                         doctest::Contains("memory the driver does not know"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a failed export frees what it was given") {
    current_primary p;
    const std::array<std::int64_t, 2> shape{3, 3};
    dl::export_options options;
    options.shape = shape;
    cuwrap::device_buffer<int> buffer{p.ctx, 8};
    auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)dl::to_dlpack(std::move(buffer), options),
                           doctest::Contains("shape (3, 3) reaches element 8 of a memory of 8 "
                                             "elements"),
                           cuwrap::error);
    });
    CHECK(calls["cuMemFree_v2"] == 1);  // the buffer was handed over, and is gone
    const std::array<std::int64_t, 1> negative{-1};
    options.shape = negative;
    std::vector<int> v(4);
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(std::span{v}, options),
                         doctest::Contains("negative extent or stride"), cuwrap::error);
    const std::array<std::int64_t, 3> huge{1LL << 40, 1LL << 40, 1LL << 40};
    options.shape = huge;
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(std::span{v}, options),
                         doctest::Contains("overflows 64-bit indices"), cuwrap::error);
    const std::array<std::int64_t, 2> wide{2, 2};
    const std::array<std::int64_t, 2> strides{1, 2};  // column-major: allowed on export
    options.shape = wide;
    options.strides = strides;
    auto t = dl::to_dlpack_unowned(std::span{v}, options);
    CHECK(t->dl_tensor.strides[0] == 1);
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t.get()),
                         doctest::Contains("not contiguous: shape (2, 2), strides (1, 2)"),
                         cuwrap::error);
    options.strides = std::span<const std::int64_t>{strides.data(), 1};
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(std::span{v}, options),
                         doctest::Contains("has 2 extents, strides have 1"), cuwrap::error);
    dl::export_options stream_only;
    stream_only.consumer = cuwrap::stream_ref::legacy();
    CHECK_THROWS_WITH_AS((void)dl::to_dlpack_unowned(std::span{v}, stream_only),
                         doctest::Contains("needs a producer stream"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "exporting a moved-from buffer is a usage error, before any call") {
    current_primary p;
    cuwrap::device_buffer<int> buffer{p.ctx, 4};
    cuwrap::device_buffer<int> other{std::move(buffer)};
    CHECK(calls_made_by([&] {
            CHECK_THROWS_WITH_AS((void)dl::to_dlpack(std::move(buffer)),
                                 doctest::Contains("device_buffer::data: this device_buffer was "
                                                   "moved from"),
                                 cuwrap::usage_error);
          }).empty());
  }

  TEST_CASE("every import error names what was wrong") {
    alignas(8) std::array<int, 8> storage{};
    fake_tensor f{storage.data(), 8, dl::kDLCUDA};
    const auto* t = &f.t;
    CHECK(dl::device_view<int>(t, 0).size() == 8);

    CHECK_THROWS_WITH_AS(
        (void)dl::device_view<int>(static_cast<const dl::DLManagedTensorVersioned*>(nullptr)),
        doctest::Contains("the DLManagedTensorVersioned pointer is null"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(static_cast<const dl::DLManagedTensor*>(nullptr)),
                         doctest::Contains("the DLManagedTensor pointer is null"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::device_view<int>(t, 1),
                         doctest::Contains("the tensor is on device 0, expected device 1"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("kDLCUDA, which the host cannot access"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::device_view<float>(t),
                         doctest::Contains("the tensor holds int32, the view's element type is "
                                           "float32"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)dl::device_view<unsigned>(t),
                         doctest::Contains("holds int32, the view's element type is uint32"),
                         cuwrap::error);

    f.t.version = {2, 0};
    try {
      (void)dl::device_view<int>(t);
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::not_supported);
      CHECK(std::string{e.what()}.find("the tensor is DLPack 2.0; cuwrap reads major version 1") !=
            std::string::npos);
    }
    f.t.version = {1, 7};  // a later minor version reads the same
    CHECK(dl::device_view<int>(t).size() == 8);

    f.t.dl_tensor.device.device_type = dl::kDLROCM;
    CHECK_THROWS_WITH_AS((void)dl::device_view<int>(t),
                         doctest::Contains("device type 10, which CUDA devices cannot access"),
                         cuwrap::error);
    f.t.dl_tensor.device.device_type = dl::kDLCPU;
    CHECK(dl::host_view<int>(t).size() == 8);

    // byte_offset: the first element is data + byte_offset, and must be aligned for T.
    f.t.dl_tensor.byte_offset = 8;
    f.shape[0] = 6;
    CHECK(dl::host_view<int>(t).data() == storage.data() + 2);
    f.t.dl_tensor.byte_offset = 2;
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("(data + byte_offset 2) is not aligned to 4 bytes"),
                         cuwrap::error);
    f.t.dl_tensor.byte_offset = 0;

    // Shapes: N-D compact tensors view as all their elements; an extent of 1 has any stride.
    f.t.dl_tensor.ndim = 2;
    f.shape = {4, 2};
    f.strides = {2, 1};
    CHECK(dl::host_view<int>(t).size() == 8);
    f.shape = {8, 1};
    f.strides = {1, 99};
    CHECK(dl::host_view<int>(t).size() == 8);
    f.shape = {4, 2};
    f.strides = {1, 4};
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("not contiguous: shape (4, 2), strides (1, 4)"),
                         cuwrap::error);
    f.t.dl_tensor.strides = nullptr;  // null strides: compact row-major
    CHECK(dl::host_view<int>(t).size() == 8);
    f.shape = {-4, 2};
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("negative extent in shape (-4, 2)"), cuwrap::error);
    f.shape = {4, 2};
    f.t.dl_tensor.shape = nullptr;
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("the shape pointer is null for ndim 2"), cuwrap::error);
    f.t.dl_tensor.shape = f.shape.data();
    f.t.dl_tensor.ndim = 0;  // a scalar: one element
    CHECK(dl::host_view<int>(t).size() == 1);
    f.t.dl_tensor.ndim = 2;

    f.t.dl_tensor.data = nullptr;
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("the data pointer is null for 8 elements"),
                         cuwrap::error);
    f.shape = {0, 2};
    CHECK(dl::host_view<int>(t).empty());  // no elements: no data needed
    f.t.dl_tensor.data = storage.data();
    f.shape = {4, 2};

    f.t.flags = dl::flag_read_only;
    CHECK_THROWS_WITH_AS((void)dl::host_view<int>(t),
                         doctest::Contains("read-only (DLPACK_FLAG_BITMASK_READ_ONLY); view it "
                                           "as const T"),
                         cuwrap::error);
    CHECK(dl::host_view<const int>(t).size() == 8);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a legacy tensor wraps the versioned one and deletes it once") {
    current_primary p;
    int deletions = 0;
    cuwrap::device_buffer<std::int16_t> buffer{p.ctx, 5};
    const auto span = buffer.span();
    auto versioned = dl::to_dlpack(span, counted_owner(deletions));
    auto legacy = dl::to_legacy(std::move(versioned));
    REQUIRE(legacy);
    CHECK(versioned == nullptr);
    CHECK(legacy->dl_tensor.device.device_type == dl::kDLCUDA);
    CHECK(dl::device_view<std::int16_t>(legacy.get(), 0) == span);
    CHECK(legacy->dl_tensor.shape[0] == 5);
    legacy.reset();
    CHECK(deletions == 1);
    CHECK(dl::to_legacy(nullptr) == nullptr);

    dl::export_options read_only;
    read_only.read_only = true;
    auto locked = dl::to_dlpack(span, counted_owner(deletions), read_only);
    CHECK_THROWS_WITH_AS((void)dl::to_legacy(std::move(locked)),
                         doctest::Contains("read-only, which a legacy DLManagedTensor cannot say"),
                         cuwrap::error);
    CHECK(deletions == 2);  // handed over and deleted
  }

  TEST_CASE_FIXTURE(sw_fixture, "an owning import runs the deleter once, also when it throws") {
    current_primary p;
    int deletions = 0;
    std::vector<int> v = iota_vector(6);
    {
      dl::tensor<int> imported{dl::to_dlpack(std::span{v}, counted_owner(deletions)),
                               dl::access::host};
      CHECK(imported.size() == 6);
      CHECK(imported.host()[5] == 5);
      CHECK(imported.device().device_type == dl::kDLCPU);
      CHECK(imported.dl_tensor()->shape[0] == 6);
      dl::tensor<int> moved{std::move(imported)};
      CHECK(imported.dl_tensor() == nullptr);
      CHECK_THROWS_WITH_AS((void)imported.host(), doctest::Contains("was moved from"),
                           cuwrap::usage_error);
      CHECK(deletions == 0);
    }
    CHECK(deletions == 1);
    CHECK_THROWS_WITH_AS(
        dl::tensor<float>(dl::to_dlpack(std::span{v}, counted_owner(deletions)), dl::access::host),
        doctest::Contains("holds int32"), cuwrap::error);
    CHECK(deletions == 2);

    cuwrap::device_buffer<int> device{p.ctx, 3};
    dl::tensor<int> on_device{dl::to_legacy(dl::to_dlpack(std::move(device))), dl::access::device,
                              0};
    CHECK(on_device.span().size() == 3);
    CHECK_THROWS_WITH_AS((void)on_device.host(), doctest::Contains("kDLCUDA (device memory)"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: exports and the handshake") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream producer{ctx};
      cuwrap::stream consumer{ctx};
      dl::export_options options;
      options.consumer = consumer;
      auto b = dl::to_dlpack(cuwrap::stream_ordered_buffer<int>{producer, 4}, options);
      options.producer = producer;
      auto a = dl::to_dlpack(cuwrap::device_buffer<int>{ctx, 4}, options);
      auto c = dl::to_dlpack(cuwrap::pinned_buffer<int>{ctx, 4});
      auto d = dl::to_legacy(dl::to_dlpack(cuwrap::managed_buffer<int>{ctx, 4}));
      producer.synchronize();
    });
    CHECK(points >= 14);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture, "with two devices a buffer on device 1 exports as kDLCUDA 1") {
    cuwrap::primary_context ctx{cuwrap::device::get(1)};
    auto t = dl::to_dlpack(cuwrap::device_buffer<int>{ctx, 4});
    CHECK(t->dl_tensor.device.device_type == dl::kDLCUDA);
    CHECK(t->dl_tensor.device.device_id == 1);
    CHECK(dl::device_view<int>(t.get(), 1).size() == 4);
    CHECK_THROWS_WITH_AS((void)dl::device_view<int>(t.get(), 0),
                         doctest::Contains("the tensor is on device 1, expected device 0"),
                         cuwrap::error);
  }
}
