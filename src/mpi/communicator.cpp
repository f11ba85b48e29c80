#include "cuwrap/mpi/communicator.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

namespace cuwrap::mpi {

bool library_is_cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool resolve_cuda_aware(cuda_aware requested, const char* environment, bool library_aware,
                        std::source_location where) {
  if (requested != cuda_aware::detect) return requested == cuda_aware::trust;
  if (environment == nullptr || *environment == '\0') return library_aware;
  const std::string_view value{environment};
  if (value == "1" || value == "trust") return true;
  if (value == "0" || value == "stage") return false;
  detail::raise<configuration_error>(
      "cuwrap::mpi::communicator",
      "CUWRAP_MPI_CUDA_AWARE='" + std::string{value} + "', expected 1 or trust, 0 or stage",
      MPI_COMM_NULL, where);
}

std::chrono::milliseconds parse_timeout(std::string_view text, std::source_location where) {
  long long ms = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc{} || end != text.data() + text.size() || ms < 0) {
    detail::raise<configuration_error>(
        "cuwrap::mpi::communicator",
        "CUWRAP_MPI_TIMEOUT_MS='" + std::string{text} + "', expected milliseconds (0: no limit)",
        MPI_COMM_NULL, where);
  }
  return std::chrono::milliseconds{ms};
}

communicator::communicator(MPI_Comm base, communicator_options options, std::source_location where)
    : when_timed_out_{options.when_timed_out} {
  check(MPI_Comm_dup(base, &comm_), "MPI_Comm_dup", base, {}, where);
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", comm_, {},
        where);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_),
        "MPI_Comm_split_type", comm_, "MPI_COMM_TYPE_SHARED", where);
  check(MPI_Comm_set_errhandler(node_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", node_, {},
        where);
  MPI_Comm_rank(node_, &node_rank_);
  MPI_Comm_size(node_, &node_size_);
  device_pointers_ = resolve_cuda_aware(options.path, std::getenv("CUWRAP_MPI_CUDA_AWARE"),
                                        library_is_cuda_aware(), where);
  if (options.checked) {
    checked_ = *options.checked;
  } else {
    const char* env = std::getenv("CUWRAP_MPI_CHECKED");
    checked_ = env != nullptr && std::string_view{env} == "1";
  }
  if (options.timeout) {
    timeout_ = *options.timeout;
  } else if (const char* env = std::getenv("CUWRAP_MPI_TIMEOUT_MS"); env != nullptr) {
    timeout_ = parse_timeout(env, where);
  }
}

communicator::communicator(communicator&& other) noexcept
    : comm_{std::exchange(other.comm_, MPI_COMM_NULL)},
      node_{std::exchange(other.node_, MPI_COMM_NULL)},
      rank_{other.rank_},
      size_{other.size_},
      node_rank_{other.node_rank_},
      node_size_{other.node_size_},
      device_pointers_{other.device_pointers_},
      checked_{other.checked_},
      timeout_{other.timeout_},
      when_timed_out_{other.when_timed_out_} {}

communicator& communicator::operator=(communicator&& other) noexcept {
  if (this != &other) {
    communicator old{std::move(*this)};
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    node_ = std::exchange(other.node_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    node_rank_ = other.node_rank_;
    node_size_ = other.node_size_;
    device_pointers_ = other.device_pointers_;
    checked_ = other.checked_;
    timeout_ = other.timeout_;
    when_timed_out_ = other.when_timed_out_;
  }
  return *this;
}

communicator::~communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void communicator::barrier(std::source_location where) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier", comm_, {}, where);
  wait(request, nullptr, "MPI_Ibarrier", {}, where);
}

void communicator::wait(MPI_Request& request, MPI_Status* status, const char* call,
                        std::string_view details, std::source_location where) const {
  MPI_Status local{};
  MPI_Status* out = status != nullptr ? status : &local;
  if (timeout_.count() == 0) {
    check(MPI_Wait(&request, out), call, comm_, details, where);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, out), call, comm_, details, where);
    if (done != 0) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::yield();
  }
  std::string reason{details};
  reason += (reason.empty() ? "" : ", ");
  reason += "not complete after " + std::to_string(timeout_.count()) +
            " ms: a peer did not take part (did it fail?)";
  if (when_timed_out_ == on_timeout::abort) {
    std::fprintf(stderr, "cuwrap::mpi: rank %d: %s(%s); aborting the job\n", rank_, call,
                 reason.c_str());
    std::fflush(stderr);
    MPI_Abort(comm_, 3);
  }
  MPI_Cancel(&request);
  MPI_Request_free(&request);
  detail::raise<timeout_error>(call, reason, comm_, where);
}

}  // namespace cuwrap::mpi
