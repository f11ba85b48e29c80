// Asynchronous copies (exec_machine.hpp, exec_async.hpp): cp.async with its zero-fill forms,
// cp.async.commit_group / wait_group / wait_all, cp.async.mbarrier.arrive{.noinc}, and
// cp.async.bulk to shared memory (completing through an mbarrier's tx-count; in the issuing CTA,
// another CTA of its cluster, or with .multicast::cluster several) and to global memory (in
// bulk groups), and cp.reduce.async.bulk.
//
// Every address is checked when the copy is issued, so a bad one faults on the line of the
// cp.async. A cp.async (and a bulk copy to global memory) is performed as late as the PTX ISA
// allows: when a wait_group or wait_all covers its group, when a cp.async.mbarrier.arrive of
// its thread makes an mbarrier track it, or when its thread exits; a kernel that reads the
// destination without waiting sees the old bytes, as it may on a GPU. A bulk copy to shared
// memory is performed when issued, and completes its bytes on the destination CTA's mbarrier
// then (a phase that expects them completes when its arrivals are in too).
#include <algorithm>
#include <bit>
#include <cstring>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

// The bytes a copy reads: a cp.async with a src-size reads fewer bytes than its (aligned) size.
const unsigned char* Machine::source(Thread& t, Space space, std::uint64_t addr,
                                     std::uint32_t bytes) {
  if (space != Space::global) return resolve(t, space, addr, bytes, false);
  if (!in_global(addr, bytes)) bad_address(addr, bytes, false, "global");
  return reinterpret_cast<const unsigned char*>(addr);
}

void Machine::complete_copies(Thread& t, CopyGroups& g, std::uint32_t before) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < g.pending.size(); ++i) {
    const PendingCopy c = g.pending[i];
    if (c.group >= before) {
      g.pending[kept++] = c;
      continue;
    }
    const Space dst_space = g.to_global ? Space::global : Space::shared;
    const Space src_space = g.to_global ? Space::shared : Space::global;
    unsigned char* d = resolve(t, dst_space, c.dst, c.size, true);
    if (c.src_size > 0) {
      std::memmove(d, source(t, src_space, c.src, c.src_size), c.src_size);
    }
    std::memset(d + c.src_size, 0, c.size - c.src_size);
  }
  g.pending.resize(kept);
}

void Machine::complete_async(Thread& t) {
  complete_copies(t, t.async.copies, UINT32_MAX);
  complete_copies(t, t.async.bulk, UINT32_MAX);
  t.async.copies.committed = 0;
  t.async.bulk.committed = 0;
}

Machine::Step Machine::async_copy(Thread* lanes, std::uint32_t group, std::uint32_t active,
                                  const Inst& in, std::uint32_t pc) {
  for (std::uint32_t m = group; m != 0; m &= m - 1) {
    const auto i = static_cast<std::uint32_t>(std::countr_zero(m));
    Thread& t = lanes[i];
    cur_ = &t;
    if ((active >> i) & 1) {
      CopyGroups& copies = in.op == Op::cp_async || in.op == Op::cp_async_commit ||
                                   in.op == Op::cp_async_wait ||
                                   in.op == Op::cp_async_mbarrier_arrive
                               ? t.async.copies
                               : t.async.bulk;
      switch (in.op) {
        case Op::cp_async: {
          // [dst], [src], cp-size, src-size (ops[3]: the ignore-src predicate with kIgnoreSrc)
          const std::uint64_t dst = address(t, in.ops[0]);
          const std::uint64_t src = address(t, in.ops[1]);
          const auto size = static_cast<std::uint32_t>(in.ops[2].imm);
          std::uint32_t src_size = size;
          if (in.mode & kIgnoreSrc) {
            if (read(t, in.ops[3]) & 1) src_size = 0;
          } else {
            const std::uint64_t n = read(t, in.ops[3]) & 0xffffffffu;
            if (n > size) {
              fault(Fault::illegal_instruction,
                    "cp.async src-size " + std::to_string(n) + " is larger than its cp-size " +
                        std::to_string(size) + " (undefined behaviour in the PTX ISA)");
            }
            src_size = static_cast<std::uint32_t>(n);
          }
          resolve(t, Space::shared, dst, size, true);
          if (src_size > 0) {
            // the source is read at its cp-size's alignment even when fewer bytes are copied
            if (src % size != 0) {
              fault(Fault::misaligned, "misaligned address " + hex(src) + " for a cp.async of " +
                                           std::to_string(size) + " bytes");
            }
            source(t, Space::global, src, src_size);
          }
          copies.pending.push_back({dst, src, size, src_size, copies.committed});
          break;
        }
        case Op::cp_async_commit:
        case Op::cp_async_bulk_commit: ++copies.committed; break;
        case Op::cp_async_wait:
        case Op::cp_async_bulk_wait: {
          // wait_all is commit_group then wait_group 0; wait_group N leaves the N newest groups
          if (in.nops == 0) ++copies.committed;
          const std::uint64_t n = in.nops == 0 ? 0 : static_cast<std::uint64_t>(in.ops[0].imm);
          if (n < copies.committed) {
            complete_copies(t, copies, copies.committed - static_cast<std::uint32_t>(n));
          }
          break;
        }
        case Op::cp_async_mbarrier_arrive: {
          // The mbarrier tracks every prior cp.async of the thread: they complete now, and so
          // does the arrive-on they trigger. Without .noinc the pending count was raised by
          // one first, so that arrive-on leaves the phase as it was.
          unsigned char* obj =
              mbarrier_object(t, in.space, address(t, in.ops[0]), "cp.async.mbarrier.arrive");
          complete_copies(t, copies, UINT32_MAX);
          if (in.mode & kNoInc) mbarrier_update(obj, 1, 0);
          break;
        }
        case Op::cp_async_bulk: {
          const std::uint64_t dst = address(t, in.ops[0]);
          const std::uint64_t src = address(t, in.ops[1]);
          const std::uint64_t size = read(t, in.ops[2]) & 0xffffffffu;
          if (size % 16 != 0 || dst % 16 != 0 || src % 16 != 0) {
            fault(Fault::misaligned, "cp.async.bulk of " + std::to_string(size) + " bytes from " +
                                         hex(src) + " to " + hex(dst) +
                                         ": the size and both addresses must be multiples of 16");
          }
          const auto bytes = static_cast<std::uint32_t>(size);
          if (in.flags & kReduce) {
            bulk_reduce(t, in, dst, src, bytes);
            break;
          }
          if (in.mode & kBulkToGlobal) {
            resolve(t, Space::global, dst, bytes, true);
            resolve(t, Space::shared, src, bytes, false);
            copies.pending.push_back({dst, src, bytes, bytes, copies.committed});
            break;
          }
          const std::uint64_t bar = address(t, in.ops[3]);
          // one destination CTA (the rank in a .shared::cluster address), or with
          // .multicast::cluster the same CTA-relative offsets in every CTA of ctaMask
          const std::uint64_t mask = (in.flags & kMulticast) ? read(t, in.ops[4]) & 0xffff : 0;
          if ((in.flags & kMulticast) && (mask >> g_.cluster_size) != 0) {
            fault(Fault::illegal_address, "cp.async.bulk.multicast::cluster with ctaMask " +
                                              hex(mask) +
                                              ", which names CTAs outside the cluster of " +
                                              std::to_string(g_.cluster_size));
          }
          const unsigned char* s = bytes > 0 ? resolve(t, in.space, src, bytes, false) : nullptr;
          for (std::uint64_t ranks = (in.flags & kMulticast) ? mask : 1; ranks != 0;
               ranks &= ranks - 1) {
            std::uint64_t to = dst, at = bar;
            if (in.flags & kMulticast) {
              const std::uint64_t rank = static_cast<std::uint64_t>(std::countr_zero(ranks)) + 1;
              to = (rank << kClusterRankShift) | (dst & ((1ull << kClusterRankShift) - 1));
              at = (rank << kClusterRankShift) | (bar & ((1ull << kClusterRankShift) - 1));
            }
            unsigned char* obj = mbarrier_object(t, Space::shared, at, "cp.async.bulk");
            unsigned char* d = resolve(t, Space::shared, to, bytes, true);
            if (bytes > 0) std::memmove(d, s, bytes);
            mbarrier_update(obj, 0, -static_cast<std::int64_t>(bytes));
          }
          break;
        }
        default: break;
      }
    }
    t.pc = pc + 1;
    t.state = TState::run;
  }
  return Step::next;
}

