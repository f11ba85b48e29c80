// The type erasure behind any_resource and resource_ref: one table of functions per resource
// type, independent of the properties the erased wrapper promises.
#pragma once

#include <cstddef>
#include <new>
#include <source_location>
#include <type_traits>
#include <typeinfo>

#include "cuwrap/error.hpp"
#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr::detail {

/// What an erased resource can do, as functions of a pointer to the resource.
struct resource_vtable {
  void* (*allocate)(void* r, std::size_t bytes, std::size_t alignment);
  void (*deallocate)(void* r, void* p, std::size_t bytes, std::size_t alignment) noexcept;
  /// Null for a resource that is not stream-ordered.
  void* (*allocate_ordered)(void* r, stream_ref s, std::size_t bytes, std::size_t alignment);
  void (*deallocate_ordered)(void* r, stream_ref s, void* p, std::size_t bytes,
                             std::size_t alignment);
  /// `a == b` for two resources of this table's type.
  bool (*equal)(const void* a, const void* b);
  /// A heap copy (null for a type that cannot be copied).
  void* (*clone)(const void* r);
  /// Deletes a heap copy.
  void (*destroy)(void* r) noexcept;
  /// The resource's type, for equality across wrappers.
  const std::type_info& type;
};

template <class R>
inline constexpr resource_vtable vtable_for = {
    [](void* r, std::size_t bytes, std::size_t alignment) -> void* {
      return static_cast<R*>(r)->allocate(bytes, alignment);
    },
    [](void* r, void* p, std::size_t bytes, std::size_t alignment) noexcept {
      static_cast<R*>(r)->deallocate(p, bytes, alignment);
    },
    [] {
      if constexpr (stream_ordered_resource<R>) {
        return +[](void* r, stream_ref s, std::size_t bytes, std::size_t alignment) -> void* {
          return static_cast<R*>(r)->allocate(s, bytes, alignment);
        };
      } else {
        return static_cast<void* (*)(void*, stream_ref, std::size_t, std::size_t)>(nullptr);
      }
    }(),
    [] {
      if constexpr (stream_ordered_resource<R>) {
        return +[](void* r, stream_ref s, void* p, std::size_t bytes, std::size_t alignment) {
          static_cast<R*>(r)->deallocate(s, p, bytes, alignment);
        };
      } else {
        return static_cast<void (*)(void*, stream_ref, void*, std::size_t, std::size_t)>(nullptr);
      }
    }(),
    [](const void* a, const void* b) -> bool {
      return *static_cast<const R*>(a) == *static_cast<const R*>(b);
    },
    [] {
      if constexpr (std::is_copy_constructible_v<R>) {
        return +[](const void* r) -> void* { return new R(*static_cast<const R*>(r)); };
      } else {
        return static_cast<void* (*)(const void*)>(nullptr);
      }
    }(),
    [](void* r) noexcept { delete static_cast<R*>(r); },
    typeid(R),
};

/// True when two erased resources are equal: the same type, and equal as that type.
inline bool erased_equal(const resource_vtable* va, const void* a, const resource_vtable* vb,
                         const void* b) {
  if (va == nullptr || vb == nullptr) {
    return va == vb;
  }
  return va->type == vb->type && va->equal(a, b);
}

/// Instances of any_resource and resource_ref are wrapped by their table, not by another level
/// of erasure.
template <class T>
struct is_erased : std::false_type {};

/// Instances of any_resource convert to each other by their table, not by wrapping.
template <class T>
struct is_any_resource : std::false_type {};

/// True when `Source` has every one of `Properties`.
template <class Source, class... Properties>
concept has_all = (has_property<Source, Properties> && ...);

/// The calls any_resource and resource_ref share, as one indirect call each through the table.
/// `Derived` holds `vtable_` and `resource_` (null once moved from, or when empty) and names
/// itself in `erased_name` for the moved-from error.
template <class Derived, bool Ordered>
class erased_calls {
 public:
  /// The resource's allocate(bytes, alignment). Throws cuwrap::usage_error when empty.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current()) const {
    expect_held("allocate", where);
    return self().vtable_->allocate(self().resource_, bytes, alignment);
  }
  /// The resource's deallocate(p, bytes, alignment); nothing when empty.
  void deallocate(void* p, std::size_t bytes,
                  std::size_t alignment = default_alignment) const noexcept {
    if (self().resource_ != nullptr) {
      self().vtable_->deallocate(self().resource_, p, bytes, alignment);
    }
  }
  /// The resource's allocate(s, bytes, alignment).
  [[nodiscard]] void* allocate(
      stream_ref s, std::size_t bytes, std::size_t alignment = default_alignment,
      std::source_location where = std::source_location::current()) const requires Ordered {
    expect_held("allocate", where);
    return self().vtable_->allocate_ordered(self().resource_, s, bytes, alignment);
  }
  /// The resource's deallocate(s, p, bytes, alignment). Throws cuwrap::usage_error when empty.
  void deallocate(
      stream_ref s, void* p, std::size_t bytes, std::size_t alignment = default_alignment,
      std::source_location where = std::source_location::current()) const requires Ordered {
    expect_held("deallocate", where);
    self().vtable_->deallocate_ordered(self().resource_, s, p, bytes, alignment);
  }

  /// True when there is no resource (a moved-from any_resource, or a reference to one).
  [[nodiscard]] bool empty() const noexcept { return self().resource_ == nullptr; }
  /// The resource's type (typeid(void) when empty).
  [[nodiscard]] const std::type_info& type() const noexcept {
    return empty() ? typeid(void) : self().vtable_->type;
  }
  /// The resource if it is an `R`, else nullptr.
  template <class R>
  [[nodiscard]] R* target() const noexcept {
    return type() == typeid(R) ? static_cast<R*>(self().resource_) : nullptr;
  }

  /// Equal when both resources are of the same type and compare equal (or both are empty).
  friend bool operator==(const Derived& a, const Derived& b) { return a.same_as(b); }

 private:
  [[nodiscard]] bool same_as(const Derived& other) const {
    return erased_equal(self().vtable_, self().resource_, other.vtable_, other.resource_);
  }
  [[nodiscard]] const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  void expect_held(const char* operation, const std::source_location& where) const {
    cuwrap::detail::expect_not_moved_from(!empty(), Derived::erased_name, operation, where);
  }
};

}  // namespace cuwrap::mr::detail
