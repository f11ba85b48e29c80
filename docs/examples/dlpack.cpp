// docs/dlpack.md: a device buffer handed to a consumer as a DLPack tensor (with the stream
// handshake), taken back as a typed view and as an owning tensor.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/dlpack.hpp>
#include <numeric>
#include <vector>

namespace dl = cuwrap::dlpack;

// A consumer, as a framework would write it: it takes a tensor, reads it on its own stream and
// calls the deleter when done (here through dl::tensor).
float consume(dl::DLManagedTensorVersioned* raw, cuwrap::stream_ref on) {
  const dl::tensor<const float> t{dl::unique_tensor{raw}, dl::access::device, 0};
  std::vector<float> host(t.size());
  cuwrap::copy(on, host, t.span());
  on.synchronize();
  return std::accumulate(host.begin(), host.end(), 0.0f);
}

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream producer{ctx};
  cuwrap::stream consumer{ctx};

  cuwrap::stream_ordered_buffer<float> data{producer, 1000};
  cuwrap::fill(producer, data, 0.5f);  // still pending on the producer

  // Rows of 10: a 100 x 10 tensor. The consumer stream waits for the fill (an event recorded on
  // the producer); the buffer moves into the tensor and is freed by its deleter.
  const std::int64_t shape[] = {100, 10};
  dl::export_options options;
  options.shape = shape;
  options.consumer = consumer;
  dl::unique_tensor tensor = dl::to_dlpack(std::move(data), options);
  std::printf("shape %lld x %lld, strides %lld, %lld, device type %d\n",
              static_cast<long long>(tensor->dl_tensor.shape[0]),
              static_cast<long long>(tensor->dl_tensor.shape[1]),
              static_cast<long long>(tensor->dl_tensor.strides[0]),
              static_cast<long long>(tensor->dl_tensor.strides[1]),
              static_cast<int>(tensor->dl_tensor.device.device_type));

  // A view checks the tensor without taking it.
  const cuwrap::device_span<const float> view = dl::device_view<const float>(tensor.get());
  std::printf("%zu floats at the tensor's address\n", view.size());

  const float sum = consume(tensor.release(), consumer);  // the consumer owns it now
  std::printf("sum %.1f\n", static_cast<double>(sum));
  return sum == 500.0f ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
