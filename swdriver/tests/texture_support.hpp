// The texture and surface object functions, for the tests that use them (conformance/texture*,
// texture_object_test.cpp), resolved through cuGetProcAddress like every test's.
#pragma once

#include "module_support.hpp"

namespace swcu::test {

#define SWCU_TEST_TEXTURE_FUNCTIONS(X)                                    \
  X(cuTexObjectCreate, cuTexObjectCreate, 5000)                           \
  X(cuTexObjectDestroy, cuTexObjectDestroy, 5000)                         \
  X(cuTexObjectGetResourceDesc, cuTexObjectGetResourceDesc, 5000)         \
  X(cuTexObjectGetTextureDesc, cuTexObjectGetTextureDesc, 5000)           \
  X(cuTexObjectGetResourceViewDesc, cuTexObjectGetResourceViewDesc, 5000) \
  X(cuSurfObjectCreate, cuSurfObjectCreate, 5000)                         \
  X(cuSurfObjectDestroy, cuSurfObjectDestroy, 5000)                       \
  X(cuSurfObjectGetResourceDesc, cuSurfObjectGetResourceDesc, 5000)

/// The texture and surface object functions.
struct TextureApi {
#define SWCU_TEST_TEXTURE_MEMBER(member, base, version) PFN_##base##_v##version member = nullptr;
  SWCU_TEST_TEXTURE_FUNCTIONS(SWCU_TEST_TEXTURE_MEMBER)
#undef SWCU_TEST_TEXTURE_MEMBER
};

inline const TextureApi& tex() {
  static const TextureApi functions = [] {
    TextureApi a;
#define SWCU_TEST_TEXTURE_RESOLVE(member, base, version) \
  a.member = proc<PFN_##base##_v##version>(#base, version);
    SWCU_TEST_TEXTURE_FUNCTIONS(SWCU_TEST_TEXTURE_RESOLVE)
#undef SWCU_TEST_TEXTURE_RESOLVE
    return a;
  }();
  return functions;
}

}  // namespace swcu::test
