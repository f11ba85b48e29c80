// cuwrap::mpi's errors: every failed MPI call, and every check cuwrap makes across ranks (sizes,
// device counts, timeouts), throws cuwrap::mpi::error naming the MPI call (or the cuwrap
// operation) and MPI_Error_string's text.
#pragma once

#include <mpi.h>

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuwrap::mpi {

/// A failed MPI call, or a cross-rank check that failed. what() reads like
/// "MPI_Recv(from rank 1, tag 7, 16 x float): MPI_ERR_TRUNCATE: message truncated [rank 0 of 2]
/// at jacobi.cpp:42".
class [[gnu::visibility("default")]] error : public std::runtime_error {
 public:
  /// An error of MPI error code `code` (MPI_SUCCESS when no MPI call failed but a cuwrap check
  /// did) from `call`; `details` (arguments, what differed) go after the call's name; `rank` and
  /// `size` place the rank that throws (-1: unknown).
  error(int code, const char* call, std::string_view details, int rank, int size,
        std::source_location where);

  /// The MPI function that failed ("MPI_Recv"), or the cuwrap operation whose check failed.
  [[nodiscard]] const char* call() const noexcept { return call_; }
  /// The MPI error code (MPI_SUCCESS for a cuwrap check).
  [[nodiscard]] int code() const noexcept { return code_; }
  /// The code's class (MPI_Error_class), e.g. MPI_ERR_TRUNCATE.
  [[nodiscard]] int error_class() const noexcept { return class_; }
  /// The call site in user code.
  [[nodiscard]] const std::source_location& where() const noexcept { return where_; }

 private:
  const char* call_;
  int code_;
  int class_;
  std::source_location where_;
};

/// Ranks disagree: a message or a collective's sizes or element types differ (MPI_Get_count on
/// a receive; the checked mode's size exchange before a collective).
class [[gnu::visibility("default")]] mismatch_error : public error {
 public:
  using error::error;
};

/// A bounded wait ran out (communicator_options::timeout): a peer did not take part, most
/// likely because it failed.
class [[gnu::visibility("default")]] timeout_error : public error {
 public:
  using error::error;
};

/// The job does not fit the request: more ranks on a node than devices, an explicit ordinal
/// out of range.
class [[gnu::visibility("default")]] configuration_error : public error {
 public:
  using error::error;
};

/// MPI_Error_string's text for `code` ("MPI_ERR_RANK: invalid rank").
[[nodiscard]] std::string error_string(int code);

namespace detail {
/// This process's rank and the size of `comm` ({-1, 0} for MPI_COMM_NULL).
struct place {
  int rank = -1;
  int size = 0;
};
[[nodiscard]] place place_in(MPI_Comm comm) noexcept;
/// Throws cuwrap::mpi::error for `code` from `call` on a rank of `comm` (MPI_COMM_NULL: unknown).
[[noreturn]] void throw_error(int code, const char* call, std::string_view details, MPI_Comm comm,
                              std::source_location where);
/// Throws E (error or a subclass) for a failed cuwrap check.
template <class E>
[[noreturn]] void raise(const char* operation, std::string_view details, MPI_Comm comm,
                        std::source_location where, int code = MPI_SUCCESS) {
  const place p = place_in(comm);
  throw E{code, operation, details, p.rank, p.size, where};
}
}  // namespace detail

/// Throws cuwrap::mpi::error unless `code` is MPI_SUCCESS. Communicators made by cuwrap use
/// MPI_ERRORS_RETURN, so every failure reaches here instead of aborting.
inline void check(int code, const char* call, MPI_Comm comm = MPI_COMM_NULL,
                  std::string_view details = {},
                  std::source_location where = std::source_location::current()) {
  if (code != MPI_SUCCESS) [[unlikely]] {
    detail::throw_error(code, call, details, comm, where);
  }
}

}  // namespace cuwrap::mpi
