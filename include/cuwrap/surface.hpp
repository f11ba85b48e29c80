// Surface objects (cuSurfObjectCreate): raw loads and stores (surf2Dread, surf2Dwrite, ...) on
// a CUDA array made with CUDA_ARRAY3D_SURFACE_LDST. A kernel takes the object's handle() as a
// cudaSurfaceObject_t.
#pragma once

#include <cuda.h>

#include <memory>
#include <source_location>

#include "cuwrap/context.hpp"
#include "cuwrap/texture.hpp"

namespace cuwrap {

/// An owning surface object (cuSurfObjectCreate, destroyed with cuSurfObjectDestroy).
/// Move-only; keeps its context alive; does not own the array, which must outlive it. A
/// moved-from object is empty: handle() and resource_desc() throw cuwrap::usage_error, its
/// destructor does nothing.
class surface_object {
 public:
  /// Over `array` (created with CUDA_ARRAY3D_SURFACE_LDST), in `ctx`.
  surface_object(const owning_context& ctx, array_ref array,
                 std::source_location where = std::source_location::current());

  surface_object(const surface_object&) = delete;
  surface_object& operator=(const surface_object&) = delete;
  /// Takes `other`'s object; `other` is left empty.
  surface_object(surface_object&& other) noexcept;
  /// Destroys the object owned now (if any), then takes `other`'s.
  surface_object& operator=(surface_object&& other) noexcept;
  /// Destroys the object (cuSurfObjectDestroy, in its context).
  ~surface_object();

  /// The handle a kernel takes (cudaSurfaceObject_t). Throws cuwrap::usage_error if moved from.
  [[nodiscard]] CUsurfObject handle(
      std::source_location where = std::source_location::current()) const;
  /// The resource descriptor (cuSurfObjectGetResourceDesc).
  [[nodiscard]] CUDA_RESOURCE_DESC resource_desc(
      std::source_location where = std::source_location::current()) const;
  /// True after a move: the object owns nothing.
  [[nodiscard]] bool empty() const noexcept { return handle_ == 0; }

 private:
  CUsurfObject handle_ = 0;
  std::shared_ptr<const detail::context_owner> ctx_;
};

}  // namespace cuwrap
