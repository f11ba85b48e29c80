// Memory accesses (exec_machine.hpp): generic addresses resolved to their space's window, every
// access checked against the launch's memory map (a fault names the address and the nearest
// allocation), loads, stores and atomics.
#include <algorithm>
#include <bit>
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

const MemoryRange* Machine::find_global(std::uint64_t a, unsigned size) {
  const std::uint64_t last = a + size;
  if (last < a) return nullptr;
  if (cache_.base <= a && last <= cache_.end) return &cache_;
  if (heap_cache_.base <= a && last <= heap_cache_.end &&
      heap_cache_generation_ == g_.heap_generation.load(std::memory_order_acquire)) {
    return &heap_cache_;
  }
  const auto below = [](std::uint64_t x, const MemoryRange& r) { return x < r.base; };
  auto it = std::upper_bound(l_.memory.begin(), l_.memory.end(), a, below);
  if (it != l_.memory.begin() && last <= (it - 1)->end) {
    cache_ = *(it - 1);
    return &cache_;
  }
  if (g_.heap_blocks.load(std::memory_order_acquire) == 0) return nullptr;
  const std::lock_guard lock(g_.services);
  it = std::upper_bound(g_.heap.begin(), g_.heap.end(), a, below);
  if (it == g_.heap.begin() || last > (it - 1)->end) return nullptr;
  heap_cache_ = *(it - 1);
  heap_cache_generation_ = g_.heap_generation.load(std::memory_order_relaxed);
  return &heap_cache_;
}