// Performed when issued, as a bulk copy to shared memory is: a reduction into global memory has
// nothing left for its bulk group to wait for. Each element's reduction is atomic ("performed
// atomically at the element level", PTX ISA cp.reduce.async.bulk).
void Machine::bulk_reduce(Thread& t, const Inst& in, std::uint64_t dst, std::uint64_t src,
                          std::uint32_t bytes) {
  const unsigned es = elem_size(in);
  const Space space = (in.mode & kBulkToGlobal) ? Space::global : Space::shared;
  if (bytes % es != 0) {
    fault(Fault::misaligned, "cp.reduce.async.bulk of " + std::to_string(bytes) +
                                 " bytes, not a whole number of " + std::to_string(es) +
                                 "-byte elements");
  }
  const unsigned char* s = bytes > 0 ? resolve(t, Space::shared, src, bytes, false) : nullptr;
  unsigned char* d = bytes > 0 ? resolve(t, space, dst, bytes, true) : nullptr;
  // .add.f32 flushes subnormal inputs and results (there is no .noftz form for it)
  const bool ftz = in.type == Type::f32 && in.sub == Sub::a_add;
  for (std::uint32_t k = 0; k < bytes; k += es) {
    read_modify_write(d + k, es, in.sub, in.type, ftz, load_bits(s + k, es), 0);
  }
  if (space == Space::global) return;
  const std::uint64_t bar = address(t, in.ops[3]);
  if ((dst >> kClusterRankShift) != (bar >> kClusterRankShift)) {
    fault(Fault::illegal_address, "cp.reduce.async.bulk to " + hex(dst) +
                                      " completing on the mbarrier at " + hex(bar) +
                                      ", which is in another CTA's shared memory (the PTX ISA "
                                      "requires the destination's CTA)");
  }
  unsigned char* obj = mbarrier_object(t, Space::shared, bar, "cp.reduce.async.bulk");
  mbarrier_update(obj, 0, -static_cast<std::int64_t>(bytes));
}

// st.async / red.async, once the store or reduction is done: its bytes complete on the mbarrier,
// which the PTX ISA requires to be in the same CTA as the destination.
void Machine::complete_remote_store(Thread& t, const Inst& in) {
  const std::uint64_t dst = address(t, in.ops[0]);
  const std::uint64_t bar = address(t, in.ops[2]);
  const char* what = in.op == Op::st_async ? "st.async" : "red.async";
  if ((dst >> kClusterRankShift) != (bar >> kClusterRankShift)) {
    fault(Fault::illegal_address, std::string(what) + " to " + hex(dst) +
                                      " completing on the mbarrier at " + hex(bar) +
                                      ", which is in another CTA's shared memory (the PTX ISA "
                                      "requires the destination's CTA)");
  }
  unsigned char* obj = mbarrier_object(t, Space::shared, bar, what);
  mbarrier_update(obj, 0, -static_cast<std::int64_t>(elem_size(in) * in.vec));
}

}  // namespace swcu::ptx::detail
