#include "cuwrap/mpi/point_to_point.hpp"

#include <climits>
#include <cstdio>
#include <utility>

namespace cuwrap::mpi {
namespace {

std::string type_name(MPI_Datatype type) {
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  if (MPI_Type_get_name(type, name, &length) != MPI_SUCCESS || length == 0) return "elements";
  return {name, static_cast<std::size_t>(length)};
}

std::string describe(const char* direction, int peer, int tag, const message_buffer& data) {
  const std::string who = peer == MPI_ANY_SOURCE ? "any rank" : "rank " + std::to_string(peer);
  return std::string{direction} + " " + who + ", tag " + std::to_string(tag) + ", " +
         std::to_string(data.count) + " x " + type_name(data.type);
}

int checked_count(std::size_t count, const char* call, const communicator& comm,
                  std::source_location where) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    detail::raise<mismatch_error>(call, std::to_string(count) + " elements, more than INT_MAX",
                                  comm.get(), where);
  }
  return static_cast<int>(count);
}

}  // namespace

request::request(request&& other) noexcept
    : comm_{std::exchange(other.comm_, nullptr)},
      handle_{std::exchange(other.handle_, MPI_REQUEST_NULL)},
      staging_{std::move(other.staging_)},
      data_{other.data_},
      stream_{other.stream_},
      receive_{other.receive_},
      call_{other.call_},
      details_{std::move(other.details_)} {}

request& request::operator=(request&& other) noexcept {
  if (this != &other) {
    request old{std::move(*this)};
    comm_ = std::exchange(other.comm_, nullptr);
    handle_ = std::exchange(other.handle_, MPI_REQUEST_NULL);
    staging_ = std::move(other.staging_);
    data_ = other.data_;
    stream_ = other.stream_;
    receive_ = other.receive_;
    call_ = other.call_;
    details_ = std::move(other.details_);
  }
  return *this;
}

request::~request() {
  if (comm_ == nullptr) return;
  try {
    wait({});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuwrap::mpi::request destroyed before wait(): %s\n", e.what());
  }
}

request request::send(const communicator& comm, const message_buffer& data, int destination,
                      int tag, stream_ref s, std::source_location where) {
  request r;
  r.data_ = data;
  r.stream_ = s;
  r.call_ = "MPI_Isend";
  r.details_ = describe("to", destination, tag, data);
  const int count = checked_count(data.count, r.call_, comm, where);
  const void* buffer = reinterpret_cast<const void*>(data.address);  // NOLINT: UVA
  if (comm.device_pointers()) {
    s.synchronize(where);
  } else {
    r.staging_ = detail::staging_buffer{s, data.count * data.element_size, where};
    r.staging_.fill_from(s, data.address, data.count * data.element_size, where);
    buffer = r.staging_.data();
  }
  check(MPI_Isend(buffer, count, data.type, destination, tag, comm.get(), &r.handle_), r.call_,
        comm.get(), r.details_, where);
  r.comm_ = &comm;
  return r;
}

request request::receive(const communicator& comm, const message_buffer& data, int source, int tag,
                         stream_ref s, std::source_location where) {
  request r;
  r.data_ = data;
  r.stream_ = s;
  r.receive_ = true;
  r.call_ = "MPI_Irecv";
  r.details_ = describe("from", source, tag, data);
  const int count = checked_count(data.count, r.call_, comm, where);
  void* buffer = reinterpret_cast<void*>(data.address);  // NOLINT: UVA
  s.synchronize(where);
  if (!comm.device_pointers()) {
    r.staging_ = detail::staging_buffer{s, data.count * data.element_size, where};
    buffer = r.staging_.data();
  }
  check(MPI_Irecv(buffer, count, data.type, source, tag, comm.get(), &r.handle_), r.call_,
        comm.get(), r.details_, where);
  r.comm_ = &comm;
  return r;
}

void request::wait(std::source_location where) {
  if (comm_ == nullptr) return;
  const communicator& comm = *std::exchange(comm_, nullptr);
  MPI_Status status{};
  try {
    comm.wait(handle_, &status, call_, details_, where);
  } catch (const error& e) {
    if (e.error_class() != MPI_ERR_TRUNCATE) throw;
    detail::raise<mismatch_error>(
        call_, details_ + ": the message sent has more than " + std::to_string(data_.count),
        comm.get(), where, e.code());
  }
  if (!receive_) {
    staging_ = {};  // MPI is done with it
    return;
  }
  int received = 0;
  check(MPI_Get_count(&status, data_.type, &received), "MPI_Get_count", comm.get(), details_,
        where);
  if (received == MPI_UNDEFINED || static_cast<std::size_t>(received) != data_.count) {
    detail::raise<mismatch_error>(call_,
                                  details_ + ": received " +
                                      (received == MPI_UNDEFINED ? std::string{"a partial element"}
                                                                 : std::to_string(received)) +
                                      " from rank " + std::to_string(status.MPI_SOURCE) +
                                      ", expected " + std::to_string(data_.count),
                                  comm.get(), where);
  }
  if (!comm.device_pointers()) {
    staging_.drain_to(stream_, data_.address, data_.count * data_.element_size, where);
    staging_ = {};
  }
}

}  // namespace cuwrap::mpi
