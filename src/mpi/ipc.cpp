#include "cuwrap/mpi/ipc.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "cuwrap/pointer.hpp"

namespace cuwrap::mpi {
namespace {

template <class Record>
std::vector<Record> gather(const communicator& comm, const Record& mine, const char* what,
                           std::source_location where) {
  std::vector<Record> all(static_cast<std::size_t>(comm.node_size()));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&mine, sizeof(Record), MPI_BYTE, all.data(), sizeof(Record), MPI_BYTE,
                       comm.node(), &request),
        "MPI_Iallgather", comm.node(), what, where);
  comm.wait(request, nullptr, "MPI_Iallgather", what, where);
  return all;
}

template <class Value>
void broadcast_bytes(const communicator& comm, Value& value, int root, const char* what,
                     std::source_location where) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&value, sizeof(Value), MPI_BYTE, root, comm.node(), &request), "MPI_Ibcast",
        comm.node(), what, where);
  comm.wait(request, nullptr, "MPI_Ibcast", what, where);
}

[[noreturn]] void throw_errno(const char* call, const std::string& what) {
  throw std::system_error{errno, std::generic_category(),
                          std::string{"cuwrap::mpi::share_pool: "} + call + " (" + what + ")"};
}

/// poll() for `events` on `fd`, bounded by the communicator's timeout.
void await(const communicator& comm, int fd, short events, const char* what,
           std::source_location where) {
  pollfd p{fd, events, 0};
  const int ms = comm.timeout().count() == 0 ? -1 : static_cast<int>(comm.timeout().count());
  int ready = 0;
  do {
    ready = poll(&p, 1, ms);
  } while (ready < 0 && errno == EINTR);
  if (ready < 0) throw_errno("poll", what);
  if (ready == 0) {
    detail::raise<timeout_error>(
        "cuwrap::mpi::share_pool",
        std::string{what} + ": nothing after " + std::to_string(comm.timeout().count()) + " ms",
        comm.get(), where);
  }
}

/// The abstract socket (Linux: a name starting with NUL, no file) the root listens on.
struct socket_name {
  char text[96] = {};
};

sockaddr_un address_of(const socket_name& name, socklen_t& length) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::size_t n = std::strlen(name.text);
  std::memcpy(address.sun_path + 1, name.text, n);  // sun_path[0] = '\0': abstract
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return address;
}

void send_descriptor(int socket, int fd) {
  char byte = 'p';
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  if (sendmsg(socket, &message, MSG_NOSIGNAL) != 1) throw_errno("sendmsg", "SCM_RIGHTS");
}

file_descriptor receive_descriptor(int socket) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  if (recvmsg(socket, &message, MSG_CMSG_CLOEXEC) != 1) throw_errno("recvmsg", "SCM_RIGHTS");
  const cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (header == nullptr || header->cmsg_type != SCM_RIGHTS) {
    errno = EPROTO;
    throw_errno("recvmsg", "no descriptor in the message");
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
  return file_descriptor{fd};
}

}  // namespace

namespace detail {
std::vector<memory_record> gather_memory(const communicator& comm, CUdeviceptr address,
                                         std::size_t bytes, std::size_t element_size,
                                         std::source_location where) {
  memory_record mine;
  mine.handle = export_memory(address, where);
  const pointer_info info = pointer_attributes(address, where);
  mine.offset = address - info.range_start;
  mine.bytes = bytes;
  auto all = gather(comm, mine, "IPC memory handles", where);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].offset % element_size != 0 || all[r].bytes % element_size != 0) {
      raise<mismatch_error>("cuwrap::mpi::exchange_memory",
                            "node-local rank " + std::to_string(r) + " shares " +
                                std::to_string(all[r].bytes) + " bytes at offset " +
                                std::to_string(all[r].offset) + ", not whole elements of " +
                                std::to_string(element_size) + " bytes",
                            comm.get(), where);
    }
  }
  return all;
}
}  // namespace detail

std::vector<std::optional<event>> exchange_events(const communicator& comm,
                                                  const owning_context& ctx, event_ref mine,
                                                  std::source_location where) {
  const auto handles = gather(comm, export_event(mine, where), "IPC event handles", where);
  std::vector<std::optional<event>> events(handles.size());
  for (std::size_t r = 0; r < handles.size(); ++r) {
    if (static_cast<int>(r) != comm.node_rank()) events[r] = open_event(ctx, handles[r], where);
  }
  return events;
}

std::optional<memory_pool> share_pool(const communicator& comm, int root, const memory_pool* pool,
                                      std::source_location where) {
  static std::atomic<unsigned> serial{0};
  socket_name name;
  file_descriptor listener;
  file_descriptor exported;
  const bool is_root = comm.node_rank() == root;
  if (is_root) {
    if (pool == nullptr) {
      detail::raise<configuration_error>("cuwrap::mpi::share_pool", "the root passed no pool",
                                         comm.get(), where);
    }
    exported = export_pool(*pool, where);
    std::snprintf(name.text, sizeof(name.text), "cuwrap-mpi-pool-%d-%u", static_cast<int>(getpid()),
                  serial++);
    listener = file_descriptor{socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (!listener) throw_errno("socket", name.text);
    socklen_t length = 0;
    const sockaddr_un address = address_of(name, length);
    if (bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
      throw_errno("bind", name.text);
    }
    if (listen(listener.get(), comm.node_size()) != 0) throw_errno("listen", name.text);
  }
  broadcast_bytes(comm, name, root, "pool socket name", where);
  if (is_root) {
    for (int peer = 1; peer < comm.node_size(); ++peer) {
      await(comm, listener.get(), POLLIN, "waiting for node-local ranks to connect", where);
      const file_descriptor connection{accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)};
      if (!connection) throw_errno("accept", name.text);
      send_descriptor(connection.get(), exported.get());
    }
    return std::nullopt;
  }
  const file_descriptor connection{socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (!connection) throw_errno("socket", name.text);
  socklen_t length = 0;
  const sockaddr_un address = address_of(name, length);
  if (connect(connection.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    throw_errno("connect", name.text);
  }
  await(comm, connection.get(), POLLIN, "waiting for the pool's descriptor", where);
  const file_descriptor received = receive_descriptor(connection.get());
  return import_pool(received, where);
}

std::optional<std::pair<ipc_pool_pointer, std::uint64_t>> broadcast_pool_pointer(
    const communicator& comm, int root, CUdeviceptr address, std::size_t count,
    std::source_location where) {
  struct record {
    ipc_pool_pointer pointer;
    std::uint64_t count = 0;
  } shared;
  const bool is_root = comm.node_rank() == root;
  if (is_root) {
    shared.pointer = export_pool_pointer(address, where);
    shared.count = count;
  }
  broadcast_bytes(comm, shared, root, "pool pointer", where);
  if (is_root) return std::nullopt;
  return std::pair{shared.pointer, shared.count};
}

}  // namespace cuwrap::mpi
