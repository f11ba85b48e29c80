// Memory accesses (exec_machine.hpp): generic addresses resolved to their space's window, every
// access checked against the launch's memory map (a fault names the address and the nearest
// allocation), loads, stores and atomics.
#include <algorithm>
#include <cstdio>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

std::string Machine::hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

[[noreturn]] void Machine::bad_address(std::uint64_t addr, unsigned size, bool write,
                                       const char* space) {
  if (write && in_global(addr, size)) {  // in the map, but not writable
    fault(Fault::illegal_address, "illegal address: store of " + std::to_string(size) +
                                      " bytes at " + hex(addr) + " (" + space +
                                      "); the device may only read this memory");
  }
  std::string near = "no allocation";
  if (!l_.memory.empty()) {
    auto it = std::upper_bound(l_.memory.begin(), l_.memory.end(), addr,
                               [](std::uint64_t a, const MemoryRange& r) { return a < r.base; });
    const MemoryRange* best = nullptr;
    std::uint64_t dist = UINT64_MAX;
    if (it != l_.memory.end()) {
      best = &*it;
      dist = it->base - addr;
    }
    if (it != l_.memory.begin()) {
      const MemoryRange& r = *(it - 1);
      if (addr >= r.end && addr - r.end < dist) best = &r;
    }
    if (best != nullptr) {
      near = "nearest allocation " + hex(best->base) + " (" +
             std::to_string(best->end - best->base) + " bytes)";
    }
  }
  fault(Fault::illegal_address, std::string("illegal address: ") + (write ? "store" : "load") +
                                    " of " + std::to_string(size) + " bytes at " + hex(addr) +
                                    " (" + space + "); " + near);
}

bool Machine::in_global(std::uint64_t a, unsigned size, bool write) {
  if (cache_.base <= a && a + size <= cache_.end && a + size >= a) {
    return !(write && cache_.read_only);
  }
  auto it = std::upper_bound(l_.memory.begin(), l_.memory.end(), a,
                             [](std::uint64_t x, const MemoryRange& r) { return x < r.base; });
  if (it == l_.memory.begin()) return false;
  --it;
  if (a + size > it->end || a + size < a) return false;
  cache_ = *it;
  return !(write && cache_.read_only);
}

// The host address of an access of `size` bytes at `addr` in `space`.
unsigned char* Machine::resolve(Thread& t, Space space, std::uint64_t addr, unsigned size,
                                bool write) {
  if (size > 1 && (addr % std::min(size, 16u)) != 0) {
    fault(Fault::misaligned, "misaligned address " + hex(addr) + " for an access of " +
                                 std::to_string(size) + " bytes");
  }
  switch (space) {
    case Space::generic:
      if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize) {
        return resolve(t, Space::shared, addr - kSharedWindow, size, write);
      }
      if (addr >= kLocalWindow && addr < kLocalWindow + kWindowSize) {
        return resolve(t, Space::local, addr - kLocalWindow, size, write);
      }
      if (addr >= kParamWindow && addr < kParamWindow + kWindowSize) {
        return resolve(t, Space::param, addr - kParamWindow, size, write);
      }
      [[fallthrough]];
    case Space::global:
    case Space::constant:
      if (!in_global(addr, size, write)) bad_address(addr, size, write, "global");
      return reinterpret_cast<unsigned char*>(addr);
    case Space::shared:
      if (addr + size > shared_size_ || addr + size < addr) {
        bad_address(addr, size, write,
                    ("shared; the CTA has " + std::to_string(shared_size_) + " bytes").c_str());
      }
      return shared_.data() + addr;
    case Space::local:
      if (addr + size > t.local.size() || addr + size < addr) {
        bad_address(addr, size, write, "local");
      }
      return t.local.data() + addr;
    case Space::param:
      if (addr & kKernelParamTag) {
        const std::uint64_t off = addr & ~kKernelParamTag;
        if (write || off + size > l_.params.size())
          bad_address(addr, size, write, "kernel parameter");
        return l_.params.data() + off;
      }
      if (addr + size > t.params.size()) bad_address(addr, size, write, "parameter");
      return t.params.data() + addr;
    case Space::reg: break;
  }
  bad_address(addr, size, write, "unknown space");
}

unsigned Machine::elem_size(const Inst& in) const {
  const unsigned s = type_size(in.type);
  return s == 0 ? 4 : s;
}

