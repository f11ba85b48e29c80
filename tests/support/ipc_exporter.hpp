// A second process that exports a device allocation and an interprocess event for the test
// process to open (the driver refuses a process its own IPC handles).
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <cuwrap/cuwrap.hpp>
#include <vector>

namespace cuwrap::testing {

// Another process that exports a device allocation and an interprocess event and keeps them
// until this one is done: the driver refuses a process its own IPC handles. It is a fork of
// this process (the software driver has no threads to lose), talking over two pipes.
class ipc_exporter {
 public:
  static constexpr std::size_t count = 32;

  ipc_exporter() {
    int to_parent[2];
    int to_child[2];
    REQUIRE(pipe2(to_parent, O_CLOEXEC) == 0);
    REQUIRE(pipe2(to_child, O_CLOEXEC) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(to_parent[0]);
      close(to_child[1]);
      _exit(serve(to_parent[1], to_child[0]));
    }
    close(to_parent[1]);
    close(to_child[0]);
    reply_ = to_parent[0];
    done_ = to_child[1];
    std::array<std::byte, sizeof memory_ + sizeof event_> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = read(reply_, bytes.data() + got, bytes.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got != bytes.size()) {
      close(done_);
      close(reply_);
      waitpid(pid_, nullptr, 0);
      FAIL("the exporting process sent no handles");
    }
    std::memcpy(&memory_, bytes.data(), sizeof memory_);
    std::memcpy(&event_, bytes.data() + sizeof memory_, sizeof event_);
  }
  ipc_exporter(const ipc_exporter&) = delete;
  ipc_exporter& operator=(const ipc_exporter&) = delete;
  ~ipc_exporter() {
    close(done_);  // the exporter's read returns 0: it frees everything and exits
    close(reply_);
    int status = 0;
    waitpid(pid_, &status, 0);
    CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0),
                  "the exporting process failed: status ", status);
  }

  /// The exported allocation of `count` ints, holding 0, 1, 2...
  [[nodiscard]] const cuwrap::ipc_memory_handle& memory() const { return memory_; }
  /// The exported event, recorded once.
  [[nodiscard]] const cuwrap::ipc_event_handle& event() const { return event_; }

 private:
  // The child: exports, sends both handles, waits for the parent to close its pipe.
  static int serve(int reply, int done) noexcept {
    try {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::device_buffer<int> memory{ctx, count};
      std::vector<int> values(count);
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(i);
      cuwrap::copy(s, memory, values);
      cuwrap::event e{ctx, cuwrap::event_flags::interprocess};
      s.record(e);
      s.synchronize();
      const auto m = cuwrap::export_memory(memory.span());
      const auto h = cuwrap::export_event(e);
      std::array<std::byte, sizeof m + sizeof h> bytes{};
      std::memcpy(bytes.data(), &m, sizeof m);
      std::memcpy(bytes.data() + sizeof m, &h, sizeof h);
      if (write(reply, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) return 3;
      char c = 0;
      while (read(done, &c, 1) > 0) {
      }
      return 0;
    } catch (...) {
      return 4;
    }
  }

  pid_t pid_ = -1;
  int reply_ = -1;
  int done_ = -1;
  cuwrap::ipc_memory_handle memory_{};
  cuwrap::ipc_event_handle event_{};
};

}  // namespace cuwrap::testing
