// DLPack export, import checks and the stream handshake (include/cuwrap/dlpack.hpp).
#include "cuwrap/dlpack.hpp"

#include <limits>
#include <string>
#include <vector>

#include "cuwrap/pointer.hpp"

namespace cuwrap::dlpack {
namespace {

[[noreturn]] void fail(CUresult code, const char* api, const std::string& details,
                       std::source_location where) {
  cuwrap::detail::throw_error(make_error_code(code), api, details, where);
}

std::string device_type_name(std::int32_t type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    default: return "device type " + std::to_string(type);
  }
}

std::string dtype_name(DLDataType t) {
  std::string name;
  switch (t.code) {
    case kDLInt: name = "int"; break;
    case kDLUInt: name = "uint"; break;
    case kDLFloat: name = "float"; break;
    case kDLOpaqueHandle: name = "handle"; break;
    case kDLBfloat: name = "bfloat"; break;
    case kDLComplex: name = "complex"; break;
    case kDLBool: name = "bool"; break;
    default: name = "code " + std::to_string(t.code) + " ";
  }
  name += std::to_string(t.bits);
  if (t.lanes != 1) {
    name += "x" + std::to_string(t.lanes);
  }
  return name;
}

std::string extents(const std::int64_t* values, std::int32_t n) {
  std::string s = "(";
  for (std::int32_t i = 0; i < n; ++i) {
    s += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  }
  return s + ")";
}

// The exported tensor, its shape and strides, and what it keeps alive: one allocation, freed by
// the deleter.
struct export_holder {
  DLManagedTensorVersioned tensor{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::unique_ptr<detail::owner_base> owner;
};

void delete_export(DLManagedTensorVersioned* self) noexcept {
  delete static_cast<export_holder*>(self->manager_ctx);  // destroys the owner (frees memory)
}

// The legacy wrapper of a versioned tensor (to_legacy).
struct legacy_holder {
  DLManagedTensor tensor{};
  unique_tensor versioned;
};

void delete_legacy(DLManagedTensor* self) noexcept {
  delete static_cast<legacy_holder*>(self->manager_ctx);  // runs the versioned deleter
}

// The layout of `t` checked against `request`: elements, contiguity, alignment.
detail::imported_view check_tensor(const DLTensor& t, const detail::import_request& request,
                                   bool read_only, const char* api, std::source_location where) {
  // The device.
  const std::int32_t type = t.device.device_type;
  const bool host_ok = type == kDLCPU || type == kDLCUDAHost || type == kDLCUDAManaged;
  const bool device_ok = type == kDLCUDA || type == kDLCUDAHost || type == kDLCUDAManaged;
  if (request.access == access::host && !host_ok) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the tensor's memory is " + device_type_name(type) +
             ", which the host cannot access (a host view takes kDLCPU, kDLCUDAHost or "
             "kDLCUDAManaged)",
         where);
  }
  if (request.access == access::device && !device_ok) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the tensor's memory is " + device_type_name(type) +
             ", which CUDA devices cannot access (a device view takes kDLCUDA, kDLCUDAHost or "
             "kDLCUDAManaged)",
         where);
  }
  if (type == kDLCUDA && request.device_ordinal && t.device.device_id != *request.device_ordinal) {
    fail(CUDA_ERROR_INVALID_DEVICE, api,
         "the tensor is on device " + std::to_string(t.device.device_id) + ", expected device " +
             std::to_string(*request.device_ordinal),
         where);
  }
  // The element type.
  if (t.dtype.code != request.dtype.code || t.dtype.bits != request.dtype.bits ||
      t.dtype.lanes != request.dtype.lanes) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the tensor holds " + dtype_name(t.dtype) + ", the view's element type is " +
             dtype_name(request.dtype),
         where);
  }
  if (read_only && request.writable) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY); view it as const T", where);
  }
  // The shape: the element count, then compact row-major strides (an extent of 1 may have any
  // stride: it is never stepped over).
  if (t.ndim < 0) {
    fail(CUDA_ERROR_INVALID_VALUE, api, "ndim is " + std::to_string(t.ndim), where);
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the shape pointer is null for ndim " + std::to_string(t.ndim), where);
  }
  std::size_t count = 1;
  for (std::int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      fail(CUDA_ERROR_INVALID_VALUE, api, "negative extent in shape " + extents(t.shape, t.ndim),
           where);
    }
    const auto extent = static_cast<std::size_t>(t.shape[i]);
    if (extent != 0 && count > std::numeric_limits<std::size_t>::max() / extent) {
      fail(CUDA_ERROR_INVALID_VALUE, api, "shape " + extents(t.shape, t.ndim) + " overflows",
           where);
    }
    count *= extent;
  }
  if (t.strides != nullptr && count != 0) {
    std::int64_t expected = 1;
    for (std::int32_t i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != expected) {
        fail(CUDA_ERROR_INVALID_VALUE, api,
             "the tensor is not contiguous: shape " + extents(t.shape, t.ndim) + ", strides " +
                 extents(t.strides, t.ndim) +
                 " (elements); a span needs compact row-major "
                 "strides",
             where);
      }
      expected *= t.shape[i];
    }
  }
  // The first element.
  if (t.data == nullptr && count != 0) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the data pointer is null for " + std::to_string(count) + " elements", where);
  }
  void* first = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
  if (reinterpret_cast<std::uintptr_t>(first) % request.alignment != 0) {  // NOLINT
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "the first element (data + byte_offset " + std::to_string(t.byte_offset) +
             ") is not aligned to " + std::to_string(request.alignment) + " bytes",
         where);
  }
  return {first, count, t.device};
}

}  // namespace

