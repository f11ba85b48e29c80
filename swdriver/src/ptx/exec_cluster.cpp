// Thread-block clusters (exec_machine.hpp): mapa and getctarank on .shared::cluster addresses
// (exec.hpp: the target CTA's rank + 1 above bit 24 of the 32-bit shared address), and
// barrier.cluster.arrive/wait over every thread of the cluster that has not exited (PTX ISA
// "barrier.cluster"). A thread waiting at barrier.cluster.wait leaves the warp's running lanes
// (TState::cluster_wait) until its phase completes; a warp with only such lanes yields, so that
// the cluster's other CTAs run on this worker or another one.
#include <bit>
#include <mutex>

#include "ptx/alu.hpp"
#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {
namespace {

constexpr std::uint64_t kOffsetMask = (1ull << kClusterRankShift) - 1;

}  // namespace

// mapa[.shared::cluster].type d, a, b: the address of a's variable in the CTA of rank b.
void Machine::mapa(Thread& t, const Inst& in) {
  std::uint64_t a = read(t, in.ops[1]);
  const std::uint64_t rank = read(t, in.ops[2]) & 0xffffffffu;
  const bool generic = (in.flags & kClusterSpace) == 0;
  if (generic) {
    if (a < kSharedWindow || a >= kSharedWindow + kWindowSize) {
      fault(Fault::illegal_address, "illegal address: mapa of " + hex(a) +
                                        ", which is not a generic address of shared memory");
    }
    a -= kSharedWindow;
  }
  if (rank >= g_.cluster_size) {
    fault(Fault::illegal_address, "illegal address: mapa to CTA rank " + std::to_string(rank) +
                                      ", outside the cluster of " +
                                      std::to_string(g_.cluster_size) + " CTAs");
  }
  std::uint64_t r = ((rank + 1) << kClusterRankShift) | (a & kOffsetMask);
  if (generic) r += kSharedWindow;
  write(t, in.ops[0], normalize(in.type, r));
}

// getctarank[.shared::cluster].u32 d, a: the rank of the CTA whose shared memory a is in.
void Machine::getctarank(Thread& t, const Inst& in) {
  std::uint64_t a = read(t, in.ops[1]);
  if ((in.flags & kClusterSpace) == 0) {
    if (a < kSharedWindow || a >= kSharedWindow + kWindowSize) {
      fault(Fault::illegal_address, "illegal address: getctarank of " + hex(a) +
                                        ", which is not a generic address of shared memory");
    }
    a -= kSharedWindow;
  }
  const std::uint64_t bits = a >> kClusterRankShift;
  if (bits > g_.cluster_size) {
    fault(Fault::illegal_address, "illegal address: getctarank of " + hex(a) +
                                      ", which names no CTA of the cluster of " +
                                      std::to_string(g_.cluster_size));
  }
  write(t, in.ops[0], bits == 0 ? cta_->rank : bits - 1);
}

Machine::Step Machine::cluster_barrier(Thread* lanes, std::uint32_t group, std::uint32_t active,
                                       const Inst& in, std::uint32_t pc) {
  Cluster& k = *cta_->cluster;
  // one reading for the whole group, so that its lanes leave the wait together
  const std::uint64_t phase = k.phase.load(std::memory_order_acquire);
  for (std::uint32_t m = group; m != 0; m &= m - 1) {
    const std::uint32_t i = static_cast<std::uint32_t>(std::countr_zero(m));
    Thread& t = lanes[i];
    cur_ = &t;
    if (!((active >> i) & 1)) {
      t.pc = pc + 1;
      continue;
    }
    if (in.op == Op::cluster_arrive) {
      // a cluster of one CTA is only ever touched by the worker running it
      std::unique_lock lock(k.mutex, std::defer_lock);
      if (g_.cluster_size > 1) lock.lock();
      const std::uint64_t now = k.phase.load(std::memory_order_relaxed);
      if (t.cluster_arrival == now + 1) {
        fault(Fault::illegal_instruction,
              "barrier.cluster.arrive twice without a barrier.cluster.wait between");
      }
      t.cluster_arrival = now + 1;
      if (++k.arrived == k.live) {
        k.arrived = 0;
        k.phase.store(now + 1, std::memory_order_release);
      }
      t.pc = pc + 1;
      continue;
    }
    // wait: until the phase this thread arrived in has completed (acquire); the lanes that
    // must wait leave the running ones (run_warp wakes them)
    if (t.cluster_arrival == 0) {
      fault(Fault::illegal_instruction,
            "barrier.cluster.wait without a preceding barrier.cluster.arrive");
    }
    if (phase >= t.cluster_arrival) {
      t.cluster_arrival = 0;
      t.pc = pc + 1;
    } else {
      t.state = TState::cluster_wait;
    }
  }
  return Step::rescan;
}

void Machine::cluster_exit(Thread& t) {
  Cluster& k = *cta_->cluster;
  std::unique_lock lock(k.mutex, std::defer_lock);
  if (g_.cluster_size > 1) lock.lock();  // as in cluster_barrier
  const std::uint64_t phase = k.phase.load(std::memory_order_relaxed);
  if (t.cluster_arrival == phase + 1) --k.arrived;  // arrived, then exited: no longer expected
  t.cluster_arrival = 0;
  --k.live;
  if (k.live != 0 && k.arrived != 0 && k.arrived == k.live) {
    k.arrived = 0;
    k.phase.store(phase + 1, std::memory_order_release);
  }
}

}  // namespace swcu::ptx::detail
