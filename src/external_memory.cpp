// external_memory and external_semaphore: imports, mapped buffers, signals and waits.
#include "cuwrap/external_memory.hpp"

#include <string>
#include <vector>

namespace cuwrap {
namespace {

[[noreturn]] void usage(const std::string& message, std::source_location where) {
  throw usage_error(message, where);
}

const char* kind_name(external_semaphore_kind kind) noexcept {
  return kind == external_semaphore_kind::timeline ? "timeline" : "binary";
}

// The driver's arrays for a batch, each semaphore checked first.
struct batch_arrays {
  std::vector<CUexternalSemaphore> handles;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> signals;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> waits;
};

void check_value(const external_semaphore& sem, std::uint64_t value, const char* operation,
                 std::source_location where) {
  detail::expect_not_moved_from(!sem.empty(), "external_semaphore", operation, where);
  if (sem.kind() == external_semaphore_kind::binary && value != 0) {
    usage(std::string{"cuwrap::external_semaphore::"} + operation + ": value " +
              std::to_string(value) +
              " given for a binary semaphore (only timeline semaphores "
              "take values; pass 0)",
          where);
  }
}

batch_arrays arrays(std::span<const semaphore_value> batch, bool signal, const char* operation,
                    std::source_location where) {
  batch_arrays a;
  a.handles.reserve(batch.size());
  for (const semaphore_value& v : batch) {
    check_value(v.semaphore, v.value, operation, where);
    a.handles.push_back(v.semaphore.get());
    if (signal) {
      CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
      p.params.fence.value = v.value;
      a.signals.push_back(p);
    } else {
      CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p{};
      p.params.fence.value = v.value;
      a.waits.push_back(p);
    }
  }
  return a;
}

}  // namespace

namespace detail {

CUdeviceptr map_external_buffer(CUcontext ctx, CUexternalMemory memory, std::size_t size,
                                std::size_t offset, std::size_t bytes, std::size_t alignment,
                                std::source_location where) {
  if (bytes == 0 || offset > size || bytes > size - offset) {
    usage("cuwrap::external_memory::mapped_buffer: " + std::to_string(bytes) + " bytes at offset " +
              std::to_string(offset) + " are not inside the imported " + std::to_string(size) +
              " bytes" + (bytes == 0 ? " (an empty buffer cannot be mapped)" : ""),
          where);
  }
  if (offset % alignment != 0) {
    usage("cuwrap::external_memory::mapped_buffer: offset " + std::to_string(offset) +
              " is not aligned to the element's " + std::to_string(alignment) + " bytes",
          where);
  }
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC desc{};
  desc.offset = offset;
  desc.size = bytes;
  const scoped_current_context current{context_ref{ctx}, where};
  CUdeviceptr p = 0;
  const CUresult r = driver().cuExternalMemoryGetMappedBuffer(&p, memory, &desc);
  if (r != CUDA_SUCCESS) {
    throw_error(make_error_code(r), "cuExternalMemoryGetMappedBuffer",
                std::to_string(bytes) + " bytes at offset " + std::to_string(offset), where);
  }
  return p;
}

CUmipmappedArray map_external_mipmapped_array(CUcontext ctx, CUexternalMemory memory,
                                              std::size_t size, std::size_t offset,
                                              const array_descriptor& desc, unsigned levels,
                                              std::source_location where) {
  if (offset >= size || levels == 0) {
    usage("cuwrap::external_memory::mapped_mipmapped_array: " +
              (levels == 0 ? std::string{"0 levels (a mipmapped array has at least 1)"}
                           : "offset " + std::to_string(offset) + " is not inside the imported " +
                                 std::to_string(size) + " bytes"),
          where);
  }
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC d{};
  d.offset = offset;
  d.arrayDesc = desc.native();
  d.numLevels = levels;
  const scoped_current_context current{context_ref{ctx}, where};
  CUmipmappedArray h = nullptr;
  const CUresult r = driver().cuExternalMemoryGetMappedMipmappedArray(&h, memory, &d);
  if (r != CUDA_SUCCESS) {
    throw_error(make_error_code(r), "cuExternalMemoryGetMappedMipmappedArray",
                std::to_string(levels) + " levels of " + std::to_string(desc.extent.width) + " x " +
                    std::to_string(desc.extent.height) + " x " + std::to_string(desc.extent.depth) +
                    " elements of " + std::to_string(desc.channels) + " channels at offset " +
                    std::to_string(offset) + " of " + std::to_string(size) + " bytes",
                where);
  }
  return h;
}

}  // namespace detail

external_memory external_memory::import_fd(const owning_context& ctx, int fd, std::size_t bytes,
                                           bool dedicated, std::source_location where) {
  const auto& lifetime = ctx.lifetime_for("external_memory", "import_fd", where);
  if (fd < 0 || bytes == 0) {
    usage("cuwrap::external_memory::import_fd: " +
              (fd < 0 ? "file descriptor " + std::to_string(fd) + " is not valid"
                      : std::string{"the size is 0"}),
          where);
  }
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = fd;
  desc.size = bytes;
  desc.flags = dedicated ? CUDA_EXTERNAL_MEMORY_DEDICATED : 0u;
  const scoped_current_context current{ctx, where};
  CUexternalMemory handle{};
  const CUresult r = detail::driver().cuImportExternalMemory(&handle, &desc);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuImportExternalMemory",
                        "file descriptor " + std::to_string(fd) + ", " + std::to_string(bytes) +
                            " bytes (the descriptor is still the caller's)",
                        where);
  }
  return external_memory{handle, {lifetime, bytes}};
}

