// The interpreter's execution loop (exec.hpp): CTAs, warps, lanes, memory and control flow.
// Arithmetic is in alu.cpp, printf formatting in printf.cpp.
#include "ptx/exec.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "ptx/alu.hpp"
#include "ptx/printf.hpp"

namespace swcu::ptx {
namespace {

constexpr std::uint32_t kMaxLocalPerThread = 1u << 20;  // local stack limit (frames)
constexpr std::uint32_t kMaxCallDepth = 4096;
constexpr int kSlice = 4096;  // instructions a warp runs before others get a turn

struct Frame {
  std::uint32_t func = 0;
  std::uint32_t ret_pc = 0;
  std::uint32_t reg_base = 0;
  std::uint32_t local_base = 0;
  std::uint32_t param_base = 0;
  std::uint32_t args = 0;  // index into Thread::addrs of the argument addresses
  std::uint32_t rets = 0;  // index into Thread::addrs of the return addresses
};

enum class TState : std::uint8_t { run, barrier, sync_wait, exited };

struct Thread {
  std::uint32_t pc = 0;
  TState state = TState::run;
  bool carry = false;
  std::uint32_t tid[3] = {};
  std::uint32_t lane = 0;
  std::uint32_t warp = 0;
  std::uint64_t* rf = nullptr;
  std::vector<std::uint64_t> regs;
  std::vector<Frame> frames;
  std::vector<unsigned char> local;
  std::vector<unsigned char> params;
  std::vector<std::uint64_t> addrs;
  // a pending bar.red: where its result goes
  std::uint32_t red_reg = UINT32_MAX;
  Type red_type = Type::u32;
};

struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t expected = 0;  // 0: every live thread
  std::uint32_t popc = 0;
  bool all = true;
  bool any = false;
  Sub red = Sub::none;
};

struct KernelFault {
  Fault fault;
  std::string what;
};

class Machine {
 public:
  explicit Machine(Launch& l) : l_(l), p_(*l.program), entry_(p_.functions[l.entry]) {
    nthreads_ = l.block[0] * l.block[1] * l.block[2];
    nwarps_ = (nthreads_ + 31) / 32;
    shared_size_ = p_.dynamic_shared_offset + l.dynamic_shared;
    if (l.dynamic_shared == 0) shared_size_ = std::max<std::size_t>(p_.static_shared, 0);
    shared_size_ = std::max(shared_size_, p_.static_shared);
    shared_.assign(shared_size_ + 16, 0);
    threads_.resize(nthreads_);
    start_ = std::chrono::steady_clock::now();
  }

  Outcome run() {
    try {
      for (unsigned z = 0; z < l_.grid[2]; ++z) {
        for (unsigned y = 0; y < l_.grid[1]; ++y) {
          for (unsigned x = 0; x < l_.grid[0]; ++x) {
            ctaid_[0] = x;
            ctaid_[1] = y;
            ctaid_[2] = z;
            run_cta();
          }
        }
      }
    } catch (const KernelFault& f) {
      return {f.fault, f.what};
    }
    return {};
  }

 private:
  // ---------------------------------------------------------------- CTA and warp scheduling

  void run_cta() {
    std::fill(shared_.begin(), shared_.end(), 0);
    for (std::uint32_t i = 0; i < nthreads_; ++i) {
      Thread& t = threads_[i];
      t.tid[0] = i % l_.block[0];
      t.tid[1] = (i / l_.block[0]) % l_.block[1];
      t.tid[2] = i / (l_.block[0] * l_.block[1]);
      t.lane = i % 32;
      t.warp = i / 32;
      t.pc = entry_.begin;
      t.state = TState::run;
      t.carry = false;
      t.frames.clear();
      Frame f;
      f.func = l_.entry;
      t.frames.push_back(f);
      t.regs.assign(std::max<std::uint32_t>(entry_.regs, 1), 0);
      t.rf = t.regs.data();
      t.local.assign(entry_.local_bytes, 0);
      t.params.assign(entry_.param_bytes, 0);
      t.addrs.clear();
    }
    live_ = nthreads_;
    for (Barrier& b : barriers_) b = Barrier{};
    while (live_ > 0) {
      bool progress = false;
      for (std::uint32_t w = 0; w < nwarps_; ++w) {
        if (run_warp(w)) progress = true;
      }
      if (!progress && live_ > 0) deadlock();
    }
    ++cta_count_;
  }

  [[noreturn]] void deadlock() {
    std::string where;
    for (std::uint32_t i = 0; i < nthreads_; ++i) {
      const Thread& t = threads_[i];
      if (t.state == TState::exited) continue;
      where =
          std::string(t.state == TState::barrier ? "at a CTA barrier" : "at a warp collective") +
          " on PTX line " + std::to_string(p_.code[t.pc].line);
      cur_ = &threads_[i];
      break;
    }
    fault(Fault::deadlock, "barrier deadlock: threads wait " + where +
                               " that the other threads can never reach (they exited or wait "
                               "elsewhere)");
  }