void Machine::load(Thread& t, const Inst& in) {
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, in.ops[1]);
  const unsigned total = es * in.vec;
  const unsigned char* p = resolve(t, in.space, a, total, false);
  const Operand& d = in.ops[0];
  if (d.kind == Operand::Kind::vec) {
    for (unsigned e = 0; e < d.count; ++e) {
      const std::uint32_t r = p_.vec_regs[d.reg + e];
      if (r == UINT32_MAX) continue;
      t.rf[r] = normalize(in.type, load_bits(p + e * es, es));
    }
  } else if (es == 16) {
    // .b128 into a register pair is not a register form; keep the low half
    write(t, d, load_bits(p, 8));
  } else {
    write(t, d, normalize(in.type, load_bits(p, es)));
  }
}

void Machine::store(Thread& t, const Inst& in) {
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, in.ops[0]);
  const unsigned total = es * in.vec;
  unsigned char* p = resolve(t, in.space, a, total, true);
  const Operand& s = in.ops[1];
  if (s.kind == Operand::Kind::vec) {
    for (unsigned e = 0; e < s.count; ++e) {
      const std::uint32_t r = p_.vec_regs[s.reg + e];
      store_bits(p + e * es, es, r == UINT32_MAX ? 0 : t.rf[r]);
    }
  } else {
    store_bits(p, es, read(t, s));
  }
}

void Machine::atomic(Thread& t, const Inst& in) {
  const bool is_red = in.op == Op::red;
  const Operand& ao = in.ops[is_red ? 0 : 1];
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, ao);
  unsigned char* p = resolve(t, in.space, a, es, true);
  const std::uint64_t b = read(t, in.ops[is_red ? 1 : 2]);
  const std::uint64_t c = in.nops > (is_red ? 2 : 3) ? read(t, in.ops[is_red ? 2 : 3]) : 0;
  const std::uint64_t old = load_bits(p, es);
  std::uint64_t nv = old;
  const Type ty = in.type;
  const std::uint64_t m = es >= 8 ? ~0ull : (1ull << (8 * es)) - 1;
  switch (in.sub) {
    case Sub::a_add:
      if (is_float(ty)) {
        Inst add;
        add.op = Op::add;
        add.type = ty;
        add.round = Round::rn;
        // f32 adds to global memory flush subnormals unless .noftz (PTX ISA atom)
        if (ty == Type::f32 && in.space != Space::shared && !(in.flags & kNoFtz)) {
          add.flags |= kFtz;
        }
        std::uint64_t s[3] = {old, b, 0};
        bool carry = false, q = false;
        nv = compute(add, s, carry, q);
      } else {
        nv = old + b;
      }
      break;
    case Sub::a_min:
    case Sub::a_max: {
      const bool mx = in.sub == Sub::a_max;
      if (is_float(ty)) {
        Inst mm;
        mm.op = mx ? Op::max : Op::min;
        mm.type = ty;
        std::uint64_t s[3] = {old, b, 0};
        bool carry = false, q = false;
        nv = compute(mm, s, carry, q);
      } else if (is_signed(ty)) {
        const auto x = static_cast<std::int64_t>(normalize(ty, old));
        const auto y = static_cast<std::int64_t>(normalize(ty, b));
        nv = static_cast<std::uint64_t>(mx ? std::max(x, y) : std::min(x, y));
      } else {
        nv = mx ? std::max(old & m, b & m) : std::min(old & m, b & m);
      }
      break;
    }
    case Sub::a_inc: nv = (old & m) >= (b & m) ? 0 : old + 1; break;
    case Sub::a_dec: nv = ((old & m) == 0 || (old & m) > (b & m)) ? b : old - 1; break;
    case Sub::a_and: nv = old & b; break;
    case Sub::a_or: nv = old | b; break;
    case Sub::a_xor: nv = old ^ b; break;
    case Sub::a_exch: nv = b; break;
    case Sub::a_cas: nv = (old & m) == (b & m) ? c : old; break;
    default: fault(Fault::illegal_instruction, "unknown atomic operation");
  }
  store_bits(p, es, nv);
  if (!is_red) write(t, in.ops[0], normalize(ty, old));
}

// Bytes readable from generic address a to the end of its memory.
std::size_t Machine::available(Thread& t, std::uint64_t a) {
  if (a >= kLocalWindow && a < kLocalWindow + kWindowSize)
    return t.local.size() - (a - kLocalWindow);
  if (a >= kSharedWindow && a < kSharedWindow + kWindowSize)
    return shared_size_ - (a - kSharedWindow);
  if (a >= kParamWindow && a < kParamWindow + kWindowSize) {
    const std::uint64_t off = a - kParamWindow;
    if (off & kKernelParamTag) return l_.params.size() - (off & ~kKernelParamTag);
    return t.params.size() - off;
  }
  in_global(a, 1);
  return cache_.end - a;
}

}  // namespace swcu::ptx::detail
