// Graph memcpy nodes with CUDA arrays on a side and copies of several slices: added
// (cuGraphAddMemcpyNode, cuGraphAddNode), read and set (cuGraphMemcpyNodeGet/SetParams,
// cuGraphNodeSetParams), updated in executable graphs (cuGraphExecMemcpyNodeSetParams,
// cuGraphExecNodeSetParams, cuGraphExecUpdate) under cuda.h's rules, and captured from streams
// (cuMemcpy2DAsync, cuMemcpy3DAsync, cuMemcpy3DPeerAsync, cuMemcpyAtoHAsync/HtoAAsync; the
// batches are refused as the driver refuses them). Every launch is checked against a host
// reference, launches after updates included.
#include <cstdint>
#include <string>
#include <vector>

#include "array_support.hpp"
#include "graph_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::array_to_host;
using swcu::test::create_context;
using swcu::test::create_stream;
using swcu::test::gr;
using swcu::test::host_to_array;
using swcu::test::iota_words;
using swcu::test::make_array;
using Words = std::vector<std::uint32_t>;

constexpr std::size_t kW = 8, kH = 4, kD = 3;  // the 3D arrays' extents (32-bit elements)

// A box of `w` x `h` x `d` elements from array `src` at (sx, sy, sz) to array `dst` at
// (dx, dy, dz).
CUDA_MEMCPY3D array_box(CUarray dst, std::size_t dx, std::size_t dy, std::size_t dz, CUarray src,
                        std::size_t sx, std::size_t sy, std::size_t sz, std::size_t w,
                        std::size_t h, std::size_t d) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  p.srcArray = src;
  p.srcXInBytes = sx * 4, p.srcY = sy, p.srcZ = sz;
  p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  p.dstArray = dst;
  p.dstXInBytes = dx * 4, p.dstY = dy, p.dstZ = dz;
  p.WidthInBytes = w * 4;
  p.Height = h;
  p.Depth = d;
  return p;
}

// Linear memory to linear memory (unified addresses), `d` slices of `h` rows of `w` words with
// the given row pitches (bytes) and slice heights (rows).
CUDA_MEMCPY3D slices(CUdeviceptr dst, std::size_t dst_pitch, std::size_t dst_rows, CUdeviceptr src,
                     std::size_t src_pitch, std::size_t src_rows, std::size_t w, std::size_t h,
                     std::size_t d) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = src;
  p.srcPitch = src_pitch;
  p.srcHeight = src_rows;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = dst;
  p.dstPitch = dst_pitch;
  p.dstHeight = dst_rows;
  p.WidthInBytes = w * 4;
  p.Height = h;
  p.Depth = d;
  return p;
}

CUgraphNode add(CUgraph g, const CUDA_MEMCPY3D& p, CUcontext ctx,
                std::vector<CUgraphNode> deps = {}) {
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemcpyNode(&n, g, deps.data(), deps.size(), &p, ctx));
  return n;
}

// What the whole array holds, read back synchronously.
Words read_array(CUarray a, std::size_t w, std::size_t h, std::size_t d) {
  Words out(w * h * d, 0);
  const CUDA_MEMCPY3D p = array_to_host(a, out.data(), w, h, d);
  SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuMemcpy3D_v2(&p));
  return out;
}

// cuGraphNodeSetParams and cuGraphExecNodeSetParams (resolved like every test's functions).
PFN_cuGraphNodeSetParams_v12020 node_set_params() {
  return swcu::test::proc<PFN_cuGraphNodeSetParams_v12020>("cuGraphNodeSetParams", 12020);
}
PFN_cuGraphExecNodeSetParams_v12020 exec_node_set_params() {
  return swcu::test::proc<PFN_cuGraphExecNodeSetParams_v12020>("cuGraphExecNodeSetParams", 12020);
}

}  // namespace

