#include "cuwrap/mpi/collectives.hpp"

#include <array>
#include <climits>
#include <cstdint>
#include <string>

#include "cuwrap/mpi/detail/staging.hpp"

namespace cuwrap::mpi::detail {
namespace {

int as_count(std::size_t count, const char* call, const communicator& comm,
             std::source_location where) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    raise<mismatch_error>(call, std::to_string(count) + " elements, more than INT_MAX", comm.get(),
                          where);
  }
  return static_cast<int>(count);
}

void* pointer(CUdeviceptr address) noexcept {
  return reinterpret_cast<void*>(address);  // NOLINT: UVA
}

std::size_t bytes(const message_buffer& m) noexcept { return m.count * m.element_size; }

}  // namespace

void check_agreement(const communicator& comm, const char* call, std::size_t count, int type,
                     std::source_location where) {
  if (!comm.checked()) return;
  const auto n = static_cast<std::int64_t>(count);
  const std::array<std::int64_t, 4> mine{n, -n, type, -type};
  std::array<std::int64_t, 4> extremes{};
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(mine.data(), extremes.data(), 4, MPI_INT64_T, MPI_MAX, comm.get(), &request),
        "MPI_Iallreduce", comm.get(), "checked mode: counts and types", where);
  comm.wait(request, nullptr, "MPI_Iallreduce", "checked mode: counts and types", where);
  if (extremes[0] != -extremes[1]) {
    raise<mismatch_error>(call,
                          "ranks pass different element counts, from " +
                              std::to_string(-extremes[1]) + " to " + std::to_string(extremes[0]) +
                              " (this rank: " + std::to_string(count) + ")",
                          comm.get(), where);
  }
  if (extremes[2] != -extremes[3]) {
    raise<mismatch_error>(call,
                          "ranks pass different element types (type codes " +
                              std::to_string(-extremes[3]) + " to " + std::to_string(extremes[2]) +
                              ", this rank: " + std::to_string(type) + ")",
                          comm.get(), where);
  }
}

void allreduce(const communicator& comm, const message_buffer& in, const message_buffer& out,
               MPI_Op op, stream_ref s, std::source_location where) {
  const char* call = "MPI_Iallreduce";
  if (in.count != out.count) {
    raise<mismatch_error>(call,
                          "input of " + std::to_string(in.count) + " elements, output of " +
                              std::to_string(out.count),
                          comm.get(), where);
  }
  const int count = as_count(in.count, call, comm, where);
  const bool in_place = in.address == out.address;
  MPI_Request request = MPI_REQUEST_NULL;
  if (comm.device_pointers()) {
    s.synchronize(where);
    check(MPI_Iallreduce(in_place ? MPI_IN_PLACE : pointer(in.address), pointer(out.address), count,
                         in.type, op, comm.get(), &request),
          call, comm.get(), {}, where);
    comm.wait(request, nullptr, call, {}, where);
    return;
  }
  const staging_buffer buffer{s, bytes(in), where};
  buffer.fill_from(s, in.address, bytes(in), where);
  check(MPI_Iallreduce(MPI_IN_PLACE, buffer.data(), count, in.type, op, comm.get(), &request), call,
        comm.get(), {}, where);
  comm.wait(request, nullptr, call, {}, where);
  buffer.drain_to(s, out.address, bytes(out), where);
}

void allgather(const communicator& comm, const message_buffer& mine, const message_buffer& all,
               stream_ref s, std::source_location where) {
  const char* call = "MPI_Iallgather";
  if (all.count != mine.count * static_cast<std::size_t>(comm.size())) {
    raise<mismatch_error>(call,
                          "the result holds " + std::to_string(all.count) + " elements, not " +
                              std::to_string(comm.size()) + " ranks x " +
                              std::to_string(mine.count),
                          comm.get(), where);
  }
  const int count = as_count(mine.count, call, comm, where);
  MPI_Request request = MPI_REQUEST_NULL;
  if (comm.device_pointers()) {
    s.synchronize(where);
    check(MPI_Iallgather(pointer(mine.address), count, mine.type, pointer(all.address), count,
                         all.type, comm.get(), &request),
          call, comm.get(), {}, where);
    comm.wait(request, nullptr, call, {}, where);
    return;
  }
  const staging_buffer in{s, bytes(mine), where};
  const staging_buffer out{s, bytes(all), where};
  in.fill_from(s, mine.address, bytes(mine), where);
  check(MPI_Iallgather(in.data(), count, mine.type, out.data(), count, all.type, comm.get(),
                       &request),
        call, comm.get(), {}, where);
  comm.wait(request, nullptr, call, {}, where);
  out.drain_to(s, all.address, bytes(all), where);
}

void broadcast(const communicator& comm, const message_buffer& data, int root, stream_ref s,
               std::source_location where) {
  const char* call = "MPI_Ibcast";
  const std::string details = "root " + std::to_string(root);
  const int count = as_count(data.count, call, comm, where);
  MPI_Request request = MPI_REQUEST_NULL;
  if (comm.device_pointers()) {
    s.synchronize(where);
    check(MPI_Ibcast(pointer(data.address), count, data.type, root, comm.get(), &request), call,
          comm.get(), details, where);
    comm.wait(request, nullptr, call, details, where);
    return;
  }
  const staging_buffer buffer{s, bytes(data), where};
  if (comm.rank() == root) buffer.fill_from(s, data.address, bytes(data), where);
  check(MPI_Ibcast(buffer.data(), count, data.type, root, comm.get(), &request), call, comm.get(),
        details, where);
  comm.wait(request, nullptr, call, details, where);
  if (comm.rank() != root) buffer.drain_to(s, data.address, bytes(data), where);
}

}  // namespace cuwrap::mpi::detail
