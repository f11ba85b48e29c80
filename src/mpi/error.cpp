#include "cuwrap/mpi/error.hpp"

#include <string>

namespace cuwrap::mpi {
namespace {

std::string message(int code, const char* call, std::string_view details, int rank, int size,
                    std::source_location where) {
  std::string text = call;
  if (!details.empty()) text += "(" + std::string{details} + ")";
  if (code != MPI_SUCCESS) text += ": " + error_string(code);
  if (rank >= 0) text += " [rank " + std::to_string(rank) + " of " + std::to_string(size) + "]";
  if (where.line() != 0) {
    text += " at ";
    text += where.file_name();
    text += ":" + std::to_string(where.line());
  }
  return text;
}

int class_of(int code) {
  int cls = code;
  if (code != MPI_SUCCESS && MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_UNKNOWN;
  return cls;
}

}  // namespace

error::error(int code, const char* call, std::string_view details, int rank, int size,
             std::source_location where)
    : std::runtime_error{message(code, call, details, rank, size, where)},
      call_{call},
      code_{code},
      class_{class_of(code)},
      where_{where} {}

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return "MPI error code " + std::to_string(code);
  }
  return {text, static_cast<std::size_t>(length)};
}

namespace detail {
place place_in(MPI_Comm comm) noexcept {
  place p;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (comm != MPI_COMM_NULL && initialized != 0 && finalized == 0) {
    MPI_Comm_rank(comm, &p.rank);
    MPI_Comm_size(comm, &p.size);
  }
  return p;
}

void throw_error(int code, const char* call, std::string_view details, MPI_Comm comm,
                 std::source_location where) {
  const place p = place_in(comm);
  throw error{code, call, details, p.rank, p.size, where};
}
}  // namespace detail

}  // namespace cuwrap::mpi
