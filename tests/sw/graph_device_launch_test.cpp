// Device graph launch (CUDA programming guide, "Device Graph Launch"): kernels compiled by nvcc
// (tests/kernels/device_graph_kernels.cu, run from their PTX by the software driver's
// interpreter) launch executable graphs instantiated with instantiate_flags::device_launch, with
// the device runtime's cudaGraphLaunch into cudaStreamGraphFireAndForget, ...TailLaunch and
// ...FireAndForgetAsSibling; results compared with host references.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/graph.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

namespace {

constexpr int n = 96;

// The device runtime's graph launch streams (cuda_device_runtime_api.h).
const auto tail_launch = reinterpret_cast<CUstream>(0x0100000000000000ull);
const auto fire_and_forget = reinterpret_cast<CUstream>(0x0200000000000000ull);
const auto sibling = reinterpret_cast<CUstream>(0x0300000000000000ull);
// cudaError_t values the device-side cudaGraphLaunch returns (driver_types.h).
constexpr int cuda_success = 0;
constexpr int cuda_error_invalid_value = 1;
constexpr int cuda_error_launch_pending_count_exceeded = 69;

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::module mod = cuwrap::module::load_file(
      ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/device_graph_kernels.fatbin");
  cuwrap::typed_kernel<void(CUgraphExec, CUstream, int*)> try_launch =
      mod.kernel<void(CUgraphExec, CUstream, int*)>("try_launch");
  cuwrap::typed_kernel<void(CUgraphExec, CUgraphExec, CUstream, int*)> launch_two =
      mod.kernel<void(CUgraphExec, CUgraphExec, CUstream, int*)>("launch_two");
  cuwrap::typed_kernel<void(CUgraphExec, CUgraphExec, const int*, int*)> schedule =
      mod.kernel<void(CUgraphExec, CUgraphExec, const int*, int*)>("schedule");
  cuwrap::typed_kernel<void(const CUgraphExec*, int, CUstream, int*)> launch_all =
      mod.kernel<void(const CUgraphExec*, int, CUstream, int*)>("launch_all");
  cuwrap::typed_kernel<void(int*, int, int*)> relaunch_self =
      mod.kernel<void(int*, int, int*)>("relaunch_self");
  cuwrap::typed_kernel<void(int*, int)> append = mod.kernel<void(int*, int)>("append");
  cuwrap::typed_kernel<void(unsigned long long*)> current_graph =
      mod.kernel<void(unsigned long long*)>("current_graph");
  cuwrap::typed_kernel<void(float*, float, float, int)> scale_add =
      mod.kernel<void(float*, float, float, int)>("scale_add");
  const cuwrap::launch_config one{{1}, {32}};
  const cuwrap::launch_config all = cuwrap::launch_config::linear(n, 32);

  template <class T>
  std::vector<T> read(cuwrap::device_buffer<T>& data) {
    std::vector<T> out(data.size());
    cuwrap::copy(s, out, data);
    s.synchronize();
    return out;
  }
  template <class T>
  void write(cuwrap::device_buffer<T>& data, const std::vector<T>& values) {
    cuwrap::copy(s, data, values);
    s.synchronize();
  }
  // An executable graph of one kernel appending `id` to `log`, for device launch, uploaded.
  cuwrap::graph_exec appender(cuwrap::device_buffer<int>& log, int id) {
    cuwrap::graph g{ctx};
    (void)g.add_kernel(append, one, {}, log.data(), id);
    auto exec = g.instantiate(cuwrap::instantiate_flags::device_launch);
    exec.upload(s);
    return exec;
  }
  // The ids `log` holds, in the order they were appended.
  std::vector<int> entries(cuwrap::device_buffer<int>& log) {
    const std::vector<int> raw = read(log);
    return {raw.begin() + 1, raw.begin() + 1 + raw[0]};
  }
};

void scale_add_reference(std::vector<float>& v, float a, float b) {
  for (float& x : v) x = x * a + b;
}

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "a scheduler kernel fire-and-forgets the worker graph it picks") {
    // Fire and forget: the launched graph is a child of the launching graph's environment, so
    // it completes before the launching graph (and the stream's launch) does.
    cuwrap::device_buffer<float> data{ctx, n};
    cuwrap::device_buffer<int> value{ctx, 1};
    cuwrap::device_buffer<int> status{ctx, 1};
    cuwrap::graph doubling{ctx};
    (void)doubling.add_kernel(scale_add, all, {}, data.data(), 2.0f, 0.0f, n);
    cuwrap::graph shifting{ctx};
    (void)shifting.add_kernel(scale_add, all, {}, data.data(), 1.0f, -1.0f, n);
    auto positive = doubling.instantiate(s, cuwrap::instantiate_flags::device_launch);
    auto other = shifting.instantiate(cuwrap::instantiate_flags::device_launch);
    other.upload(s);
    // The launching graph is a host graph: a kernel node of any graph may launch device graphs.
    cuwrap::graph scheduler{ctx};
    (void)scheduler.add_kernel(schedule, one, {}, positive.get(), other.get(), value.data(),
                               status.data());
    auto exec = scheduler.instantiate();

    std::vector<float> expected(n);
    for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] = static_cast<float>(i % 5);
    write(data, expected);
    for (const int v : {4, -1, 0, 7}) {
      CAPTURE(v);
      write(value, std::vector<int>{v});
      write(status, std::vector<int>{-1});
      exec.launch(s);
      scale_add_reference(expected, v > 0 ? 2.0f : 1.0f, v > 0 ? 0.0f : -1.0f);
      CHECK(read(data) == expected);  // the child completed with the stream's launch
      CHECK(read(status) == std::vector<int>{cuda_success});
    }
  }

  TEST_CASE_FIXTURE(fixture, "a device graph tail-launches itself to loop on the device") {
    // Tail self-launch with cudaGetCurrentGraphExec: one self-launch may be pending at a time,
    // so the second one each iteration makes returns cudaErrorInvalidValue.
    cuwrap::device_buffer<int> count{ctx, 1};
    cuwrap::device_buffer<int> status{ctx, 2};
    for (const int limit : {1, 5, 300}) {  // more iterations than the 255 pending tail launches
      CAPTURE(limit);
      write(count, std::vector<int>{0});
      write(status, std::vector<int>{-1, -1});
      cuwrap::graph g{ctx};
      (void)g.add_kernel(relaunch_self, one, {}, count.data(), limit, status.data());
      auto exec = g.instantiate(cuwrap::instantiate_flags::device_launch);
      exec.launch(s);  // a launch from the host uploads the graph
      CHECK(read(count) == std::vector<int>{limit});
      if (limit > 1) {
        CHECK(read(status) == std::vector<int>{cuda_success, cuda_error_invalid_value});
      } else {
        CHECK(read(status) == std::vector<int>{-1, -1});
      }
    }
  }

  TEST_CASE_FIXTURE(fixture, "tail launches run in enqueue order, a tail graph's own first") {
    // The guide's figure: G1 tail-launches G2 and G3; G2 tail-launches X and Y. G1, G2, X, Y, G3.
    cuwrap::device_buffer<int> log{ctx, 16};
    cuwrap::device_buffer<int> status{ctx, 2};
    write(log, std::vector<int>(16, 0));
    auto x = appender(log, 3);
    auto y = appender(log, 4);
    auto g3 = appender(log, 5);
    cuwrap::graph second{ctx};
    const auto a2 = second.add_kernel(append, one, {}, log.data(), 2);
    (void)second.add_kernel(launch_two, one, {a2}, x.get(), y.get(), tail_launch, status.data());
    auto g2 = second.instantiate(s, cuwrap::instantiate_flags::device_launch);
    cuwrap::graph first{ctx};
    const auto a1 = first.add_kernel(append, one, {}, log.data(), 1);
    (void)first.add_kernel(launch_two, one, {a1}, g2.get(), g3.get(), tail_launch, status.data());
    auto g1 = first.instantiate();
    g1.launch(s);
    CHECK(entries(log) == std::vector<int>{1, 2, 3, 4, 5});
    CHECK(read(status) == std::vector<int>{cuda_success, cuda_success});
  }

  TEST_CASE_FIXTURE(fixture, "a tail launch waits for the launching graph and its children") {
    // A tail launch runs when the environment completes: the graph's remaining nodes and the
    // fire-and-forget work it made (in either order between them) come first.
    cuwrap::device_buffer<int> log{ctx, 16};
    cuwrap::device_buffer<int> fired{ctx, 1};
    cuwrap::device_buffer<int> tailed{ctx, 1};
    write(log, std::vector<int>(16, 0));
    auto child = appender(log, 3);
    auto tail = appender(log, 9);
    cuwrap::graph g{ctx};
    const auto a1 = g.add_kernel(append, one, {}, log.data(), 1);
    const auto t = g.add_kernel(try_launch, one, {a1}, tail.get(), tail_launch, tailed.data());
    const auto f = g.add_kernel(try_launch, one, {t}, child.get(), fire_and_forget, fired.data());
    (void)g.add_kernel(append, one, {f}, log.data(), 2);
    auto exec = g.instantiate();
    exec.launch(s);
    const std::vector<int> order = entries(log);
    REQUIRE(order.size() == 4);
    CHECK(order.front() == 1);
    CHECK(order.back() == 9);
    CHECK(std::is_permutation(order.begin() + 1, order.end() - 1, std::vector<int>{2, 3}.begin()));
    CHECK(read(fired) == std::vector<int>{cuda_success});
    CHECK(read(tailed) == std::vector<int>{cuda_success});
  }

  TEST_CASE_FIXTURE(fixture, "a sibling launch runs in the parent environment") {
    // cudaStreamGraphFireAndForgetAsSibling from a fire-and-forget child: the sibling is a child
    // of the child's parent; both complete with the stream's launch.
    cuwrap::device_buffer<int> log{ctx, 16};
    cuwrap::device_buffer<int> status{ctx, 2};
    write(log, std::vector<int>(16, 0));
    auto peer = appender(log, 7);
    cuwrap::graph inner{ctx};
    const auto a = inner.add_kernel(append, one, {}, log.data(), 2);
    (void)inner.add_kernel(launch_two, one, {a}, peer.get(), nullptr, sibling, status.data());
    auto child = inner.instantiate(s, cuwrap::instantiate_flags::device_launch);
    cuwrap::graph outer{ctx};
    (void)outer.add_kernel(try_launch, one, {}, child.get(), fire_and_forget, status.data() + 1);
    auto exec = outer.instantiate();
    exec.launch(s);
    CHECK(entries(log) == std::vector<int>{2, 7});
    CHECK(read(status) == std::vector<int>{cuda_success, cuda_success});
  }

  TEST_CASE_FIXTURE(fixture, "cudaGetCurrentGraphExec names the device graph a kernel runs in") {
    // "the handle of the currently running graph if it is a device graph ... If the currently
    // executing kernel is not a node within a device graph, this function will return NULL."
    cuwrap::device_buffer<unsigned long long> seen{ctx, 1};
    cuwrap::graph g{ctx};
    (void)g.add_kernel(current_graph, one, {}, seen.data());
    auto device_graph = g.instantiate(cuwrap::instantiate_flags::device_launch);
    auto host_graph = g.instantiate();
    CHECK(has(device_graph.flags(), cuwrap::instantiate_flags::device_launch));
    CHECK(host_graph.flags() == cuwrap::instantiate_flags::none);
    write(seen, std::vector<unsigned long long>{1});
    device_graph.launch(s);
    CHECK(read(seen) ==
          std::vector<unsigned long long>{reinterpret_cast<std::uintptr_t>(device_graph.get())});
    host_graph.launch(s);
    CHECK(read(seen) == std::vector<unsigned long long>{0});
    write(seen, std::vector<unsigned long long>{1});
    s.launch(current_graph, one, seen.data());
    CHECK(read(seen) == std::vector<unsigned long long>{0});
    cuwrap::graph_exec moved = std::move(device_graph);
    CHECK_THROWS_AS((void)device_graph.flags(),
                    cuwrap::usage_error);  // NOLINT(bugprone-use-after-move)
  }

  TEST_CASE_FIXTURE(fixture, "device launches that break the rules return cudaErrorInvalidValue") {
    cuwrap::device_buffer<int> log{ctx, 16};
    cuwrap::device_buffer<int> status{ctx, 1};
    write(log, std::vector<int>(16, 0));
    auto device_graph = appender(log, 1);
    const auto attempt = [&](CUgraphExec target, CUstream stream) {
      write(status, std::vector<int>{-1});
      cuwrap::graph g{ctx};
      (void)g.add_kernel(try_launch, one, {}, target, stream, status.data());
      g.instantiate().launch(s);
      return read(status)[0];
    };
    // A kernel node of a graph may: the worked case.
    CHECK(attempt(device_graph.get(), fire_and_forget) == cuda_success);
    // "Device graphs must be launched from another graph when launched from the device."
    write(status, std::vector<int>{-1});
    s.launch(try_launch, one, device_graph.get(), fire_and_forget, status.data());
    CHECK(read(status) == std::vector<int>{cuda_error_invalid_value});
    // "device graphs cannot be launched into regular CUDA streams".
    CHECK(attempt(device_graph.get(), nullptr) == cuda_error_invalid_value);
    CHECK(attempt(device_graph.get(), s.get()) == cuda_error_invalid_value);
    // A host graph (instantiated without device_launch) cannot be launched from the device.
    cuwrap::graph plain{ctx};
    (void)plain.add_kernel(append, one, {}, log.data(), 2);
    auto host_graph = plain.instantiate();
    host_graph.upload(s);
    CHECK(attempt(host_graph.get(), fire_and_forget) == cuda_error_invalid_value);
    // A device graph must be uploaded (cuGraphUpload, an upload at instantiation or a launch from
    // the host) before the device launches it.
    auto not_uploaded = plain.instantiate(cuwrap::instantiate_flags::device_launch);
    CHECK(attempt(not_uploaded.get(), tail_launch) == cuda_error_invalid_value);
    not_uploaded.upload(s);
    CHECK(attempt(not_uploaded.get(), tail_launch) == cuda_success);
    // "launching a device graph from the device while a previous launch of the graph is running
    // will result in an error, returning cudaErrorInvalidValue": a device graph that
    // fire-and-forgets itself.
    cuwrap::graph selfish{ctx};
    cuwrap::device_buffer<int> self_status{ctx, 1};
    cuwrap::device_buffer<CUgraphExec> handle{ctx, 1};
    (void)selfish.add_kernel(launch_all, one, {}, handle.data(), 1, fire_and_forget,
                             self_status.data());
    auto self_launching = selfish.instantiate(cuwrap::instantiate_flags::device_launch);
    write(handle, std::vector<CUgraphExec>{self_launching.get()});
    self_launching.launch(s);
    CHECK(read(self_status) == std::vector<int>{cuda_error_invalid_value});
    // Nothing the failed launches asked for ran: the two successful launches appended 1 and 2.
    CHECK(entries(log) == std::vector<int>{1, 2});
  }

  TEST_CASE_FIXTURE(fixture, "a graph fire-and-forgets at most 120 graphs and has 255 tails") {
    // "A graph can have up to 120 total fire-and-forget graphs during the course of its
    // execution" and "up to 255 pending tail launches"; the guide names no error code: the
    // software driver returns cudaErrorLaunchPendingCountExceeded for the launch past a limit.
    cuwrap::device_buffer<int> log{ctx, 300};
    std::vector<cuwrap::graph_exec> graphs;
    std::vector<CUgraphExec> handles;
    cuwrap::graph g{ctx};
    (void)g.add_kernel(append, one, {}, log.data(), 1);
    for (int i = 0; i < 256; ++i) {
      graphs.push_back(g.instantiate(s, cuwrap::instantiate_flags::device_launch));
      handles.push_back(graphs.back().get());
    }
    cuwrap::device_buffer<CUgraphExec> list{ctx, handles.size()};
    write(list, handles);
    cuwrap::device_buffer<int> status{ctx, handles.size()};
    for (const auto& [stream, limit] : {std::pair{fire_and_forget, 120}, {tail_launch, 255}}) {
      CAPTURE(limit);
      write(log, std::vector<int>(300, 0));
      write(status, std::vector<int>(handles.size(), -1));
      cuwrap::graph launcher{ctx};
      (void)launcher.add_kernel(launch_all, one, {}, list.data(), limit + 1, stream, status.data());
      launcher.instantiate().launch(s);
      std::vector<int> expected(handles.size(), -1);
      std::fill_n(expected.begin(), limit, cuda_success);
      expected[static_cast<std::size_t>(limit)] = cuda_error_launch_pending_count_exceeded;
      CHECK(read(status) == expected);
      CHECK(read(log)[0] == limit);  // each launch that was accepted ran once
    }
  }

  TEST_CASE_FIXTURE(fixture, "a device graph may not hold a host node in a child graph") {
    // The requirements cover child graphs: only kernel, memcpy, memset and child graph nodes.
    cuwrap::device_buffer<int> log{ctx, 16};
    cuwrap::graph child{ctx};
    (void)child.add_host([] {});
    cuwrap::graph g{ctx};
    (void)g.add_kernel(append, one, {}, log.data(), 1);
    (void)g.add_child(child);
    CHECK_THROWS_WITH_AS((void)g.instantiate(cuwrap::instantiate_flags::device_launch),
                         doctest::Contains("not supported for device launch"), cuwrap::error);
    (void)g.instantiate();  // a host graph may
  }
}