namespace detail {

void throw_not_host_accessible(const char* api, std::source_location where) {
  fail(CUDA_ERROR_INVALID_VALUE, api,
       "the tensor's memory is kDLCUDA (device memory), which the host cannot access", where);
}

DLDevice device_of(const void* data, bool host, const char* api, std::source_location where) {
  const pointer_info info = pointer_attributes(data, where);
  switch (info.type) {
    case memory_type::device:
      if (host) {
        fail(CUDA_ERROR_INVALID_VALUE, api,
             "a host span points to device memory (device " + std::to_string(info.device) +
                 "); export it as a device_span",
             where);
      }
      return {kDLCUDA, info.device};
    case memory_type::host: return {kDLCUDAHost, 0};
    case memory_type::managed: return {kDLCUDAManaged, 0};
    case memory_type::unregistered: break;
  }
  if (!host) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "a device span points to memory the driver does not know (not device, pinned or "
         "managed memory)",
         where);
  }
  return {kDLCPU, 0};
}

DLManagedTensorVersioned* make_versioned(const export_request& request,
                                         const export_options& options,
                                         std::unique_ptr<owner_base> owner, const char* api,
                                         std::source_location where) {
  auto holder = std::make_unique<export_holder>();
  holder->owner = std::move(owner);  // from here on, a throw frees what the owner holds
  const auto size = static_cast<std::int64_t>(request.count);
  if (options.shape.empty()) {
    if (!options.strides.empty()) {
      fail(CUDA_ERROR_INVALID_VALUE, api, "strides given without a shape", where);
    }
    holder->shape = {size};
    holder->strides = {1};
  } else {
    const auto ndim = static_cast<std::int32_t>(options.shape.size());
    holder->shape.assign(options.shape.begin(), options.shape.end());
    if (!options.strides.empty() && options.strides.size() != options.shape.size()) {
      fail(CUDA_ERROR_INVALID_VALUE, api,
           "shape " + extents(options.shape.data(), ndim) + " has " +
               std::to_string(options.shape.size()) + " extents, strides have " +
               std::to_string(options.strides.size()),
           where);
    }
    holder->strides.resize(options.shape.size());
    std::int64_t step = 1;
    std::int64_t count = 1;
    std::int64_t last = 0;  // the largest element index the tensor reaches
    for (std::int32_t i = ndim - 1; i >= 0; --i) {
      const std::int64_t extent = options.shape[static_cast<std::size_t>(i)];
      const std::int64_t stride =
          options.strides.empty() ? step : options.strides[static_cast<std::size_t>(i)];
      if (extent < 0 || stride < 0) {
        fail(CUDA_ERROR_INVALID_VALUE, api,
             "negative extent or stride: shape " + extents(options.shape.data(), ndim) +
                 (options.strides.empty() ? std::string{}
                                          : ", strides " + extents(options.strides.data(), ndim)),
             where);
      }
      holder->strides[static_cast<std::size_t>(i)] = stride;
      std::int64_t reach = 0;
      if ((extent > 0 && (__builtin_mul_overflow(extent - 1, stride, &reach) ||
                          __builtin_add_overflow(last, reach, &last))) ||
          __builtin_mul_overflow(count, extent, &count) ||
          __builtin_mul_overflow(step, extent, &step)) {
        fail(CUDA_ERROR_INVALID_VALUE, api,
             "shape " + extents(options.shape.data(), ndim) + " overflows 64-bit indices", where);
      }
    }
    if (count != 0 && last >= size) {
      fail(
          CUDA_ERROR_INVALID_VALUE, api,
          "shape " + extents(options.shape.data(), ndim) +
              (options.strides.empty() ? std::string{}
                                       : " with strides " + extents(options.strides.data(), ndim)) +
              " reaches element " + std::to_string(last) + " of a memory of " +
              std::to_string(size) + " elements",
          where);
    }
  }
  if (options.consumer && !options.producer) {
    fail(CUDA_ERROR_INVALID_VALUE, api,
         "a consumer stream needs a producer stream to wait for (options.producer)", where);
  }
  if (options.producer && options.consumer) {
    wait_for_producer(*options.producer, *options.consumer, where);
  }
  DLManagedTensorVersioned& t = holder->tensor;
  t.version = {major_version, minor_version};
  t.flags = options.read_only ? flag_read_only : 0;
  t.dl_tensor.data = request.data;
  t.dl_tensor.device = request.device;
  t.dl_tensor.ndim = static_cast<std::int32_t>(holder->shape.size());
  t.dl_tensor.dtype = request.dtype;
  t.dl_tensor.shape = holder->shape.data();
  t.dl_tensor.strides = holder->strides.data();
  t.dl_tensor.byte_offset = 0;
  t.manager_ctx = holder.get();
  t.deleter = delete_export;
  return &holder.release()->tensor;
}