bool Machine::in_global(std::uint64_t a, unsigned size, bool write) {
  const MemoryRange* r = find_global(a, size);
  return r != nullptr && !(write && r->read_only);
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
    case Space::shared: {
      Cta& owner = shared_owner(addr, size, write);
      return owner.shared.data() + addr;
    }
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

Cta& Machine::shared_owner(std::uint64_t& addr, unsigned size, bool write) {
  const std::uint64_t given = addr;
  Cta* owner = cta_;
  if (addr >> kClusterRankShift) {  // .shared::cluster: (rank + 1) << 24 | offset
    const std::uint64_t rank = (addr >> kClusterRankShift) - 1;
    if (rank >= g_.cluster_size) {
      bad_address(given, size, write,
                  ("shared::cluster; CTA rank " + std::to_string(rank) +
                   " is outside the cluster of " + std::to_string(g_.cluster_size) + " CTAs")
                      .c_str());
    }
    owner = cta_->cluster->ctas[rank];
    addr &= (1ull << kClusterRankShift) - 1;
  }
  if (addr + size > shared_size_ || addr + size < addr) {
    bad_address(given, size, write,
                ("shared; the CTA has " + std::to_string(shared_size_) + " bytes").c_str());
  }
  return *owner;
}

unsigned Machine::elem_size(const Inst& in) const {
  const unsigned s = type_size(in.type);
  return s == 0 ? 4 : s;
}

namespace {

// Global memory is shared by the workers: accesses of up to 8 bytes are host atomics (relaxed
// ones compile to plain moves), acquire loads and release stores where the PTX asks for them,
// so that a flag published with st.release (or a fence and a relaxed store) and read with
// ld.acquire (or a relaxed load and a fence) orders the data around it (PTX ISA memory
// consistency model; every scope is implemented as .sys).
template <class T>
std::uint64_t atomic_load(const unsigned char* p, bool acquire) {
  const auto* q = reinterpret_cast<const T*>(p);
  return acquire ? __atomic_load_n(q, __ATOMIC_ACQUIRE) : __atomic_load_n(q, __ATOMIC_RELAXED);
}
template <class T>
void atomic_store(unsigned char* p, std::uint64_t v, bool release) {
  auto* q = reinterpret_cast<T*>(p);
  if (release) {
    __atomic_store_n(q, static_cast<T>(v), __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(q, static_cast<T>(v), __ATOMIC_RELAXED);
  }
}

std::uint64_t load_global_bits(const unsigned char* p, unsigned size, bool acquire) {
  switch (size) {
    case 1: return atomic_load<std::uint8_t>(p, acquire);
    case 2: return atomic_load<std::uint16_t>(p, acquire);
    case 4: return atomic_load<std::uint32_t>(p, acquire);
    default: return atomic_load<std::uint64_t>(p, acquire);
  }
}

void store_global_bits(unsigned char* p, unsigned size, std::uint64_t v, bool release) {
  switch (size) {
    case 1: atomic_store<std::uint8_t>(p, v, release); break;
    case 2: atomic_store<std::uint16_t>(p, v, release); break;
    case 4: atomic_store<std::uint32_t>(p, v, release); break;
    default: atomic_store<std::uint64_t>(p, v, release); break;
  }
}

}  // namespace

void Machine::load(Thread& t, const Inst& in) {
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, in.ops[1]);
  const unsigned total = es * in.vec;
  const unsigned char* p = resolve(t, in.space, a, total, false);
  const bool global = shared_by_workers(in.space, a);
  const bool acquire = (in.flags & kAcquire) != 0;
  // Global elements of up to 8 bytes are single host accesses (aligned: resolve checked).
  const auto get = [&](const unsigned char* q, unsigned size) {
    if (global && size <= 8) return load_global_bits(q, size, acquire);
    return load_bits(q, size);
  };
  const Operand& d = in.ops[0];
  std::uint64_t first = 0;
  if (d.kind == Operand::Kind::vec) {
    for (unsigned e = 0; e < d.count; ++e) {
      const std::uint32_t r = p_.vec_regs[d.reg + e];
      const std::uint64_t v = get(p + e * es, es);
      if (e == 0) first = v;
      if (r == UINT32_MAX) continue;
      t.rf[r] = normalize(in.type, v);
    }
  } else if (es == 16) {
    // .b128 into a register pair is not a register form; keep the low half
    first = get(p, 8);
    write(t, d, first);
  } else {
    first = get(p, es);
    write(t, d, normalize(in.type, first));
  }
  if (in.space != Space::local && in.space != Space::param) note_poll(t, a, first);
}

void Machine::store(Thread& t, const Inst& in) {
  const unsigned es = elem_size(in);
  const std::uint64_t a = address(t, in.ops[0]);
  const unsigned total = es * in.vec;
  unsigned char* p = resolve(t, in.space, a, total, true);
  const bool global = shared_by_workers(in.space, a);
  const bool release = (in.flags & kRelease) != 0;
  const auto put = [&](unsigned char* q, unsigned size, std::uint64_t v) {
    if (global && size <= 8) {
      store_global_bits(q, size, v, release);
    } else {
      store_bits(q, size, v);
    }
  };
  const Operand& s = in.ops[1];
  if (s.kind == Operand::Kind::vec) {
    for (unsigned e = 0; e < s.count; ++e) {
      const std::uint32_t r = p_.vec_regs[s.reg + e];
      put(p + e * es, es, r == UINT32_MAX ? 0 : t.rf[r]);
    }
  } else if (es == 16) {
    put(p, 8, read(t, s));  // as for loads: the low half
  } else {
    put(p, es, read(t, s));
  }
}

bool Machine::polling(Thread* lanes, std::uint32_t active, const Inst& in) {
  if (active == 0) return false;
  const bool strong =
      in.op == Op::atom || (in.flags & (kVolatile | kRelaxed | kAcquire | kRelease)) != 0;
  const std::uint32_t enough = strong ? kStrongPolls : kWeakPolls;
  for (std::uint32_t m = active; m != 0; m &= m - 1) {
    if (lanes[std::countr_zero(m)].polls < enough) return false;
  }
  for (std::uint32_t m = active; m != 0; m &= m - 1) lanes[std::countr_zero(m)].polls = 0;
  return true;
}

// Bytes readable from generic address a to the end of its memory.
std::size_t Machine::available(Thread& t, std::uint64_t a) {
  if (a >= kLocalWindow && a < kLocalWindow + kWindowSize)
    return t.local.size() - (a - kLocalWindow);
  if (a >= kSharedWindow && a < kSharedWindow + kWindowSize) {
    const std::uint64_t off = (a - kSharedWindow) & ((1ull << kClusterRankShift) - 1);
    return off < shared_size_ ? shared_size_ - off : 0;
  }
  if (a >= kParamWindow && a < kParamWindow + kWindowSize) {
    const std::uint64_t off = a - kParamWindow;
    if (off & kKernelParamTag) return l_.params.size() - (off & ~kKernelParamTag);
    return t.params.size() - off;
  }
  const MemoryRange* r = find_global(a, 1);
  return r != nullptr ? r->end - a : 0;
}

}  // namespace swcu::ptx::detail
