// cuwrap::mpi::communicator: a duplicate of an MPI communicator that cuwrap's helpers use, with
// MPI_ERRORS_RETURN (every failure becomes a cuwrap::mpi::error), its node-local communicator
// (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), the data path chosen once (device pointers to a
// CUDA-aware MPI, or staging through pinned host memory), the checked mode and the bounded wait.
#pragma once

#include <mpi.h>

#include <chrono>
#include <optional>
#include <source_location>
#include <string_view>

#include "cuwrap/mpi/error.hpp"

namespace cuwrap::mpi {

/// How device buffers reach MPI.
enum class cuda_aware {
  detect,  ///< the CUWRAP_MPI_CUDA_AWARE variable if set, else MPIX_Query_cuda_support()
  trust,   ///< pass device pointers to MPI (the MPI library must be CUDA-aware)
  stage,   ///< copy through pinned host buffers; works with any MPI
};

/// What a bounded wait does when it runs out.
enum class on_timeout {
  throw_error,  ///< throw cuwrap::mpi::timeout_error on this rank (the request is cancelled)
  abort,        ///< print the reason and MPI_Abort the whole job
};

/// How a communicator behaves. Environment variables fill what is left unset (see docs/mpi.md).
struct communicator_options {
  /// The data path. With detect, CUWRAP_MPI_CUDA_AWARE=1|0 overrides the library's answer.
  cuda_aware path = cuda_aware::detect;
  /// Before each collective, check with one extra small allreduce that every rank passes the
  /// same element count and type (mismatch_error otherwise). Unset: CUWRAP_MPI_CHECKED=1 turns
  /// it on; off by default.
  std::optional<bool> checked;
  /// The longest any helper waits for its peers; zero waits forever. Unset:
  /// CUWRAP_MPI_TIMEOUT_MS, else forever.
  std::optional<std::chrono::milliseconds> timeout;
  /// What happens when the wait runs out.
  on_timeout when_timed_out = on_timeout::throw_error;
};

/// True when MPI says it can take device pointers: MPIX_Query_cuda_support() where <mpi-ext.h>
/// declares it (Open MPI's MPIX_CUDA_AWARE_SUPPORT), else false. One call, no communication.
[[nodiscard]] bool library_is_cuda_aware() noexcept;

/// Decides the data path: `requested` unless it is detect; then `environment` (the value of
/// CUWRAP_MPI_CUDA_AWARE, nullptr if unset: "1"/"trust" or "0"/"stage"), then
/// `library_aware`. Returns true for device pointers. An unknown value throws
/// configuration_error naming it.
[[nodiscard]] bool resolve_cuda_aware(cuda_aware requested, const char* environment,
                                      bool library_aware,
                                      std::source_location where = std::source_location::current());

/// Reads a timeout in milliseconds (CUWRAP_MPI_TIMEOUT_MS's text): a non-negative integer, else
/// configuration_error naming the text.
[[nodiscard]] std::chrono::milliseconds parse_timeout(
    std::string_view text, std::source_location where = std::source_location::current());

/// A communicator for cuwrap's helpers: MPI_Comm_dup of `base` with MPI_ERRORS_RETURN, and its
/// node-local part. Constructing and destroying it are collective over `base`. Move-only.
class communicator {
 public:
  /// Duplicates `base` (MPI_Comm_dup, MPI_Comm_set_errhandler, MPI_Comm_split_type) and
  /// decides the data path once.
  explicit communicator(MPI_Comm base = MPI_COMM_WORLD, communicator_options options = {},
                        std::source_location where = std::source_location::current());
  communicator(communicator&& other) noexcept;
  communicator& operator=(communicator&& other) noexcept;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  /// Frees both communicators (MPI_Comm_free), unless MPI is already finalized.
  ~communicator();

  /// The duplicated communicator (pass it to MPI calls of your own).
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  /// The ranks that share this node's memory (MPI_COMM_TYPE_SHARED).
  [[nodiscard]] MPI_Comm node() const noexcept { return node_; }
  /// This rank in get().
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// The number of ranks.
  [[nodiscard]] int size() const noexcept { return size_; }
  /// This rank among the ranks of its node.
  [[nodiscard]] int node_rank() const noexcept { return node_rank_; }
  /// The number of ranks on this node.
  [[nodiscard]] int node_size() const noexcept { return node_size_; }
  /// True: helpers pass device pointers to MPI; false: they stage through pinned memory.
  [[nodiscard]] bool device_pointers() const noexcept { return device_pointers_; }
  /// True when collectives first check that every rank passes the same count and type.
  [[nodiscard]] bool checked() const noexcept { return checked_; }
  /// The bounded wait's limit (zero: none).
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// What a wait that runs out does.
  [[nodiscard]] on_timeout when_timed_out() const noexcept { return when_timed_out_; }

  /// Waits for every rank (MPI_Ibarrier and the bounded wait).
  void barrier(std::source_location where = std::source_location::current()) const;

  /// Completes `request` (MPI_Test until done, or MPI_Wait when there is no timeout). When the
  /// timeout runs out: cancels it and throws timeout_error naming `call` and `details`, or
  /// aborts the job, as when_timed_out() says. Fills `status` when given.
  void wait(MPI_Request& request, MPI_Status* status, const char* call, std::string_view details,
            std::source_location where = std::source_location::current()) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm node_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  int node_rank_ = 0;
  int node_size_ = 0;
  bool device_pointers_ = false;
  bool checked_ = false;
  std::chrono::milliseconds timeout_{0};
  on_timeout when_timed_out_ = on_timeout::throw_error;
};

}  // namespace cuwrap::mpi