imported_view check_import(const DLManagedTensorVersioned* t, const import_request& request,
                           const char* api, std::source_location where) {
  if (t == nullptr) {
    fail(CUDA_ERROR_INVALID_VALUE, api, "the DLManagedTensorVersioned pointer is null", where);
  }
  if (t->version.major != major_version) {
    fail(CUDA_ERROR_NOT_SUPPORTED, api,
         "the tensor is DLPack " + std::to_string(t->version.major) + "." +
             std::to_string(t->version.minor) + "; cuwrap reads major version " +
             std::to_string(major_version),
         where);
  }
  return check_tensor(t->dl_tensor, request, (t->flags & flag_read_only) != 0, api, where);
}

imported_view check_import(const DLManagedTensor* t, const import_request& request, const char* api,
                           std::source_location where) {
  if (t == nullptr) {
    fail(CUDA_ERROR_INVALID_VALUE, api, "the DLManagedTensor pointer is null", where);
  }
  return check_tensor(t->dl_tensor, request, false, api, where);
}

}  // namespace detail

unique_legacy_tensor to_legacy(unique_tensor tensor, std::source_location where) {
  if (!tensor) {
    return {};
  }
  if ((tensor->flags & flag_read_only) != 0) {
    fail(CUDA_ERROR_INVALID_VALUE, "cuwrap::dlpack::to_legacy",
         "the tensor is read-only, which a legacy DLManagedTensor cannot say", where);
  }
  auto holder = std::make_unique<legacy_holder>();
  holder->tensor.dl_tensor = tensor->dl_tensor;  // shape and strides stay in the versioned one
  holder->versioned = std::move(tensor);
  holder->tensor.manager_ctx = holder.get();
  holder->tensor.deleter = delete_legacy;
  return unique_legacy_tensor{&holder.release()->tensor};
}

void wait_for_producer(stream_ref producer, stream_ref consumer, std::source_location where) {
  cuwrap::detail::expect_argument_not_moved_from(
      !producer.empty(), nullptr, "dlpack::wait_for_producer", "producer stream", where);
  cuwrap::detail::expect_argument_not_moved_from(
      !consumer.empty(), nullptr, "dlpack::wait_for_producer", "consumer stream", where);
  if (producer.get() == consumer.get()) {
    return;  // stream order already holds
  }
  const auto& d = cuwrap::detail::driver();
  CUcontext ctx{};
  check(d.cuStreamGetCtx(producer.get(), &ctx), "cuStreamGetCtx", where);
  const scoped_current_context current{context_ref{ctx}, where};
  CUevent event{};
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate", where);
  CUresult r = d.cuEventRecord(event, producer.get());
  const char* api = "cuEventRecord";
  if (r == CUDA_SUCCESS) {
    r = d.cuStreamWaitEvent(consumer.get(), event, 0);
    api = "cuStreamWaitEvent";
  }
  // The wait uses the event's state at the time of the call: destroying it now is safe
  // (cuEventDestroy: "resources will be released automatically once the device completes").
  check_nothrow(d.cuEventDestroy(event), "cuEventDestroy");
  check(r, api, where);
}

std::optional<stream_ref> consumer_stream(std::optional<std::intptr_t> python_stream,
                                          std::source_location where) {
  if (!python_stream || *python_stream == 1) {
    return stream_ref::legacy();
  }
  if (*python_stream == 2) {
    return stream_ref::per_thread();
  }
  if (*python_stream == -1) {
    return std::nullopt;
  }
  if (*python_stream <= 0) {
    fail(CUDA_ERROR_INVALID_VALUE, "cuwrap::dlpack::consumer_stream",
         "stream " + std::to_string(*python_stream) +
             " is not a CUDA stream in the DLPack protocol (0 is ambiguous; use 1 for the legacy "
             "default stream, 2 for the per-thread one, -1 for no synchronization)",
         where);
  }
  return stream_ref{reinterpret_cast<CUstream>(*python_stream)};  // NOLINT: a handle
}

}  // namespace cuwrap::dlpack
