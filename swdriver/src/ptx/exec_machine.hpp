// The interpreter's machine (exec.hpp), shared by the exec_*.cpp files and not part of the
// interpreter's interface: a launch's threads, their frames, the CTA's barriers, and class
// Machine, whose members are defined by concept: scheduling (exec_schedule.cpp), one instruction
// (exec_step.cpp), special registers (exec_sregs.cpp), memory (exec_memory.cpp), calls and
// built-ins (exec_calls.cpp), CTA barriers (exec_barriers.cpp), warp collectives
// (exec_warp.cpp), warp-level matrix instructions (exec_matrix.cpp), asynchronous copies
// (exec_async.cpp) and mbarrier objects (exec_mbarrier.cpp). Operand reads and writes are inline
// here: every instruction makes them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ptx/exec.hpp"
#include "ptx/exec_async.hpp"
#include "ptx/program.hpp"

namespace swcu::ptx::detail {

inline constexpr std::uint32_t kMaxLocalPerThread = 1u << 20;  // local stack limit (frames)
inline constexpr std::uint32_t kMaxCallDepth = 4096;
inline constexpr int kSlice = 4096;  // instructions a warp runs before others get a turn

/// A call frame: the function, where it returns, and where its registers, local memory and
/// call-site parameters start in the thread's storage.
struct Frame {
  std::uint32_t func = 0;
  std::uint32_t ret_pc = 0;
  std::uint32_t reg_base = 0;
  std::uint32_t local_base = 0;
  std::uint32_t param_base = 0;
  std::uint32_t args = 0;  // index into Thread::addrs of the argument addresses
  std::uint32_t rets = 0;  // index into Thread::addrs of the return addresses
};

/// Where a thread is: running, waiting at a CTA barrier, at a warp collective or in
/// mbarrier.try_wait for a phase to complete, exited.
enum class TState : std::uint8_t { run, barrier, sync_wait, mbarrier_wait, exited };

/// One thread of the CTA: its program counter, registers, frames and memory.
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
  // cp.async and cp.async.bulk copies issued and not complete yet
  AsyncCopies async;
};

/// One of the CTA's 16 named barriers, with bar.red's running reduction.
struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t expected = 0;  // 0: every live thread
  std::uint32_t popc = 0;
  bool all = true;
  bool any = false;
  Sub red = Sub::none;
};

/// Thrown to end the launch (Machine::fault()); run() turns it into the Outcome.
struct KernelFault {
  Fault fault;
  std::string what;
};

/// One launch in progress: its CTAs run one after another, each CTA's warps by turns.
class Machine {
 public:
  /// Lays out the launch's shared memory and threads.
  explicit Machine(Launch& l);

  /// Runs every CTA of the grid; the first fault ends the launch.
  Outcome run();

 private:
  enum class Step { next, rescan, yield };

  // --------------------------------------------------------------- scheduling (exec_schedule.cpp)

  void run_cta();
  [[noreturn]] void deadlock();

  std::uint32_t lanes_of(std::uint32_t w) const {
    const std::uint32_t first = w * 32;
    return std::min<std::uint32_t>(32, nthreads_ - first);
  }

  // Runs warp w for up to a slice; true when it executed anything.
  bool run_warp(std::uint32_t w);
  void check_timeout();
  // Ends the launch: the fault and a message naming the kernel, PTX line, block and thread.
  [[noreturn]] void fault(Fault f, const std::string& what);

  // --------------------------------------------------------------------- memory (exec_memory.cpp)

  static std::string hex(std::uint64_t v);
  [[noreturn]] void bad_address(std::uint64_t addr, unsigned size, bool write, const char* space);
  // Whether `size` bytes at `a` lie in one range of the memory map (and, for a write, one the
  // device may write).
  bool in_global(std::uint64_t a, unsigned size, bool write = false);
  // The host address of an access of `size` bytes at `addr` in `space`.
  unsigned char* resolve(Thread& t, Space space, std::uint64_t addr, unsigned size, bool write);

