// stream_priorities: cuwrap's version of NVIDIA's StreamPriorities. Lists the context's stream
// priority range, creates a stream at each end, and races the same copy kernel in both: the
// low-priority stream is filled first, then the high-priority one, and events time each. On a
// GPU the high-priority work usually finishes sooner despite starting later (reported, not
// required: scheduling is the hardware's business). Both copies are checked element by
// element, and a priority outside the range must be refused with a clear error.
//
//   stream_priorities [--kernels=DIR] [--n=N]
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

struct lane {
  cuwrap::stream stream;
  cuwrap::device_buffer<int> dst;
  cuwrap::event start;
  cuwrap::event stop;
};

lane make_lane(const cuwrap::primary_context& ctx, int priority, std::size_t n) {
  return {cuwrap::stream{ctx, {.priority = priority}}, cuwrap::device_buffer<int>{ctx, n},
          cuwrap::event{ctx, cuwrap::event_flags::timing},
          cuwrap::event{ctx, cuwrap::event_flags::timing}};
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"n", "4194304"}}};
  const int n = options.positive("n");
  constexpr int launches = 10;

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  const auto range = ctx.stream_priorities();
  std::printf("device %d: %s\n", dev.ordinal(), dev.name().c_str());
  std::printf("stream priorities: %d (highest) to %d (lowest)\n", range.greatest, range.least);

  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/streams.fatbin");
  const auto copy_ints = mod.kernel<void(int*, const int*, int)>("copy_ints");

  std::vector<int> source(static_cast<std::size_t>(n));
  std::iota(source.begin(), source.end(), 0);
  cuwrap::device_buffer<int> src{ctx, source.size()};
  cuwrap::stream setup{ctx};
  cuwrap::copy(setup, src, source);
  setup.synchronize();

  auto low = make_lane(ctx, range.least, source.size());
  auto high = make_lane(ctx, range.greatest, source.size());
  bool ok = high.stream.priority() == range.greatest && low.stream.priority() == range.least;

  const auto config = cuwrap::launch_config::linear(source.size() / 4, 256);
  for (lane* l : {&low, &high}) {  // low first: the high-priority work starts later
    l->stream.record(l->start);
    for (int i = 0; i < launches; ++i) {
      l->stream.launch(copy_ints, config, l->dst.data(), src.data(), n);
    }
    l->stream.record(l->stop);
  }
  for (lane* l : {&low, &high}) {
    l->stream.synchronize();
  }
  std::printf("elapsed time of kernels launched to LOW priority stream: %.3f ms\n",
              static_cast<double>(cuwrap::elapsed(low.start, low.stop).count()));
  std::printf("elapsed time of kernels launched to HI  priority stream: %.3f ms\n",
              static_cast<double>(cuwrap::elapsed(high.start, high.stop).count()));

  std::vector<int> copied(source.size());
  for (lane* l : {&low, &high}) {
    cuwrap::copy(setup, copied, l->dst);
    setup.synchronize();
    if (copied != source) {
      std::fprintf(stderr, "the %s-priority copy is wrong\n", l == &low ? "low" : "high");
      ok = false;
    }
  }

  try {
    cuwrap::stream too_high{ctx, {.priority = range.greatest - 1}};
    std::puts("a priority above the range was accepted");
    ok = false;
  } catch (const cuwrap::error& e) {
    std::printf("out of range, as expected: %s\n", e.what());
  }
  std::puts(ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stream_priorities: %s\n", e.what());
  return 1;
}
