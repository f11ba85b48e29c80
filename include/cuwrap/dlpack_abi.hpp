// The DLPack 1.1 C ABI (https://dmlc.github.io/dlpack/latest/c_api.html), declared by cuwrap
// so that no DLPack header is needed. The names are DLPack's, inside cuwrap::dlpack, so they
// never collide with a <dlpack/dlpack.h> that the same program includes; the layouts are the
// same (tests/sw/dlpack_layout_test.cpp compares them with Debian's libdlpack-dev header), so a
// pointer to one is passed as a pointer to the other with reinterpret_cast.
#pragma once

#include <cstdint>

namespace cuwrap::dlpack {

/// The DLPack version cuwrap produces (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION).
inline constexpr std::uint32_t major_version = 1;
inline constexpr std::uint32_t minor_version = 1;

/// DLPackVersion: a producer's ABI version. A consumer must not read a tensor whose major
/// version differs from the one it was built for.
struct DLPackVersion {
  std::uint32_t major;  ///< incompatible ABI changes
  std::uint32_t minor;  ///< compatible additions
};

/// DLDeviceType: where a tensor's memory lives (the values cuwrap uses; the rest are other
/// vendors' and are only ever compared against).
enum DLDeviceType : std::int32_t {
  kDLCPU = 1,           ///< ordinary host memory
  kDLCUDA = 2,          ///< CUDA device memory
  kDLCUDAHost = 3,      ///< page-locked host memory (cuMemHostAlloc, cudaMallocHost)
  kDLOpenCL = 4,        ///< OpenCL
  kDLVulkan = 7,        ///< Vulkan
  kDLMetal = 8,         ///< Metal
  kDLVPI = 9,           ///< Verilog simulator
  kDLROCM = 10,         ///< ROCm device memory
  kDLROCMHost = 11,     ///< ROCm pinned host memory
  kDLExtDev = 12,       ///< reserved for extensions
  kDLCUDAManaged = 13,  ///< CUDA managed memory (cuMemAllocManaged)
  kDLOneAPI = 14,       ///< oneAPI unified shared memory
  kDLWebGPU = 15,       ///< WebGPU
  kDLHexagon = 16,      ///< Qualcomm Hexagon DSP
  kDLMAIA = 17,         ///< Microsoft MAIA
};

/// DLDevice: a device type and an index. DLPack sets the index to 0 for host, pinned and
/// managed memory; for kDLCUDA it is the CUDA device ordinal.
struct DLDevice {
  DLDeviceType device_type;  ///< the kind of memory
  std::int32_t device_id;    ///< the device ordinal (0 for host, pinned and managed memory)
};

/// DLDataTypeCode: the type class of DLDataType::code.
enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,           ///< signed integer
  kDLUInt = 1,          ///< unsigned integer
  kDLFloat = 2,         ///< IEEE floating point
  kDLOpaqueHandle = 3,  ///< an opaque handle
  kDLBfloat = 4,        ///< bfloat16
  kDLComplex = 5,       ///< complex: two floats of bits / 2 each, real part first
  kDLBool = 6,          ///< boolean (8 bits per element in practice)
};

/// DLDataType: an element type. `lanes` > 1 is a vector type; cuwrap uses 1.
struct DLDataType {
  std::uint8_t code;    ///< a DLDataTypeCode
  std::uint8_t bits;    ///< bits per lane
  std::uint16_t lanes;  ///< lanes per element
};

/// DLTensor: a strided view. The first element is at (char*)data + byte_offset; shape and
/// strides have ndim entries; strides count elements, not bytes, and may be null for a
/// compact row-major tensor.
struct DLTensor {
  void* data;                 ///< the allocation's (aligned) start
  DLDevice device;            ///< where data lives
  std::int32_t ndim;          ///< number of dimensions
  DLDataType dtype;           ///< element type
  std::int64_t* shape;        ///< ndim extents
  std::int64_t* strides;      ///< ndim strides in elements, or null (compact, row-major)
  std::uint64_t byte_offset;  ///< bytes from data to the first element
};

/// DLManagedTensor: the pre-1.0 ("legacy") managed tensor, with no version and no flags. The
/// consumer calls deleter(self) once when it is done; deleter may be null.
struct DLManagedTensor {
  DLTensor dl_tensor;                      ///< the view
  void* manager_ctx;                       ///< the producer's state
  void (*deleter)(DLManagedTensor* self);  ///< frees self and what it keeps alive
};

/// DLPACK_FLAG_BITMASK_READ_ONLY: the consumer must not write the memory.
inline constexpr std::uint64_t flag_read_only = std::uint64_t{1} << 0;
/// DLPACK_FLAG_BITMASK_IS_COPIED: the producer made a copy the consumer owns alone.
inline constexpr std::uint64_t flag_is_copied = std::uint64_t{1} << 1;
/// DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1.1): sub-byte elements are padded to a byte.
inline constexpr std::uint64_t flag_is_subbyte_type_padded = std::uint64_t{1} << 2;

/// DLManagedTensorVersioned (DLPack 1.0 and later): a managed tensor with its producer's
/// version and flags; the version comes first so a consumer can check it before reading the
/// rest. The consumer calls deleter(self) once when it is done; deleter may be null.
struct DLManagedTensorVersioned {
  DLPackVersion version;                            ///< the producer's DLPack version
  void* manager_ctx;                                ///< the producer's state
  void (*deleter)(DLManagedTensorVersioned* self);  ///< frees self and what it keeps alive
  std::uint64_t flags;                              ///< flag_read_only, flag_is_copied, ...
  DLTensor dl_tensor;                               ///< the view
};

}  // namespace cuwrap::dlpack
