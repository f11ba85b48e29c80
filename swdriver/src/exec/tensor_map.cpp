// cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide and
// cuTensorMapReplaceAddress: every requirement cuda.h lists for them is checked, and a map that
// meets them is stored in the object's 128 bytes (ptx/tensor_map.hpp), where the interpreter's
// cp.async.bulk.tensor reads it. A violated requirement is CUDA_ERROR_INVALID_VALUE, as on a GPU,
// and one stderr line naming it ("swcuda: cuTensorMapEncodeTiled: boxDim[1] is 300; it must be
// 1..256").
#include "ptx/tensor_map.hpp"

#include <cstdio>
#include <string>

#include "core/api.hpp"

namespace swcu {
namespace {

using ptx::TensorMapDesc;
using ptx::TensorMapMode;

// The requirements shared by the three encoders (cuda.h, cuTensorMapEncodeTiled): the object's
// alignment, the data type, the rank, the address, the dimensions and strides, the element
// strides, interleave, swizzle, L2 promotion and out-of-bound fill. `inner_bytes` is the box's
// inner dimension in bytes (the swizzle span bounds it). The reason, or "" when they are met.
std::string check_common(const CUtensorMap* map, int type, unsigned rank, const void* address,
                         const cuuint64_t* dims, const cuuint64_t* strides,
                         const cuuint32_t* element_strides, int interleave, int swizzle, int l2,
                         int oob, unsigned min_rank) {
  if (map == nullptr) return "tensorMap is NULL";
  if (reinterpret_cast<std::uintptr_t>(map) % 64 != 0) return "tensorMap is not 64-byte aligned";
  if (type < 0 || type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) {
    return "tensorDataType " + std::to_string(type) + " is not a CUtensorMapDataType";
  }
  if (TensorMapDesc::element_size(static_cast<unsigned>(type)) == 0) {
    return "tensorDataType " + std::to_string(type) +
           " is a packed sub-byte type, which needs a device of compute capability 10.0 (the "
           "software driver is 9.0)";
  }
  if (rank < min_rank || rank > 5) {
    return "tensorRank is " + std::to_string(rank) + "; it must be " + std::to_string(min_rank) +
           "..5";
  }
  if (interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || interleave > CU_TENSOR_MAP_INTERLEAVE_32B) {
    return "interleave " + std::to_string(interleave) + " is not a CUtensorMapInterleave";
  }
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3) {
    return "an interleaved layout needs tensorRank 3 or more (it is " + std::to_string(rank) + ")";
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(address);
  const unsigned align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (address == nullptr || addr % align != 0) {
    return "globalAddress is not " + std::to_string(align) + "-byte aligned";
  }
  if (dims == nullptr || (rank > 1 && strides == nullptr) || element_strides == nullptr) {
    return "globalDim, globalStrides or elementStrides is NULL";
  }
  for (unsigned i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32)) {
      return "globalDim[" + std::to_string(i) + "] is " + std::to_string(dims[i]) +
             "; it must be 1..2^32";
    }
    if (element_strides[i] == 0 || element_strides[i] > 8) {
      return "elementStrides[" + std::to_string(i) + "] is " + std::to_string(element_strides[i]) +
             "; it must be 1..8";
    }
  }
  const unsigned stride_align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  const cuuint64_t esize = TensorMapDesc::element_size(static_cast<unsigned>(type));
  for (unsigned i = 0; i + 1 < rank; ++i) {
    if (strides[i] % stride_align != 0 || strides[i] >= (1ull << 40)) {
      return "globalStrides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
             "; it must be a multiple of " + std::to_string(stride_align) + " below 2^40";
    }
    // each dimension's stride spans the one below it (cuda.h's padding rule)
    const cuuint64_t below = i == 0 ? dims[0] * esize : strides[i - 1] * dims[i];
    if (strides[i] < below) {
      return "globalStrides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
             ", less than the " + std::to_string(below) + " bytes of the dimension below it";
    }
  }
  if (swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B) {
    return "swizzle " + std::to_string(swizzle) + " is not a CUtensorMapSwizzle";
  }
  if (swizzle > CU_TENSOR_MAP_SWIZZLE_128B) {
    return "swizzle " + std::to_string(swizzle) +
           " (a 128B swizzle of 32B or 64B atoms) needs a device of compute capability 10.0 "
           "(the software driver is 9.0)";
  }
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B) {
    return "CU_TENSOR_MAP_INTERLEAVE_32B needs CU_TENSOR_MAP_SWIZZLE_32B";
  }
  if (l2 < CU_TENSOR_MAP_L2_PROMOTION_NONE || l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
    return "l2Promotion " + std::to_string(l2) + " is not a CUtensorMapL2promotion";
  }
  if (oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE &&
      oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) {
    return "oobFill " + std::to_string(oob) + " is not a CUtensorMapFloatOOBfill";
  }
  if (oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
      !TensorMapDesc::is_float(static_cast<unsigned>(type))) {
    return "oobFill CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point "
           "tensorDataType";
  }
  return {};
}

