// The interpreter's execution loop (exec.hpp): the grid's CTAs one after another, each CTA's
// warps by turns, a warp's lanes together while they share a program counter, and how a launch
// ends (a fault, a deadlock, a timeout). One instruction is exec_step.cpp.
#include <algorithm>
#include <chrono>
#include <string>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

Machine::Machine(Launch& l) : l_(l), p_(*l.program), entry_(p_.functions[l.entry]) {
  nthreads_ = l.block[0] * l.block[1] * l.block[2];
  nwarps_ = (nthreads_ + 31) / 32;
  shared_size_ = p_.dynamic_shared_offset + l.dynamic_shared;
  if (l.dynamic_shared == 0) shared_size_ = std::max<std::size_t>(p_.static_shared, 0);
  shared_size_ = std::max(shared_size_, p_.static_shared);
  shared_.assign(shared_size_ + 16, 0);
  threads_.resize(nthreads_);
  start_ = std::chrono::steady_clock::now();
}

Outcome Machine::run() {
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

void Machine::run_cta() {
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

[[noreturn]] void Machine::deadlock() {
  std::string where;
  for (std::uint32_t i = 0; i < nthreads_; ++i) {
    const Thread& t = threads_[i];
    if (t.state == TState::exited) continue;
    where = std::string(t.state == TState::barrier         ? "at a CTA barrier"
                        : t.state == TState::mbarrier_wait ? "in mbarrier.try_wait for a phase"
                                                           : "at a warp collective") +
            " on PTX line " + std::to_string(p_.code[t.pc].line);
    cur_ = &threads_[i];
    break;
  }
  fault(Fault::deadlock, "barrier deadlock: threads wait " + where +
                             " that the other threads can never reach (they exited or wait "
                             "elsewhere)");
}

// Runs warp w for up to a slice; true when it executed anything.
bool Machine::run_warp(std::uint32_t w) {
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

void Machine::check_timeout() {
  if (l_.timeout_seconds <= 0) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (s > l_.timeout_seconds) {
    fault(Fault::timeout, "the kernel ran longer than SWCUDA_KERNEL_TIMEOUT (" +
                              std::to_string(l_.timeout_seconds) + " s)");
  }
}

[[noreturn]] void Machine::fault(Fault f, const std::string& what) {
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

}  // namespace swcu::ptx::detail

namespace swcu::ptx {

Outcome execute(Launch& launch) {
  detail::Machine m(launch);
  return m.run();
}

}  // namespace swcu::ptx
