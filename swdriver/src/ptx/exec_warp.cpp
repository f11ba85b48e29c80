// Warp collectives (exec_machine.hpp): shfl, vote, match, redux, elect and bar.warp.sync. The
// lanes of the member mask meet at the instruction (a lane that arrives first waits there), then
// exchange their values.
#include <algorithm>
#include <bit>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

Machine::Step Machine::warp_collective(Thread* lanes, std::uint32_t group, std::uint32_t active,
                                       const Inst& in, std::uint32_t pc, std::uint32_t w) {
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

}  // namespace swcu::ptx::detail
