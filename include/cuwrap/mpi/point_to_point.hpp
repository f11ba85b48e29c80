// Typed point-to-point messages of device spans: send, recv, isend, irecv.
//
// Stream ordering: a helper synchronizes the stream it is given before MPI touches the device
// buffer (the work queued on it that writes or reads the buffer has finished), and a receive's
// data is in the device buffer, with the stream synchronized, when recv() or request::wait()
// returns. On the staged path a send copies into pinned memory on the stream first; a receive
// copies out of it on the stream after MPI completes.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <source_location>
#include <string>

#include "cuwrap/device_span.hpp"
#include "cuwrap/mpi/communicator.hpp"
#include "cuwrap/mpi/datatype.hpp"
#include "cuwrap/mpi/detail/staging.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mpi {

/// What a message carries, untyped: the helpers' common part.
struct message_buffer {
  CUdeviceptr address = 0;     ///< the device buffer
  std::size_t count = 0;       ///< elements
  MPI_Datatype type{};         ///< their MPI datatype
  std::size_t element_size{};  ///< sizeof one element
};

/// An MPI send or receive in flight (MPI_Isend/MPI_Irecv), with its staging buffer. Move-only;
/// destroying one that was not waited for waits for it (errors are then printed, not thrown).
/// It keeps a pointer to its communicator, which must outlive it.
class request {
 public:
  /// No request.
  request() noexcept = default;
  request(request&& other) noexcept;
  request& operator=(request&& other) noexcept;
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  ~request();

  /// Completes the request (the communicator's bounded wait). For a receive: checks that the
  /// message had exactly the expected count (MPI_Get_count; mismatch_error otherwise, and for a
  /// longer one, whose MPI error is MPI_ERR_TRUNCATE), then on the staged path copies it into
  /// the device buffer on the stream and synchronizes it. The staging buffer is freed here.
  void wait(std::source_location where = std::source_location::current());
  /// True until wait() completed it.
  [[nodiscard]] bool active() const noexcept { return comm_ != nullptr; }

  /// Starts a send (see isend()).
  static request send(const communicator& comm, const message_buffer& data, int destination,
                      int tag, stream_ref s, std::source_location where);
  /// Starts a receive (see irecv()).
  static request receive(const communicator& comm, const message_buffer& data, int source, int tag,
                         stream_ref s, std::source_location where);

 private:
  const communicator* comm_ = nullptr;
  MPI_Request handle_ = MPI_REQUEST_NULL;
  detail::staging_buffer staging_;
  message_buffer data_;
  stream_ref stream_ = stream_ref::legacy();
  bool receive_ = false;
  const char* call_ = "";
  std::string details_;
};

/// Starts sending `data` to `destination` with `tag`: synchronizes `s`, then either passes the
/// device pointer to MPI_Isend or copies into a new pinned buffer first (one cuMemHostAlloc, one
/// copy). The buffer must not change until the request completes.
template <mpi_type T>
[[nodiscard]] request isend(const communicator& comm, device_span<const T> data, int destination,
                            int tag, stream_ref s,
                            std::source_location where = std::source_location::current()) {
  return request::send(comm, {data.address(), data.size(), datatype<T>(), sizeof(T)}, destination,
                       tag, s, where);
}
/// Starts receiving exactly `data.size()` elements from `source` (MPI_ANY_SOURCE allowed) with
/// `tag`: synchronizes `s`, then MPI_Irecv into the device buffer or a new pinned buffer.
template <mpi_type T>
[[nodiscard]] request irecv(const communicator& comm, device_span<T> data, int source, int tag,
                            stream_ref s,
                            std::source_location where = std::source_location::current()) {
  return request::receive(comm, {data.address(), data.size(), datatype<T>(), sizeof(T)}, source,
                          tag, s, where);
}
/// Sends `data` and waits until MPI is done with it (isend() then wait()).
template <mpi_type T>
void send(const communicator& comm, device_span<const T> data, int destination, int tag,
          stream_ref s, std::source_location where = std::source_location::current()) {
  isend(comm, data, destination, tag, s, where).wait(where);
}
/// Receives exactly `data.size()` elements (irecv() then wait()): the data is in `data` when it
/// returns.
template <mpi_type T>
void recv(const communicator& comm, device_span<T> data, int source, int tag, stream_ref s,
          std::source_location where = std::source_location::current()) {
  irecv(comm, data, source, tag, s, where).wait(where);
}

}  // namespace cuwrap::mpi
