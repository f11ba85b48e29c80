// The special registers' values (%tid, %ctaid, %laneid, %clock, %globaltimer, cluster ids,
// ...) for a thread of the launch (exec_machine.hpp).
#include <algorithm>
#include <chrono>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

std::uint64_t Machine::sreg(const Thread& t, const Operand& o) {
  switch (static_cast<SReg>(o.reg)) {
    case SReg::tid_x: return t.tid[0];
    case SReg::tid_y: return t.tid[1];
    case SReg::tid_z: return t.tid[2];
    case SReg::ntid_x: return l_.block[0];
    case SReg::ntid_y: return l_.block[1];
    case SReg::ntid_z: return l_.block[2];
    case SReg::ctaid_x: return cta_->ctaid[0];
    case SReg::ctaid_y: return cta_->ctaid[1];
    case SReg::ctaid_z: return cta_->ctaid[2];
    case SReg::nctaid_x: return l_.grid[0];
    case SReg::nctaid_y: return l_.grid[1];
    case SReg::nctaid_z: return l_.grid[2];
    case SReg::laneid: return t.lane;
    case SReg::warpid: return t.warp;
    case SReg::nwarpid: return 64;
    case SReg::smid: return cta_->linear % std::max(1u, l_.sm_count);
    case SReg::nsmid: return l_.sm_count;
    case SReg::gridid: return l_.grid_id;
    case SReg::lanemask_eq: return 1ull << t.lane;
    case SReg::lanemask_le: return (2ull << t.lane) - 1;
    case SReg::lanemask_lt: return (1ull << t.lane) - 1;
    case SReg::lanemask_ge: return (~((1ull << t.lane) - 1)) & 0xffffffffu;
    case SReg::lanemask_gt: return (~((2ull << t.lane) - 1)) & 0xffffffffu;
    case SReg::clock: return clock() & 0xffffffffu;
    case SReg::clock_hi: return clock() >> 32;
    case SReg::clock64: return clock();
    case SReg::globaltimer:
    case SReg::globaltimer_lo:
    case SReg::globaltimer_hi: {
      const auto ns =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
      if (static_cast<SReg>(o.reg) == SReg::globaltimer_lo) return ns & 0xffffffffu;
      if (static_cast<SReg>(o.reg) == SReg::globaltimer_hi) return ns >> 32;
      return ns;
    }
    case SReg::dynamic_smem_size: return l_.dynamic_shared;
    case SReg::total_smem_size: return shared_size_;
    case SReg::current_graph_exec: return l_.current_graph_exec;
    case SReg::envreg:  // %envreg1:%envreg2 is the grid workspace; the others are 0
      if (o.imm == 1) return l_.grid_workspace >> 32;
      if (o.imm == 2) return l_.grid_workspace & 0xffffffffu;
      return 0;
    // clusters (PTX ISA "Special registers"): a launch without a cluster size runs each CTA as
    // a cluster of one (%is_explicit_cluster 0)
    case SReg::cluster_ctarank: return cta_->rank;
    case SReg::cluster_nctarank: return g_.cluster_size;
    case SReg::is_explicit_cluster: return l_.explicit_cluster ? 1 : 0;
    case SReg::cluster_ctaid_x: return cta_->cluster_ctaid[0];
    case SReg::cluster_ctaid_y: return cta_->cluster_ctaid[1];
    case SReg::cluster_ctaid_z: return cta_->cluster_ctaid[2];
    case SReg::cluster_nctaid_x: return std::max(l_.cluster[0], 1u);
    case SReg::cluster_nctaid_y: return std::max(l_.cluster[1], 1u);
    case SReg::cluster_nctaid_z: return std::max(l_.cluster[2], 1u);
    case SReg::clusterid_x: return cta_->cluster->id[0];
    case SReg::clusterid_y: return cta_->cluster->id[1];
    case SReg::clusterid_z: return cta_->cluster->id[2];
    case SReg::nclusterid_x: return g_.nclusters[0];
    case SReg::nclusterid_y: return g_.nclusters[1];
    case SReg::nclusterid_z: return g_.nclusters[2];
    case SReg::pm: return 0;
  }
  return 0;
}

}  // namespace swcu::ptx::detail
