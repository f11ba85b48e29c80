// The second process of the IPC tests. Runs on whichever driver CUWRAP_DRIVER names, and exits
// 0, or non-zero with a message.
//
//   ipc_child <memory handle> <event handle> <count>
//       opens a device allocation and an event another process exported (handles as hex),
//       waits for the event and adds 1 to every int
//   ipc_child vmm <fd> <bytes> <count>
//       imports physical memory (cuMemImportFromShareableHandle) from the inherited descriptor,
//       maps it, checks that int i is i and writes 2 * i + 1
//   ipc_child pool <fd> <pointer data> <count>
//       imports the pool whose descriptor it inherited (number <fd>) and the allocation the
//       pointer data (hex) names, checks that int i is i, writes 2 * i + 1 to it, frees it and
//       closes the pool
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace {

template <class Handle>
Handle from_hex(const std::string& hex) {
  Handle h;
  if (hex.size() != h.bytes.size() * 2) {
    throw std::invalid_argument{"handle has " + std::to_string(hex.size()) + " hex digits"};
  }
  for (std::size_t i = 0; i < h.bytes.size(); ++i) {
    h.bytes[i] = static_cast<std::byte>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return h;
}

int pool_mode(int fd, const cuwrap::ipc_pool_pointer& pointer, std::size_t count) {
  const cuwrap::file_descriptor inherited{fd};  // this process's copy: closed at the end
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  const cuwrap::memory_pool pool = cuwrap::import_pool(inherited);
  // An imported pool may start without access from this process's device (NVIDIA's
  // streamOrderedAllocationIPC sample grants it the same way).
  if (pool.access(dev) != cuwrap::pool_access::read_write) pool.allow_access(dev);
  cuwrap::ipc_pool_memory<int> memory{ctx, pool, pointer, count};
  std::vector<int> values(count);
  cuwrap::copy(values, memory);
  for (std::size_t i = 0; i < count; ++i) {
    if (values[i] != static_cast<int>(i)) {
      std::fprintf(stderr, "ipc_child: int %zu is %d, expected %zu\n", i, values[i], i);
      return 3;
    }
    values[i] = static_cast<int>(2 * i + 1);
  }
  cuwrap::copy(memory, values);
  return 0;  // frees the imported memory before the exporter does (it waits for this exit)
}

// Imports the physical memory behind descriptor `fd`, maps it, checks that int i is i for the
// first `count` and writes 2 * i + 1.
int vmm_mode(int fd, std::size_t bytes, std::size_t count) {
  const cuwrap::file_descriptor inherited{fd};
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  const auto memory = cuwrap::physical_memory::import_fd(inherited, bytes);
  cuwrap::address_reservation range{bytes};
  auto mapping = range.map(0, memory);
  mapping.set_access(dev);
  std::vector<int> values(count);
  cuwrap::copy(values, mapping.span<int>().first(count));
  for (std::size_t i = 0; i < count; ++i) {
    if (values[i] != static_cast<int>(i)) {
      std::fprintf(stderr, "ipc_child vmm: int %zu is %d, expected %zu\n", i, values[i], i);
      return 3;
    }
    values[i] = static_cast<int>(2 * i + 1);
  }
  cuwrap::copy(mapping.span<int>().first(count), values);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc == 5 && std::string{argv[1]} == "vmm") {
    return vmm_mode(std::stoi(argv[2]), std::stoul(argv[3]), std::stoul(argv[4]));
  }
  if (argc == 5 && std::string{argv[1]} == "pool") {
    return pool_mode(std::stoi(argv[2]), from_hex<cuwrap::ipc_pool_pointer>(argv[3]),
                     std::stoul(argv[4]));
  }
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: ipc_child <memory handle hex> <event handle hex> <count>\n"
                 "       ipc_child pool <fd> <pointer data hex> <count>\n");
    return 2;
  }
  const auto count = std::stoul(argv[3]);
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
  cuwrap::ipc_mapping<int> memory{ctx, from_hex<cuwrap::ipc_memory_handle>(argv[1]), count};
  auto ready = cuwrap::open_event(ctx, from_hex<cuwrap::ipc_event_handle>(argv[2]));
  ready.synchronize();
  std::vector<int> values(count);
  cuwrap::copy(values, memory);
  for (auto& v : values) ++v;
  cuwrap::copy(memory, values);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "ipc_child: %s\n", e.what());
  return 1;
}
