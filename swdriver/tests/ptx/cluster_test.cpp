// Thread-block clusters in the PTX interpreter: the cluster special registers (PTX ISA
// "Special registers": %clusterid, %nclusterid, %cluster_ctaid, %cluster_nctaid,
// %cluster_ctarank, %cluster_nctarank, %is_explicit_cluster), distributed shared memory (mapa,
// getctarank, isspacep.shared::cluster, ld/st/atom/red.shared::cluster and generic accesses of
// another CTA's shared memory) and barrier.cluster.arrive/wait. Sizes come from the kernel's
// .reqnctapercluster or from CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (cuLaunchKernelEx).
#include <cstdint>
#include <string>
#include <vector>

#include "ptx_support.hpp"

namespace {

using ptxt::Dim3;
using ptxt::PtxTest;
using u32 = std::uint32_t;

// ptxt::kernel(body) with `directive` (".reqnctapercluster 2, 1, 1") on its entry.
std::string with_directive(const std::string& body, const std::string& directive,
                           const std::string& prelude = "") {
  std::string text = ptxt::kernel(body, prelude);
  const std::string open = ")\n{\n";
  const std::size_t at = text.find(open, text.find(".entry k("));
  text.replace(at, open.size(), ")\n" + directive + "\n{\n");
  return text;
}

// Every CTA's thread 0 writes 16 special registers at out[16 * linear block index].
const std::string kSregs = R"(
  .reg .b32 %v<17>;
  .reg .b64 %a;
  .reg .pred %p;
  setp.ne.u32 %p, %tx, 0;
  @%p bra DONE;
  mov.u32 %v0, %clusterid.x;
  mov.u32 %v1, %clusterid.y;
  mov.u32 %v2, %clusterid.z;
  mov.u32 %v3, %nclusterid.x;
  mov.u32 %v4, %nclusterid.y;
  mov.u32 %v5, %nclusterid.z;
  mov.u32 %v6, %cluster_ctaid.x;
  mov.u32 %v7, %cluster_ctaid.y;
  mov.u32 %v8, %cluster_ctaid.z;
  mov.u32 %v9, %cluster_nctaid.x;
  mov.u32 %v10, %cluster_nctaid.y;
  mov.u32 %v11, %cluster_nctaid.z;
  mov.u32 %v12, %cluster_ctarank;
  mov.u32 %v13, %cluster_nctarank;
  mov.u32 %v14, %is_explicit_cluster;
  mov.u32 %v15, %ctaid.x;
  mov.u32 %v16, %nctaid.x;
  mad.lo.u32 %v16, %ctaid.y, %v16, %v15;
  mov.u32 %v15, %nctaid.x;
  mul.lo.u32 %v15, %v15, %nctaid.y;
  mad.lo.u32 %v16, %ctaid.z, %v15, %v16;
  mul.wide.u32 %a, %v16, 64;
  add.u64 %a, %a, %out;
  st.global.v4.u32 [%a], {%v0, %v1, %v2, %v3};
  st.global.v4.u32 [%a+16], {%v4, %v5, %v6, %v7};
  st.global.v4.u32 [%a+32], {%v8, %v9, %v10, %v11};
  mov.u32 %v15, 0;
  st.global.v4.u32 [%a+48], {%v12, %v13, %v14, %v15};
DONE:
)";

// The expected registers of each block (host reference from the PTX ISA definitions: the
// cluster index is ctaid / cluster dims, the position in it ctaid % cluster dims, the rank
// x + cx * (y + cy * z)).
std::vector<u32> expected_sregs(Dim3 grid, Dim3 c, bool explicit_cluster) {
  std::vector<u32> out;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        const u32 cx = x % c.x, cy = y % c.y, cz = z % c.z;
        const std::vector<u32> v = {x / c.x,
                                    y / c.y,
                                    z / c.z,
                                    grid.x / c.x,
                                    grid.y / c.y,
                                    grid.z / c.z,
                                    cx,
                                    cy,
                                    cz,
                                    c.x,
                                    c.y,
                                    c.z,
                                    cx + c.x * (cy + c.y * cz),
                                    c.x * c.y * c.z,
                                    explicit_cluster ? 1u : 0u,
                                    0};
        out.insert(out.end(), v.begin(), v.end());
      }
    }
  }
  return out;
}