// The swizzle span bounds the box's inner dimension (in bytes) when the layout is not
// interleaved; "" when it fits.
std::string check_inner(int interleave, int swizzle, cuuint64_t inner_bytes, const char* what) {
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || swizzle == CU_TENSOR_MAP_SWIZZLE_NONE) {
    return {};
  }
  const cuuint64_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B   ? 32
                          : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                                                                 : 128;
  if (inner_bytes <= span) return {};
  return std::string("the box's inner dimension (") + what + ") is " + std::to_string(inner_bytes) +
         " bytes, more than the " + std::to_string(span) + "-byte swizzle span";
}

// The map's fields common to the three encoders.
TensorMapDesc common_desc(TensorMapMode mode, int type, unsigned rank, const void* address,
                          const cuuint64_t* dims, const cuuint64_t* strides,
                          const cuuint32_t* element_strides, int interleave, int swizzle, int l2,
                          int oob) {
  TensorMapDesc d;
  d.mode = mode;
  d.data_type = static_cast<std::uint8_t>(type);
  d.rank = static_cast<std::uint8_t>(rank);
  d.interleave = static_cast<std::uint8_t>(interleave);
  d.swizzle = static_cast<std::uint8_t>(swizzle);
  d.l2_promotion = static_cast<std::uint8_t>(l2);
  d.oob_fill = static_cast<std::uint8_t>(oob);
  d.address = reinterpret_cast<std::uintptr_t>(address);
  for (unsigned i = 0; i < rank; ++i) {
    d.dim_minus_one[i] = static_cast<std::uint32_t>(dims[i] - 1);
    d.element_stride[i] = static_cast<std::uint8_t>(element_strides[i]);
    if (i + 1 < rank) d.stride[i] = strides[i];
  }
  return d;
}

CUresult refuse(const char* api, const std::string& why) {
  report(CU_LOG_LEVEL_ERROR, std::string{api} + ": " + why);
  return CUDA_ERROR_INVALID_VALUE;
}

// The encoders need a current context, as cuda.h's CUDA_ERROR_INVALID_CONTEXT says.
template <class Body>
CUresult encode(Sym sym, Body&& body) {
  return call(sym, [&](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    return body();
  });
}

}  // namespace
}  // namespace swcu

using swcu::Sym;