TEST_SUITE("graph array copies") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "memcpy nodes copy to, from and between arrays, and several slices") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray a = make_array(kW, kH, kD), b = make_array(kW, kH, kD);
    Words input = iota_words(kW * kH * kD);
    CUdeviceptr dev = 0, dev2 = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, kW * kH * kD * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev2, kW * kH * kD * 4));
    // The host result is pitched: 2 words of padding per row, one row of padding per slice.
    constexpr std::size_t kPitch = (kW + 2) * 4, kRows = kH + 1;
    Words out((kW + 2) * kRows * kD, 0xdead);

    // host -> a (whole), a box of a -> b, b -> dev, dev -> dev2 (3 slices), dev2 -> pitched host.
    const CUgraph g = swcu::test::create_graph();
    const CUgraphNode to_a = add(g, host_to_array(input.data(), a, kW, kH, kD), ctx);
    CUgraphNodeParams box{};
    box.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    box.memcpy.copyParams = array_box(b, 0, 0, 0, a, 2, 1, 1, 5, 2, 2);
    box.memcpy.copyCtx = ctx;
    CUgraphNode a_to_b = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddNode(&a_to_b, g, &to_a, nullptr, 1, &box));
    CUDA_MEMCPY3D b_to_dev{};
    b_to_dev.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    b_to_dev.srcArray = b;
    b_to_dev.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    b_to_dev.dstDevice = dev;
    b_to_dev.dstPitch = kW * 4;
    b_to_dev.dstHeight = kH;
    b_to_dev.WidthInBytes = kW * 4;
    b_to_dev.Height = kH;
    b_to_dev.Depth = kD;
    const CUgraphNode to_dev = add(g, b_to_dev, ctx, {a_to_b});
    const CUgraphNode dev_to_dev =
        add(g, slices(dev2, kW * 4, kH, dev, kW * 4, kH, kW, kH, kD), ctx, {to_dev});
    add(g, slices(swcu::test::address(out.data()), kPitch, kRows, dev2, kW * 4, kH, kW, kH, kD),
        ctx, {dev_to_dev});

    // The node keeps its parameters as given.
    CUDA_MEMCPY3D got{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemcpyNodeGetParams(a_to_b, &got));
    CHECK(got.srcArray == a);
    CHECK(got.srcXInBytes == 8);
    CHECK(got.srcZ == 1);
    CHECK(got.dstArray == b);
    CHECK(got.Depth == 2);
    CUgraphNodeType type{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetType(a_to_b, &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_MEMCPY);
    // cuGraphDebugDotPrint names the sides (A: an array) and, in detail, the extents.
    swcu::test::TempFile file;
    SWCU_TEST_REQUIRE_SUCCESS(
        gr().cuGraphDebugDotPrint(g, file.path(), CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS));
    const std::string dot = file.read();
    for (const char* part : {"HtoA", "AtoA", "AtoD", "DtoD", "DtoH", "width 20 height 2 depth 2"}) {
      INFO(part);
      CHECK(dot.find(part) != std::string::npos);
    }

    // The reference: b holds a's 5 x 2 x 2 box from (2, 1, 1) at its origin, zeros elsewhere
    // (a new array is zero-filled here); `out` holds b in its pitched layout.
    const auto expected = [&](const Words& in) {
      Words ref((kW + 2) * kRows * kD, 0xdead);
      for (std::size_t z = 0; z < kD; ++z) {
        for (std::size_t y = 0; y < kH; ++y) {
          for (std::size_t x = 0; x < kW; ++x) {
            const bool inside = x < 5 && y < 2 && z < 2;
            ref[(z * kRows + y) * (kW + 2) + x] =
                inside ? in[((z + 1) * kH + y + 1) * kW + x + 2] : 0;
          }
        }
      }
      return ref;
    };
    const CUgraphExec exec = swcu::test::instantiate(g);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(out == expected(input));
    CHECK(read_array(a, kW, kH, kD) == input);
    // A second launch reads the host source again (a node reads its source when it runs).
    for (auto& v : input) v *= 3;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(out == expected(input));

    // cuda.h's refusals, as for cuMemcpy3D: an x offset that is not a whole element ("For CUDA
    // arrays, srcXInBytes must be evenly divisible by the array element size"), a box that
    // leaves the array, a level other than 0, no slices.
    CUgraphNode bad = nullptr;
    const auto refused = [&](CUDA_MEMCPY3D p) {
      SWCU_TEST_CHECK_RESULT(gr().cuGraphAddMemcpyNode(&bad, g, nullptr, 0, &p, ctx),
                             CUDA_ERROR_INVALID_VALUE);
      SWCU_TEST_CHECK_RESULT(gr().cuGraphMemcpyNodeSetParams(a_to_b, &p), CUDA_ERROR_INVALID_VALUE);
    };
    CUDA_MEMCPY3D p = array_box(b, 0, 0, 0, a, 0, 0, 0, 2, 2, 2);
    p.srcXInBytes = 2;
    refused(p);
    refused(array_box(b, 4, 0, 0, a, 0, 0, 0, 5, 1, 1));  // x 4 + 5 > 8
    refused(array_box(b, 0, 0, 2, a, 0, 0, 0, 1, 1, 2));  // z 2 + 2 > 3
    p = array_box(b, 0, 0, 0, a, 0, 0, 0, 1, 1, 1);
    p.srcLOD = 1;
    refused(p);
    p.srcLOD = 0;
    p.Depth = 0;
    refused(p);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemcpyNodeGetParams(a_to_b, &got));
    CHECK(got.srcXInBytes == 8);  // unchanged by the refused calls

    // The graph's node changed (cuGraphNodeSetParams): a new executable graph copies the whole
    // of a into b; the first one still copies the box.
    box.memcpy.copyParams = array_box(b, 0, 0, 0, a, 0, 0, 0, kW, kH, kD);
    SWCU_TEST_REQUIRE_SUCCESS(node_set_params()(a_to_b, &box));
    const CUgraphExec whole = swcu::test::instantiate(g);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(whole, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (std::size_t z = 0; z < kD; ++z) {
      for (std::size_t y = 0; y < kH; ++y) {
        for (std::size_t x = 0; x < kW; ++x) {
          CHECK(out[(z * kRows + y) * (kW + 2) + x] == input[(z * kH + y) * kW + x]);
        }
      }
    }
    CHECK(out[kW] == 0xdead);  // the padding is never written

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(whole));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));
    for (const CUarray x : {a, b}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(x));
    for (const CUdeviceptr x : {dev, dev2}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "executable graphs update array memcpy nodes under cuda.h's rules") {
    // Each result below is also what the driver gave (580.159.04, H200; a probe run for this
    // test): the 1D update to another array, the refused 2D and other-context updates, the
    // other-context cuGraphExecUpdate and the device-launch instantiation.
    const CUcontext other = create_context();
    const CUarray foreign = make_array(16, 0, 0);  // an array of another context
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray a1 = make_array(16, 0, 0), a2 = make_array(16, 0, 0);
    const CUarray flat = make_array(4, 4, 0);
    const Words in1 = iota_words(16, 1), in2 = iota_words(16, 100);
    Words out(16, 0);
    // host -> a1 -> host, 1D copies.
    const CUgraph g = swcu::test::create_graph();
    const CUgraphNode put = add(g, host_to_array(in1.data(), a1, 16, 1, 1), ctx);
    const CUgraphNode get = add(g, array_to_host(a1, out.data(), 16, 1, 1), ctx, {put});
    const CUgraphExec exec = swcu::test::instantiate(g);
    const auto launch = [&] {
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    };
    launch();
    CHECK(out == in1);

    // cuGraphExecMemcpyNodeSetParams: another array of the same context, 1D copies, same memory
    // types: accepted; the next launch goes through a2 (and leaves a1 alone).
    const CUDA_MEMCPY3D put_a2 = host_to_array(in2.data(), a2, 16, 1, 1);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecMemcpyNodeSetParams(exec, put, &put_a2, ctx));
    CUgraphNodeParams np{};
    np.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    np.memcpy.copyParams = array_to_host(a2, out.data(), 16, 1, 1);
    np.memcpy.copyCtx = ctx;
    SWCU_TEST_REQUIRE_SUCCESS(exec_node_set_params()(exec, get, &np));
    launch();
    CHECK(out == in2);
    CHECK(read_array(a1, 16, 1, 1) == in1);
    // "Returns CUDA_ERROR_INVALID_VALUE if the memory operands' mappings changed or either the
    // original or new memory operands are multidimensional": a 2D copy, an array of another
    // context ("must be allocated from the same contexts"), device memory instead of an array
    // (the memory type), a zero-length copy.
    const CUDA_MEMCPY3D two_d = host_to_array(in1.data(), flat, 4, 4, 1);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemcpyNodeSetParams(exec, put, &two_d, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    const CUDA_MEMCPY3D elsewhere = host_to_array(in1.data(), foreign, 16, 1, 1);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemcpyNodeSetParams(exec, put, &elsewhere, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 64));
    const CUDA_MEMCPY3D to_device = swcu::test::copy_1d(dev, swcu::test::address(in1.data()), 64);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemcpyNodeSetParams(exec, put, &to_device, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    const CUDA_MEMCPY3D empty = host_to_array(in1.data(), a2, 0, 1, 1);
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecMemcpyNodeSetParams(exec, put, &empty, ctx),
                           CUDA_ERROR_INVALID_VALUE);
    launch();  // the refused updates changed nothing
    CHECK(out == in2);

    // cuGraphExecUpdate from a graph of the same shape: a different array of the same context
    // and a part of it (elements 4..11) may change.
    const Words in3 = iota_words(16, 500);
    const CUgraph g2 = swcu::test::create_graph();
    CUDA_MEMCPY3D part = host_to_array(in3.data(), a1, 8, 1, 1);
    part.dstXInBytes = 16;
    const CUgraphNode put2 = add(g2, part, ctx);
    add(g2, array_to_host(a1, out.data(), 16, 1, 1), ctx, {put2});
    CUgraphExecUpdateResultInfo info{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecUpdate(exec, g2, &info));
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    launch();
    for (std::size_t i = 0; i < 16; ++i) CHECK(out[i] == (i >= 4 && i < 12 ? in3[i - 4] : in1[i]));
    // ...but not an array of another context, nor another memory type.
    const CUgraph g3 = swcu::test::create_graph();
    const CUgraphNode put3 = add(g3, elsewhere, ctx);
    add(g3, array_to_host(a1, out.data(), 16, 1, 1), ctx, {put3});
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, g3, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
    CHECK(info.errorNode == put3);
    const CUgraph g4 = swcu::test::create_graph();
    const CUgraphNode put4 = add(g4, to_device, ctx);
    add(g4, array_to_host(a1, out.data(), 16, 1, 1), ctx, {put4});
    SWCU_TEST_CHECK_RESULT(gr().cuGraphExecUpdate(exec, g4, &info),
                           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);

    // Device launch: "Copies involving CUDA arrays are not permitted."
    CUDA_GRAPH_INSTANTIATE_PARAMS params{};
    params.flags = CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    CUgraphExec device_exec = nullptr;
    SWCU_TEST_CHECK_RESULT(gr().cuGraphInstantiateWithParams(&device_exec, g, &params),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(params.result_out == CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED);
    CHECK(params.hErrNode_out == put);

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    for (const CUgraph x : {g, g2, g3, g4}) SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(x));
    for (const CUarray x : {a1, a2, flat}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(foreign));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a memcpy node whose array was destroyed fails its launch asynchronously") {
    // The node keeps the array's handle and looks it up when it runs. cuda.h does not say what
    // a graph does with an array destroyed after the node was added, and the driver does not
    // check: 580.159.04 on an H200 crashes the process in cuGraphLaunch (a probe run for this
    // test). The copy touches memory that is gone, so the closest documented behaviour is a
    // device fault: an asynchronous CUDA_ERROR_ILLEGAL_ADDRESS ("the device encountered a load or
    // store instruction on an invalid memory address"), sticky, reported by the next
    // synchronizing call; the launch itself succeeds.
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray a = make_array(16, 0, 0);
    const Words in = iota_words(16);
    const CUgraph g = swcu::test::create_graph();
    add(g, host_to_array(in.data(), a, 16, 1, 1), ctx);
    const CUgraphExec exec = swcu::test::instantiate(g);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a capture records array copies and copies of several slices as memcpy nodes") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray a = make_array(kW, kH, kD), b = make_array(kW, kH, kD);
    const CUarray line = make_array(16, 0, 0);
    Words input = iota_words(kW * kH * kD), out(kW * kH * kD, 0), row(16, 0),
          row_in = iota_words(16, 40);
    Words slab(kW * kH * kD, 0);
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, kW * kH * kD * 4));

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    // cuMemcpy3DAsync host -> a; cuMemcpy3DPeerAsync a -> b (same context on both sides);
    // cuMemcpy2DAsync slice 0 of b -> device; a linear copy of 3 slices device -> host (its
    // slices 1 and 2 come from b through the 3D copy below); cuMemcpyHtoAAsync/AtoHAsync.
    const CUDA_MEMCPY3D put = host_to_array(input.data(), a, kW, kH, kD);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DAsync_v2(&put, s));
    CUDA_MEMCPY3D_PEER peer{};
    peer.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    peer.srcArray = a;
    peer.srcContext = ctx;
    peer.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    peer.dstArray = b;
    peer.dstContext = ctx;
    peer.WidthInBytes = kW * 4;
    peer.Height = kH;
    peer.Depth = kD;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DPeerAsync(&peer, s));
    CUDA_MEMCPY2D flat{};
    flat.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    flat.srcArray = b;
    flat.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    flat.dstDevice = dev;
    flat.dstPitch = kW * 4;
    flat.WidthInBytes = kW * 4;
    flat.Height = kH;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy2DAsync_v2(&flat, s));
    CUDA_MEMCPY3D rest{};
    rest.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    rest.srcArray = b;
    rest.srcZ = 1;
    rest.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    rest.dstDevice = dev;
    rest.dstPitch = kW * 4;
    rest.dstHeight = kH;
    rest.dstZ = 1;
    rest.WidthInBytes = kW * 4;
    rest.Height = kH;
    rest.Depth = kD - 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DAsync_v2(&rest, s));
    const CUDA_MEMCPY3D back =
        slices(swcu::test::address(slab.data()), kW * 4, kH, dev, kW * 4, kH, kW, kH, kD);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DAsync_v2(&back, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoAAsync_v2(line, 0, row_in.data(), 64, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoHAsync_v2(row.data(), line, 0, 64, s));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamEndCapture(s, &graph));
    CHECK(slab == Words(kW * kH * kD, 0));  // captured, not run
    CHECK(row == Words(16, 0));

    // Seven memcpy nodes in a chain, in call order.
    const auto nodes = swcu::test::nodes_of(graph);
    REQUIRE(nodes.size() == 7);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      CUgraphNodeType type{};
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetType(nodes[i], &type));
      CHECK(type == CU_GRAPH_NODE_TYPE_MEMCPY);
      std::size_t deps = 0;
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphNodeGetDependencies(nodes[i], nullptr, nullptr, &deps));
      CHECK(deps == (i == 0 ? 0u : 1u));
    }
    CUDA_MEMCPY3D got{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphMemcpyNodeGetParams(nodes[3], &got));
    CHECK(got.srcMemoryType == CU_MEMORYTYPE_ARRAY);
    CHECK(got.srcArray == b);
    CHECK(got.srcZ == 1);
    CHECK(got.Depth == kD - 1);

    const CUgraphExec exec = swcu::test::instantiate(graph);
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        for (auto& v : input) v += 1000;
        for (auto& v : row_in) v *= 2;
      }
      SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
      CHECK(slab == input);
      CHECK(row == row_in);
      CHECK(read_array(b, kW, kH, kD) == input);
    }

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    for (const CUarray x : {a, b, line}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a capturing stream refuses batch copies and goes on capturing") {
    // cuda.h does not say how a capture records cuMemcpyBatchAsync or cuMemcpy3DBatchAsync. The
    // driver (580.159.04, H200; a probe run for this test) returns
    // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for both, even for one device-to-device copy in stream
    // order, records nothing, and leaves the capture active: later work is captured and
    // cuStreamEndCapture succeeds. So does this driver.
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUarray a = make_array(6, 4, 2);
    Words input = iota_words(6 * 4 * 2), words = iota_words(32, 7), copied(32, 0);
    CUdeviceptr dev = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dev, 32 * 4));

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUDA_MEMCPY3D_BATCH_OP ops[2]{};
    ops[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    ops[0].src.op.ptr.ptr = swcu::test::address(input.data());
    ops[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    ops[0].dst.op.array.array = a;
    ops[0].extent = {6, 4, 2};
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    ops[1].src.op.ptr.ptr = swcu::test::address(words.data());
    ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    ops[1].dst.op.ptr.ptr = dev;
    ops[1].extent = {32 * 4, 1, 1};
    ops[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpy3DBatchAsync_v2(2, ops, 0, s),
                           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUdeviceptr dsts[] = {swcu::test::address(copied.data())};
    CUdeviceptr srcs[] = {dev};
    std::size_t sizes[] = {32 * 4};
    CUmemcpyAttributes attrs{};
    attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    std::size_t first = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, &attrs, &first, 1, s),
                           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUstreamCaptureStatus status{};
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamIsCapturing(s, &status));
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    // The capture goes on: a 3D copy into the array is captured and the capture ends well.
    const CUDA_MEMCPY3D put = host_to_array(input.data(), a, 6, 4, 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DAsync_v2(&put, s));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuStreamEndCapture(s, &graph));
    REQUIRE(swcu::test::nodes_of(graph).size() == 1);
    CHECK(read_array(a, 6, 4, 2) == Words(6 * 4 * 2, 0));  // the refused batch did not run
    const CUgraphExec exec = swcu::test::instantiate(graph);
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read_array(a, 6, 4, 2) == input);
    CHECK(copied == Words(32, 0));

    // Outside a capture the same batches run.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpy3DBatchAsync_v2(2, ops, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, &attrs, &first, 1, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(copied == words);

    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArrayDestroy(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dev));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
