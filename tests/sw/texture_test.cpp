// Texture and surface objects (cuwrap/texture.hpp, cuwrap/surface.hpp): typed options become
// the CUDA_TEXTURE_DESC the driver keeps, resources come from device spans and pitched buffers
// with the element type's format, the owners are move-only and destroy their object once, and a
// moved-from owner throws cuwrap::usage_error. Fetching through them is checked by the
// simple_texture sample, docs/examples/textures.cpp and the software driver's conformance tests.
#include "cuwrap/texture.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/surface.hpp"
#include "kernels_fixture.hpp"

namespace {

using fixture = cuwrap::testing::kernels_fixture;

TEST_SUITE("texture") {
  TEST_CASE_FIXTURE(fixture, "texture options become the driver's texture descriptor") {
    cuwrap::pitched_buffer<float> image{ctx, 40, 9};
    cuwrap::texture_options o;
    o.address = {cuwrap::address_mode::border, cuwrap::address_mode::mirror,
                 cuwrap::address_mode::wrap};
    o.filter = cuwrap::filter_mode::linear;
    o.normalized_coordinates = true;
    o.srgb = true;
    o.border_color = {1.0f, 0.5f, 0.25f, 0.0f};
    o.mipmap_level_bias = 0.5f;
    o.max_mipmap_level = 3.0f;
    o.max_anisotropy = 4;
    const cuwrap::texture_object tex{ctx, image, o};
    CHECK(tex.handle() != 0);
    const CUDA_TEXTURE_DESC t = tex.texture_desc();
    CHECK(t.addressMode[0] == CU_TR_ADDRESS_MODE_BORDER);
    CHECK(t.addressMode[1] == CU_TR_ADDRESS_MODE_MIRROR);
    CHECK(t.addressMode[2] == CU_TR_ADDRESS_MODE_WRAP);
    CHECK(t.filterMode == CU_TR_FILTER_MODE_LINEAR);
    // read_mode::element_type (the default, as cudaReadModeElementType) is READ_AS_INTEGER
    CHECK(t.flags == (CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB));
    CHECK(t.borderColor[1] == 0.5f);
    CHECK(t.mipmapLevelBias == 0.5f);
    CHECK(t.maxMipmapLevelClamp == 3.0f);
    CHECK(t.maxAnisotropy == 4);
    const CUDA_RESOURCE_DESC r = tex.resource_desc();
    CHECK(r.resType == CU_RESOURCE_TYPE_PITCH2D);
    CHECK(r.res.pitch2D.devPtr == reinterpret_cast<CUdeviceptr>(image.data()));
    CHECK(r.res.pitch2D.format == CU_AD_FORMAT_FLOAT);
    CHECK(r.res.pitch2D.numChannels == 1);
    CHECK(r.res.pitch2D.width == 40);
    CHECK(r.res.pitch2D.height == 9);
    CHECK(r.res.pitch2D.pitchInBytes == image.pitch_bytes());
  }

  TEST_CASE_FIXTURE(fixture, "a linear texture takes its format from the element type") {
    cuwrap::device_buffer<std::array<std::int16_t, 4>> data{ctx, 100};
    cuwrap::texture_options o;
    o.read = cuwrap::read_mode::normalized_float;
    const cuwrap::texture_object tex{
        ctx, cuwrap::device_span<const std::array<std::int16_t, 4>>{data.span()}, o};
    const CUDA_RESOURCE_DESC r = tex.resource_desc();
    CHECK(r.resType == CU_RESOURCE_TYPE_LINEAR);
    CHECK(r.res.linear.format == CU_AD_FORMAT_SIGNED_INT16);
    CHECK(r.res.linear.numChannels == 4);
    CHECK(r.res.linear.sizeInBytes == 800);
    CHECK((tex.texture_desc().flags & CU_TRSF_READ_AS_INTEGER) == 0);
    static_assert(cuwrap::texel_format<std::uint8_t>::format == CU_AD_FORMAT_UNSIGNED_INT8);
    static_assert(cuwrap::texel_format<std::array<float, 2>>::channels == 2);
    static_assert(cuwrap::texel_format<std::uint32_t>::format == CU_AD_FORMAT_UNSIGNED_INT32);
  }

  TEST_CASE_FIXTURE(fixture, "textures and surfaces take cuwrap's arrays and mipmapped arrays") {
    const cuwrap::array<float, 2> image{ctx, {32, 16}, cuwrap::array_flags::surface_ldst};
    const cuwrap::texture_object tex{ctx, image};
    CUDA_RESOURCE_DESC r = tex.resource_desc();
    CHECK(r.resType == CU_RESOURCE_TYPE_ARRAY);
    CHECK(r.res.array.hArray == image.get());
    const cuwrap::surface_object surf{ctx, image.view()};
    CHECK(surf.resource_desc().res.array.hArray == image.get());
    const cuwrap::mipmapped_array<std::uint8_t, 4> mip{ctx, {64, 64}, 4};
    cuwrap::texture_options normalized;
    normalized.normalized_coordinates = true;  // what a mipmapped array needs (cuda.h)
    const cuwrap::texture_object levels{ctx, mip, normalized};
    r = levels.resource_desc();
    CHECK(r.resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY);
    CHECK(r.res.mipmap.hMipmappedArray == mip.get());
    const cuwrap::texture_object level2{ctx, mip.level(2)};
    CHECK(level2.resource_desc().resType == CU_RESOURCE_TYPE_ARRAY);
  }

  TEST_CASE_FIXTURE(fixture, "a refused descriptor is a cuwrap::error with the driver's code") {
    cuwrap::device_buffer<float> data{ctx, 64};
    // 4 bytes past the allocation's start: not aligned to CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
    const cuwrap::device_span<const float> shifted{data.data() + 1, 32};
    try {
      const cuwrap::texture_object tex{ctx, shifted};
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code() == cuwrap::errc::invalid_value);
      CHECK(std::string{e.what()}.find("cuTexObjectCreate") != std::string::npos);
    }
    // surfaces need a CUDA array made with CUDA_ARRAY3D_SURFACE_LDST
    CHECK_THROWS_AS(cuwrap::surface_object(ctx, cuwrap::array_ref{}), cuwrap::error);
  }

