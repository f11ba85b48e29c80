// The C side of tests/python/dlpack_numpy_test.py: a small library that Python loads with ctypes
// to exchange tensors with numpy through DLPack. It exports cuwrap pinned memory as legacy
// DLManagedTensor (numpy before 2.1 takes only the "dltensor" capsule) and imports numpy's
// tensors as cuwrap::dlpack::tensor. Runs on whatever driver CUWRAP_DRIVER names.
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/dlpack.hpp"
#include "cuwrap/host_memory.hpp"

namespace {

namespace dl = cuwrap::dlpack;

std::unique_ptr<cuwrap::primary_context> context;
int deletions = 0;
std::int32_t* last_export = nullptr;
std::string last_error;

// Counts the exported tensors' deletions (the deleter destroys this owner once).
struct deletion_counter {
  bool armed = true;
  deletion_counter() = default;
  deletion_counter(deletion_counter&& other) noexcept : armed{std::exchange(other.armed, false)} {}
  deletion_counter& operator=(deletion_counter&&) = delete;
  ~deletion_counter() {
    if (armed) {
      ++deletions;
    }
  }
};

}  // namespace

extern "C" {

/// Retains device 0's primary context. 0 on success.
int cuwrap_test_start() {
  try {
    context = std::make_unique<cuwrap::primary_context>(cuwrap::device::get(0));
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}

/// Releases the context (after every exported tensor was deleted).
void cuwrap_test_stop() { context.reset(); }

/// rows x cols int32 in pinned memory, element i = i * i, as a DLManagedTensorVersioned (or,
/// with `legacy`, a DLManagedTensor) whose deleter frees the memory (cols == 0: one dimension
/// of rows). Null on failure.
void* cuwrap_test_export_pinned(std::int64_t rows, std::int64_t cols, int legacy) {
  try {
    const std::int64_t count = cols == 0 ? rows : rows * cols;
    cuwrap::pinned_buffer<std::int32_t> buffer{*context, static_cast<std::size_t>(count)};
    for (std::int64_t i = 0; i < count; ++i) {
      buffer[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * i);
    }
    last_export = buffer.data();
    const std::int64_t shape[2] = {rows, cols};
    dl::export_options options;
    if (cols != 0) {
      options.shape = shape;
    }
    const auto memory = buffer.host();
    auto tensor = dl::to_dlpack(memory, std::pair{std::move(buffer), deletion_counter{}}, options);
    if (legacy != 0) {
      return dl::to_legacy(std::move(tensor)).release();
    }
    return tensor.release();
  } catch (const std::exception& e) {
    last_error = e.what();
    return nullptr;
  }
}

/// Element i of the memory last exported (to see numpy's writes).
std::int32_t cuwrap_test_read_last(std::int64_t i) { return last_export[i]; }

/// Writes element i of the memory last exported (numpy must see it: no copy).
void cuwrap_test_write_last(std::int64_t i, std::int32_t value) { last_export[i] = value; }

/// How many exported tensors were deleted.
int cuwrap_test_deletions() { return deletions; }

/// Takes the DLManagedTensorVersioned (or, with `legacy`, DLManagedTensor) `t` (numpy's),
/// views it as float64 host memory, returns the sum of its elements and deletes it. On a failed
/// check the tensor is deleted too, and the result is -1 with the message in
/// cuwrap_test_error().
double cuwrap_test_import_sum(void* t, int legacy) {
  try {
    const dl::tensor<const double> imported =
        legacy != 0 ? dl::tensor<const double>{dl::unique_legacy_tensor{
                                                   static_cast<dl::DLManagedTensor*>(t)},
                                               dl::access::host}
                    : dl::tensor<const double>{
                          dl::unique_tensor{static_cast<dl::DLManagedTensorVersioned*>(t)},
                          dl::access::host};
    const auto values = imported.host();
    return std::accumulate(values.begin(), values.end(), 0.0);
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
}

/// The last failure's message.
const char* cuwrap_test_error() { return last_error.c_str(); }

}  // extern "C"
