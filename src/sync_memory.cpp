// Synchronous copies and fills without a current context (include/cuwrap/copy.hpp, and copy_3d
// in include/cuwrap/copy_3d.hpp): the cold path makes the call again in the context of the
// device memory it touches.
#include <cstdio>
#include <string>

#include "cuwrap/copy.hpp"
#include "cuwrap/copy_3d.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::detail {
namespace {

std::string hex(CUdeviceptr address) {
  char text[2 + 16 + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

// Where memory at `address` belongs: its context (null for host memory the driver does not
// know and for memory of no context, such as stream-ordered allocations) and its device ordinal
// (negative when unknown). One cuPointerGetAttributes call.
struct memory_owner {
  CUcontext context = nullptr;
  int device = -1;
};
memory_owner owner_of(CUdeviceptr address) noexcept {
  memory_owner owner;
  if (address == 0) {
    return owner;
  }
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_CONTEXT,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* values[] = {&owner.context, &owner.device};
  if (driver().cuPointerGetAttributes(2, attributes, values, address) != CUDA_SUCCESS) {
    return {};
  }
  return owner;
}

bool is_copy(const sync_operation& op) noexcept {
  return op.what == sync_operation::kind::copy || op.what == sync_operation::kind::copy_2d;
}

CUresult run(const sync_operation& op) {
  const auto& d = driver();
  switch (op.what) {
    case sync_operation::kind::copy: return d.cuMemcpy(op.dst, op.src, op.count);
    case sync_operation::kind::set8:
      return d.cuMemsetD8(op.dst, static_cast<unsigned char>(op.value), op.count);
    case sync_operation::kind::set16:
      return d.cuMemsetD16(op.dst, static_cast<unsigned short>(op.value), op.count);
    case sync_operation::kind::set32: return d.cuMemsetD32(op.dst, op.value, op.count);
    case sync_operation::kind::copy_2d: return d.cuMemcpy2D(op.desc_2d);
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// Why no context could be found: which memory was looked at and what the call needs.
[[noreturn]] void throw_no_context(const sync_operation& op, const char* api,
                                   std::source_location where) {
  const bool copy = is_copy(op);
  std::string text = "no context is current, and ";
  int device = owner_of(op.dst).device;
  if (device < 0 && copy) {
    device = owner_of(op.src).device;
  }
  if (device >= 0) {
    text += "the device memory it touches (" +
            (copy ? "dst " + hex(op.dst) + ", src " + hex(op.src) : "dst " + hex(op.dst)) +
            ") belongs to no context (a stream-ordered allocation of device " +
            std::to_string(device) + "); make a context of device " + std::to_string(device) +
            " current with cuwrap::scoped_current_context";
  } else {
    text += copy ? "neither dst " + hex(op.dst) + " nor src " + hex(op.src) +
                       " is device memory of a context"
                 : "dst " + hex(op.dst) + " is not device memory of a context";
    text +=
        "; synchronous copies and fills run in the current context: make one current with "
        "cuwrap::scoped_current_context";
  }
  throw_error(make_error_code(CUDA_ERROR_INVALID_CONTEXT), api, text, where);
}

}  // namespace

void sync_failed(CUresult result, const sync_operation& operation, const char* api,
                 std::source_location where) {
  if (result != CUDA_ERROR_INVALID_CONTEXT) {
    check(result, api, where);
    return;
  }
  CUcontext current = nullptr;
  if (driver().cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != nullptr) {
    check_sync(result, api, where);  // a current context the driver refused: the usual hint
    return;
  }
  CUcontext ctx = owner_of(operation.dst).context;
  if (ctx == nullptr && is_copy(operation)) {
    ctx = owner_of(operation.src).context;
  }
  if (ctx == nullptr) {
    throw_no_context(operation, api, where);
  }
  check(driver().cuCtxPushCurrent(ctx), "cuCtxPushCurrent", where);
  const CUresult again = run(operation);
  CUcontext popped = nullptr;
  const CUresult pop = driver().cuCtxPopCurrent(&popped);
  check(again, api, where);
  check(pop, "cuCtxPopCurrent", where);
}

// The context of one side of a 3D copy: an array's as its owner gave it (`array_context`),
// else that of the device memory at the side's address.
CUcontext side_context(CUmemorytype type, CUdeviceptr device, const void* host,
                       CUcontext array_context) noexcept {
  switch (type) {
    case CU_MEMORYTYPE_ARRAY: return array_context;
    case CU_MEMORYTYPE_HOST: return owner_of(reinterpret_cast<CUdeviceptr>(host)).context;
    default: return owner_of(device).context;
  }
}

void copy_3d_failed(CUresult result, const CUDA_MEMCPY3D& desc, CUcontext dst_context,
                    CUcontext src_context, std::source_location where) {
  CUcontext current = nullptr;
  if (result != CUDA_ERROR_INVALID_CONTEXT || driver().cuCtxGetCurrent(&current) != CUDA_SUCCESS ||
      current != nullptr) {
    check_sync(result, "cuMemcpy3D", where);
    return;
  }
  CUcontext ctx = side_context(desc.dstMemoryType, desc.dstDevice, desc.dstHost, dst_context);
  if (ctx == nullptr) {
    ctx = side_context(desc.srcMemoryType, desc.srcDevice, desc.srcHost, src_context);
  }
  if (ctx == nullptr) {
    throw_error(make_error_code(CUDA_ERROR_INVALID_CONTEXT), "cuMemcpy3D",
                "no context is current, and neither side is an owning array or device memory "
                "of a context (an array_view does not say its context); synchronous copies run "
                "in the current context: make one current with cuwrap::scoped_current_context",
                where);
  }
  check(driver().cuCtxPushCurrent(ctx), "cuCtxPushCurrent", where);
  const CUresult again = driver().cuMemcpy3D(&desc);
  CUcontext popped = nullptr;
  const CUresult pop = driver().cuCtxPopCurrent(&popped);
  check(again, "cuMemcpy3D", where);
  check(pop, "cuCtxPopCurrent", where);
}

}  // namespace cuwrap::detail
