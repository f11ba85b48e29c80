// Runs tests/support/ipc_child.cpp against memory and an event this process exports.
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

/// Exports `memory` and `ready`, runs the child process and returns its exit status.
inline int run_ipc_child(device_span<int> memory, event_ref ready) {
  const std::string child = CUWRAP_IPC_CHILD;
  std::vector<std::string> args{child, to_hex(export_memory(memory)), to_hex(export_event(ready)),
                                std::to_string(memory.size())};
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

}  // namespace cuwrap::testing
