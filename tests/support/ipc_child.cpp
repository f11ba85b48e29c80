// The second process of the IPC tests: opens a device allocation and an event another process
// exported (handles given as hex on the command line), waits for the event, adds 1 to every
// int, and exits 0, or non-zero with a message. Runs on whichever driver CUWRAP_DRIVER names.
#include <cuwrap/cuwrap.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ipc_child <memory handle hex> <event handle hex> <count>\n");
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
