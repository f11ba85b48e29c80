// green_contexts: partitions device 0's SMs with green contexts and runs two different
// workloads side by side, each in its own partition: a saxpy (y = a * x + y) in one and a
// histogram in the other. Each green context gets its own stream and loads its own module; both
// results are checked against the host. The partitions and what each stream belongs to are
// printed. Exits non-zero when a result is wrong.
//
//   green_contexts [--kernels=DIR] [--n=N]
#include <algorithm>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "options.hpp"

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"n", "1048576"}}};
  const int n = options.positive("n");
  constexpr int bins = 64;

  const auto dev = cuwrap::device::get(0);
  const auto all = cuwrap::sm_resource::of(dev);
  std::printf("device %d: %s, %u SMs (partitions of at least %u, aligned to %u)\n", dev.ordinal(),
              dev.name().c_str(), all.count(), all.min_partition_size(),
              all.coscheduled_alignment());

  // Two equal partitions of about a third of the device each; the rest stays unused.
  const unsigned wanted = std::max(all.count() / 3, all.min_partition_size());
  const cuwrap::sm_split split = all.split(wanted, 2);
  if (split.groups.size() < 2) {
    std::printf("device %d is too small for two partitions of %u SMs\n", dev.ordinal(), wanted);
    return 1;
  }
  cuwrap::green_context left{dev, split.groups[0]};
  cuwrap::green_context right{dev, split.groups[1]};
  std::printf("green context %llu: %u SMs; green context %llu: %u SMs; %u SMs left over\n",
              left.green_id(), left.sms().count(), right.green_id(), right.sms().count(),
              split.remainder.count());

  const std::string fatbin = options.text("kernels") + "/green_contexts.fatbin";
  const auto left_module = cuwrap::module::load_file(left, fatbin);
  const auto right_module = cuwrap::module::load_file(right, fatbin);
  const auto saxpy = left_module.kernel<void(float, const float*, float*, int)>("saxpy_stride");
  const auto histogram = right_module.kernel<void(const int*, int, unsigned*, int)>("histogram");

  cuwrap::stream left_stream = left.create_stream();
  cuwrap::stream right_stream = right.create_stream();
  const bool belongs = cuwrap::green_context_of(left_stream) == left.green_handle() &&
                       cuwrap::green_context_of(right_stream) == right.green_handle();
  std::printf("streams belong to their green contexts: %s\n", belongs ? "yes" : "no");

  const auto size = static_cast<std::size_t>(n);
  std::vector<float> x(size);
  std::vector<float> y(size);
  std::vector<int> values(size);
  for (std::size_t i = 0; i < size; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = 1.0f;
    values[i] = static_cast<int>((i * 2654435761u) % 100000u);
  }
  cuwrap::device_buffer<float> dx{left, size};
  cuwrap::device_buffer<float> dy{left, size};
  cuwrap::device_buffer<int> dvalues{right, size};
  cuwrap::device_buffer<unsigned> dbins{right, bins};
  cuwrap::copy(left_stream, dx, x);
  cuwrap::copy(left_stream, dy, y);
  cuwrap::copy(right_stream, dvalues, values);
  cuwrap::fill(right_stream, dbins, 0u);

  // Grids sized for each partition: a few blocks per SM it has.
  const auto grid = [](const cuwrap::green_context& g) { return g.sms().count() * 4; };
  const cuwrap::launch_config left_config{{grid(left)}, {256}};
  const cuwrap::launch_config right_config{{grid(right)}, {256}};
  left_stream.launch(saxpy, left_config, 2.0f, dx.data(), dy.data(), n);
  right_stream.launch(histogram, right_config, dvalues.data(), n, dbins.data(), bins);

  std::vector<float> y_out(size);
  std::vector<unsigned> bins_out(bins);
  cuwrap::copy(left_stream, y_out, dy);
  cuwrap::copy(right_stream, bins_out, dbins);
  left_stream.synchronize();
  right_stream.synchronize();

  bool ok = belongs;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (y_out[i] != 2.0f * x[i] + y[i]) ++wrong;
  }
  std::printf("saxpy in green context %llu: %zu of %d elements wrong\n", left.green_id(), wrong, n);
  ok = ok && wrong == 0;
  std::vector<unsigned> expected(bins, 0);
  for (const int v : values) ++expected[static_cast<std::size_t>(v % bins)];
  const bool bins_ok = bins_out == expected;
  std::printf("histogram in green context %llu: %s (%u values counted)\n", right.green_id(),
              bins_ok ? "correct" : "WRONG", std::accumulate(bins_out.begin(), bins_out.end(), 0u));
  ok = ok && bins_ok;
  std::puts(ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "green_contexts: %s\n", e.what());
  return 1;
}