struct ClusterTest : PtxTest {
  /// Launches "k" with cuLaunchKernelEx and CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION `c`; returns
  /// `count` u32 of the output.
  std::vector<u32> run_ex(const std::string& module, std::size_t count, Dim3 grid, Dim3 block,
                          Dim3 c) {
    loaded = load_logged(module);
    const CUfunction f = function(loaded, "k");
    const CUdeviceptr out = alloc(count * 4);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8_v2(out, 0xab, count * 4));
    CUdeviceptr a = out, b = out;
    void* params[] = {&a, &b};
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = c.x;
    attr.value.clusterDim.y = c.y;
    attr.value.clusterDim.z = c.z;
    CUlaunchConfig config{};
    config.gridDimX = grid.x;
    config.gridDimY = grid.y;
    config.gridDimZ = grid.z;
    config.blockDimX = block.x;
    config.blockDimY = block.y;
    config.blockDimZ = block.z;
    config.attrs = &attr;
    config.numAttrs = 1;
    swcu::test::StderrCapture capture;
    status = swcu::test::mod().cuLaunchKernelEx(&config, f, params, nullptr);
    if (status == CUDA_SUCCESS) status = cu.cuCtxSynchronize();
    err = capture.finish();
    if (expect_fault) return {};
    SWCU_TEST_REQUIRE_SUCCESS(status);
    std::vector<u32> host(count);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(host.data(), out, count * 4));
    return host;
  }
  bool expect_fault = false;  ///< run_ex: the launch faults (status and err say how)
  CUresult status = CUDA_SUCCESS;
  std::string err;
};

// Distributed shared memory: cluster of 4 CTAs of 32 threads. Each CTA fills s[tid] = 1000 *
// rank + tid, the cluster syncs; each thread reads s[tid] of the next rank through a generic
// mapa address and through a .shared::cluster one, adds 1 to rank 0's counter with
// atom.shared::cluster and red through a generic address, stores into the previous rank's
// t[tid] with st.shared::cluster; after a second cluster sync it writes what it read, the
// getctarank of the mapped address, isspacep.shared::cluster/::cta of it, t[tid] and (rank 0,
// thread 0) the counter. out[block][thread] = 8 u32.
const std::string kDsmem = R"(
  .shared .align 4 .b32 s[32];
  .shared .align 4 .b32 t[32];
  .shared .align 4 .b32 counter;
  .reg .b32 %rank, %n, %next, %prev, %v<8>, %sa, %sc;
  .reg .b64 %g, %gn, %a, %gc;
  .reg .pred %p, %q;
  mov.u32 %rank, %cluster_ctarank;
  mov.u32 %n, %cluster_nctarank;
  add.u32 %next, %rank, 1;
  rem.u32 %next, %next, %n;
  add.u32 %prev, %rank, %n;
  sub.u32 %prev, %prev, 1;
  rem.u32 %prev, %prev, %n;
  mad.lo.u32 %v0, %rank, 1000, %tx;
  mov.u32 %sa, s;
  mad.lo.u32 %sa, %tx, 4, %sa;
  st.shared.u32 [%sa], %v0;
  setp.eq.u32 %p, %tx, 0;
  mov.u32 %v1, 0;
  @%p st.shared.u32 [counter], %v1;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  cvta.shared.u64 %g, %sa;
  mapa.u64 %gn, %g, %next;
  ld.u32 %v1, [%gn];
  mapa.shared::cluster.u32 %sc, %sa, %next;
  ld.shared::cluster.u32 %v2, [%sc];
  getctarank.u32 %v3, %gn;
  isspacep.shared::cluster %q, %gn;
  selp.u32 %v4, 1, 0, %q;
  isspacep.shared::cta %q, %gn;
  selp.u32 %v5, 1, 0, %q;
  mov.u32 %sc, counter;
  mapa.shared::cluster.u32 %sc, %sc, 0;
  atom.shared::cluster.add.u32 %v6, [%sc], 1;
  mov.u32 %sc, counter;
  cvta.shared.u64 %gc, %sc;
  mov.u32 %v6, 0;
  mapa.u64 %gc, %gc, %v6;
  red.add.u32 [%gc], 2;
  mov.u32 %sc, t;
  mad.lo.u32 %sc, %tx, 4, %sc;
  mapa.shared::cluster.u32 %sc, %sc, %prev;
  st.shared::cluster.u32 [%sc], %v0;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  mov.u32 %sc, t;
  mad.lo.u32 %sc, %tx, 4, %sc;
  ld.shared.u32 %v6, [%sc];
  mov.u32 %v7, 0xffffffff;
  setp.eq.u32 %q, %rank, 0;
  and.pred %q, %q, %p;
  @%q ld.shared.u32 %v7, [counter];
  mov.u32 %v0, %ctaid.x;
  mad.lo.u32 %v0, %v0, 32, %tx;
  mul.wide.u32 %a, %v0, 32;
  add.u64 %a, %a, %out;
  st.global.v4.u32 [%a], {%v1, %v2, %v3, %v4};
  st.global.v4.u32 [%a+16], {%v5, %v6, %v7, %rank};
  barrier.cluster.arrive.relaxed.aligned;
  barrier.cluster.wait.aligned;
)";

