// cuwrap's DLPack declarations (cuwrap/dlpack_abi.hpp) against Debian's libdlpack-dev header:
// the same sizes, field offsets and enumerator values, so a pointer to one is a pointer to the
// other. Built only when <dlpack/dlpack.h> is installed (tests/CMakeLists.txt); Debian 12 ships
// DLPack 0.6, which has the legacy DLManagedTensor only, so the versioned struct is compared
// when the header declares it (DLPACK_MAJOR_VERSION >= 1).
#include <dlpack/dlpack.h>
#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

#include "cuwrap/dlpack_abi.hpp"

namespace dl = cuwrap::dlpack;

#define CUWRAP_SAME_FIELD(type, field)                                  \
  static_assert(offsetof(dl::type, field) == offsetof(::type, field) && \
                sizeof(dl::type::field) == sizeof(::type::field))

static_assert(sizeof(dl::DLDevice) == sizeof(::DLDevice));
static_assert(alignof(dl::DLDevice) == alignof(::DLDevice));
static_assert(sizeof(dl::DLDeviceType) == sizeof(::DLDeviceType));
CUWRAP_SAME_FIELD(DLDevice, device_type);
CUWRAP_SAME_FIELD(DLDevice, device_id);

static_assert(sizeof(dl::DLDataType) == sizeof(::DLDataType));
static_assert(alignof(dl::DLDataType) == alignof(::DLDataType));
CUWRAP_SAME_FIELD(DLDataType, code);
CUWRAP_SAME_FIELD(DLDataType, bits);
CUWRAP_SAME_FIELD(DLDataType, lanes);

static_assert(sizeof(dl::DLTensor) == sizeof(::DLTensor));
static_assert(alignof(dl::DLTensor) == alignof(::DLTensor));
CUWRAP_SAME_FIELD(DLTensor, data);
CUWRAP_SAME_FIELD(DLTensor, device);
CUWRAP_SAME_FIELD(DLTensor, ndim);
CUWRAP_SAME_FIELD(DLTensor, dtype);
CUWRAP_SAME_FIELD(DLTensor, shape);
CUWRAP_SAME_FIELD(DLTensor, strides);
CUWRAP_SAME_FIELD(DLTensor, byte_offset);

static_assert(sizeof(dl::DLManagedTensor) == sizeof(::DLManagedTensor));
static_assert(alignof(dl::DLManagedTensor) == alignof(::DLManagedTensor));
CUWRAP_SAME_FIELD(DLManagedTensor, dl_tensor);
CUWRAP_SAME_FIELD(DLManagedTensor, manager_ctx);
CUWRAP_SAME_FIELD(DLManagedTensor, deleter);

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
static_assert(dl::major_version == DLPACK_MAJOR_VERSION);
static_assert(sizeof(dl::DLPackVersion) == sizeof(::DLPackVersion));
CUWRAP_SAME_FIELD(DLPackVersion, major);
CUWRAP_SAME_FIELD(DLPackVersion, minor);
static_assert(sizeof(dl::DLManagedTensorVersioned) == sizeof(::DLManagedTensorVersioned));
static_assert(alignof(dl::DLManagedTensorVersioned) == alignof(::DLManagedTensorVersioned));
CUWRAP_SAME_FIELD(DLManagedTensorVersioned, version);
CUWRAP_SAME_FIELD(DLManagedTensorVersioned, manager_ctx);
CUWRAP_SAME_FIELD(DLManagedTensorVersioned, deleter);
CUWRAP_SAME_FIELD(DLManagedTensorVersioned, flags);
CUWRAP_SAME_FIELD(DLManagedTensorVersioned, dl_tensor);
static_assert(dl::flag_read_only == DLPACK_FLAG_BITMASK_READ_ONLY);
static_assert(dl::flag_is_copied == DLPACK_FLAG_BITMASK_IS_COPIED);
#endif

TEST_SUITE("dlpack") {
  TEST_CASE("the DLPack declarations match Debian's dlpack.h, enumerators included") {
    // The layouts are checked at compile time above; the enumerators here, every one the
    // installed header has.
    CHECK(dl::kDLCPU == ::kDLCPU);
    CHECK(dl::kDLCUDA == ::kDLCUDA);
    CHECK(dl::kDLCUDAHost == ::kDLCUDAHost);
    CHECK(dl::kDLOpenCL == ::kDLOpenCL);
    CHECK(dl::kDLVulkan == ::kDLVulkan);
    CHECK(dl::kDLMetal == ::kDLMetal);
    CHECK(dl::kDLVPI == ::kDLVPI);
    CHECK(dl::kDLROCM == ::kDLROCM);
    CHECK(dl::kDLROCMHost == ::kDLROCMHost);
    CHECK(dl::kDLExtDev == ::kDLExtDev);
    CHECK(dl::kDLCUDAManaged == ::kDLCUDAManaged);
    CHECK(dl::kDLInt == ::kDLInt);
    CHECK(dl::kDLUInt == ::kDLUInt);
    CHECK(dl::kDLFloat == ::kDLFloat);
    CHECK(dl::kDLOpaqueHandle == ::kDLOpaqueHandle);
    CHECK(dl::kDLBfloat == ::kDLBfloat);
    CHECK(dl::kDLComplex == ::kDLComplex);

    // A tensor written through one declaration reads the same through the other.
    std::int64_t shape[2] = {3, 4};
    std::int64_t strides[2] = {4, 1};
    float data[12] = {};
    dl::DLManagedTensor ours{};
    ours.dl_tensor = {data, {dl::kDLCUDAManaged, 0}, 2, {dl::kDLFloat, 32, 1}, shape, strides, 16};
    const auto* theirs = reinterpret_cast<const ::DLManagedTensor*>(&ours);
    CHECK(theirs->dl_tensor.data == data);
    CHECK(theirs->dl_tensor.device.device_type == ::kDLCUDAManaged);
    CHECK(theirs->dl_tensor.ndim == 2);
    CHECK(theirs->dl_tensor.dtype.bits == 32);
    CHECK(theirs->dl_tensor.shape[1] == 4);
    CHECK(theirs->dl_tensor.byte_offset == 16);
  }
}