extern "C" {

CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                cuuint32_t tensorRank, void* globalAddress,
                                const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion,
                                CUtensorMapFloatOOBfill oobFill) {
  return swcu::encode(Sym::cuTensorMapEncodeTiled, [&]() -> CUresult {
    constexpr const char* kApi = "cuTensorMapEncodeTiled";
    const int type = swcu::raw(tensorDataType), il = swcu::raw(interleave), sw = swcu::raw(swizzle);
    std::string why =
        swcu::check_common(tensorMap, type, tensorRank, globalAddress, globalDim, globalStrides,
                           elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill), 1);
    if (why.empty() && boxDim == nullptr) why = "boxDim is NULL";
    const unsigned esize = swcu::ptx::TensorMapDesc::element_size(static_cast<unsigned>(type));
    for (unsigned i = 0; why.empty() && i < tensorRank; ++i) {
      if (boxDim[i] == 0 || boxDim[i] > 256) {
        why = "boxDim[" + std::to_string(i) + "] is " + std::to_string(boxDim[i]) +
              "; it must be 1..256";
      }
    }
    if (why.empty() && il == CU_TENSOR_MAP_INTERLEAVE_NONE && (boxDim[0] * esize) % 16 != 0) {
      why = "boxDim[0] * the element size is " + std::to_string(boxDim[0] * esize) +
            " bytes; without interleave it must be a multiple of 16";
    }
    if (why.empty()) why = swcu::check_inner(il, sw, boxDim[0] * esize, "boxDim[0]");
    if (!why.empty()) return swcu::refuse(kApi, why);
    swcu::ptx::TensorMapDesc d = swcu::common_desc(
        swcu::ptx::TensorMapMode::tiled, type, tensorRank, globalAddress, globalDim, globalStrides,
        elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill));
    for (unsigned i = 0; i < tensorRank; ++i) d.box[i] = static_cast<std::uint16_t>(boxDim[i]);
    d.write(static_cast<void*>(tensorMap));
    return CUDA_SUCCESS;
  });
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                 cuuint32_t tensorRank, void* globalAddress,
                                 const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                 const int* pixelBoxLowerCorner, const int* pixelBoxUpperCorner,
                                 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                 const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill) {
  return swcu::encode(Sym::cuTensorMapEncodeIm2col, [&]() -> CUresult {
    constexpr const char* kApi = "cuTensorMapEncodeIm2col";
    const int type = swcu::raw(tensorDataType), il = swcu::raw(interleave), sw = swcu::raw(swizzle);
    std::string why =
        swcu::check_common(tensorMap, type, tensorRank, globalAddress, globalDim, globalStrides,
                           elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill), 3);
    if (why.empty() && (pixelBoxLowerCorner == nullptr || pixelBoxUpperCorner == nullptr)) {
      why = "pixelBoxLowerCorner or pixelBoxUpperCorner is NULL";
    }
    // one offset per spatial dimension (D, H, W: rank - 2 of them), narrower as there are more
    const int limit = tensorRank == 3 ? 32768 : tensorRank == 4 ? 128 : 16;
    for (unsigned i = 0; why.empty() && i + 2 < tensorRank; ++i) {
      for (const int v : {pixelBoxLowerCorner[i], pixelBoxUpperCorner[i]}) {
        if (v < -limit || v >= limit) {
          why = "a pixel box corner offset is " + std::to_string(v) + "; with tensorRank " +
                std::to_string(tensorRank) + " it must be " + std::to_string(-limit) + ".." +
                std::to_string(limit - 1);
        }
      }
    }
    // The bounding box spans lower .. globalDim - 1 + upper in each spatial dimension (the
    // corners are W, H, D: dimensions 1, 2, 3); cuda.h: it "must have non-zero area".
    for (unsigned i = 0; why.empty() && i + 2 < tensorRank; ++i) {
      const auto span = static_cast<long long>(globalDim[i + 1]) + pixelBoxUpperCorner[i] -
                        pixelBoxLowerCorner[i];
      if (span < 1) {
        why = "the pixel box is empty in dimension " + std::to_string(i + 1) + " (globalDim " +
              std::to_string(globalDim[i + 1]) + ", corners " +
              std::to_string(pixelBoxLowerCorner[i]) + " and " +
              std::to_string(pixelBoxUpperCorner[i]) + "); it must have non-zero area";
      }
    }
    if (why.empty() && (channelsPerPixel == 0 || channelsPerPixel > 256)) {
      why = "channelsPerPixel is " + std::to_string(channelsPerPixel) + "; it must be 1..256";
    }
    if (why.empty() && (pixelsPerColumn == 0 || pixelsPerColumn > 1024)) {
      why = "pixelsPerColumn is " + std::to_string(pixelsPerColumn) + "; it must be 1..1024";
    }
    const unsigned esize = swcu::ptx::TensorMapDesc::element_size(static_cast<unsigned>(type));
    if (why.empty()) why = swcu::check_inner(il, sw, channelsPerPixel * esize, "channelsPerPixel");
    if (!why.empty()) return swcu::refuse(kApi, why);
    swcu::ptx::TensorMapDesc d = swcu::common_desc(
        swcu::ptx::TensorMapMode::im2col, type, tensorRank, globalAddress, globalDim, globalStrides,
        elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill));
    for (unsigned i = 0; i + 2 < tensorRank; ++i) {
      d.lower[i] = static_cast<std::int16_t>(pixelBoxLowerCorner[i]);
      d.upper[i] = static_cast<std::int16_t>(pixelBoxUpperCorner[i]);
    }
    d.channels_per_pixel = static_cast<std::uint16_t>(channelsPerPixel);
    d.pixels_per_column = static_cast<std::uint16_t>(pixelsPerColumn);
    d.write(static_cast<void*>(tensorMap));
    return CUDA_SUCCESS;
  });
}

