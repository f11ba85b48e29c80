// simple_p2p: cuwrap's version of NVIDIA's simpleP2P. Enables peer access between two devices,
// copies a buffer from GPU 0 to GPU 1 with a peer copy, then runs a kernel on GPU 1 that reads
// GPU 0's memory directly and writes its own, and checks the result on the host. With fewer
// than two devices, or no peer access between them, it says why and exits 0.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

int main() try {
  const auto devices = cuwrap::device::all();
  if (devices.size() < 2) {
    std::printf("simple_p2p needs two devices; this machine has %zu. Nothing to do.\n",
                devices.size());
    return 0;
  }
  const auto &dev0 = devices[0], &dev1 = devices[1];
  std::printf("GPU 0: %s\nGPU 1: %s\n", dev0.name().c_str(), dev1.name().c_str());
  if (!cuwrap::can_access_peer(dev1, dev0) || !cuwrap::can_access_peer(dev0, dev1)) {
    std::puts("these two devices cannot access each other's memory. Nothing to do.");
    return 0;
  }
  const auto link = cuwrap::p2p_attributes(dev0, dev1);
  std::printf("link: performance rank %d, native atomics %s\n", link.performance_rank,
              link.native_atomics ? "yes" : "no");

  cuwrap::primary_context ctx0{dev0}, ctx1{dev1};
  cuwrap::peer_access one_reads_zero{ctx1, ctx0};  // GPU 1's kernels may read GPU 0's memory
  cuwrap::peer_access zero_reads_one{ctx0, ctx1};

  constexpr int n = 1 << 20;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000);
  cuwrap::device_buffer<float> on0{ctx0, n}, on1{ctx1, n}, result{ctx1, n};
  cuwrap::stream s0{ctx0}, s1{ctx1};
  cuwrap::copy(s0, on0, host);
  s0.synchronize();

  cuwrap::copy_peer(s1, ctx1, on1, ctx0, on0);  // GPU 0 -> GPU 1
  const auto mod =
      cuwrap::module::load_file(ctx1, std::string{CUWRAP_SAMPLE_KERNELS_DIR} + "/p2p.fatbin");
  const auto scale_peer = mod.kernel<void(const float*, float*, int)>("scale_peer");
  s1.launch(scale_peer, cuwrap::launch_config::linear(n, 256), on0.data(), result.data(), n);
  std::vector<float> from_kernel(n), from_copy(n);
  cuwrap::copy(s1, from_kernel, result);
  cuwrap::copy(s1, from_copy, on1);
  s1.synchronize();

  for (std::size_t i = 0; i < host.size(); ++i) {
    if (from_copy[i] != host[i] || from_kernel[i] != 2.0f * host[i]) {
      std::fprintf(stderr, "FAILED at element %zu\n", i);
      return 1;
    }
  }
  std::puts("PASSED");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "simple_p2p: %s\n", e.what());
  return 1;
}
