// mbarrier objects (exec_machine.hpp), as the PTX ISA 9.0 defines them: an opaque 64-bit object
// in shared memory holding the current phase, the pending arrivals of that phase, the arrivals
// expected of every phase and the tx-count (bytes of asynchronous transactions still to come).
// A phase completes when its pending arrivals and its tx-count are both zero; the object then
// moves to the next phase with the expected arrivals pending again.
//
// The encoding (a valid object never reads as zero, so one used before mbarrier.init, or after
// mbarrier.inval, is a fault instead of undefined behaviour):
//   bits  0..19  pending arrivals        bits 40..60  tx-count (21-bit two's complement)
//   bits 20..39  expected arrivals       bit  61      phase parity
//   bits 62..63  0b10
// The state mbarrier.arrive returns is 0b11 in bits 62..63, the phase parity before the arrive in
// bit 61 and the pending count before it in bits 0..19 (what mbarrier.pending_count reads).
#include <bit>
#include <cstring>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {
namespace {

constexpr std::uint32_t kMaxCount = (1u << 20) - 1;  // arrival counts and |tx-count|
constexpr std::uint64_t kObjectTag = 2, kStateTag = 3;

struct Mbarrier {
  std::uint32_t pending = 0;
  std::uint32_t expected = 0;
  std::int64_t tx = 0;
  std::uint32_t parity = 0;
};

std::uint64_t tag_of(std::uint64_t v) { return v >> 62; }

Mbarrier decode(std::uint64_t v) {
  Mbarrier b;
  b.pending = static_cast<std::uint32_t>(v & kMaxCount);
  b.expected = static_cast<std::uint32_t>((v >> 20) & kMaxCount);
  b.tx = static_cast<std::int64_t>((v >> 40) & 0x1fffff);
  if (b.tx & 0x100000) b.tx -= 0x200000;
  b.parity = static_cast<std::uint32_t>((v >> 61) & 1);
  return b;
}

std::uint64_t encode(const Mbarrier& b) {
  return (kObjectTag << 62) | (std::uint64_t{b.parity} << 61) |
         ((static_cast<std::uint64_t>(b.tx) & 0x1fffff) << 40) | (std::uint64_t{b.expected} << 20) |
         b.pending;
}

// An mbarrier object is 8-byte aligned (resolve() checks it). The CTAs of a cluster update each
// other's objects from any worker, so every access is a host atomic: an update completing a
// phase releases what the arriving threads wrote, and a wait that sees the phase complete
// acquires it (PTX ISA: mbarrier.arrive has .release and mbarrier.try_wait .acquire semantics).
std::uint64_t load64(const unsigned char* p) {
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(p), __ATOMIC_ACQUIRE);
}

void store64(unsigned char* p, std::uint64_t v) {
  __atomic_store_n(reinterpret_cast<std::uint64_t*>(p), v, __ATOMIC_RELEASE);
}