  std::uint32_t lanes_of(std::uint32_t w) const {
    const std::uint32_t first = w * 32;
    return std::min<std::uint32_t>(32, nthreads_ - first);
  }

  // Runs warp w for up to a slice; true when it executed anything.
  bool run_warp(std::uint32_t w) {
    Thread* const lanes = &threads_[w * 32];
    const std::uint32_t n = lanes_of(w);
    bool any = false;
    int steps = 0;
    // A warp that used its whole slice may be spinning on one of its own lanes: its next slice
    // starts with the lanes at the highest pc, so that every lane makes progress (independent
    // thread scheduling).
    bool highest = slice_used_[w];
    slice_used_[w] = false;
    while (steps < kSlice) {
      // The group: running lanes at the lowest pc, with lanes waiting at a collective there.
      std::uint32_t pc = highest ? 0 : UINT32_MAX, group = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        if (lanes[i].state != TState::run) continue;
        if (highest ? lanes[i].pc > pc : lanes[i].pc < pc) {
          pc = lanes[i].pc;
          group = 1u << i;
        } else if (lanes[i].pc == pc) {
          group |= 1u << i;
        }
      }
      if (group == 0) return any;
      std::uint32_t other = UINT32_MAX;  // lowest pc of the other running lanes above pc
      for (std::uint32_t i = 0; i < n; ++i) {
        if (lanes[i].state == TState::sync_wait && lanes[i].pc == pc) group |= 1u << i;
        if (lanes[i].state == TState::run && lanes[i].pc > pc) other = std::min(other, lanes[i].pc);
      }
      if (highest && steps >= kSlice / 8) highest = false;
      // Straight-line code keeps the group together without rescanning.
      for (;;) {
        ++steps;
        any = true;
        if (++instructions_ % 65536 == 0) check_timeout();
        const Step s = step(lanes, group, pc, w);
        if (steps >= kSlice) slice_used_[w] = true;
        if (s == Step::rescan || steps >= kSlice) break;
        if (s == Step::yield) return true;
        ++pc;
        if (pc >= other) break;
      }
    }
    return any;
  }

  enum class Step { next, rescan, yield };