  // NOLINTBEGIN(bugprone-use-after-move)
  TEST_CASE_FIXTURE(fixture, "texture objects move, destroy once, and throw when moved from") {
    cuwrap::pitched_buffer<float> image{ctx, 16, 4};
    cuwrap::texture_object a{ctx, image};
    const CUtexObject first = a.handle();
    cuwrap::texture_object b{std::move(a)};
    CHECK(a.empty());
    CHECK(b.handle() == first);
    CHECK_THROWS_AS((void)a.handle(), cuwrap::usage_error);
    CHECK_THROWS_AS((void)a.texture_desc(), cuwrap::usage_error);
    CHECK_THROWS_AS((void)a.resource_desc(), cuwrap::usage_error);
    cuwrap::texture_object c{ctx, image};
    c = std::move(b);  // destroys c's first object
    CHECK(c.handle() == first);
    CUDA_TEXTURE_DESC t{};
    const cuwrap::scoped_current_context current{ctx};
    CHECK(cuwrap::detail::driver().cuTexObjectGetTextureDesc(&t, first) == CUDA_SUCCESS);
    const CUtexObject gone = first + 1;  // c's own object, created after `first`
    CHECK(cuwrap::detail::driver().cuTexObjectGetTextureDesc(&t, gone) == CUDA_ERROR_INVALID_VALUE);
    cuwrap::primary_context moved{std::move(ctx)};
    CHECK_THROWS_AS(cuwrap::texture_object(ctx, image), cuwrap::usage_error);
    ctx = std::move(moved);
  }
  // NOLINTEND(bugprone-use-after-move)
}

}  // namespace
