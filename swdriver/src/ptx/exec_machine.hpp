// The interpreter's machine (exec.hpp), shared by the exec_*.cpp files and not part of the
// interpreter's interface: a launch's CTAs, their threads, frames and barriers; class Grid, what
// the launch's workers share (the resident CTAs, the first fault, the device heap); and class
// Machine, one worker, whose members are defined by concept: the CTA pool and the workers
// (exec_grid.cpp), a CTA's turn and its warps (exec_schedule.cpp), one instruction
// (exec_step.cpp), special registers (exec_sregs.cpp), memory (exec_memory.cpp), atomics and
// fences (exec_atomic.cpp), calls and built-ins (exec_calls.cpp), CTA barriers
// (exec_barriers.cpp), warp collectives (exec_warp.cpp), warp-level matrix instructions
// (exec_matrix.cpp), asynchronous copies (exec_async.cpp) and mbarrier objects
// (exec_mbarrier.cpp). Operand reads and writes are inline
// here: every instruction makes them.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ptx/exec.hpp"
#include "ptx/exec_async.hpp"
#include "ptx/program.hpp"
#include "ptx/texture.hpp"

namespace swcu::ptx::detail {

inline constexpr std::uint32_t kMaxLocalPerThread = 1u << 20;  // local stack limit (frames)
inline constexpr std::uint32_t kMaxCallDepth = 4096;
inline constexpr int kSlice = 4096;  // instructions a warp runs before others get a turn
// Warp instructions a CTA runs in one turn, at most, unless it finishes or waits for another
// CTA first. Long enough that a CTA usually finishes in its first turn (the resident CTAs' state
// then stays out of the cache's way), short enough that a CTA spinning in a way the polling
// detection does not see lets the others run.
inline constexpr std::uint64_t kTurnSteps = 1u << 18;
// A warp that reads the same value at the same address and instruction this many times in a row
// (every lane that executes it) is polling: it yields, so that the writer can run. Strong loads
// (.volatile, .relaxed, .acquire) and atomics are polls by intent; a weak load may be an
// ordinary loop-invariant load, so it takes many more.
inline constexpr std::uint32_t kStrongPolls = 4;
inline constexpr std::uint32_t kWeakPolls = 64;

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

/// Where a thread is: running, waiting at a CTA barrier, at a warp collective, in
/// mbarrier.try_wait for a phase to complete or at barrier.cluster.wait (until its cluster's phase
/// completes), exited.
enum class TState : std::uint8_t { run, barrier, sync_wait, mbarrier_wait, cluster_wait, exited };

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
  // The last load or atomic of global or shared memory: its instruction, address and value,
  // and how many times in a row it read that value there.
  std::uint32_t poll_pc = UINT32_MAX;
  std::uint32_t polls = 0;
  std::uint64_t poll_addr = 0;
  std::uint64_t poll_value = 0;
  // barrier.cluster: the cluster's phase this thread arrived in, plus 1 (0: not arrived)
  std::uint64_t cluster_arrival = 0;
  // mbarrier.try_wait (TState::mbarrier_wait): the object, in this CTA's shared memory or
  // another one's of the cluster, and the parity of the phase waited for
  const unsigned char* mbarrier_waited = nullptr;
  std::uint32_t mbarrier_parity = 0;
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

struct Cta;

/// The CTAs of one cluster, admitted to the resident set together, and its barrier
/// (barrier.cluster). Its CTAs run on any workers: the barrier is under its mutex, and accesses
/// to a CTA's shared memory are host atomics when the cluster has several CTAs.
struct Cluster {
  std::uint64_t linear = 0;                ///< the cluster's index in the grid of clusters
  unsigned id[3] = {};                     ///< %clusterid
  std::vector<Cta*> ctas;                  ///< by rank (%cluster_ctarank)
  std::uint32_t finished = 0;              ///< CTAs whose threads all exited (Grid's lock)
  std::vector<std::unique_ptr<Cta>> done;  ///< finished CTAs, kept until the whole cluster is
  std::mutex mutex;                        ///< the barrier's state below
  std::uint64_t live = 0;                  ///< threads of the cluster that have not exited
  std::uint64_t arrived = 0;               ///< threads arrived in the current phase
  std::atomic<std::uint64_t> phase{0};     ///< completed phases of barrier.cluster
  /// CTAs of the cluster that workers hold now (Grid::take to Grid::put, under the Grid's lock),
  /// and the turns in a row (each ended while no other CTA of the cluster was held) in which a
  /// CTA executed nothing: its threads all wait at barrier.cluster.wait or in mbarrier.try_wait,
  /// which only the cluster's CTAs can release.
  std::atomic<std::uint32_t> held{0};
  std::atomic<std::uint32_t> idle_turns{0};
};

/// One resident CTA: its threads, shared memory and barriers. It runs on one worker at a time
/// (Grid hands it over under its lock).
struct Cta {
  std::uint64_t linear = 0;  ///< x + nx * (y + ny * z)
  bool started = false;      ///< its threads are set up
  Cluster* cluster = nullptr;
  std::uint32_t rank = 0;  ///< %cluster_ctarank
  unsigned cluster_ctaid[3] = {};
  unsigned ctaid[3] = {};
  std::uint32_t live = 0;   ///< threads that have not exited
  std::uint64_t clock = 0;  ///< instructions executed before its current turn (%clock64)
  std::vector<unsigned char> shared;
  std::vector<Thread> threads;
  std::vector<std::uint8_t> bar_of;      ///< the barrier each waiting thread waits at
  std::vector<std::uint8_t> slice_used;  ///< per warp: its last slice ran to the end
  Barrier barriers[16];
};

/// Thrown to end the launch (Machine::fault()); the worker reports it to the Grid.
struct KernelFault {
  Fault fault;
  std::string what;
};

/// Thrown to unwind a worker when another one ended the launch.
struct Stopped {};

/// What the workers of one launch share: the CTAs (those not started yet, the resident ones
/// waiting for a turn), the first fault, and the services that must be called one at a time.
class Grid {
 public:
  explicit Grid(Launch& l);