CUresult cuTensorMapEncodeIm2colWide(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
    int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  return swcu::encode(Sym::cuTensorMapEncodeIm2colWide, [&]() -> CUresult {
    constexpr const char* kApi = "cuTensorMapEncodeIm2colWide";
    const int type = swcu::raw(tensorDataType), il = swcu::raw(interleave), sw = swcu::raw(swizzle),
              wide = swcu::raw(mode);
    std::string why =
        swcu::check_common(tensorMap, type, tensorRank, globalAddress, globalDim, globalStrides,
                           elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill), 3);
    for (const int v : {pixelBoxLowerCornerWidth, pixelBoxUpperCornerWidth}) {
      if (why.empty() && (v < -32768 || v > 32767)) {
        why = "a pixel box corner width is " + std::to_string(v) + "; it must be -32768..32767";
      }
    }
    if (why.empty() &&
        static_cast<long long>(globalDim[1]) + pixelBoxUpperCornerWidth - pixelBoxLowerCornerWidth <
            1) {
      why = "the pixel box is empty along W (globalDim[1] " + std::to_string(globalDim[1]) +
            ", corners " + std::to_string(pixelBoxLowerCornerWidth) + " and " +
            std::to_string(pixelBoxUpperCornerWidth) + "); it must have non-zero area";
    }
    if (why.empty() && wide != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W &&
        wide != CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128) {
      why = "mode " + std::to_string(wide) + " is not a CUtensorMapIm2ColWideMode";
    }
    if (why.empty() && (channelsPerPixel == 0 || channelsPerPixel > 256)) {
      why = "channelsPerPixel is " + std::to_string(channelsPerPixel) + "; it must be 1..256";
    }
    // pixelsPerColumn is ignored with CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128
    if (why.empty() && wide == CU_TENSOR_MAP_IM2COL_WIDE_MODE_W &&
        (pixelsPerColumn == 0 || pixelsPerColumn > 1024)) {
      why = "pixelsPerColumn is " + std::to_string(pixelsPerColumn) + "; it must be 1..1024";
    }
    const unsigned esize = swcu::ptx::TensorMapDesc::element_size(static_cast<unsigned>(type));
    if (why.empty()) why = swcu::check_inner(il, sw, channelsPerPixel * esize, "channelsPerPixel");
    if (!why.empty()) return swcu::refuse(kApi, why);
    swcu::ptx::TensorMapDesc d = swcu::common_desc(
        swcu::ptx::TensorMapMode::im2col_wide, type, tensorRank, globalAddress, globalDim,
        globalStrides, elementStrides, il, sw, swcu::raw(l2Promotion), swcu::raw(oobFill));
    d.lower_width = pixelBoxLowerCornerWidth;
    d.upper_width = pixelBoxUpperCornerWidth;
    d.wide_mode = static_cast<std::uint8_t>(wide);
    d.channels_per_pixel = static_cast<std::uint16_t>(channelsPerPixel);
    d.pixels_per_column = static_cast<std::uint16_t>(pixelsPerColumn);
    d.write(static_cast<void*>(tensorMap));
    return CUDA_SUCCESS;
  });
}

CUresult cuTensorMapReplaceAddress(CUtensorMap* tensorMap, void* globalAddress) {
  return swcu::encode(Sym::cuTensorMapReplaceAddress, [&]() -> CUresult {
    constexpr const char* kApi = "cuTensorMapReplaceAddress";
    if (tensorMap == nullptr || reinterpret_cast<std::uintptr_t>(tensorMap) % 64 != 0) {
      return swcu::refuse(kApi, "tensorMap is NULL or not 64-byte aligned");
    }
    auto d = swcu::ptx::TensorMapDesc::read(static_cast<void*>(tensorMap));
    if (!d) return swcu::refuse(kApi, "tensorMap holds no map cuTensorMapEncode* made");
    const unsigned align = d->interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    if (globalAddress == nullptr || reinterpret_cast<std::uintptr_t>(globalAddress) % align != 0) {
      return swcu::refuse(kApi, "globalAddress is not " + std::to_string(align) + "-byte aligned");
    }
    d->address = reinterpret_cast<std::uintptr_t>(globalAddress);
    d->write(static_cast<void*>(tensorMap));
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
