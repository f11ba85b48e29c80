// Collectives over device spans: allreduce, allgather, broadcast. Each is a nonblocking MPI
// collective completed by the communicator's bounded wait. Stream ordering as for the
// point-to-point helpers: `s` is synchronized before MPI touches a device buffer, and results
// are in device memory, with `s` synchronized, when the helper returns.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <source_location>

#include "cuwrap/device_span.hpp"
#include "cuwrap/mpi/communicator.hpp"
#include "cuwrap/mpi/datatype.hpp"
#include "cuwrap/mpi/point_to_point.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mpi {

namespace detail {
/// The checked mode's agreement: one MPI_Iallreduce of four integers, then mismatch_error naming
/// the smallest and largest count (or type codes) if ranks differ. Does nothing unchecked.
void check_agreement(const communicator& comm, const char* call, std::size_t count, int type,
                     std::source_location where);

void allreduce(const communicator& comm, const message_buffer& in, const message_buffer& out,
               MPI_Op op, stream_ref s, std::source_location where);
void allgather(const communicator& comm, const message_buffer& mine, const message_buffer& all,
               stream_ref s, std::source_location where);
void broadcast(const communicator& comm, const message_buffer& data, int root, stream_ref s,
               std::source_location where);

template <class T>
message_buffer describe(device_span<T> span) noexcept {
  return {span.address(), span.size(), datatype<T>(), sizeof(T)};
}
}  // namespace detail

/// Combines `in` of every rank with `op` (MPI_SUM, MPI_MAX, ...) into `out` on every rank
/// (MPI_Iallreduce). `in` and `out` have the same size (mismatch_error otherwise). Staged: two
/// pinned buffers and two copies.
template <mpi_type T>
void allreduce(const communicator& comm, device_span<const T> in, device_span<T> out, stream_ref s,
               MPI_Op op = MPI_SUM, std::source_location where = std::source_location::current()) {
  detail::check_agreement(comm, "MPI_Iallreduce", in.size(), type_code<T>(), where);
  detail::allreduce(comm, detail::describe(in), detail::describe(out), op, s, where);
}
/// In place: `data` becomes the reduction over every rank's `data`.
template <mpi_type T>
void allreduce(const communicator& comm, device_span<T> data, stream_ref s, MPI_Op op = MPI_SUM,
               std::source_location where = std::source_location::current()) {
  allreduce(comm, device_span<const T>{data}, data, s, op, where);
}

/// Gathers every rank's `mine` into `all`, rank by rank (MPI_Iallgather). `all` holds
/// comm.size() * mine.size() elements (mismatch_error otherwise); every rank passes the same
/// count (checked mode).
template <mpi_type T>
void allgather(const communicator& comm, device_span<const T> mine, device_span<T> all,
               stream_ref s, std::source_location where = std::source_location::current()) {
  detail::check_agreement(comm, "MPI_Iallgather", mine.size(), type_code<T>(), where);
  detail::allgather(comm, detail::describe(mine), detail::describe(all), s, where);
}

/// Copies `data` of rank `root` into `data` of every rank (MPI_Ibcast).
template <mpi_type T>
void broadcast(const communicator& comm, device_span<T> data, int root, stream_ref s,
               std::source_location where = std::source_location::current()) {
  detail::check_agreement(comm, "MPI_Ibcast", data.size(), type_code<T>(), where);
  detail::broadcast(comm, detail::describe(data), root, s, where);
}

}  // namespace cuwrap::mpi