  /// Runs every CTA on Launch::workers workers (the calling thread and new threads).
  Outcome run();

  /// A CTA to run: a new one while the resident set has room (its `started` is false), else a
  /// resident one waiting for its turn; nullptr when the launch is over. Waits while every
  /// remaining CTA is on another worker.
  std::unique_ptr<Cta> take();
  /// Gives a CTA back after its turn: finished (its slot admits the next CTA) or waiting.
  void put(std::unique_ptr<Cta> c, bool finished);
  /// Ends the launch: the first fault reported is its outcome.
  void fail(KernelFault f);

  Launch& l;
  const Program& p;
  std::uint32_t nthreads = 0;
  std::uint32_t nwarps = 0;
  std::size_t shared_size = 0;
  std::uint64_t total = 0;            ///< CTAs in the grid
  std::uint64_t resident = 0;         ///< CTAs started at once (whole clusters)
  std::uint32_t cluster_size = 1;     ///< CTAs per cluster
  unsigned nclusters[3] = {1, 1, 1};  ///< %nclusterid
  std::chrono::steady_clock::time_point start;
  std::atomic<bool> stop{false};  ///< a worker faulted: the others stop

  /// printf, malloc and free, one call at a time; `heap` under it.
  std::mutex services;
  /// The device heap's blocks (Launch::heap, then what this launch allocates and frees).
  std::vector<MemoryRange> heap;
  /// Counts frees: a worker's cached heap block is valid while it has not changed.
  std::atomic<std::uint64_t> heap_generation{0};
  std::atomic<std::size_t> heap_blocks{0};
  /// Atomics of a width the host has no atomic instruction for (b128).
  std::mutex wide_atomics;

 private:
  void work() noexcept;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t next_ = 0;     // the next CTA to start
  std::uint64_t running_ = 0;  // started and not finished
  // Admits the next cluster: its CTAs, the first one returned, the others queued in ready_.
  std::unique_ptr<Cta> admit();
  std::unique_ptr<Cta> spare_cta();

  std::deque<std::unique_ptr<Cta>> ready_;
  std::vector<std::unique_ptr<Cta>> spare_;         // finished, for reuse
  std::vector<std::unique_ptr<Cluster>> clusters_;  // every cluster object (reused)
  std::vector<Cluster*> spare_clusters_;
  bool failed_ = false;
  Outcome outcome_;
  std::exception_ptr error_;
};

/// One worker of a launch: runs turns of the Grid's CTAs, each CTA's warps by turns.
class Machine {
 public:
  explicit Machine(Grid& g);