std::vector<u32> expected_dsmem(unsigned blocks, unsigned n) {
  std::vector<u32> out;
  for (unsigned b = 0; b < blocks; ++b) {
    const u32 rank = b % n, next = (rank + 1) % n;
    for (u32 tx = 0; tx < 32; ++tx) {
      const u32 from_next = 1000 * next + tx;
      const u32 from_following = 1000 * ((rank + 1) % n) + tx;  // stored into our t by rank+1
      const u32 counter = rank == 0 && tx == 0 ? 3 * 32 * n : 0xffffffffu;
      const std::vector<u32> v = {from_next,        from_next,      next,    1,
                                  n == 1 ? 1u : 0u, from_following, counter, rank};
      out.insert(out.end(), v.begin(), v.end());
    }
  }
  return out;
}

}  // namespace

TEST_SUITE("ptx.cluster") {
  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: special registers with .reqnctapercluster") {
    const Dim3 grid{4, 4, 2}, c{2, 2, 1};
    const auto got = run_as<u32>(with_directive(kSregs, ".reqnctapercluster 2, 2, 1"), 16 * 32,
                                 std::vector<u32>{}, grid, Dim3{3, 1, 1});
    CHECK(got == expected_sregs(grid, c, true));
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: special registers with the launch attribute") {
    const Dim3 grid{2, 3, 4}, c{1, 3, 2};
    CHECK(run_ex(ptxt::kernel(kSregs), 16 * 24, grid, Dim3{2, 1, 1}, c) ==
          expected_sregs(grid, c, true));
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: without a cluster size each CTA is its own") {
    const Dim3 grid{3, 2, 1};
    CHECK(run_as<u32>(ptxt::kernel(kSregs), 16 * 6, std::vector<u32>{}, grid) ==
          expected_sregs(grid, Dim3{1, 1, 1}, false));
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: distributed shared memory and barrier.cluster (attribute)") {
    CHECK(run_ex(ptxt::kernel(kDsmem), 8 * 32 * 8, Dim3{8, 1, 1}, Dim3{32, 1, 1}, Dim3{4, 1, 1}) ==
          expected_dsmem(8, 4));
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: distributed shared memory across a large grid of clusters") {
    // more clusters than are resident at once (occupancy x 132 SMs): whole clusters are
    // admitted as others finish
    const unsigned blocks = 10000;  // resident: at most 32 blocks per SM x 132 SMs
    const auto got =
        run_as<u32>(with_directive(kDsmem, ".reqnctapercluster 8, 1, 1"), 8 * 32 * blocks,
                    std::vector<u32>{}, Dim3{blocks, 1, 1}, Dim3{32, 1, 1});
    CHECK(got == expected_dsmem(blocks, 8));
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: a cluster of one CTA") {
    CHECK(run_ex(ptxt::kernel(kDsmem), 8 * 32 * 2, Dim3{2, 1, 1}, Dim3{32, 1, 1}, Dim3{1, 1, 1}) ==
          expected_dsmem(2, 1));
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: barrier.cluster skips exited threads") {
    // thread 1 of every CTA exits early; the others sync twice and read the next rank's s[0]
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .reg .b32 %rank, %next, %v, %sa;
  .reg .pred %p;
  setp.eq.u32 %p, %tx, 1;
  @%p exit;
  mov.u32 %rank, %cluster_ctarank;
  setp.eq.u32 %p, %tx, 0;
  add.u32 %v, %rank, 7;
  @%p st.shared.u32 [s], %v;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  add.u32 %next, %rank, 1;
  rem.u32 %next, %next, 2;
  mov.u32 %sa, s;
  mapa.shared::cluster.u32 %sa, %sa, %next;
  ld.shared::cluster.u32 %v, [%sa];
  barrier.cluster.arrive;
  barrier.cluster.wait;
  mov.u32 %sa, %ctaid.x;
  mad.lo.u32 %sa, %sa, 4, %tx;
  mul.wide.u32 %rd_t, %sa, 4;
  add.u64 %rd_t, %rd_t, %out;
  st.global.u32 [%rd_t], %v;
)";
    const auto got = run_ex(ptxt::kernel(body), 8, Dim3{2, 1, 1}, Dim3{4, 1, 1}, Dim3{2, 1, 1});
    CHECK(got == std::vector<u32>{8, 0xabababab, 8, 8, 7, 0xabababab, 7, 7});
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: fence.acq_rel.cluster and a release flag") {
    // rank 1 writes data into rank 0's shared memory, fences and sets rank 0's flag; rank 0
    // spins on its flag (it yields to rank 1 on any number of workers), then reads the data
    const std::string body = R"(
  .shared .align 4 .b32 data;
  .shared .align 4 .b32 flag;
  .reg .b32 %rank, %sa, %v;
  .reg .pred %p;
  setp.ne.u32 %p, %tx, 0;
  @%p bra DONE;
  mov.u32 %rank, %cluster_ctarank;
  setp.eq.u32 %p, %rank, 0;
  @%p bra WAIT;
  mov.u32 %sa, data;
  mapa.shared::cluster.u32 %sa, %sa, 0;
  st.shared::cluster.u32 [%sa], 42;
  fence.acq_rel.cluster;
  mov.u32 %sa, flag;
  mapa.shared::cluster.u32 %sa, %sa, 0;
  st.relaxed.cluster.shared::cluster.u32 [%sa], 1;
  bra DONE;
