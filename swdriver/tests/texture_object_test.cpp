// Texture and surface objects: cuTexObjectCreate's and cuSurfObjectCreate's checks of their
// descriptors (cuda.h, "Texture Object Management"), the getters, destruction; and the PTX
// loader's checks of the texture and surface instructions' forms (PTX ISA 9.0, "Texture
// Instructions", "Surface Instructions"), which ptxas refuses with CUDA_ERROR_INVALID_PTX.
// Fetching itself is in conformance/conformance_texture_test.cpp.
#include <cstring>
#include <string>

#include "module_support.hpp"
#include "texture_support.hpp"

namespace {

using swcu::test::tex;

struct TextureObjects : swcu::test::ModuleTest {
  CUdeviceptr mem = 0;
  TextureObjects() { SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&mem, 1 << 16)); }
  ~TextureObjects() { static_cast<void>(cu.cuMemFree_v2(mem)); }
  TextureObjects(const TextureObjects&) = delete;
  TextureObjects& operator=(const TextureObjects&) = delete;

  // A valid pitch2D float resource of 16 x 8, rows 128 bytes apart.
  CUDA_RESOURCE_DESC pitch2d() const {
    CUDA_RESOURCE_DESC r{};
    r.resType = CU_RESOURCE_TYPE_PITCH2D;
    r.res.pitch2D = {mem, CU_AD_FORMAT_FLOAT, 1, 16, 8, 128};
    return r;
  }
  // Creates with these descriptors and checks the result (and that nothing was made on failure).
  void expect(const CUDA_RESOURCE_DESC& r, const CUDA_TEXTURE_DESC& t, CUresult want,
              const CUDA_RESOURCE_VIEW_DESC* view = nullptr) {
    CUtexObject o = 0;
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectCreate(&o, &r, &t, view), want);
    if (want == CUDA_SUCCESS) {
      CHECK(o != 0);
      SWCU_TEST_CHECK_RESULT(tex().cuTexObjectDestroy(o), CUDA_SUCCESS);
    }
  }
};

// Stores `value` in an enum field as the int a C caller passes (it need not be an enumerator).
template <class E>
void set_raw(E& field, int value) {
  static_assert(sizeof(E) == sizeof(int));
  std::memcpy(&field, &value, sizeof value);
}

// The JIT error log of a module the loader refuses with CUDA_ERROR_INVALID_PTX.
std::string refused(const std::string& body) {
  const std::string module = swcu::test::ptx(body);
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(std::uintptr_t{sizeof log})};
  CUmodule m = nullptr;
  SWCU_TEST_CHECK_RESULT(
      swcu::test::mod().cuModuleLoadDataEx(&m, module.c_str(), 2, options, values),
      CUDA_ERROR_INVALID_PTX);
  return log;
}

// A kernel around one texture or surface instruction.
std::string kernel(const std::string& inst) {
  return R"(
.visible .entry k(.param .u64 t)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  .reg .b16 %rs<4>;
  ld.param.u64 %rd1, [t];
  )" + inst +
         R"(
  ret;
}
)";
}