  /// Runs turns of CTAs until none is left; a fault is thrown (KernelFault), as is Stopped.
  void work();

 private:
  enum class Step { next, rescan, yield };
  enum class Ran { nothing, ran, yielded };

  // --------------------------------------------------------------- scheduling (exec_schedule.cpp)

  // Sets up the threads of a new CTA.
  void start_cta(Cta& c);
  // Runs rounds of c's warps for up to kTurnSteps instructions; true when c finished.
  bool turn(Cta& c);
  [[noreturn]] void deadlock(const char* whose = "the other threads");
  // After a turn of c: whether the cluster's CTAs have all waited, executing nothing, for more
  // turns in a row than it takes each of them to have one (a deadlock across the cluster).
  static bool cluster_stalled(Cluster& k, bool idle, std::uint32_t cluster_size);

  std::uint32_t lanes_of(std::uint32_t w) const {
    const std::uint32_t first = w * 32;
    return std::min<std::uint32_t>(32, nthreads_ - first);
  }

  // Runs warp w for up to a slice: whether it executed anything, and whether it yielded.
  Ran run_warp(std::uint32_t w);
  // Every 65536 instructions: the timeout, and whether another worker ended the launch.
  void check_timeout();
  // Ends the launch: the fault and a message naming the kernel, PTX line, block and thread.
  [[noreturn]] void fault(Fault f, const std::string& what);

  // --------------------------------------------------------------------- memory (exec_memory.cpp)

  static std::string hex(std::uint64_t v);
  [[noreturn]] void bad_address(std::uint64_t addr, unsigned size, bool write, const char* space);
  // Whether `size` bytes at `a` lie in one range of the memory map or the device heap (and, for
  // a write, one the device may write).
  bool in_global(std::uint64_t a, unsigned size, bool write = false);
  // The range of the memory map or the device heap holding `size` bytes at `a`, or nullptr.
  const MemoryRange* find_global(std::uint64_t a, unsigned size);
  // Whether an access in `space` at `addr` is to global memory (shared by the workers).
  static bool is_global(Space space, std::uint64_t addr) {
    return space == Space::global || space == Space::constant ||
           (space == Space::generic && addr < kSharedWindow);
  }
  // Whether an access in `space` at `addr` may race with another worker: global memory, and
  // shared memory when a cluster has several CTAs (distributed shared memory).
  bool shared_by_workers(Space space, std::uint64_t addr) const {
    if (is_global(space, addr)) return true;
    return g_.cluster_size > 1 &&
           (space == Space::shared || (space == Space::generic && addr >= kSharedWindow &&
                                       addr < kSharedWindow + kWindowSize));
  }
  // The CTA that a (.shared::cluster) shared address belongs to, and the offset in it; faults
  // for a rank outside the cluster.
  Cta& shared_owner(std::uint64_t& addr, unsigned size, bool write);
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
  // Records a load's or atomic's value for polling detection (Thread::polls).
  static void note_poll(Thread& t, std::uint64_t addr, std::uint64_t value) {
    if (t.poll_pc == t.pc && t.poll_addr == addr && t.poll_value == value) {
      ++t.polls;
    } else {
      t.poll_pc = t.pc;
      t.poll_addr = addr;
      t.poll_value = value;
      t.polls = 0;
    }
  }
  // Whether every lane in `active` polled unchanged memory often enough to yield (and, if so,
  // starts their counts again).
  bool polling(Thread* lanes, std::uint32_t active, const Inst& in);

  // ------------------------------------------------------------ atomics (exec_atomic.cpp)

  void atomic(Thread& t, const Inst& in);
  // One atomic read-modify-write of the `es` bytes at p with operation `sub` on type `ty` (b the
  // operand, c atom.cas's new value; `ftz` flushes a floating-point add's subnormals): the old
  // value.
  std::uint64_t read_modify_write(unsigned char* p, unsigned es, Sub sub, Type ty, bool ftz,
                                  std::uint64_t b, std::uint64_t c);
  // fence, membar: host fences (fence.sc and membar sequentially consistent).
  static void fence(const Inst& in);
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
  // The CTA's instruction count (%clock64): monotonic for it, whichever worker runs it.
  std::uint64_t clock() const { return cta_->clock + (instructions_ - turn_start_); }

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

