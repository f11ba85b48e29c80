// What a thread has in flight of its asynchronous copies (exec_async.cpp), kept in its Thread
// (exec_machine.hpp): the cp.async copies and the cp.async.bulk copies to global memory that
// it issued and that no completion mechanism has completed yet, with the group each belongs
// to. Copies are checked when issued and performed as late as the PTX ISA allows: when a
// wait_group, wait_all or cp.async.mbarrier.arrive covers them, or when the thread exits.
#pragma once

#include <cstdint>
#include <vector>

namespace swcu::ptx::detail {

/// One copy issued and not performed yet.
struct PendingCopy {
  std::uint64_t dst = 0;       ///< cp.async: offset in shared memory; bulk: global address
  std::uint64_t src = 0;       ///< cp.async: global address; bulk: offset in shared memory
  std::uint32_t size = 0;      ///< bytes written to dst
  std::uint32_t src_size = 0;  ///< bytes read from src; the rest of `size` is zero-filled
  std::uint32_t group = 0;     ///< CopyGroups::committed when it was issued
};

/// The copies of one completion mechanism (cp.async groups, or cp.async.bulk groups).
struct CopyGroups {
  std::vector<PendingCopy> pending;  ///< in issue order
  std::uint32_t committed = 0;       ///< groups committed so far: the open group's number
  bool to_global = false;            ///< bulk groups: shared to global (else global to shared)
};

/// A thread's copies in flight.
struct AsyncCopies {
  CopyGroups copies;                          ///< cp.async (commit_group / wait_group)
  CopyGroups bulk = CopyGroups{{}, 0, true};  ///< cp.async.bulk.global.shared::cta.bulk_group
};

}  // namespace swcu::ptx::detail
