// CTA barriers (exec_machine.hpp): bar.sync, bar.arrive and bar.red with their barrier ids and
// thread counts, released when every expected thread has arrived.

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

Machine::Step Machine::cta_barrier(Thread* lanes, std::uint32_t group, std::uint32_t active,
                                   const Inst& in, std::uint32_t pc) {
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
    Barrier& b = cta_->barriers[id];
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
      cta_->bar_of[static_cast<std::size_t>(&t - threads_)] = static_cast<std::uint8_t>(id);
    }
  }
  release_barriers();
  return Step::rescan;
}

// Releases every barrier whose expected threads have all arrived: the thread count it was
// given, else every thread of the CTA that has not exited.
void Machine::release_barriers() {
  for (std::uint32_t id = 0; id < 16; ++id) {
    Barrier& b = cta_->barriers[id];
    if (b.arrived == 0) continue;
    const std::uint32_t expected = b.expected != 0 ? b.expected : cta_->live;
    if (b.arrived < expected) continue;
    for (std::uint32_t i = 0; i < nthreads_; ++i) {
      Thread& t = threads_[i];
      if (t.state != TState::barrier || cta_->bar_of[i] != id) continue;
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

}  // namespace swcu::ptx::detail