  // ------------------------------------------------------------- clusters (exec_cluster.cpp)

  // mapa, getctarank, barrier.cluster.arrive/wait
  void mapa(Thread& t, const Inst& in);
  void getctarank(Thread& t, const Inst& in);
  Step cluster_barrier(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                       std::uint32_t pc);
  // A thread of the cluster exits: it no longer counts for barrier.cluster.
  void cluster_exit(Thread& t);

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
  // cp.async.bulk.tensor in tile and im2col modes (exec_tensor.cpp): one thread's copy of a box
  // (with kReduce, cp.reduce.async.bulk.tensor: the box reduced into the tensor).
  void tensor_copy(Thread& t, const Inst& in);
  // The PTX type of a tensor reduction `op` on a map's CUtensorMapDataType; faults when the
  // PTX ISA does not list the pair.
  Type reduction_type(Sub op, unsigned data_type);
  // cp.reduce.async.bulk (exec_async.cpp): `bytes` at shared `src` reduced element by element
  // into `dst` (global, or shared memory of a cluster CTA completing on the mbarrier at `bar`).
  void bulk_reduce(Thread& t, const Inst& in, std::uint64_t dst, std::uint64_t src,
                   std::uint32_t bytes);

  // --------------------------------------------------- textures and surfaces (exec_texture.cpp)

  // The object (Launch::textures) whose handle operand `op` of `in` holds; faults for a handle
  // that is no live object of the kind.
  const Texture& texture_object(Thread& t, const Inst& in, int op, bool surface);
  // tex and tld4: one thread's fetch.
  void texture(Thread& t, const Inst& in);
  // txq and suq.
  void texture_query(Thread& t, const Inst& in);
  // suld, sust, sured.
  void surface(Thread& t, const Inst& in);
  // st.async / red.async: completes the bytes stored on the destination CTA's mbarrier.
  void complete_remote_store(Thread& t, const Inst& in);

  // ------------------------------------------------- mbarrier objects (exec_mbarrier.cpp)

  // mbarrier.init, inval, arrive (and _drop, .expect_tx, .noComplete), expect_tx, complete_tx,
  // test_wait and try_wait (a thread whose phase is not complete waits in TState::mbarrier_wait
  // until run_warp sees the phase complete), pending_count.
  Step mbarrier(Thread* lanes, std::uint32_t group, std::uint32_t active, const Inst& in,
                std::uint32_t pc);
  // The bytes of the mbarrier object at `addr` (a shared or generic address; a .shared::cluster
  // address may be in another CTA of the cluster), which must be `initialized` (else a fault);
  // `what` names the instruction in a fault.
  unsigned char* mbarrier_object(Thread& t, Space space, std::uint64_t addr, const char* what,
                                 bool initialized = true);
  // Adds `tx` to the object's tx-count, then `count` arrivals (arrive_drop: `drop` fewer expected
  // from now on), atomically (other CTAs of the cluster update it too); completes the phase when
  // no arrival and no transaction is pending. Returns the object's value before.
  std::uint64_t mbarrier_update(unsigned char* obj, std::uint32_t count, std::int64_t tx,
                                std::uint32_t drop = 0, bool no_complete = false);
  // Whether the phase of `parity` of the object at `obj` is complete (a waiting thread resumes).
  static bool mbarrier_phase_done(const unsigned char* obj, std::uint32_t parity);

  Grid& g_;
  Launch& l_;
  const Program& p_;
  const Function& entry_;
  std::uint32_t nthreads_ = 0;
  std::uint32_t nwarps_ = 0;
  std::size_t shared_size_ = 0;
  Cta* cta_ = nullptr;              // the CTA whose turn it is
  Thread* threads_ = nullptr;       // its threads
  std::uint64_t instructions_ = 0;  // executed by this worker
  std::uint64_t turn_start_ = 0;    // instructions_ when the CTA's turn began
  Thread* cur_ = nullptr;
  MemoryRange cache_;                        // the last range of the memory map found
  MemoryRange heap_cache_;                   // the last device heap block found
  std::uint64_t heap_cache_generation_ = 0;  // Grid::heap_generation when it was found
};

}  // namespace swcu::ptx::detail
