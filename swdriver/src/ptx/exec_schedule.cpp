// A CTA's turn (exec_machine.hpp): its warps by turns, a warp's lanes together while they share
// a program counter, and how a CTA ends the launch (a fault, a deadlock, a timeout). Which CTA
// runs when is exec_grid.cpp; one instruction is exec_step.cpp.
#include <algorithm>
#include <chrono>
#include <string>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

void Machine::start_cta(Cta& c) {
  // ctaid, cluster and shared memory: set when the Grid admitted it
  c.threads.resize(nthreads_);
  c.bar_of.assign(nthreads_, 0);
  c.slice_used.assign(nwarps_, 0);
  for (std::uint32_t i = 0; i < nthreads_; ++i) {
    Thread& t = c.threads[i];
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
    t.red_reg = UINT32_MAX;
    t.poll_pc = UINT32_MAX;
    t.polls = 0;
    t.cluster_arrival = 0;
  }
  c.live = nthreads_;
  c.clock = 0;
  for (Barrier& b : c.barriers) b = Barrier{};
  c.started = true;
}

// A turn: rounds over the CTA's warps until it finishes, until a round in which the only warps
// that ran yielded (they poll memory another CTA must change, or sleep), or for kTurnSteps.
bool Machine::turn(Cta& c) {
  cta_ = &c;
  threads_ = c.threads.data();
  cur_ = nullptr;
  turn_start_ = instructions_;
  bool finished = false;
  while (instructions_ - turn_start_ < kTurnSteps) {
    bool ran = false, yielded = false;
    for (std::uint32_t w = 0; w < nwarps_; ++w) {
      const Ran r = run_warp(w);
      ran = ran || r == Ran::ran;
      yielded = yielded || r == Ran::yielded;
    }
    if (c.live == 0) {
      finished = true;
      break;
    }
    if (!ran && !yielded) deadlock();
    if (!ran) break;
  }
  const bool idle = !finished && instructions_ == turn_start_;
  if (cluster_stalled(*c.cluster, idle, g_.cluster_size)) {
    deadlock("the other threads of the cluster");
  }
  c.clock += instructions_ - turn_start_;
  cta_ = nullptr;
  return finished;
}

bool Machine::cluster_stalled(Cluster& k, bool idle, std::uint32_t cluster_size) {
  if (!idle) {
    k.idle_turns.store(0, std::memory_order_relaxed);
    return false;
  }
  // Counted only while no other CTA of the cluster is held by a worker (one that is may be
  // about to release this one). The Grid hands out waiting CTAs in order, so between two turns
  // of this one every other waiting CTA of the cluster has had a turn.
  if (k.held.load(std::memory_order_relaxed) != 1) return false;
  return k.idle_turns.fetch_add(1, std::memory_order_relaxed) + 1 > 4 * cluster_size + 16;
}

[[noreturn]] void Machine::deadlock(const char* whose) {
  std::string where;
  for (std::uint32_t i = 0; i < nthreads_; ++i) {
    const Thread& t = threads_[i];
    if (t.state == TState::exited) continue;
    where = std::string(t.state == TState::barrier         ? "at a CTA barrier"
                        : t.state == TState::mbarrier_wait ? "in mbarrier.try_wait for a phase"
                        : t.state == TState::cluster_wait  ? "at barrier.cluster.wait"
                                                           : "at a warp collective") +
            " on PTX line " + std::to_string(p_.code[t.pc].line);
    cur_ = &threads_[i];
    break;
  }
  fault(Fault::deadlock, "barrier deadlock: threads wait " + where + " that " + whose +
                             " can never reach (they exited or wait elsewhere)");
}

// Runs warp w for up to a slice: whether it executed anything, and whether it yielded.
Machine::Ran Machine::run_warp(std::uint32_t w) {
  Thread* const lanes = &threads_[w * 32];
  const std::uint32_t n = lanes_of(w);
  bool any = false;
  int steps = 0;
  // A warp that used its whole slice, or yielded, may be spinning on one of its own lanes: its
  // next slice starts with the lanes at the highest pc, so that every lane makes progress
  // (independent thread scheduling).
  bool highest = cta_->slice_used[w] != 0;
  cta_->slice_used[w] = 0;
  while (steps < kSlice) {
    // The group: running lanes at the lowest pc, with lanes waiting at a collective there.
    std::uint32_t pc = highest ? 0 : UINT32_MAX, group = 0;
    bool cluster_waiting = false;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (lanes[i].state == TState::cluster_wait) {  // barrier.cluster.wait: its phase done?
        if (cta_->cluster->phase.load(std::memory_order_acquire) >= lanes[i].cluster_arrival) {
          lanes[i].state = TState::run;
          lanes[i].cluster_arrival = 0;
          ++lanes[i].pc;
        } else {
          cluster_waiting = true;
          continue;
        }
      } else if (lanes[i].state == TState::mbarrier_wait) {
        // mbarrier.try_wait: runs again once its phase completed (by this CTA, or by another
        // CTA of the cluster: a remote arrive or a bulk copy into this CTA)
        if (mbarrier_phase_done(lanes[i].mbarrier_waited, lanes[i].mbarrier_parity)) {
          lanes[i].state = TState::run;
        } else {
          cluster_waiting = cluster_waiting || g_.cluster_size > 1;
          continue;
        }
      }
      if (lanes[i].state != TState::run) continue;
      if (highest ? lanes[i].pc > pc : lanes[i].pc < pc) {
        pc = lanes[i].pc;
        group = 1u << i;
      } else if (lanes[i].pc == pc) {
        group |= 1u << i;
      }
    }
    if (group == 0) {
      if (any) return Ran::ran;
      return cluster_waiting ? Ran::yielded : Ran::nothing;  // the cluster's others run first
    }
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
      if (steps >= kSlice) cta_->slice_used[w] = 1;
      if (s == Step::rescan || steps >= kSlice) break;
      if (s == Step::yield) {
        // It polls memory or sleeps: maybe for one of its own lanes (a lock another lane
        // holds), which the next slice then runs first.
        cta_->slice_used[w] = 1;
        return Ran::yielded;
      }
      ++pc;
      if (pc >= other) break;
    }
  }
  return any ? Ran::ran : Ran::nothing;
}

void Machine::check_timeout() {
  if (g_.stop.load(std::memory_order_relaxed)) throw Stopped{};
  if (l_.timeout_seconds <= 0) return;
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - g_.start).count();
  if (s > l_.timeout_seconds) {
    fault(Fault::timeout, "the kernel ran longer than SWCUDA_KERNEL_TIMEOUT (" +
                              std::to_string(l_.timeout_seconds) + " s)");
  }
}

[[noreturn]] void Machine::fault(Fault f, const std::string& what) {
  std::string msg = "kernel " + p_.functions[l_.entry].name;
  if (cur_ != nullptr && cta_ != nullptr) {
    msg += ", PTX line " +
           std::to_string(p_.code[std::min<std::size_t>(cur_->pc, p_.code.size() - 1)].line) +
           ", block (" + std::to_string(cta_->ctaid[0]) + "," + std::to_string(cta_->ctaid[1]) +
           "," + std::to_string(cta_->ctaid[2]) + "), thread (" + std::to_string(cur_->tid[0]) +
           "," + std::to_string(cur_->tid[1]) + "," + std::to_string(cur_->tid[2]) + ")";
  }
  throw KernelFault{f, msg + ": " + what};
}

}  // namespace swcu::ptx::detail
