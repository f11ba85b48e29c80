// p2p_bandwidth: the idea of NVIDIA's p2pBandwidthLatencyTest with cuwrap. For every pair of
// devices it measures unidirectional copy bandwidth (GB/s) and the latency of small copies
// (us), with peer access disabled and enabled, timed with events, and checks the data.
//
//   p2p_bandwidth [--mib=N]
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct result {
  double gbps;
  double latency_us;
};

result measure(const cuwrap::primary_context& src_ctx, const cuwrap::primary_context& dst_ctx,
               std::size_t bytes, bool& ok) {
  cuwrap::device_buffer<unsigned char> src{src_ctx, bytes}, dst{dst_ctx, bytes};
  cuwrap::stream s{src_ctx};
  cuwrap::fill(s, src, static_cast<unsigned char>(0x5a));
  cuwrap::event start{src_ctx, cuwrap::event_flags::timing};
  cuwrap::event stop{src_ctx, cuwrap::event_flags::timing};
  constexpr int repeats = 5;
  s.record(start);
  for (int i = 0; i < repeats; ++i) cuwrap::copy_peer(s, dst_ctx, dst, src_ctx, src);
  s.record(stop);
  stop.synchronize();
  const double ms = cuwrap::elapsed(start, stop).count();
  const auto tiny_src = src.span().first(4);
  const auto tiny_dst = dst.span().first(4);
  constexpr int small_repeats = 100;
  s.record(start);
  for (int i = 0; i < small_repeats; ++i)
    cuwrap::copy_peer(s, dst_ctx, tiny_dst, src_ctx, tiny_src);
  s.record(stop);
  stop.synchronize();
  const double small_ms = cuwrap::elapsed(start, stop).count();
  std::vector<unsigned char> back(bytes);
  {
    cuwrap::scoped_current_context current{dst_ctx};
    cuwrap::copy(back, dst);
  }
  for (auto b : back) ok = ok && b == 0x5a;
  return {ms > 0 ? static_cast<double>(bytes) * repeats / (ms / 1e3) / 1e9 : 0.0,
          small_ms * 1e3 / small_repeats};
}

}  // namespace

int main(int argc, char** argv) try {
  std::size_t mib = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg{argv[i]};
    if (arg.starts_with("--mib=")) {
      mib = std::stoul(std::string{arg.substr(6)});
    } else {
      std::fprintf(stderr, "usage: p2p_bandwidth [--mib=N]\n");
      return 2;
    }
  }
  const auto devices = cuwrap::device::all();
  std::vector<std::unique_ptr<cuwrap::primary_context>> contexts;
  for (const auto& d : devices) contexts.push_back(std::make_unique<cuwrap::primary_context>(d));
  const std::size_t n = devices.size();
  std::printf("%zu device(s); %zu MiB per copy\n", n, mib);
  bool ok = true;
  for (bool p2p : {false, true}) {
    std::vector<std::vector<result>> table(n, std::vector<result>(n, {0, 0}));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::optional<cuwrap::peer_access> access;
        if (p2p && i != j && cuwrap::can_access_peer(devices[i], devices[j])) {
          access.emplace(*contexts[i], *contexts[j]);
        }
        table[i][j] = measure(*contexts[i], *contexts[j], mib << 20, ok);
      }
    }
    for (int which = 0; which < 2; ++which) {
      std::printf("\n%s, P2P %s\n   D\\D", which == 0 ? "Bandwidth (GB/s)" : "Latency (us)",
                  p2p ? "enabled" : "disabled");
      for (std::size_t j = 0; j < n; ++j) std::printf("%10zu", j);
      std::puts("");
      for (std::size_t i = 0; i < n; ++i) {
        std::printf("%6zu", i);
        for (std::size_t j = 0; j < n; ++j) {
          std::printf("%10.2f", which == 0 ? table[i][j].gbps : table[i][j].latency_us);
        }
        std::puts("");
      }
    }
  }
  std::puts(ok ? "\nPASSED: every copy verified" : "\nFAILED: copied data does not match");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "p2p_bandwidth: %s\n", e.what());
  return 1;
}
