// The value semantics of PTX's arithmetic, logic, comparison and conversion instructions, one
// thread at a time: registers are 64-bit slots holding a value's bits (narrower integers sign-
// or zero-extended as their type says, floats and halves in the low bits). The PTX ISA's
// definitions, including its edge cases (NaN, signed zeros, denormals with .ftz, saturation,
// shift amounts past the width, division by zero), are implemented here and nowhere else.
#pragma once

#include <cstdint>

#include "ptx/program.hpp"

namespace swcu::ptx {

/// The bits of `v` as a register of type `t` holds them: truncated to its width and sign- or
/// zero-extended to 64 bits.
[[nodiscard]] inline std::uint64_t normalize(Type t, std::uint64_t v) noexcept {
  switch (t) {
    case Type::pred: return v & 1;
    case Type::s8:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int8_t>(v)));
    case Type::s16:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(v)));
    case Type::s32:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
    case Type::u8:
    case Type::b8: return v & 0xff;
    case Type::u16:
    case Type::b16:
    case Type::f16:
    case Type::bf16: return v & 0xffff;
    case Type::u32:
    case Type::b32:
    case Type::f32:
    case Type::f16x2:
    case Type::bf16x2:
    case Type::tf32:
    case Type::u16x2:
    case Type::s16x2: return v & 0xffffffffu;
    default: return v;
  }
}

/// Whether `op` is computed by compute() (a pure function of its source values).
[[nodiscard]] bool is_alu(Op op) noexcept;

/// Computes the destination of an ALU instruction from its source values `s[0..5)`. `carry` is
/// the thread's carry flag (read by addc/subc/madc, written by .cc forms). `pred_out` receives
/// the second predicate of setp's `p|q` form.
[[nodiscard]] std::uint64_t compute(const Inst& in, const std::uint64_t* s, bool& carry,
                                    bool& pred_out) noexcept;

/// cvt from `from` to `to` with `in`'s rounding and saturation.
[[nodiscard]] std::uint64_t convert(const Inst& in, Type to, Type from, std::uint64_t v) noexcept;

/// The PTX float comparison `cmp` of two values of float type `t` (unordered forms included).
[[nodiscard]] bool compare(Cmp cmp, Type t, std::uint64_t a, std::uint64_t b, bool ftz) noexcept;

}  // namespace swcu::ptx
