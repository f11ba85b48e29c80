// bandwidth: cuwrap's version of NVIDIA's bandwidthTest. Measures host-to-device,
// device-to-host and device-to-device copy bandwidth for pageable and pinned host memory over
// a range of sizes, timed with events on a stream, and verifies every copied byte.
//
//   bandwidth [--csv] [--max-mib=N] [--iterations=N]
//
// On the software driver the times come from its simulated clock, so the figures only show
// that the measurement works; real numbers come from a GPU.
#include <cstdio>
#include <cstring>
#include <cuwrap/cuwrap.hpp>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct options {
  bool csv = false;
  std::size_t max_bytes = std::size_t{64} << 20;
  int iterations = 10;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg{argv[i]};
    if (arg == "--csv") {
      o.csv = true;
    } else if (arg.starts_with("--max-mib=")) {
      o.max_bytes = std::stoul(std::string{arg.substr(10)}) << 20;
    } else if (arg.starts_with("--iterations=")) {
      o.iterations = std::stoi(std::string{arg.substr(13)});
    } else {
      throw std::invalid_argument{"unknown argument " + std::string{arg} +
                                  " (use --csv, --max-mib=N, --iterations=N)"};
    }
  }
  return o;
}

// Times `iterations` runs of `copy_once` on `s` and returns GB/s for `bytes` per run.
template <class Copy>
double measure(const cuwrap::owning_context& ctx, cuwrap::stream_ref s, std::size_t bytes,
               int iterations, Copy&& copy_once) {
  cuwrap::event start{ctx, cuwrap::event_flags::timing};
  cuwrap::event stop{ctx, cuwrap::event_flags::timing};
  s.record(start);
  for (int i = 0; i < iterations; ++i) {
    copy_once();
  }
  s.record(stop);
  stop.synchronize();
  const double seconds = static_cast<double>(cuwrap::elapsed(start, stop).count()) / 1000.0;
  return seconds > 0 ? static_cast<double>(bytes) * iterations / seconds / 1e9 : 0.0;
}

}  // namespace

int main(int argc, char** argv) try {
  const auto o = parse(argc, argv);
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};

  if (o.csv) {
    std::puts("memory,direction,bytes,gb_per_s");
  } else {
    std::printf("Device 0: %s\n", dev.name().c_str());
    std::printf("%-9s %-6s %12s %10s\n", "memory", "dir", "bytes", "GB/s");
  }
  bool ok = true;
  for (std::size_t bytes = 1024; bytes <= o.max_bytes; bytes *= 4) {
    const std::size_t n = bytes;
    std::vector<unsigned char> pageable(n);
    std::iota(pageable.begin(), pageable.end(), static_cast<unsigned char>(bytes));
    cuwrap::pinned_buffer<unsigned char> pinned{ctx, n};
    std::memcpy(pinned.data(), pageable.data(), n);
    cuwrap::device_buffer<unsigned char> device{ctx, n};
    cuwrap::device_buffer<unsigned char> device2{ctx, n};
    std::vector<unsigned char> back(n);

    struct row {
      const char* memory;
      const char* direction;
      double gbps;
    };
    std::vector<row> rows;
    rows.push_back({"pageable", "HtoD",
                    measure(ctx, s, n, o.iterations, [&] { cuwrap::copy(s, device, pageable); })});
    rows.push_back({"pageable", "DtoH",
                    measure(ctx, s, n, o.iterations, [&] { cuwrap::copy(s, back, device); })});
    ok = ok && back == pageable;
    rows.push_back({"pinned", "HtoD",
                    measure(ctx, s, n, o.iterations, [&] { cuwrap::copy(s, device, pinned); })});
    std::fill(pinned.begin(), pinned.end(), 0);
    rows.push_back({"pinned", "DtoH",
                    measure(ctx, s, n, o.iterations, [&] { cuwrap::copy(s, pinned, device); })});
    ok = ok && std::equal(pinned.begin(), pinned.end(), pageable.begin());
    rows.push_back({"device", "DtoD",
                    measure(ctx, s, n, o.iterations, [&] { cuwrap::copy(s, device2, device); })});
    cuwrap::copy(s, back, device2);
    s.synchronize();
    ok = ok && back == pageable;

    for (const auto& r : rows) {
      if (o.csv) {
        std::printf("%s,%s,%zu,%.3f\n", r.memory, r.direction, n, r.gbps);
      } else {
        std::printf("%-9s %-6s %12zu %10.2f\n", r.memory, r.direction, n, r.gbps);
      }
    }
  }
  if (!ok) {
    std::fputs("FAILED: copied data does not match\n", stderr);
    return 1;
  }
  if (!o.csv) {
    std::puts("PASSED: every copy verified");
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bandwidth: %s\n", e.what());
  return 1;
}
