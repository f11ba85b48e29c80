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
[[nodiscard]] std::uint64_t normalize(Type t, std::uint64_t v) noexcept;

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
