// cp.async.bulk.tensor in tile and im2col modes (exec_machine.hpp): the tensor memory
// accelerator's copies of a box of a tensor between global memory and shared memory, as a tensor
// map describes them (tensor_map.hpp; PTX ISA "Tensor copy", "Tensor modes", cuda.h
// cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col).
//
// Tile mode: a box has ceil(boxDim[i] / elementStrides[i]) elements in dimension i
// (elementStrides[0] counts only in an interleaved layout), element j at tensor coordinate
// c[i] + j[i] * elementStrides[i]. Im2col mode (NWC, NHWC, NDHWC tensors, C innermost): the box
// is pixelsPerColumn pixels of channelsPerPixel channels, the pixels traversed through the
// map's bounding box and read at their position plus the instruction's im2col offsets (see
// tensor_copy). Either lies in shared memory densely, dimension 0 innermost. With a swizzle
// mode, the 16-byte chunk of a shared address (its bits 4..6) is XORed with its 128-byte row
// (bits 7..9): one bit of each for 32B, two for 64B, three for 128B, so the pattern repeats
// every 256, 512 or 1024 bytes. A load fills the elements outside the tensor with zeros (or,
// with CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, the type's NaN) and completes the
// box's bytes on the mbarrier (on each CTA of ctaMask with .multicast::cluster); a tile-mode store
// writes only the elements inside the tensor (cp.reduce.async.bulk.tensor: reduces them into it,
// each element atomically). Both happen when the copy is issued: a store's bulk group then has
// nothing left to wait for. An im2col_no_offs store or reduction is an illegal instruction, as
// on an sm_90 GPU (see tensor_copy).
#include <bit>
#include <cstring>

#include "ptx/exec_machine.hpp"
#include "ptx/tensor_map.hpp"