  void check_timeout() {
    if (l_.timeout_seconds <= 0) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s > l_.timeout_seconds) {
      fault(Fault::timeout, "the kernel ran longer than SWCUDA_KERNEL_TIMEOUT (" +
                                std::to_string(l_.timeout_seconds) + " s)");
    }
  }

  // ---------------------------------------------------------------- faults

  [[noreturn]] void fault(Fault f, const std::string& what) {
    std::string msg = "kernel " + p_.functions[l_.entry].name;
    if (cur_ != nullptr) {
      msg += ", PTX line " +
             std::to_string(p_.code[std::min<std::size_t>(cur_->pc, p_.code.size() - 1)].line) +
             ", block (" + std::to_string(ctaid_[0]) + "," + std::to_string(ctaid_[1]) + "," +
             std::to_string(ctaid_[2]) + "), thread (" + std::to_string(cur_->tid[0]) + "," +
             std::to_string(cur_->tid[1]) + "," + std::to_string(cur_->tid[2]) + ")";
    }
    throw KernelFault{f, msg + ": " + what};
  }

  static std::string hex(std::uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
  }

  [[noreturn]] void bad_address(std::uint64_t addr, unsigned size, bool write, const char* space) {
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

  // ---------------------------------------------------------------- memory

  bool in_global(std::uint64_t a, unsigned size) {
    if (cache_.base <= a && a + size <= cache_.end && a + size >= a) return true;
    auto it = std::upper_bound(l_.memory.begin(), l_.memory.end(), a,
                               [](std::uint64_t x, const MemoryRange& r) { return x < r.base; });
    if (it == l_.memory.begin()) return false;
    --it;
    if (a + size > it->end || a + size < a) return false;
    cache_ = *it;
    return true;
  }

  // The host address of an access of `size` bytes at `addr` in `space`.
  unsigned char* resolve(Thread& t, Space space, std::uint64_t addr, unsigned size, bool write) {
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
        if (!in_global(addr, size)) bad_address(addr, size, write, "global");
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

  static std::uint64_t load_bits(const unsigned char* p, unsigned size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, std::min(size, 8u));
    return v;
  }
  static void store_bits(unsigned char* p, unsigned size, std::uint64_t v) {
    std::memcpy(p, &v, std::min(size, 8u));
  }

  // ---------------------------------------------------------------- operands

  std::uint64_t symbol_value(const Thread& t, SymKind k, std::uint64_t sym) const {
    const Frame& f = t.frames.back();
    switch (k) {
      case SymKind::global: return l_.globals[sym];
      case SymKind::shared: return sym;
      case SymKind::local: return f.local_base + sym;
      case SymKind::kernel_param: return kKernelParamTag | sym;
      case SymKind::func_param: return t.addrs[f.args + sym];
      case SymKind::func_ret: return t.addrs[f.rets + sym];
      case SymKind::call_param: return f.param_base + sym;
      case SymKind::function: return function_address(static_cast<std::uint32_t>(sym));
    }
    return 0;
  }

  std::uint64_t sreg(const Thread& t, const Operand& o) {
    switch (static_cast<SReg>(o.reg)) {
      case SReg::tid_x: return t.tid[0];
      case SReg::tid_y: return t.tid[1];
      case SReg::tid_z: return t.tid[2];
      case SReg::ntid_x: return l_.block[0];
      case SReg::ntid_y: return l_.block[1];
      case SReg::ntid_z: return l_.block[2];
      case SReg::ctaid_x: return ctaid_[0];
      case SReg::ctaid_y: return ctaid_[1];
      case SReg::ctaid_z: return ctaid_[2];
      case SReg::nctaid_x: return l_.grid[0];
      case SReg::nctaid_y: return l_.grid[1];
      case SReg::nctaid_z: return l_.grid[2];
      case SReg::laneid: return t.lane;
      case SReg::warpid: return t.warp;
      case SReg::nwarpid: return 64;
      case SReg::smid: return cta_count_ % std::max(1u, l_.sm_count);
      case SReg::nsmid: return l_.sm_count;
      case SReg::gridid: return l_.grid_id;
      case SReg::lanemask_eq: return 1ull << t.lane;
      case SReg::lanemask_le: return (2ull << t.lane) - 1;
      case SReg::lanemask_lt: return (1ull << t.lane) - 1;
      case SReg::lanemask_ge: return (~((1ull << t.lane) - 1)) & 0xffffffffu;
      case SReg::lanemask_gt: return (~((2ull << t.lane) - 1)) & 0xffffffffu;
      case SReg::clock: return instructions_ & 0xffffffffu;
      case SReg::clock_hi: return instructions_ >> 32;
      case SReg::clock64: return instructions_;
      case SReg::globaltimer:
      case SReg::globaltimer_lo:
      case SReg::globaltimer_hi: {
        const auto ns =
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now().time_since_epoch())
                                           .count());
        if (static_cast<SReg>(o.reg) == SReg::globaltimer_lo) return ns & 0xffffffffu;
        if (static_cast<SReg>(o.reg) == SReg::globaltimer_hi) return ns >> 32;
        return ns;
      }
      case SReg::dynamic_smem_size: return l_.dynamic_shared;
      case SReg::total_smem_size: return shared_size_;
      case SReg::envreg: return 0;
      case SReg::cluster_ctarank: return 0;
      case SReg::cluster_nctarank: return 1;
      case SReg::is_explicit_cluster: return 0;
      case SReg::cluster_ctaid_x:
      case SReg::cluster_ctaid_y:
      case SReg::cluster_ctaid_z: return 0;
      case SReg::cluster_nctaid_x:
      case SReg::cluster_nctaid_y:
      case SReg::cluster_nctaid_z: return 1;
      case SReg::clusterid_x: return ctaid_[0];
      case SReg::clusterid_y: return ctaid_[1];
      case SReg::clusterid_z: return ctaid_[2];
      case SReg::nclusterid_x: return l_.grid[0];
      case SReg::nclusterid_y: return l_.grid[1];
      case SReg::nclusterid_z: return l_.grid[2];
      case SReg::pm: return 0;
    }
    return 0;
  }

  std::uint64_t read(Thread& t, const Operand& o) {
    switch (o.kind) {
      case Operand::Kind::reg: {
        const std::uint64_t v = t.rf[o.reg];
        return o.neg ? (~v & 1) : v;
      }
      case Operand::Kind::imm: return static_cast<std::uint64_t>(o.imm);
      case Operand::Kind::sreg: return sreg(t, o);
      case Operand::Kind::sym:
        return symbol_value(t, o.sym_kind, o.sym) + static_cast<std::uint64_t>(o.imm);
      default: return 0;
    }
  }

  void write(Thread& t, const Operand& o, std::uint64_t v) {
    if (o.kind == Operand::Kind::reg) t.rf[o.reg] = v;
  }

  std::uint64_t address(Thread& t, const Operand& o) {
    std::uint64_t a = static_cast<std::uint64_t>(o.imm);
    if (o.has_reg) a += t.rf[o.reg];
    if (o.has_sym) a += symbol_value(t, o.sym_kind, o.sym);
    return a;
  }

  // ---------------------------------------------------------------- one instruction

  static Type dest_type(const Inst& in) {
    switch (in.op) {
      case Op::setp: return Type::pred;
      case Op::popc:
      case Op::clz:
      case Op::bfind: return Type::u32;
      case Op::testp: return Type::pred;
      case Op::mul:
      case Op::mad:
        if (in.flags & kWide) {
          switch (in.type) {
            case Type::s16: return Type::s32;
            case Type::u16: return Type::u32;
            case Type::s32: return Type::s64;
            case Type::u32: return Type::u64;
            default: return in.type;
          }
        }
        return in.type;
      case Op::dp4a:
      case Op::dp2a: return Type::b32;
      default: return in.type;
    }
  }

  Step step(Thread* lanes, std::uint32_t group, std::uint32_t pc, std::uint32_t w) {
    const Inst& in = p_.code[pc];
    std::uint32_t active = group;
    if (in.guarded) {
      active = 0;
      for (std::uint32_t m = group; m != 0; m &= m - 1) {
        const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
        const bool g = (lanes[i].rf[in.guard] & 1) != 0;
        if (g != in.guard_neg) active |= 1u << i;
      }
    }
    const auto each = [&](std::uint32_t mask, auto&& f) {
      for (std::uint32_t m = mask; m != 0; m &= m - 1) {
        Thread& t = lanes[std::countr_zero(m)];
        cur_ = &t;
        f(t);
      }
    };
    const auto advance = [&] {
      for (std::uint32_t m = group; m != 0; m &= m - 1) {
        Thread& t = lanes[std::countr_zero(m)];
        t.pc = pc + 1;
        t.state = TState::run;
      }
    };
    if (is_alu(in.op)) {
      const Type dt = dest_type(in);
      const int nsrc = in.nops - 1;
      each(active, [&](Thread& t) {
        std::uint64_t s[5] = {0, 0, 0, 0, 0};
        for (int k = 0; k < nsrc && k < 5; ++k) s[k] = read(t, in.ops[k + 1]);
        bool q = false;
        const std::uint64_t v = compute(in, s, t.carry, q);
        write(t, in.ops[0], normalize(dt, v));
        if (in.out2.kind == Operand::Kind::reg) t.rf[in.out2.reg] = q ? 1 : 0;
      });
      advance();
      return Step::next;
    }
    switch (in.op) {
      case Op::mov: each(active, [&](Thread& t) { mov(t, in); }); break;
      case Op::cvta:
        each(active, [&](Thread& t) {
          std::uint64_t a = read(t, in.ops[1]);
          std::uint64_t base = 0;
          switch (in.space) {
            case Space::shared: base = kSharedWindow; break;
            case Space::local: base = kLocalWindow; break;
            case Space::param: base = kParamWindow; break;
            default: break;
          }
          if (in.flags & kTo) {
            a = a - base;
          } else if (base != 0) {
            a = a + base;
          }
          write(t, in.ops[0], normalize(in.type, a));
        });
        break;
      case Op::isspacep:
        each(active, [&](Thread& t) {
          const std::uint64_t a = read(t, in.ops[1]);
          const bool sh = a >= kSharedWindow && a < kSharedWindow + kWindowSize;
          const bool lo = a >= kLocalWindow && a < kLocalWindow + kWindowSize;
          const bool pa = a >= kParamWindow && a < kParamWindow + kWindowSize;
          bool r = false;
          switch (in.space) {
            case Space::shared: r = sh; break;
            case Space::local: r = lo; break;
            case Space::param: r = pa; break;
            default: r = !sh && !lo && !pa; break;
          }
          write(t, in.ops[0], r ? 1 : 0);
        });
        break;
      case Op::ld:
      case Op::ldu: each(active, [&](Thread& t) { load(t, in); }); break;
      case Op::st: each(active, [&](Thread& t) { store(t, in); }); break;
      case Op::atom:
      case Op::red: each(active, [&](Thread& t) { atomic(t, in); }); break;
      case Op::prefetch:
      case Op::fence:
      case Op::membar:
      case Op::pmevent:
      case Op::nop:
      case Op::griddepcontrol: break;
      case Op::nanosleep: advance(); return Step::yield;
      case Op::bra:
        for (std::uint32_t m = group; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          lanes[i].pc = (active >> i) & 1 ? in.ops[0].reg : pc + 1;
        }
        return Step::rescan;
      case Op::brx:
        for (std::uint32_t m = group; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          Thread& t = lanes[i];
          cur_ = &t;
          if ((active >> i) & 1) {
            const auto& table = p_.branch_tables[in.ops[1].reg];
            const std::uint64_t k = read(t, in.ops[0]) & 0xffffffffu;
            if (k >= table.size()) {
              fault(Fault::illegal_instruction, "brx.idx index " + std::to_string(k) +
                                                    " is outside its table of " +
                                                    std::to_string(table.size()) + " targets");
            }
            t.pc = table[k];
          } else {
            t.pc = pc + 1;
          }
        }
        return Step::rescan;
      case Op::call:
        for (std::uint32_t m = group; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          Thread& t = lanes[i];
          cur_ = &t;
          t.pc = pc + 1;
          if ((active >> i) & 1) call(t, in, pc);
        }
        return Step::rescan;
      case Op::ret:
        for (std::uint32_t m = group; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          Thread& t = lanes[i];
          if ((active >> i) & 1) {
            ret(t);
          } else {
            t.pc = pc + 1;
          }
        }
        return Step::rescan;
      case Op::exit:
        for (std::uint32_t m = group; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          if ((active >> i) & 1) {
            exit_thread(lanes[i]);
          } else {
            lanes[i].pc = pc + 1;
          }
        }
        return Step::rescan;
      case Op::trap:
        if (active != 0) {
          cur_ = &lanes[std::countr_zero(active)];
          fault(Fault::trap, "trap");
        }
        break;
      case Op::brkpt:
        if (active != 0) {
          cur_ = &lanes[std::countr_zero(active)];
          fault(Fault::trap, "brkpt (a breakpoint without a debugger)");
        }
        break;
      case Op::bar_sync:
      case Op::bar_red:
      case Op::bar_arrive: return cta_barrier(lanes, group, active, in, pc);
      case Op::bar_warp_sync:
      case Op::shfl:
      case Op::vote:
      case Op::match:
      case Op::redux:
      case Op::elect: return warp_collective(lanes, group, active, in, pc, w);
      case Op::activemask: each(active, [&](Thread& t) { write(t, in.ops[0], group); }); break;
      case Op::unsupported:
        if (active != 0) {
          cur_ = &lanes[std::countr_zero(active)];
          fault(Fault::illegal_instruction,
                "the software driver does not run " + p_.names[in.name] + " yet");
        }
        break;
      default:
        if (active != 0) {
          cur_ = &lanes[std::countr_zero(active)];
          fault(Fault::illegal_instruction, "instruction not implemented");
        }
        break;
    }
    advance();
    return Step::next;
  }

  void mov(Thread& t, const Inst& in) {
    const Operand& d = in.ops[0];
    const Operand& s = in.ops[1];
    const unsigned size = type_size(in.type);
    if (d.kind == Operand::Kind::vec) {  // unpack
      const std::uint64_t v = read(t, s);
      const unsigned es = size / d.count;
      for (unsigned e = 0; e < d.count; ++e) {
        const std::uint32_t r = p_.vec_regs[d.reg + e];
        if (r == UINT32_MAX) continue;
        t.rf[r] = (v >> (8 * es * e)) & (es >= 8 ? ~0ull : (1ull << (8 * es)) - 1);
      }
      return;
    }
    if (s.kind == Operand::Kind::vec) {  // pack
      const unsigned es = size / s.count;
      std::uint64_t v = 0;
      for (unsigned e = 0; e < s.count; ++e) {
        const std::uint32_t r = p_.vec_regs[s.reg + e];
        const std::uint64_t x = r == UINT32_MAX ? 0 : t.rf[r];
        v |= (x & (es >= 8 ? ~0ull : (1ull << (8 * es)) - 1)) << (8 * es * e);
      }
      write(t, d, v);
      return;
    }
    write(t, d, normalize(in.type, read(t, s)));
  }

  unsigned elem_size(const Inst& in) const {
    const unsigned s = type_size(in.type);
    return s == 0 ? 4 : s;
  }

  void load(Thread& t, const Inst& in) {
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

  void store(Thread& t, const Inst& in) {
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

  void atomic(Thread& t, const Inst& in) {
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

  // ---------------------------------------------------------------- calls

  void call(Thread& t, const Inst& in, std::uint32_t pc) {
    std::uint32_t fi;
    if (in.ops[0].kind == Operand::Kind::reg) {
      const std::uint64_t a = t.rf[in.ops[0].reg];
      if (a < kFunctionBase || (a - kFunctionBase) % 16 != 0 ||
          (a - kFunctionBase) / 16 >= p_.functions.size()) {
        fault(Fault::illegal_instruction,
              "indirect call through " + hex(a) + ", not a function address");
      }
      fi = static_cast<std::uint32_t>((a - kFunctionBase) / 16);
    } else {
      fi = static_cast<std::uint32_t>(in.ops[0].sym);
    }
    const Function& callee = p_.functions[fi];
    const Frame& cf = t.frames.back();
    const Operand& rets = in.ops[1];
    const Operand& args = in.ops[2];
    if (!callee.defined) {
      builtin(t, callee, cf, rets, args);
      return;
    }
    if (t.frames.size() >= kMaxCallDepth) {
      fault(Fault::stack_overflow,
            "call depth over " + std::to_string(kMaxCallDepth) + " calling " + callee.name);
    }
    const Function& caller = p_.functions[cf.func];
    Frame nf;
    nf.func = fi;
    nf.ret_pc = pc + 1;
    nf.reg_base = cf.reg_base + caller.regs;
    nf.local_base = cf.local_base + caller.local_bytes;
    nf.param_base = cf.param_base + caller.param_bytes;
    nf.args = static_cast<std::uint32_t>(t.addrs.size());
    for (unsigned k = 0; k < args.count; ++k)
      t.addrs.push_back(cf.param_base + p_.vec_regs[args.reg + k]);
    for (std::size_t k = args.count; k < callee.params.size(); ++k) t.addrs.push_back(0);
    nf.rets = static_cast<std::uint32_t>(t.addrs.size());
    for (unsigned k = 0; k < rets.count; ++k)
      t.addrs.push_back(cf.param_base + p_.vec_regs[rets.reg + k]);
    for (std::size_t k = rets.count; k < callee.rets.size(); ++k) t.addrs.push_back(0);
    const std::size_t regs_needed =
        static_cast<std::size_t>(nf.reg_base) + std::max(callee.regs, 1u);
    if (t.regs.size() < regs_needed) t.regs.resize(regs_needed);
    const std::size_t local_needed = static_cast<std::size_t>(nf.local_base) + callee.local_bytes;
    if (local_needed > kMaxLocalPerThread) {
      fault(Fault::stack_overflow, "local memory past " + std::to_string(kMaxLocalPerThread) +
                                       " bytes per thread calling " + callee.name);
    }
    if (t.local.size() < local_needed) t.local.resize(local_needed);
    const std::size_t params_needed = static_cast<std::size_t>(nf.param_base) + callee.param_bytes;
    if (t.params.size() < params_needed) t.params.resize(params_needed);
    t.frames.push_back(nf);
    t.rf = t.regs.data() + nf.reg_base;
    t.pc = callee.begin;
  }

  void ret(Thread& t) {
    if (t.frames.size() <= 1) {
      exit_thread(t);
      return;
    }
    const Frame f = t.frames.back();
    t.frames.pop_back();
    t.addrs.resize(f.args);
    t.pc = f.ret_pc;
    t.rf = t.regs.data() + t.frames.back().reg_base;
  }

  void exit_thread(Thread& t) {
    t.state = TState::exited;
    --live_;
    release_barriers();
  }

  // Reads a NUL-terminated string at a generic address.
  bool read_string(Thread& t, std::uint64_t a, std::string& out) {
    out.clear();
    for (std::size_t n = 0; n < 65536; ++n) {
      if (a == 0) return false;
      const unsigned char* p = resolve(t, Space::generic, a + n, 1, false);
      if (*p == 0) return true;
      out.push_back(static_cast<char>(*p));
    }
    return true;
  }

  std::uint64_t param_arg(Thread& t, const Frame& cf, const Operand& args, unsigned k,
                          unsigned size) {
    if (k >= args.count) return 0;
    const std::uint64_t a = cf.param_base + p_.vec_regs[args.reg + k];
    return load_bits(resolve(t, Space::param, a, size, false), size);
  }

  void set_ret(Thread& t, const Frame& cf, const Operand& rets, std::uint64_t v, unsigned size) {
    if (rets.count == 0) return;
    const std::uint64_t a = cf.param_base + p_.vec_regs[rets.reg];
    store_bits(resolve(t, Space::param, a, size, true), size, v);
  }

  void builtin(Thread& t, const Function& f, const Frame& cf, const Operand& rets,
               const Operand& args) {
    switch (f.builtin) {
      case Builtin::vprintf: {
        const std::uint64_t fmt = param_arg(t, cf, args, 0, 8);
        const std::uint64_t buf = param_arg(t, cf, args, 1, 8);
        std::string format;
        int parsed = -1;
        if (read_string(t, fmt, format)) {
          const unsigned char* data = nullptr;
          std::size_t avail = 0;
          if (buf != 0) {
            data = resolve(t, Space::generic, buf, 1, false);
            avail = available(t, buf);
          }
          const ReadString reader = [&](std::uint64_t a, std::string& out) {
            try {
              return read_string(t, a, out);
            } catch (const KernelFault&) {
              return false;
            }
          };
          const std::string text = format_printf(format, data, avail, reader, parsed);
          if (l_.print) l_.print(text);
        }
        set_ret(t, cf, rets, static_cast<std::uint32_t>(parsed), 4);
        return;
      }
      case Builtin::assertfail: {
        std::string expr, file, func;
        read_string(t, param_arg(t, cf, args, 0, 8), expr);
        read_string(t, param_arg(t, cf, args, 1, 8), file);
        const auto line = static_cast<std::uint32_t>(param_arg(t, cf, args, 2, 4));
        read_string(t, param_arg(t, cf, args, 3, 8), func);
        char buf[256];
        std::snprintf(buf, sizeof buf, ": block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `",
                      ctaid_[0], ctaid_[1], ctaid_[2], t.tid[0], t.tid[1], t.tid[2]);
        const std::string msg =
            file + ":" + std::to_string(line) + ": " + func + buf + expr + "` failed.\n";
        std::fputs(msg.c_str(), stderr);
        std::fflush(stderr);
        fault(Fault::assertion, "device-side assertion `" + expr + "` failed at " + file + ":" +
                                    std::to_string(line));
      }
      case Builtin::malloc: {
        const std::uint64_t size = param_arg(t, cf, args, 0, 8);
        std::uint64_t p = 0;
        if (l_.malloc) p = l_.malloc(size);
        if (p != 0) {
          MemoryRange r{p, p + std::max<std::uint64_t>(size, 1)};
          const auto it =
              std::upper_bound(l_.memory.begin(), l_.memory.end(), p,
                               [](std::uint64_t a, const MemoryRange& x) { return a < x.base; });
          l_.memory.insert(it, r);
          cache_ = {};
        }
        set_ret(t, cf, rets, p, 8);
        return;
      }
      case Builtin::free: {
        const std::uint64_t p = param_arg(t, cf, args, 0, 8);
        if (p != 0 && l_.free && l_.free(p)) {
          std::erase_if(l_.memory, [p](const MemoryRange& r) { return r.base == p; });
          cache_ = {};
        }
        return;
      }
      case Builtin::none:
        fault(Fault::illegal_instruction, "call to " + f.name + ", which no module defines");
    }
  }

  // Bytes readable from generic address a to the end of its memory.
  std::size_t available(Thread& t, std::uint64_t a) {
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

  // ---------------------------------------------------------------- CTA barriers

  Step cta_barrier(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                   std::uint32_t pc) {
    // bar.sync a{, b}; bar.arrive a, b; bar.red.op d, a{, b}, {!}c
    const bool red = in.op == Op::bar_red;
    const int first = red ? 1 : 0;
    const int args = in.nops - first - (red ? 1 : 0);
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
      Thread& t = lanes[i];
      cur_ = &t;
      if (!((active >> i) & 1)) {
        t.pc = pc + 1;
        continue;
      }
      const std::uint64_t id = read(t, in.ops[first]);
      if (id >= 16)
        fault(Fault::illegal_instruction, "barrier id " + std::to_string(id) + " is not 0..15");
      Barrier& b = barriers_[id];
      if (args >= 2) {
        const auto count = static_cast<std::uint32_t>(read(t, in.ops[first + 1]));
        if (count == 0 || count % 32 != 0) {
          fault(Fault::illegal_instruction, "barrier thread count " + std::to_string(count) +
                                                " is not a positive multiple of 32");
        }
        b.expected = count;
      }
      ++b.arrived;
      if (red) {
        const bool v = (read(t, in.ops[in.nops - 1]) & 1) != 0;
        b.red = in.sub;
        b.popc += v ? 1 : 0;
        b.all = b.all && v;
        b.any = b.any || v;
        t.red_reg = in.ops[0].kind == Operand::Kind::reg ? in.ops[0].reg : UINT32_MAX;
        t.red_type = in.type;
      } else {
        t.red_reg = UINT32_MAX;
      }
      if (in.op == Op::bar_arrive) {
        t.pc = pc + 1;
      } else {
        t.state = TState::barrier;
        t.red_type = in.type;
        bar_of_[&t - threads_.data()] = static_cast<std::uint8_t>(id);
      }
    }
    release_barriers();
    return Step::rescan;
  }

  // Releases every barrier whose expected threads have all arrived: the thread count it was
  // given, else every thread of the CTA that has not exited.
  void release_barriers() {
    for (std::uint32_t id = 0; id < 16; ++id) {
      Barrier& b = barriers_[id];
      if (b.arrived == 0) continue;
      const std::uint32_t expected = b.expected != 0 ? b.expected : live_;
      if (b.arrived < expected) continue;
      for (std::uint32_t i = 0; i < nthreads_; ++i) {
        Thread& t = threads_[i];
        if (t.state != TState::barrier || bar_of_[i] != id) continue;
        t.state = TState::run;
        ++t.pc;
        if (t.red_reg != UINT32_MAX) {
          std::uint64_t v = 0;
          switch (b.red) {
            case Sub::a_popc: v = b.popc; break;
            case Sub::a_and: v = b.all ? 1 : 0; break;
            default: v = b.any ? 1 : 0; break;
          }
          t.rf[t.red_reg] = v;
          t.red_reg = UINT32_MAX;
        }
      }
      b = Barrier{};
    }
  }

  // ---------------------------------------------------------------- warp collectives

  Step warp_collective(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                       std::uint32_t pc, std::uint32_t w) {
    const std::uint32_t n = lanes_of(w);
    std::uint32_t live = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (lanes[i].state != TState::exited) live |= 1u << i;
    }
    // The member mask operand (last).
    const Operand& mo = in.ops[in.nops - 1];
    std::uint32_t members = group;
    if (active != 0) {
      members = static_cast<std::uint32_t>(read(lanes[std::countr_zero(active)], mo));
    }
    if (in.op == Op::elect) {
      members = active != 0
                    ? static_cast<std::uint32_t>(read(lanes[std::countr_zero(active)], in.ops[1]))
                    : 0;
    }
    const std::uint32_t needed = members & live;
    if ((needed & ~group) != 0) {
      // Members are elsewhere: wait for them here.
      for (std::uint32_t m = group; m != 0; m &= m - 1)
        lanes[std::countr_zero(m)].state = TState::sync_wait;
      return Step::rescan;
    }
    const std::uint32_t part = active & members;  // lanes taking part
    std::uint64_t vals[32] = {};
    for (std::uint32_t m = part; m != 0; m &= m - 1) {
      const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
      if (in.op != Op::bar_warp_sync && in.op != Op::elect) vals[i] = read(lanes[i], in.ops[1]);
    }
    switch (in.op) {
      case Op::shfl:
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          Thread& t = lanes[i];
          const auto bval = static_cast<std::int32_t>(read(t, in.ops[2]) & 0x1f);
          const auto cval = static_cast<std::uint32_t>(read(t, in.ops[3]));
          const std::int32_t segmask = static_cast<std::int32_t>((cval >> 8) & 0x1f);
          const std::int32_t clamp = static_cast<std::int32_t>(cval & 0x1f);
          const std::int32_t lane = static_cast<std::int32_t>(i);
          const std::int32_t max_lane = (lane & segmask) | (clamp & ~segmask);
          const std::int32_t min_lane = lane & segmask;
          std::int32_t j = lane;
          bool ok = false;
          switch (in.sub) {
            case Sub::up:
              j = lane - bval;
              ok = j >= max_lane;
              break;
            case Sub::down:
              j = lane + bval;
              ok = j <= max_lane;
              break;
            case Sub::bfly:
              j = lane ^ bval;
              ok = j <= max_lane;
              break;
            default:
              j = min_lane | (bval & ~segmask);
              ok = j <= max_lane;
              break;
          }
          if (!ok || j < 0 || j > 31) j = lane;
          std::uint64_t v;
          if ((part >> j) & 1) {
            v = vals[j];
          } else if (static_cast<std::uint32_t>(j) < n) {
            v = read(lanes[j], in.ops[1]);  // not taking part: its register, deterministically
          } else {
            v = vals[i];
          }
          write(t, in.ops[0], normalize(in.type, v));
          if (in.out2.kind == Operand::Kind::reg) t.rf[in.out2.reg] = ok ? 1 : 0;
        }
        break;
      case Op::vote: {
        std::uint32_t ballot = 0;
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          if (vals[i] & 1) ballot |= 1u << i;
        }
        const bool all = (ballot & part) == part;
        const bool any = ballot != 0;
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          Thread& t = lanes[std::countr_zero(m)];
          std::uint64_t r = 0;
          switch (in.sub) {
            case Sub::all: r = all; break;
            case Sub::any: r = any; break;
            case Sub::uni: r = all || !any; break;
            default: r = ballot; break;
          }
          write(t, in.ops[0], r);
        }
        break;
      }
      case Op::match:
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          std::uint32_t same = 0;
          const std::uint64_t mask = type_size(in.type) == 8 ? ~0ull : 0xffffffffull;
          for (std::uint32_t k = part; k != 0; k &= k - 1) {
            const std::uint32_t j = static_cast<std::uint32_t>(std::countr_zero(k));
            if ((vals[j] & mask) == (vals[i] & mask)) same |= 1u << j;
          }
          Thread& t = lanes[i];
          if (in.sub == Sub::m_all) {
            const bool eq = same == part;
            write(t, in.ops[0], eq ? part : 0);
            if (in.out2.kind == Operand::Kind::reg) t.rf[in.out2.reg] = eq ? 1 : 0;
          } else {
            write(t, in.ops[0], same);
          }
        }
        break;
      case Op::redux: {
        std::uint64_t acc = 0;
        bool first = true;
        const bool sgn = is_signed(in.type);
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          const std::uint64_t v = vals[std::countr_zero(m)] & 0xffffffffu;
          if (first) {
            acc = v;
            first = false;
            continue;
          }
          switch (in.sub) {
            case Sub::a_add: acc = (acc + v) & 0xffffffffu; break;
            case Sub::a_and: acc &= v; break;
            case Sub::a_or: acc |= v; break;
            case Sub::a_xor: acc ^= v; break;
            case Sub::a_min:
              acc = sgn ? (static_cast<std::int32_t>(v) < static_cast<std::int32_t>(acc) ? v : acc)
                        : std::min(acc, v);
              break;
            case Sub::a_max:
              acc = sgn ? (static_cast<std::int32_t>(v) > static_cast<std::int32_t>(acc) ? v : acc)
                        : std::max(acc, v);
              break;
            default: break;
          }
        }
        for (std::uint32_t m = part; m != 0; m &= m - 1)
          write(lanes[std::countr_zero(m)], in.ops[0], normalize(in.type, acc));
        break;
      }
      case Op::elect: {
        const std::uint32_t leader =
            part != 0 ? static_cast<std::uint32_t>(std::countr_zero(part)) : 0;
        for (std::uint32_t m = part; m != 0; m &= m - 1) {
          const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
          write(lanes[i], in.ops[0], leader);
          if (in.out2.kind == Operand::Kind::reg) lanes[i].rf[in.out2.reg] = i == leader ? 1 : 0;
        }
        break;
      }
      default: break;  // bar.warp.sync: the rendezvous is all
    }
    for (std::uint32_t m = group; m != 0; m &= m - 1) {
      Thread& t = lanes[std::countr_zero(m)];
      t.state = TState::run;
      t.pc = pc + 1;
    }
    return Step::rescan;
  }

  Launch& l_;
  const Program& p_;
  const Function& entry_;
  std::uint32_t nthreads_ = 0;
  std::uint32_t nwarps_ = 0;
  std::size_t shared_size_ = 0;
  std::vector<unsigned char> shared_;
  std::vector<Thread> threads_;
  std::vector<std::uint8_t> bar_of_ = std::vector<std::uint8_t>(1024, 0);
  std::vector<bool> slice_used_ = std::vector<bool>(32, false);
  Barrier barriers_[16];
  std::uint32_t live_ = 0;
  unsigned ctaid_[3] = {};
  std::uint64_t cta_count_ = 0;
  std::uint64_t instructions_ = 0;
  Thread* cur_ = nullptr;
  MemoryRange cache_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

Outcome execute(Launch& launch) {
  Machine m(launch);
  return m.run();
}

}  // namespace swcu::ptx
