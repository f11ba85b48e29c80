// Runs tests/support/ipc_child.cpp against memory and an event, or a pool and one of its
// allocations, that this process exports.
#pragma once

#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"

extern char** environ;

namespace cuwrap::testing {

template <class Handle>
std::string to_hex(const Handle& h) {
  std::string hex;
  char digits[3];
  for (auto b : h.bytes) {
    std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned>(b));
    hex += digits;
  }
  return hex;
}

/// Runs the child with `args` (after its path) and returns its exit status (-1 if it did not
/// exit normally). It inherits every descriptor without FD_CLOEXEC.
inline int run_child(std::vector<std::string> args) {
  const std::string child = CUWRAP_IPC_CHILD;
  args.insert(args.begin(), child);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid{};
  if (posix_spawn(&pid, child.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Exports `memory` and `ready`, runs the child process and returns its exit status.
inline int run_ipc_child(device_span<int> memory, event_ref ready) {
  return run_child(
      {to_hex(export_memory(memory)), to_hex(export_event(ready)), std::to_string(memory.size())});
}

/// Exports `pool` (a descriptor the child inherits across exec: a descriptor is not bytes) and
/// `memory`, one of its allocations holding 0, 1, 2...; the child checks that, writes 2 * i + 1
/// and frees its import before it exits. Returns its exit status.
inline int run_ipc_pool_child(const memory_pool& pool, device_span<int> memory) {
  const file_descriptor fd = export_pool(pool);
  fd.inherit_on_exec();
  return run_child({"pool", std::to_string(fd.get()), to_hex(export_pool_pointer(memory)),
                    std::to_string(memory.size())});
}

}  // namespace cuwrap::testing