WAIT:
  ld.relaxed.cluster.shared.u32 %v, [flag];
  setp.eq.u32 %p, %v, 0;
  @%p bra WAIT;
  fence.acq_rel.cluster;
  ld.shared.u32 %v, [data];
  st.global.u32 [%out], %v;
DONE:
  barrier.cluster.arrive;
  barrier.cluster.wait;
)";
    CHECK(run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1}) ==
          std::vector<u32>{42});
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: mapa to a rank outside the cluster faults") {
    // the PTX ISA leaves it undefined; the GPU reports an illegal address, as we do at the mapa
    expect_fault = true;
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .reg .b32 %sa;
  mov.u32 %sa, s;
  mapa.shared::cluster.u32 %sa, %sa, 2;
  st.shared::cluster.u32 [%sa], 1;
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("mapa to CTA rank 2, outside the cluster of 2 CTAs") != std::string::npos);
    CHECK(err.find("kernel k, PTX line") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: a shared::cluster address of no CTA of the cluster faults") {
    expect_fault = true;
    // rank bits 3 (rank 2) in a cluster of 2; then an offset past the CTA's shared memory
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .reg .b32 %v;
  ld.shared::cluster.u32 %v, [0x3000000];
  st.global.u32 [%out], %v;
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("illegal address: load of 4 bytes at 0x3000000 (shared::cluster; CTA rank 2 "
                   "is outside the cluster of 2 CTAs)") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: a generic address past another CTA's memory faults") {
    expect_fault = true;
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .reg .b32 %v;
  .reg .b64 %g;
  mov.u64 %g, s;
  cvta.shared.u64 %g, %g;
  mov.u32 %v, 1;
  mapa.u64 %g, %g, %v;
  st.u32 [%g+4096], %v;
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("illegal address: store of 4 bytes at 0x2001000 (shared; the CTA has") !=
          std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: a multicast bulk copy to a CTA outside the cluster faults") {
    // the PTX ISA leaves a ctaMask bit of no CTA of the cluster undefined; we report it at the copy
    expect_fault = true;
    const std::string body = R"(
  .shared .align 16 .b8 buf[16];
  .shared .align 8 .b64 bar;
  mbarrier.init.shared::cta.b64 [bar], 1;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [buf], [%out], 16, [bar], 5;
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("cp.async.bulk.multicast::cluster with ctaMask 0x5, which names CTAs outside "
                   "the cluster of 2") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: an arrive on another CTA's mbarrier before its init faults") {
    // rank 1 arrives on rank 0's object, which rank 0 never initialized (undefined behaviour in
    // the PTX ISA; the software driver reports it)
    expect_fault = true;
    const std::string body = R"(
  .shared .align 8 .b64 bar;
  .reg .b32 %r, %a;
  .reg .pred %p;
  mov.u32 %r, %cluster_ctarank;
  setp.eq.u32 %p, %r, 0;
  @%p bra DONE;
  mov.u32 %a, bar;
  mapa.shared::cluster.u32 %a, %a, 0;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%a];