TEST_SUITE("texture") {
  TEST_CASE_FIXTURE(TextureObjects, "texture: a pitch2D texture object and its descriptors") {
    const CUDA_RESOURCE_DESC r = pitch2d();
    CUDA_TEXTURE_DESC t{};
    t.addressMode[0] = CU_TR_ADDRESS_MODE_BORDER;
    t.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    t.flags = CU_TRSF_NORMALIZED_COORDINATES;
    t.borderColor[2] = 0.5f;
    CUtexObject o = 0;
    SWCU_TEST_REQUIRE_SUCCESS(tex().cuTexObjectCreate(&o, &r, &t, nullptr));
    CHECK(o != 0);
    CUDA_RESOURCE_DESC got_r{};
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectGetResourceDesc(&got_r, o), CUDA_SUCCESS);
    CHECK(std::memcmp(&got_r, &r, sizeof r) == 0);
    CUDA_TEXTURE_DESC got_t{};
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectGetTextureDesc(&got_t, o), CUDA_SUCCESS);
    CHECK(std::memcmp(&got_t, &t, sizeof t) == 0);
    // cuda.h: "If no resource view was set for texObject, the CUDA_ERROR_INVALID_VALUE is
    // returned."
    CUDA_RESOURCE_VIEW_DESC view{};
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectGetResourceViewDesc(&view, o),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectGetResourceDesc(nullptr, o), CUDA_ERROR_INVALID_VALUE);
    // a texture object is no surface object
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectGetResourceDesc(&got_r, o), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectDestroy(o), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectDestroy(o), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectDestroy(o), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectGetTextureDesc(&got_t, o), CUDA_ERROR_INVALID_VALUE);
    CUtexObject o2 = 0;
    SWCU_TEST_REQUIRE_SUCCESS(tex().cuTexObjectCreate(&o2, &r, &t, nullptr));
    CHECK(o2 != o);  // handles are not reused
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectDestroy(o2), CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(TextureObjects, "texture: cuTexObjectCreate checks the resource") {
    const CUDA_TEXTURE_DESC t{};
    expect(pitch2d(), t, CUDA_SUCCESS);
    CUtexObject o = 0;
    const CUDA_RESOURCE_DESC ok = pitch2d();
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectCreate(nullptr, &ok, &t, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectCreate(&o, nullptr, &t, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuTexObjectCreate(&o, &ok, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    CUDA_RESOURCE_DESC r = pitch2d();
    r.flags = 1;  // "flags must be set to zero"
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.devPtr = mem + 4;  // not aligned to CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.pitchInBytes = 80;  // not a multiple of TEXTURE_PITCH_ALIGNMENT (32)
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.pitchInBytes = 32;  // less than a row of 16 floats
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.numChannels = 3;
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    set_raw(r.res.pitch2D.format, 0x55);
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.height = 1000;  // past the allocation's 64 KiB
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r = pitch2d();
    r.res.pitch2D.width = 0;
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r.resType = CU_RESOURCE_TYPE_LINEAR;
    r.res.linear = {mem, CU_AD_FORMAT_UNSIGNED_INT8, 4, 1 << 16};
    expect(r, t, CUDA_SUCCESS);
    r.res.linear.sizeInBytes = (1 << 16) + 4;  // past the allocation
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    r.res.linear.sizeInBytes = 3;  // less than one element
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    // a resource view only for arrays
    r.res.linear.sizeInBytes = 64;
    const CUDA_RESOURCE_VIEW_DESC view{};
    expect(r, t, CUDA_ERROR_INVALID_VALUE, &view);
    set_raw(r.resType, 9);
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(TextureObjects, "texture: cuTexObjectCreate checks the texture descriptor") {
    const CUDA_RESOURCE_DESC r = pitch2d();
    CUDA_TEXTURE_DESC t{};
    set_raw(t.addressMode[1], 4);
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    t = {};
    set_raw(t.filterMode, 2);
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    t = {};
    t.flags = 0x100;  // no CU_TRSF_* bit
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    t = {};
    // "This flag can only be specified if the underlying resource is a CUDA array or a CUDA
    // mipmapped array that was created with the flag CUDA_ARRAY3D_CUBEMAP."
    t.flags = CU_TRSF_SEAMLESS_CUBEMAP;
    expect(r, t, CUDA_ERROR_INVALID_VALUE);
    t = {};
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    t.flags = CU_TRSF_READ_AS_INTEGER;  // integer results are not filtered
    CUDA_RESOURCE_DESC bytes = r;
    bytes.res.pitch2D.format = CU_AD_FORMAT_UNSIGNED_INT8;
    expect(bytes, t, CUDA_ERROR_INVALID_VALUE);
    t.flags = 0;  // normalized floats are
    expect(bytes, t, CUDA_SUCCESS);
    // A float format reads floats in either read mode (what the runtime's default,
    // cudaReadModeElementType, asks for): linear filtering is valid.
    t.flags = CU_TRSF_READ_AS_INTEGER;
    expect(r, t, CUDA_SUCCESS);
  }

  TEST_CASE_FIXTURE(TextureObjects, "texture: surface objects need a surface-capable CUDA array") {
    CUsurfObject s = 0;
    CUDA_RESOURCE_DESC r = pitch2d();
    // cuda.h: "CUDA_RESOURCE_DESC::resType must be CU_RESOURCE_TYPE_ARRAY"
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectCreate(&s, &r), CUDA_ERROR_INVALID_VALUE);
    r = {};
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = reinterpret_cast<CUarray>(std::uintptr_t{0x1234});  // no array
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectCreate(&s, &r), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectCreate(nullptr, &r), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(tex().cuSurfObjectDestroy(12345), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "texture: malformed texture instructions fail to load") {
    CHECK(refused(kernel("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1}];"))
              .find("vector of 2") != std::string::npos);
    CHECK(refused(kernel("tex.2d.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];"))
              .find("needs .v4") != std::string::npos);
    CHECK(refused(kernel("tex.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];"))
              .find("geometry") != std::string::npos);
    CHECK(refused(kernel("tex.2d.v4.f64.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];"))
              .find("result") != std::string::npos);
    CHECK(refused(kernel("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%r1, {%f1, %f2}];"))
              .find("64-bit register") != std::string::npos);
    CHECK(refused(kernel("tld4.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];"))
              .find("component") != std::string::npos);
    CHECK(refused(kernel("txq.size.b32 %r1, [%rd1];")).find("query") != std::string::npos);
    CHECK(refused(kernel("suq.filter_mode.b32 %r1, [%rd1];")).find("not a surface query") !=
          std::string::npos);
    CHECK(refused(kernel("suld.b.2d.b32 {%r1}, [%rd1, {%r2, %r3}];")).find(".trap") !=
          std::string::npos);
    CHECK(refused(kernel("suld.b.cube.b32.trap {%r1}, [%rd1, {%r2, %r3, %r4, %r5}];"))
              .find("no cube") != std::string::npos);
    CHECK(refused(kernel("sust.b.2d.v2.b32.trap [%rd1, {%r2, %r3}], {%r1};")).find("vector of 2") !=
          std::string::npos);
    CHECK(refused(kernel("sured.b.2d.u32.trap [%rd1, {%r2, %r3}], %r1;")).find("operation") !=
          std::string::npos);
  }
  TEST_CASE_FIXTURE(swcu::test::ModuleTest,
                    "texture: a launch refuses depth compare and suld.p, naming the PTX line") {
    // PTX ISA, tex: "Operand f is .f32 scalar value that specifies depth compare value for depth
    // textures"; the comparison function is the depth texture's, and a CUDA texture object has
    // none (CUDA_TEXTURE_DESC). suld: PTX ISA 9.0 defines only the unformatted suld.b.
    struct Case {
      const char* inst;
      const char* why;
    };
    const Case cases[] = {
        {"tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}], %f5;",
         "tex.2d.v4.f32.f32 with a depth compare operand (a CUDA texture object has no "
         "comparison function"},
        {"tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}], %f6, {%r1, %r2}, %f5;",
         "tex.level.2d.v4.f32.f32 with a depth compare operand"},
        {"tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}], {%r1, %r2};",
         "tex.2d.v4.f32.f32 with a texel offset operand"},
        {"suld.p.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];",
         "suld.p.2d.v4.b32.trap (a formatted surface load; PTX ISA 9.0 defines only suld.b)"},
    };
    for (const Case& c : cases) {
      const CUmodule m = load(swcu::test::ptx(kernel(c.inst)));
      const CUfunction f = function(m, "k");
      CUdeviceptr t = 0;
      void* params[] = {&t};
      swcu::test::StderrCapture capture;
      SWCU_TEST_CHECK_RESULT(
          swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
          CUDA_ERROR_NOT_SUPPORTED);
      const std::string err = capture.finish();
      INFO(err);
      CHECK(err.find(std::string("kernel k uses ") + c.why) != std::string::npos);
      CHECK(err.find("(PTX line ") != std::string::npos);
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
    }
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "texture: .f16x2 results are tex's, with .v2") {
    // PTX ISA: tex.geom.v2.f16x2.ctype; tld4's results are .u32, .s32 and .f32 only.
    const CUmodule m = load(swcu::test::ptx(
        kernel("tex.2d.v2.f16x2.f32 {%r1, %r2}, [%rd1, {%f1, %f2}];\n"
               "  tex.grad.2d.v4.f16.f32 {%rs1, %rs2, %rs3, %rs1}, [%rd1, {%f1, %f2}], {%f3, %f4}, "
               "{%f5, %f6};\n"
               "  tex.base.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];")));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
    CHECK(refused(kernel("tld4.r.2d.v2.f16x2.f32 {%r1, %r2}, [%rd1, {%f1, %f2}];"))
              .find("needs .v4") != std::string::npos);
    CHECK(refused(kernel("tex.2d.v2.f32.f32 {%f1, %f2}, [%rd1, {%f1, %f2}];"))
              .find(".f16x2 with .v2") != std::string::npos);
    CHECK(refused(kernel("tex.2d.v4.f16x2.f32 {%r1, %r2, %r3, %r4}, [%rd1, {%f1, %f2}];"))
              .find("result") != std::string::npos);
    CHECK(refused(kernel("tex.base.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}], "
                         "%f3;"))
              .find("one of .base, .level and .grad") != std::string::npos);
  }
}

}  // namespace
