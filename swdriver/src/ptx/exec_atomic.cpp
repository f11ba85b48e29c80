// Atomics and fences (exec_machine.hpp). Every atom and red is a host atomic read-modify-write
// of its bytes, so it is atomic across the launch's workers (PTX ISA "atom": atomic with respect
// to other atomics of its scope; every scope is implemented as .sys): integer add, exchange,
// compare-and-swap and the bitwise operations with the host's instructions, the rest (floating
// point add, min, max, inc, dec) as a compare-and-swap loop. They are sequentially consistent,
// which covers every .sem (relaxed, acquire, release, acq_rel). fence.sc and membar (which is
// fence.sc on sm_70 and later) are sequentially consistent host fences, other fences acq_rel.
#include <algorithm>
#include <atomic>
#include <bit>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {
namespace {

constexpr int kOrder = __ATOMIC_SEQ_CST;

// The read-modify-write of one T at p: the old value. `next` maps the old value to the new one.
template <class T, class Next>
std::uint64_t rmw(unsigned char* p, Sub sub, std::uint64_t b, std::uint64_t c, bool integer_add,
                  Next next) {
  T* const q = reinterpret_cast<T*>(p);
  const T bv = static_cast<T>(b);
  switch (sub) {
    case Sub::a_add:
      if (integer_add) return __atomic_fetch_add(q, bv, kOrder);
      break;
    case Sub::a_exch: return __atomic_exchange_n(q, bv, kOrder);
    case Sub::a_and: return __atomic_fetch_and(q, bv, kOrder);
    case Sub::a_or: return __atomic_fetch_or(q, bv, kOrder);
    case Sub::a_xor: return __atomic_fetch_xor(q, bv, kOrder);
    case Sub::a_cas: {
      T expected = bv;
      __atomic_compare_exchange_n(q, &expected, static_cast<T>(c), false, kOrder, kOrder);
      return expected;  // the old value, whether it matched or not
    }
    default: break;
  }
  T old = __atomic_load_n(q, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(q, &old, static_cast<T>(next(old)), true, kOrder,
                                      __ATOMIC_RELAXED)) {
  }
  return old;
}

}  // namespace

void Machine::atomic(Thread& t, const Inst& in) {
  const bool is_red = in.op != Op::atom;  // red, red.async
  const Operand& ao = in.ops[is_red ? 0 : 1];
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, ao);
  unsigned char* p = resolve(t, in.space, a, es, true);
  const std::uint64_t b = read(t, in.ops[is_red ? 1 : 2]);
  const std::uint64_t c = !is_red && in.nops > 3 ? read(t, in.ops[3]) : 0;  // atom.cas
  // f32 adds to global memory flush subnormals unless .noftz (PTX ISA atom)
  const bool ftz = in.type == Type::f32 && in.space != Space::shared && !(in.flags & kNoFtz);
  const std::uint64_t old = read_modify_write(p, es, in.sub, in.type, ftz, b, c);
  if (!is_red) {
    write(t, in.ops[0], normalize(in.type, old));
    note_poll(t, a, old);
  }
}

std::uint64_t Machine::read_modify_write(unsigned char* p, unsigned es, Sub sub, Type ty, bool ftz,
                                         std::uint64_t b, std::uint64_t c) {
  const std::uint64_t m = es >= 8 ? ~0ull : (1ull << (8 * es)) - 1;
  Inst alu;  // the floating-point operation of add, min and max
  alu.type = ty;
  switch (sub) {
    case Sub::a_add:
      alu.op = Op::add;
      alu.round = Round::rn;
      if (ftz) alu.flags |= kFtz;
      break;
    case Sub::a_min: alu.op = Op::min; break;
    case Sub::a_max: alu.op = Op::max; break;
    case Sub::a_inc:
    case Sub::a_dec:
    case Sub::a_and:
    case Sub::a_or:
    case Sub::a_xor:
    case Sub::a_exch:
    case Sub::a_cas: break;
    default: fault(Fault::illegal_instruction, "unknown atomic operation");
  }
  const auto next = [&](std::uint64_t old) -> std::uint64_t {
    switch (sub) {
      case Sub::a_add:
        if (is_float(ty)) {
          std::uint64_t s[3] = {old, b, 0};
          bool carry = false, q = false;
          return compute(alu, s, carry, q);
        }
        return old + b;
      case Sub::a_min:
      case Sub::a_max: {
        const bool mx = sub == Sub::a_max;
        if (is_float(ty)) {
          std::uint64_t s[3] = {old, b, 0};
          bool carry = false, q = false;
          return compute(alu, s, carry, q);
        }
        if (is_signed(ty)) {
          const auto x = static_cast<std::int64_t>(normalize(ty, old));
          const auto y = static_cast<std::int64_t>(normalize(ty, b));
          return static_cast<std::uint64_t>(mx ? std::max(x, y) : std::min(x, y));
        }
        return mx ? std::max(old & m, b & m) : std::min(old & m, b & m);
      }
      case Sub::a_inc: return (old & m) >= (b & m) ? 0 : old + 1;
      case Sub::a_dec: return ((old & m) == 0 || (old & m) > (b & m)) ? b : old - 1;
      case Sub::a_and: return old & b;
      case Sub::a_or: return old | b;
      case Sub::a_xor: return old ^ b;
      case Sub::a_exch: return b;
      default: return (old & m) == (b & m) ? c : old;  // cas
    }
  };
  const bool integer_add = !is_float(ty);
  const bool aligned = reinterpret_cast<std::uintptr_t>(p) % es == 0;
  if (aligned && es == 4) return rmw<std::uint32_t>(p, sub, b, c, integer_add, next);
  if (aligned && es == 8) return rmw<std::uint64_t>(p, sub, b, c, integer_add, next);
  if (aligned && es == 2) return rmw<std::uint16_t>(p, sub, b, c, integer_add, next);
  const std::lock_guard lock(g_.wide_atomics);
  const std::uint64_t old = load_bits(p, es);
  store_bits(p, es, next(old));
  return old;
}

void Machine::fence(const Inst& in) {
  if (in.op == Op::membar || (in.flags & kSeqCst) != 0) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_acq_rel);
  }
}

}  // namespace swcu::ptx::detail