external_semaphore external_semaphore::import_fd(const owning_context& ctx, int fd,
                                                 external_semaphore_kind kind,
                                                 std::source_location where) {
  const auto& lifetime = ctx.lifetime_for("external_semaphore", "import_fd", where);
  if (fd < 0) {
    usage("cuwrap::external_semaphore::import_fd: file descriptor " + std::to_string(fd) +
              " is not valid",
          where);
  }
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc{};
  desc.type = static_cast<CUexternalSemaphoreHandleType>(kind);
  desc.handle.fd = fd;
  const scoped_current_context current{ctx, where};
  CUexternalSemaphore handle{};
  const CUresult r = detail::driver().cuImportExternalSemaphore(&handle, &desc);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuImportExternalSemaphore",
                        std::string{"file descriptor "} + std::to_string(fd) + ", a " +
                            kind_name(kind) + " semaphore (the descriptor is still the caller's)",
                        where);
  }
  return external_semaphore{handle, {lifetime, kind}};
}

void external_semaphore::signal(stream_ref s, std::uint64_t value,
                                std::source_location where) const {
  const semaphore_value one[] = {{*this, value}};
  cuwrap::signal(s, one, where);
}

void external_semaphore::wait(stream_ref s, std::uint64_t value, std::source_location where) const {
  const semaphore_value one[] = {{*this, value}};
  cuwrap::wait(s, one, where);
}

void signal(stream_ref s, std::span<const semaphore_value> batch, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), "external_semaphore", "signal", "stream",
                                         where);
  const batch_arrays a = arrays(batch, true, "signal", where);
  check(detail::driver().cuSignalExternalSemaphoresAsync(
            a.handles.data(), a.signals.data(), static_cast<unsigned>(a.handles.size()), s.get()),
        "cuSignalExternalSemaphoresAsync", where);
}

void wait(stream_ref s, std::span<const semaphore_value> batch, std::source_location where) {
  detail::expect_argument_not_moved_from(!s.empty(), "external_semaphore", "wait", "stream", where);
  const batch_arrays a = arrays(batch, false, "wait", where);
  check(detail::driver().cuWaitExternalSemaphoresAsync(
            a.handles.data(), a.waits.data(), static_cast<unsigned>(a.handles.size()), s.get()),
        "cuWaitExternalSemaphoresAsync", where);
}

}  // namespace cuwrap