bool replace64(unsigned char* p, std::uint64_t& expected, std::uint64_t v) {
  return __atomic_compare_exchange_n(reinterpret_cast<std::uint64_t*>(p), &expected, v, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

}  // namespace

// True also when the object was invalidated or overwritten: the waiting thread then runs its
// try_wait again, which reports it.
bool Machine::mbarrier_phase_done(const unsigned char* obj, std::uint32_t parity) {
  const std::uint64_t v = load64(obj);
  return tag_of(v) != kObjectTag || decode(v).parity != parity;
}

unsigned char* Machine::mbarrier_object(Thread& t, Space space, std::uint64_t addr,
                                        const char* what, bool initialized) {
  if (space == Space::generic) {
    if (addr < kSharedWindow || addr >= kSharedWindow + kWindowSize) {
      fault(Fault::illegal_address, std::string(what) + " at " + hex(addr) +
                                        ": not a shared memory address (an mbarrier object "
                                        "lives in shared memory)");
    }
    addr -= kSharedWindow;
  }
  unsigned char* p = resolve(t, Space::shared, addr, 8, true);
  if (!initialized) return p;
  const std::uint64_t v = load64(p);
  const Mbarrier b = decode(v);
  if (tag_of(v) != kObjectTag || b.pending > b.expected) {
    fault(Fault::illegal_instruction,
          std::string(what) + " on shared memory offset " + hex(addr) +
              ", which holds no mbarrier object (" + hex(v) +
              "): an mbarrier must be initialized with mbarrier.init before it is used, and not "
              "used after mbarrier.inval (undefined behaviour in the PTX ISA)");
  }
  return p;
}

std::uint64_t Machine::mbarrier_update(unsigned char* obj, std::uint32_t count, std::int64_t tx,
                                       std::uint32_t drop, bool no_complete) {
  std::uint64_t before = load64(obj);
  for (;;) {  // until no other CTA of the cluster changed the object meanwhile
    Mbarrier b = decode(before);
    b.tx += tx;
    if (b.tx > kMaxCount || b.tx < -static_cast<std::int64_t>(kMaxCount)) {
      fault(Fault::illegal_instruction,
            "the mbarrier's tx-count would be " + std::to_string(b.tx) +
                ", outside -(2^20-1)..2^20-1 (undefined behaviour in the PTX ISA)");
    }
    if (drop > b.expected) {
      fault(Fault::illegal_instruction, "mbarrier.arrive_drop of " + std::to_string(drop) +
                                            " with only " + std::to_string(b.expected) +
                                            " arrivals expected per phase");
    }
    b.expected -= drop;
    if (count > b.pending) {
      fault(Fault::illegal_instruction,
            "an arrive-on of " + std::to_string(count) + " on an mbarrier with " +
                std::to_string(b.pending) +
                " arrivals pending in its current phase: more arrivals than mbarrier.init "
                "expected (undefined behaviour in the PTX ISA)");
    }
    b.pending -= count;
    if (b.pending == 0 && b.tx == 0) {
      if (no_complete) {
        fault(Fault::illegal_instruction,
              "mbarrier.arrive.noComplete completed the current phase (undefined behaviour in "
              "the PTX ISA)");
      }
      // The phase is complete: the threads suspended in mbarrier.try_wait for it see the new
      // parity when their warp is next scheduled (run_warp), on whichever worker runs it.
      b.parity ^= 1;
      b.pending = b.expected;
    }
    if (replace64(obj, before, encode(b))) return before;
  }
}

Machine::Step Machine::mbarrier(Thread* lanes, std::uint32_t group, std::uint32_t active,
                                const Inst& in, std::uint32_t pc) {
  const auto name = [&]() -> const char* {
    switch (in.op) {
      case Op::mbarrier_init: return "mbarrier.init";
      case Op::mbarrier_inval: return "mbarrier.inval";
      case Op::mbarrier_arrive:
        return (in.mode & kDrop) ? "mbarrier.arrive_drop" : "mbarrier.arrive";
      case Op::mbarrier_expect_tx: return "mbarrier.expect_tx";
      case Op::mbarrier_complete_tx: return "mbarrier.complete_tx";
      default: return (in.mode & kTryWait) ? "mbarrier.try_wait" : "mbarrier.test_wait";
    }
  };
  const auto count_of = [&](Thread& t, const Operand& o, const char* what, std::uint32_t least) {
    const std::uint64_t n = read(t, o) & 0xffffffffu;
    if (n < least || n > kMaxCount) {
      fault(Fault::illegal_instruction, std::string(name()) + " " + what + " " + std::to_string(n) +
                                            " is outside " + std::to_string(least) +
                                            "..2^20-1 (undefined behaviour in the PTX ISA)");
    }
    return static_cast<std::uint32_t>(n);
  };
  bool blocked = false, incomplete = false;
  for (std::uint32_t m = group; m != 0; m &= m - 1) {
    const auto i = static_cast<std::uint32_t>(std::countr_zero(m));
    Thread& t = lanes[i];
    cur_ = &t;
    bool wait_here = false;
    if ((active >> i) & 1) {
      switch (in.op) {
        case Op::mbarrier_init: {
          unsigned char* obj = mbarrier_object(t, in.space, address(t, in.ops[0]), name(), false);
          Mbarrier b;
          b.pending = b.expected = count_of(t, in.ops[1], "count", 1);
          store64(obj, encode(b));
          break;
        }
        case Op::mbarrier_inval:
          store64(mbarrier_object(t, in.space, address(t, in.ops[0]), name()), 0);
          break;
        case Op::mbarrier_arrive: {
          unsigned char* obj = mbarrier_object(t, in.space, address(t, in.ops[1]), name());
          const std::uint32_t n = count_of(t, in.ops[2], "count", 1);
          const std::int64_t tx = (in.mode & kExpectTx) ? count_of(t, in.ops[3], "tx-count", 0) : 0;
          const std::uint64_t before =
              mbarrier_update(obj, n, tx, (in.mode & kDrop) ? n : 0, (in.mode & kNoComplete) != 0);
          const Mbarrier b = decode(before);
          write(t, in.ops[0], (kStateTag << 62) | (std::uint64_t{b.parity} << 61) | b.pending);
          break;
        }
        case Op::mbarrier_expect_tx:
        case Op::mbarrier_complete_tx: {
          unsigned char* obj = mbarrier_object(t, in.space, address(t, in.ops[0]), name());
          const std::int64_t n = count_of(t, in.ops[1], "tx-count", 0);
          mbarrier_update(obj, 0, in.op == Op::mbarrier_expect_tx ? n : -n);
          break;
        }
        case Op::mbarrier_wait: {
          const unsigned char* obj = mbarrier_object(t, in.space, address(t, in.ops[1]), name());
          const std::uint64_t v = read(t, in.ops[2]);
          std::uint64_t parity = 0;
          if (in.mode & kParity) {
            parity = v & 0xffffffffu;
            if (parity > 1) {
              fault(Fault::illegal_instruction, std::string(name()) + ".parity with phaseParity " +
                                                    std::to_string(parity) + " (it is 0 or 1)");
            }
          } else {
            if (tag_of(v) != kStateTag) {
              fault(Fault::illegal_instruction,
                    std::string(name()) + " with state " + hex(v) +
                        ", which no mbarrier.arrive returned (undefined behaviour in the PTX ISA)");
            }
            parity = (v >> 61) & 1;
          }
          // The phase with this parity is complete once the object has moved past it.
          const bool complete = mbarrier_phase_done(obj, static_cast<std::uint32_t>(parity));
          if (!complete && (in.mode & kTryWait)) {
            wait_here = true;  // suspended until the phase completes
            t.mbarrier_waited = obj;
            t.mbarrier_parity = static_cast<std::uint32_t>(parity);
          } else {
            write(t, in.ops[0], complete ? 1 : 0);
            incomplete = incomplete || !complete;
          }
          break;
        }
        case Op::mbarrier_pending_count: {
          const std::uint64_t v = read(t, in.ops[1]);
          if (tag_of(v) != kStateTag) {
            fault(Fault::illegal_instruction,
                  "mbarrier.pending_count of " + hex(v) +
                      ", which no mbarrier.arrive returned (undefined behaviour in the PTX ISA)");
          }
          write(t, in.ops[0], v & kMaxCount);
          break;
        }
        default: break;
      }
    }
    if (wait_here) {
      t.state = TState::mbarrier_wait;
      blocked = true;
    } else {
      t.pc = pc + 1;
      t.state = TState::run;
    }
  }
  if (blocked) return Step::rescan;
  // A test_wait that found the phase incomplete is usually polled: let other warps run.
  return incomplete ? Step::yield : Step::next;
}

}  // namespace swcu::ptx::detail
