// pool_ipc: allocates from one shareable memory pool on several streams, runs a kernel on each
// allocation, then shares the pool with a second process (NVIDIA's streamOrderedAllocationIPC
// pattern): the child imports the pool and every allocation, adds 1000 to each element with the
// same kernel, and exits; the parent checks every element and prints the pool's statistics. It
// does this for a pool of device memory and, where the device supports it, for a pool of pinned
// host memory (a host NUMA node's: host pools of CU_MEM_LOCATION_TYPE_HOST are not shareable).
// Exits non-zero if a result is wrong.
//
//   pool_ipc [--kernels=DIR] [--n=N] [--streams=S]
//   pool_ipc --child=FD --location=device|host-numa --pointers=HEX,HEX,... [--kernels=DIR] [--n=N]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

constexpr int kChildAdds = 1000;

std::string to_hex(const cuwrap::ipc_pool_pointer& pointer) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  for (const std::byte b : pointer.bytes) {
    hex += digits[static_cast<unsigned>(b) >> 4];
    hex += digits[static_cast<unsigned>(b) & 15];
  }
  return hex;
}

cuwrap::ipc_pool_pointer from_hex(const std::string& hex) {
  cuwrap::ipc_pool_pointer pointer;
  if (hex.size() != 2 * pointer.bytes.size()) {
    throw std::invalid_argument{"pointer data of " + std::to_string(hex.size()) + " hex digits"};
  }
  for (std::size_t i = 0; i < pointer.bytes.size(); ++i) {
    pointer.bytes[i] = static_cast<std::byte>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return pointer;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos;) {
    parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// The second process: imports the pool it inherited (descriptor `fd`) and each allocation, and
// adds kChildAdds to every element on its own stream. The imports are freed before it exits, as
// the exporter's allocations must outlive them.
int child(const samples::options& options) {
  const cuwrap::file_descriptor inherited{std::stoi(options.text("child"))};
  const int n = options.positive("n");
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/streams.fatbin");
  const auto increment = mod.kernel<void(int*, int, int)>("increment");
  const cuwrap::memory_pool pool = cuwrap::import_pool(inherited);
  if (pool.access(dev) != cuwrap::pool_access::read_write) pool.allow_access(dev);
  cuwrap::stream s{ctx};
  std::vector<cuwrap::ipc_pool_memory<int>> imported;
  for (const std::string& hex : split(options.text("pointers"))) {
    imported.emplace_back(ctx, pool, from_hex(hex), static_cast<std::size_t>(n));
    s.launch(increment, cuwrap::launch_config::linear(n, 256), imported.back().data(), kChildAdds,
             n);
  }
  s.synchronize();
  std::printf("  child %d: added %d to %zu allocations of the imported %s pool\n",
              static_cast<int>(getpid()), kChildAdds, imported.size(),
              options.text("location").c_str());
  return 0;
}

// Runs this program as the child, with the pool's descriptor inherited; returns its status.
int run_child(const samples::options& options, const cuwrap::memory_pool& pool,
              const std::string& location, const std::vector<std::string>& pointers) {
  const cuwrap::file_descriptor fd = cuwrap::export_pool(pool);
  fd.inherit_on_exec();
  std::string joined;
  for (const std::string& p : pointers) joined += (joined.empty() ? "" : ",") + p;
  std::vector<std::string> args{"pool_ipc",
                                "--child=" + std::to_string(fd.get()),
                                "--location=" + location,
                                "--pointers=" + joined,
                                "--kernels=" + options.text("kernels"),
                                "--n=" + options.text("n")};
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error{"fork failed"};
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::perror("pool_ipc: execv");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// One round: allocations from `pool` on `streams` streams, a kernel on each, the child's
// additions, the check. Returns the number of wrong elements.
std::size_t round_trip(const samples::options& options, const cuwrap::primary_context& ctx,
                       const cuwrap::typed_kernel<void(int*, int, int)>& increment,
                       cuwrap::memory_pool& pool, const std::string& location) {
  const int n = options.positive("n");
  const int stream_count = options.positive("streams");
  std::vector<cuwrap::stream> streams;
  for (int k = 0; k < stream_count; ++k) streams.emplace_back(ctx);
  std::vector<int> input(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) input[static_cast<std::size_t>(i)] = i;

  // Each stream allocates from the pool, fills its allocation and adds k + 1 to it.
  std::vector<cuwrap::stream_ordered_buffer<int>> buffers;
  for (int k = 0; k < stream_count; ++k) {
    cuwrap::stream& s = streams[static_cast<std::size_t>(k)];
    buffers.push_back(pool.allocate<int>(s, input.size()));
    cuwrap::copy(s, buffers.back(), input);
    s.launch(increment, cuwrap::launch_config::linear(n, 256), buffers.back().data(), k + 1, n);
  }
  for (auto& s : streams) s.synchronize();  // the data is there before the child looks
  const cuwrap::pool_usage usage = pool.usage();
  std::printf("  %d streams allocated %zu bytes each: pool used %llu bytes, reserved %llu\n",
              stream_count, input.size() * sizeof(int),
              static_cast<unsigned long long>(usage.used_current),
              static_cast<unsigned long long>(usage.reserved_current));

  std::vector<std::string> pointers;
  for (const auto& b : buffers) pointers.push_back(to_hex(cuwrap::export_pool_pointer(b.span())));
  if (const int status = run_child(options, pool, location, pointers); status != 0) {
    std::fprintf(stderr, "FAILED: the child process exited with %d\n", status);
    return 1;
  }

  std::size_t wrong = 0;
  std::vector<int> back(input.size());
  for (int k = 0; k < stream_count; ++k) {
    cuwrap::copy(back, buffers[static_cast<std::size_t>(k)]);
    for (int i = 0; i < n; ++i) {
      const int expected = i + k + 1 + kChildAdds;
      if (back[static_cast<std::size_t>(i)] != expected && wrong++ < 5) {
        std::fprintf(stderr, "FAILED: stream %d element %d is %d, expected %d\n", k, i,
                     back[static_cast<std::size_t>(i)], expected);
      }
    }
  }
  buffers.clear();  // freed in each stream's order
  for (auto& s : streams) s.synchronize();
  std::printf("  after the frees: pool used %llu bytes, high-water mark %llu\n",
              static_cast<unsigned long long>(pool.usage().used_current),
              static_cast<unsigned long long>(pool.usage().used_high));
  return wrong;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{argc,
                                 argv,
                                 {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR},
                                  {"n", "65536"},
                                  {"streams", "4"},
                                  {"child", ""},
                                  {"location", ""},
                                  {"pointers", ""}}};
  if (!options.text("child").empty()) return child(options);

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  std::printf("device %d: %s\n", dev.ordinal(), dev.name().c_str());
  if (dev.raw_attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) == 0) {
    std::printf("SKIPPED: the device cannot share pools as POSIX file descriptors\n");
    return 0;
  }
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/streams.fatbin");
  const auto increment = mod.kernel<void(int*, int, int)>("increment");
  cuwrap::memory_pool_options shareable;
  shareable.sharing = cuwrap::pool_sharing::posix_fd;

  std::size_t wrong = 0;
  std::printf("a pool of device memory:\n");
  cuwrap::memory_pool device_pool{cuwrap::pool_location::device(dev), shareable};
  wrong += round_trip(options, ctx, increment, device_pool, "device");

  const int numa = dev.raw_attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
  if (dev.raw_attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) != 0 && numa >= 0) {
    std::printf("a pool of pinned host memory (NUMA node %d):\n", numa);
    cuwrap::memory_pool host_pool{cuwrap::pool_location::host_numa(numa), shareable};
    host_pool.allow_access(dev);  // host pools are the host CPU's until a device is let in
    wrong += round_trip(options, ctx, increment, host_pool, "host-numa");
  } else {
    std::printf("(no pinned host pool: the device has no host NUMA memory pools)\n");
  }

  if (wrong != 0) {
    std::fprintf(stderr, "FAILED: %zu wrong elements\n", wrong);
    return 1;
  }
  std::printf("PASSED: every element of every allocation is i + stream + 1 + %d\n", kChildAdds);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "pool_ipc: %s\n", e.what());
  return 1;
}