  static std::uint64_t load_bits(const unsigned char* p, unsigned size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, std::min(size, 8u));
    return v;
  }
  static void store_bits(unsigned char* p, unsigned size, std::uint64_t v) {
    std::memcpy(p, &v, std::min(size, 8u));
  }
  unsigned elem_size(const Inst& in) const;
  void load(Thread& t, const Inst& in);
  void store(Thread& t, const Inst& in);
  void atomic(Thread& t, const Inst& in);
  // Bytes readable from generic address a to the end of its memory.
  std::size_t available(Thread& t, std::uint64_t a);

  // ------------------------------------------------------------------------------------- operands

  // Inline: every instruction reads and writes its operands.
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

  // A special register's value (exec_sregs.cpp).
  std::uint64_t sreg(const Thread& t, const Operand& o);

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

  // -------------------------------------------------------------- one instruction (exec_step.cpp)

  static Type dest_type(const Inst& in);
  Step step(Thread* lanes, std::uint32_t group, std::uint32_t pc, std::uint32_t w);
  void mov(Thread& t, const Inst& in);

  // ----------------------------------------------------------------------- calls (exec_calls.cpp)

  void call(Thread& t, const Inst& in, std::uint32_t pc);
  void ret(Thread& t);
  void exit_thread(Thread& t);
  // Reads a NUL-terminated string at a generic address.
  bool read_string(Thread& t, std::uint64_t a, std::string& out);
  std::uint64_t param_arg(Thread& t, const Frame& cf, const Operand& args, unsigned k,
                          unsigned size);
  void set_ret(Thread& t, const Frame& cf, const Operand& rets, std::uint64_t v, unsigned size);
  void builtin(Thread& t, const Function& f, const Frame& cf, const Operand& rets,
               const Operand& args);

  // ------------------------------------------------------------- CTA barriers (exec_barriers.cpp)

  Step cta_barrier(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                   std::uint32_t pc);
  // Releases every barrier whose expected threads have all arrived: the thread count it was
  // given, else every thread of the CTA that has not exited.
  void release_barriers();

  // ------------------------------------------------------------- warp collectives (exec_warp.cpp)

  Step warp_collective(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                       std::uint32_t pc, std::uint32_t w);

  // ------------------------------------------ warp-level matrix instructions (exec_matrix.cpp)

  Step matrix(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
              std::uint32_t pc, std::uint32_t w);
  void multiply(Thread* lanes, const Inst& in, const MatrixForm& f);
  void wmma_memory(Thread* lanes, const Inst& in, const MatrixForm& f);
  void matrix_rows(Thread* lanes, const Inst& in, const MatrixForm& f);
  void transpose(Thread* lanes, const Inst& in);
  // A fragment operand's `regs` register values of one thread, and back.
  void read_fragment(Thread& t, const Operand& o, unsigned regs, std::uint64_t* out) const;
  void write_fragment(Thread& t, const Operand& o, unsigned regs, Type elem,
                      const std::uint64_t* in) const;
  // ------------------------------------------------ asynchronous copies (exec_async.cpp)

  // cp.async, its groups and cp.async.mbarrier.arrive; cp.async.bulk and its bulk groups.
  Step async_copy(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                  std::uint32_t pc);
  // The `bytes` a copy reads at `addr` in `space` (a range check, without resolve()'s alignment
  // check: a zero-filling cp.async reads fewer bytes than its aligned size).
  const unsigned char* source(Thread& t, Space space, std::uint64_t addr, std::uint32_t bytes);
  // Performs the copies of `g` in groups numbered below `before` (every copy: UINT32_MAX).
  void complete_copies(Thread& t, CopyGroups& g, std::uint32_t before);
  // Performs every copy the thread has in flight (when it exits).
  void complete_async(Thread& t);

  // ------------------------------------------------- mbarrier objects (exec_mbarrier.cpp)

  // mbarrier.init, inval, arrive (and _drop, .expect_tx, .noComplete), expect_tx, complete_tx,
  // test_wait and try_wait (a thread whose phase is not complete waits in TState::mbarrier_wait),
  // pending_count.
  Step mbarrier(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                std::uint32_t pc);
  // The bytes of the mbarrier object at `addr` (a shared or generic address; a .shared::cluster
  // address is the CTA's own, as a CTA is its own cluster), which must be `initialized` (else a
  // fault); `what` names the instruction in a fault.
  unsigned char* mbarrier_object(Thread& t, Space space, std::uint64_t addr, const char* what,
                                 bool initialized = true);
  // Adds `tx` to the object's tx-count, then `count` arrivals (arrive_drop: `drop` fewer expected
  // from now on); completes the phase when no arrival and no transaction is pending, waking the
  // threads waiting on an mbarrier. Returns the object's value before.
  std::uint64_t mbarrier_update(unsigned char* obj, std::uint32_t count, std::int64_t tx,
                                std::uint32_t drop = 0, bool no_complete = false);

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

}  // namespace swcu::ptx::detail