namespace swcu::ptx::detail {
namespace {

// The swizzled form of a shared memory offset (CUtensorMapSwizzle 0..3).
std::uint64_t swizzled(std::uint64_t offset, unsigned swizzle) {
  if (swizzle == 0) return offset;
  const std::uint64_t mask = (1u << swizzle) - 1;  // 32B: 1 bit, 64B: 2, 128B: 3
  return offset ^ (((offset >> 7) & mask) << 4);
}

// The NaN an out-of-bound element of a floating-point type reads as, in its size.
std::uint64_t oob_nan(unsigned data_type) {
  switch (data_type) {
    case 6:  // FLOAT16
    case 9:  // BFLOAT16
      return 0x7fff;
    case 8: return 0x7fffffffffffffffull;  // FLOAT64
    default: return 0x7fffffff;            // FLOAT32, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
  }
}

// The PTX type a cp.reduce.async.bulk.tensor reduction `op` works on for the map's
// CUtensorMapDataType, as the PTX ISA lists them: .add on .u32 .s32 .u64 .f32 .f16 .bf16, .min
// and .max on .u32 .s32 .s64 .f16 .bf16, .inc and .dec on .u32, the bitwise ones on .b32 and
// .b64. Type::none: not supported.
Type reduction_type_or_none(Sub op, unsigned data_type) {
  // 2 UINT32, 3 INT32, 4 UINT64, 5 INT64, 6 FLOAT16, 7 FLOAT32, 9 BFLOAT16, 10 FLOAT32_FTZ
  switch (op) {
    case Sub::a_add:
      switch (data_type) {
        case 2: return Type::u32;
        case 3: return Type::s32;
        case 4: return Type::u64;
        case 6: return Type::f16;
        case 7:
        case 10: return Type::f32;
        case 9: return Type::bf16;
        default: return Type::none;
      }
    case Sub::a_min:
    case Sub::a_max:
      switch (data_type) {
        case 2: return Type::u32;
        case 3: return Type::s32;
        case 5: return Type::s64;
        case 6: return Type::f16;
        case 9: return Type::bf16;
        default: return Type::none;
      }
    case Sub::a_inc:
    case Sub::a_dec: return data_type == 2 ? Type::u32 : Type::none;
    case Sub::a_and:
    case Sub::a_or:
    case Sub::a_xor:
      return data_type == 2 || data_type == 3   ? Type::b32
             : data_type == 4 || data_type == 5 ? Type::b64
                                                : Type::none;
    default: return Type::none;
  }
}

}  // namespace

Type Machine::reduction_type(Sub op, unsigned data_type) {
  const Type t = reduction_type_or_none(op, data_type);
  if (t == Type::none) {
    fault(Fault::illegal_instruction,
          "cp.reduce.async.bulk.tensor with a tensor map of CUtensorMapDataType " +
              std::to_string(data_type) +
              ", which its reduction does not support (PTX ISA: .add on u32 s32 u64 f32 f16 "
              "bf16, .min/.max on u32 s32 s64 f16 bf16, .inc/.dec on u32, .and/.or/.xor on "
              "32- and 64-bit integers)");
  }
  return t;
}

void Machine::tensor_copy(Thread& t, const Inst& in) {
  const bool store = (in.mode & kBulkToGlobal) != 0;
  const bool im2col = (in.flags & kIm2col) != 0;
  const bool reduce = (in.flags & kReduce) != 0;
  if (store && im2col) {
    // The PTX ISA lists .im2col_no_offs stores and reductions for sm_90 and ptxas assembles
    // them, but an H200 (driver 580.159.04, CUDA 13) raises CUDA_ERROR_ILLEGAL_INSTRUCTION on
    // cp.async.bulk.tensor.Nd.global.shared::cta.im2col_no_offs.bulk_group (observed
    // 2026-11-27): the module loads and the fault comes when the copy is issued.
    fault(Fault::illegal_instruction,
          std::string(reduce ? "cp.reduce.async.bulk.tensor" : "cp.async.bulk.tensor") + "." +
              std::to_string(in.vec) +
              "d.im2col_no_offs: the sm_90 tensor memory accelerator has no im2col " +
              (reduce ? "reduction" : "store") + ": a GPU raises an illegal instruction here");
  }
  const std::uint64_t map_addr = address(t, in.ops[store ? 0 : 1]);
  const auto found = TensorMapDesc::read(resolve(t, Space::generic, map_addr, 128, false));
  if (!found) {
    fault(Fault::illegal_instruction, "cp.async.bulk.tensor with the tensor map at " +
                                          hex(map_addr) +
                                          ", which holds no map cuTensorMapEncode* made");
  }
  const TensorMapDesc& d = *found;
  const unsigned rank = in.vec;
  const TensorMapMode want = im2col ? TensorMapMode::im2col : TensorMapMode::tiled;
  if (d.mode != want || d.rank != rank) {
    const char* mode_name = im2col ? "im2col" : "tile";
    const char* map_name = d.mode == TensorMapMode::tiled    ? "a tiled"
                           : d.mode == TensorMapMode::im2col ? "an im2col"
                                                             : "an im2col-wide";
    fault(Fault::illegal_instruction, "cp.async.bulk.tensor." + std::to_string(rank) + "d." +
                                          mode_name + " with " + map_name + " tensor map of rank " +
                                          std::to_string(d.rank) +
                                          " (the copy's mode and dimension must be the map's)");
  }
  const unsigned es = TensorMapDesc::element_size(d.data_type);
  if (d.interleave != 0) {
    // NC/8HWC8-like layouts: dimension 0 is the channels of one 16- or 32-byte slice, which the
    // box moves whole. The software driver runs tiled maps whose box rows are whole slices.
    const unsigned slice = d.interleave == 1 ? 16 : 32;
    const unsigned row = (d.box[0] + d.element_stride[0] - 1) / d.element_stride[0] * es;
    if (im2col || row % slice != 0) {
      fault(Fault::illegal_instruction,
            "cp.async.bulk.tensor with an interleaved tensor map (CU_TENSOR_MAP_INTERLEAVE_" +
                std::to_string(slice) + "B) " +
                (im2col ? std::string("in im2col mode")
                        : "whose box rows are " + std::to_string(row) + " bytes, not whole " +
                              std::to_string(slice) + "-byte slices") +
                ", which the software driver does not run");
    }
  }
  const Type reduce_type = reduce ? reduction_type(in.sub, d.data_type) : Type::none;
  // FLOAT32_FTZ (10) and TFLOAT32_FTZ (12) flush subnormals
  const bool reduce_ftz = d.data_type == 10 || d.data_type == 12;
  std::int64_t coord[5] = {};
  for (unsigned i = 0; i < rank; ++i) {
    const std::uint32_t reg = p_.vec_regs[in.ops[5].reg + i];
    coord[i] = static_cast<std::int32_t>(t.rf[reg] & 0xffffffffu);
  }
  // Each element of the box in shared memory order: its global address, and whether it lies
  // inside the tensor.
  struct Element {
    std::uint64_t global;
    bool inside;
  };
  std::vector<Element> box_elements;
  const auto add = [&](const std::int64_t* c) {
    bool inside = true;
    std::uint64_t g = d.address;
    for (unsigned i = 0; i < rank; ++i) {
      if (c[i] < 0 || c[i] > std::int64_t{d.dim_minus_one[i]}) inside = false;
      g += static_cast<std::uint64_t>(c[i]) * (i == 0 ? es : d.stride[i - 1]);
    }
    box_elements.push_back({g, inside});
  };
  if (im2col) {
    // pixelsPerColumn pixels of channelsPerPixel channels each (PTX ISA "im2col mode"): the
    // pixels are the positions of the bounding box (per spatial dimension i, lowerCorner to
    // globalDim - 1 + upperCorner) from the coordinates on, W fastest, stepping by
    // elementStrides and wrapping to the box's lower corner into the next row (H), plane (D) and
    // image (N); each is read at its position plus the im2col offsets.
    std::int64_t offset[3] = {};
    if (in.out2.kind == Operand::Kind::vec) {
      for (unsigned i = 0; i < in.out2.count && i < 3; ++i) {
        offset[i] = static_cast<std::int64_t>(t.rf[p_.vec_regs[in.out2.reg + i]] & 0xffffu);
      }
    }
    const unsigned spatial = rank - 2;
    std::int64_t pixel[5] = {};  // dims 1..rank-1 of the current pixel
    for (unsigned i = 1; i < rank; ++i) pixel[i] = coord[i];
    for (unsigned p = 0; p < d.pixels_per_column; ++p) {
      std::int64_t c[5];
      for (unsigned i = 1; i < rank; ++i) c[i] = pixel[i] + (i <= spatial ? offset[i - 1] : 0);
      for (unsigned ch = 0; ch < d.channels_per_pixel; ++ch) {
        c[0] = coord[0] + ch;
        add(c);
      }
      unsigned i = 1;
      for (; i <= spatial; ++i) {
        pixel[i] += d.element_stride[i];
        const std::int64_t upper = std::int64_t{d.dim_minus_one[i]} + d.upper[i - 1];
        if (pixel[i] <= upper) break;
        pixel[i] = d.lower[i - 1];
      }
      if (i > spatial) pixel[rank - 1] += d.element_stride[rank - 1];
    }
  } else {
    // the box: ceil(boxDim[i] / elementStrides[i]) elements per dimension, dimension 0
    // innermost (its stride counts only in an interleaved layout)
    unsigned count[5] = {1, 1, 1, 1, 1}, step[5] = {1, 1, 1, 1, 1};
    for (unsigned i = 0; i < rank; ++i) {
      step[i] = i == 0 && d.interleave == 0 ? 1 : d.element_stride[i];
      count[i] = (d.box[i] + step[i] - 1) / step[i];
    }
    unsigned j[5] = {};
    for (;;) {
      std::int64_t c[5];
      for (unsigned i = 0; i < rank; ++i) c[i] = coord[i] + std::int64_t{j[i]} * step[i];
      add(c);
      unsigned i = 0;
      while (i < rank && ++j[i] == count[i]) j[i++] = 0;
      if (i == rank) break;
    }
  }
  const std::uint64_t elements = box_elements.size();
  const std::uint64_t bytes = elements * es;
  const std::uint64_t smem = address(t, in.ops[store ? 1 : 0]);
  if (smem % 128 != 0) {
    fault(Fault::misaligned, "cp.async.bulk.tensor with shared memory at " + hex(smem) +
                                 ", which is not 128-byte aligned");
  }
  const std::uint64_t rank_bits = smem & ~((1ull << kClusterRankShift) - 1);
  const std::uint64_t base = smem & ((1ull << kClusterRankShift) - 1);

  // The CTAs a load writes: the one the address names, or each of ctaMask.
  std::uint64_t targets = 0;
  if (!store && (in.flags & kMulticast)) {
    targets = read(t, in.ops[3]) & 0xffff;
    if ((targets >> g_.cluster_size) != 0) {
      fault(Fault::illegal_address,
            "cp.async.bulk.tensor.multicast::cluster with ctaMask " + hex(targets) +
                ", which names CTAs outside the cluster of " + std::to_string(g_.cluster_size));
    }
  }
  const auto shared_at = [&](std::uint64_t rank_prefix, std::uint64_t offset) {
    return resolve(t, Space::shared, rank_prefix | swizzled(base + offset, d.swizzle), es, !store);
  };
  const std::uint64_t nan = oob_nan(d.data_type);
  const bool fill_nan = d.oob_fill != 0;
  std::vector<unsigned char> box;  // a load's bytes, then written to every target
  if (!store) box.resize(bytes);
  for (std::uint64_t index = 0; index < elements; ++index) {
    const auto [g, inside] = box_elements[index];
    if (store) {
      if (inside) {
        if (!in_global(g, es, true)) bad_address(g, es, true, "global (tensor map)");
        if (reduce) {
          read_modify_write(reinterpret_cast<unsigned char*>(g), es, in.sub, reduce_type,
                            reduce_ftz, load_bits(shared_at(rank_bits, index * es), es), 0);
        } else {
          std::memcpy(reinterpret_cast<void*>(g), shared_at(rank_bits, index * es), es);
        }
      }
    } else if (inside) {
      if (!in_global(g, es)) bad_address(g, es, false, "global (tensor map)");
      std::memcpy(&box[index * es], reinterpret_cast<const void*>(g), es);
    } else {
      const std::uint64_t fill = fill_nan ? nan : 0;
      std::memcpy(&box[index * es], &fill, es);
    }
  }
  if (store) return;
  const std::uint64_t bar = address(t, in.ops[2]);
  const std::uint64_t offset_mask = (1ull << kClusterRankShift) - 1;
  for (std::uint64_t ranks = targets != 0 ? targets : 1; ranks != 0; ranks &= ranks - 1) {
    std::uint64_t prefix = rank_bits, at = bar;
    if (targets != 0) {
      const std::uint64_t r = static_cast<std::uint64_t>(std::countr_zero(ranks)) + 1;
      prefix = r << kClusterRankShift;
      at = prefix | (bar & offset_mask);
    }
    unsigned char* obj = mbarrier_object(t, Space::shared, at, "cp.async.bulk.tensor");
    for (std::uint64_t k = 0; k < elements; ++k) {
      std::memcpy(shared_at(prefix, k * es), &box[k * es], es);
    }
    mbarrier_update(obj, 0, -static_cast<std::int64_t>(bytes));
  }
}

}  // namespace swcu::ptx::detail