DONE:
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_INSTRUCTION);
    INFO("stderr: ", err);
    CHECK(err.find("which holds no mbarrier object") != std::string::npos);
    CHECK(err.find("block (1,0,0)") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: a multicast copy needs a global source") {
    const std::string body = R"(
  .shared .align 16 .b8 buf[16];
  .shared .align 8 .b64 bar;
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster [buf], [buf], 16, [bar], 3;
)";
    const std::string e = ptxt::refused_ptx_log(ptxt::kernel(body));
    INFO(e);
    CHECK(e.find(".multicast::cluster copies from .global to .shared::cluster") !=
          std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: blocks that wait for each other forever end as a deadlock") {
    // Each block waits on its own mbarrier for an arrival from the other block, which instead
    // waits at barrier.cluster.wait (rank 1) or on its own mbarrier (rank 0): nothing can
    // complete. On a GPU the kernel hangs; the software driver reports the deadlock, with any
    // number of workers, instead of spinning until SWCUDA_KERNEL_TIMEOUT.
    expect_fault = true;
    const std::string body = R"(
  .shared .align 8 .b64 bar;
  .reg .b32 %r;
  .reg .pred %p, %done;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mov.u32 %r, %cluster_ctarank;
  setp.eq.u32 %p, %r, 1;
  @%p barrier.cluster.arrive;
  @%p barrier.cluster.wait;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %done, [bar], 0;
  @!%done bra WAIT;
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{32, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_LAUNCH_FAILED);
    INFO("stderr: ", err);
    CHECK(err.find("barrier deadlock: threads wait ") != std::string::npos);
    CHECK(err.find("that the other threads of the cluster can never reach") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: st.async completing on another block's mbarrier faults") {
    // the PTX ISA requires the mbarrier in the destination's CTA; we report it at the store
    expect_fault = true;
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .shared .align 8 .b64 bar;
  .reg .b32 %a, %b, %v;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mov.u32 %a, s;
  mov.u32 %b, bar;
  mapa.shared::cluster.u32 %a, %a, 1;
  mov.u32 %v, 7;
  st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%a], %v, [%b];
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("which is in another CTA's shared memory") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: st.async needs its completion mechanism") {
    const std::string body = R"(
  .shared .align 4 .b32 s[1];
  .shared .align 8 .b64 bar;
  st.async.shared::cluster.u32 [s], 1, [bar];
)";
    const std::string e = ptxt::refused_ptx_log(ptxt::kernel(body));
    INFO(e);
    CHECK(e.find("st.async needs .mbarrier::complete_tx::bytes") != std::string::npos);
  }

  TEST_CASE_FIXTURE(ClusterTest, "ptx.cluster: malformed bulk reductions are refused") {
    // The forms and type restrictions of the PTX ISA's cp.reduce.async.bulk{.tensor}.
    const std::string prelude = ".shared .align 16 .b8 s[16];\n.shared .align 8 .b64 bar;\n";
    const std::string cases[][2] = {
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.and.u32 [%in], [s], 16;",
         "the reduction does not support type .u32"},
        {"cp.reduce.async.bulk.global.shared::cta.add.u32 [%in], [s], 16;",
         "a reduction into .global memory needs .bulk_group"},
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%in], [s], 16;",
         "an .add of .f16 or .bf16 needs .noftz"},
        {"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.f32 "
         "[s], [s], 16, [bar];",
         "the reduction does not support type .f32"},
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.u32 [%in], [s], 16;",
         "needs a reduction"},
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%in], [s];",
         "takes [dstMem], [srcMem], size"},
        {"cp.reduce.async.bulk.shared::cluster.shared::cta.add.u32 [s], [s], 16, [bar];",
         "needs .mbarrier::complete_tx::bytes"},
        {"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%in, {%r}], [s];",
         "needs 2 coordinates"},
    };
    for (const auto& c : cases) {
      INFO(c[0]);
      const std::string body = "  .reg .b32 %r;\n  mov.u32 %r, 0;\n  " + c[0] + "\n";
      const std::string e = ptxt::refused_ptx_log(ptxt::kernel(body, prelude));
      INFO(e);
      CHECK(e.find(c[1]) != std::string::npos);
    }
  }

  TEST_CASE_FIXTURE(ClusterTest,
                    "ptx.cluster: a bulk reduction completing on another block's mbarrier faults") {
    expect_fault = true;
    const std::string body = R"(
  .shared .align 16 .b32 s[4];
  .shared .align 8 .b64 bar;
  .reg .b32 %a, %b, %n;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mov.u32 %a, s;
  mov.u32 %b, bar;
  mapa.shared::cluster.u32 %a, %a, 1;
  mov.u32 %n, 16;
  cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%a], [s], %n, [%b];
)";
    run_ex(ptxt::kernel(body), 1, Dim3{2, 1, 1}, Dim3{1, 1, 1}, Dim3{2, 1, 1});
    SWCU_TEST_CHECK_RESULT(status, CUDA_ERROR_ILLEGAL_ADDRESS);
    INFO("stderr: ", err);
    CHECK(err.find("cp.reduce.async.bulk to ") != std::string::npos);
    CHECK(err.find("which is in another CTA's shared memory") != std::string::npos);
  }
}
