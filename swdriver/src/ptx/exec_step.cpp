// One instruction for a group of lanes (exec_machine.hpp): the guard, ALU instructions through
// compute() (alu.hpp), moves, address conversions, and the dispatch of memory, control flow,
// barriers, warp collectives, asynchronous copies and mbarriers to their files.
#include <bit>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

Type Machine::dest_type(const Inst& in) {
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

Machine::Step Machine::step(Thread* lanes, std::uint32_t group, std::uint32_t pc, std::uint32_t w) {
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
        // .shared::cta: this CTA's memory; .shared::cluster: any CTA's of the cluster
        const std::uint64_t rank_bits = sh ? (a - kSharedWindow) >> kClusterRankShift : 0;
        switch (in.space) {
          case Space::shared:
            r = sh &&
                ((in.flags & kClusterSpace) != 0 ? rank_bits <= g_.cluster_size
                                                 : rank_bits == 0 || rank_bits - 1 == cta_->rank);
            break;
          case Space::local: r = lo; break;
          case Space::param: r = pa; break;
          default: r = !sh && !lo && !pa; break;
        }
        write(t, in.ops[0], r ? 1 : 0);
      });
      break;
    case Op::ld:
    case Op::ldu:
    case Op::atom:
      if (in.op == Op::atom) {
        each(active, [&](Thread& t) { atomic(t, in); });
      } else {
        each(active, [&](Thread& t) { load(t, in); });
      }
      if (polling(lanes, active, in)) {  // memory another warp or CTA must change: let it run
        advance();
        return Step::yield;
      }
      break;
    case Op::st: each(active, [&](Thread& t) { store(t, in); }); break;
    case Op::red: each(active, [&](Thread& t) { atomic(t, in); }); break;
    case Op::cp_async_bulk_tensor: each(active, [&](Thread& t) { tensor_copy(t, in); }); break;
    case Op::tex:
    case Op::tld4: each(active, [&](Thread& t) { texture(t, in); }); break;
    case Op::txq:
    case Op::suq: each(active, [&](Thread& t) { texture_query(t, in); }); break;
    case Op::suld:
    case Op::sust:
    case Op::sured: each(active, [&](Thread& t) { surface(t, in); }); break;
    case Op::st_async:
    case Op::red_async:
      each(active, [&](Thread& t) {
        if (in.op == Op::st_async) {
          store(t, in);
        } else {
          atomic(t, in);
        }
        complete_remote_store(t, in);
      });
      break;
    case Op::fence:
    case Op::membar:
      if (active != 0) fence(in);
      break;
    case Op::prefetch:
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
        // cooperative groups' grid.sync() traps when the grid workspace is missing
        fault(Fault::trap, l_.grid_workspace == 0 && p_.uses_grid_workspace
                               ? "trap (the kernel uses cooperative groups' grid workspace, "
                                 "%envreg1/%envreg2, which only a cooperative launch provides: "
                                 "grid.sync() traps without it)"
                               : "trap");
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
    case Op::cluster_arrive:
    case Op::cluster_wait: return cluster_barrier(lanes, group, active, in, pc);
    case Op::mapa: each(active, [&](Thread& t) { mapa(t, in); }); break;
    case Op::getctarank: each(active, [&](Thread& t) { getctarank(t, in); }); break;
    case Op::bar_warp_sync:
    case Op::shfl:
    case Op::vote:
    case Op::match:
    case Op::redux:
    case Op::elect: return warp_collective(lanes, group, active, in, pc, w);
    case Op::matrix: return matrix(lanes, group, active, in, pc, w);
    case Op::activemask: each(active, [&](Thread& t) { write(t, in.ops[0], group); }); break;
    case Op::cp_async:
    case Op::cp_async_commit:
    case Op::cp_async_wait:
    case Op::cp_async_mbarrier_arrive:
    case Op::cp_async_bulk:
    case Op::cp_async_bulk_commit:
    case Op::cp_async_bulk_wait: return async_copy(lanes, group, active, in, pc);
    case Op::mbarrier_init:
    case Op::mbarrier_inval:
    case Op::mbarrier_arrive:
    case Op::mbarrier_expect_tx:
    case Op::mbarrier_complete_tx:
    case Op::mbarrier_wait:
    case Op::mbarrier_pending_count: return mbarrier(lanes, group, active, in, pc);
    case Op::setmaxnreg: break;  // a hint to the register allocator
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

void Machine::mov(Thread& t, const Inst& in) {
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

}  // namespace swcu::ptx::detail
