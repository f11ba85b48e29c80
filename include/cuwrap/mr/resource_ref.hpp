// resource_ref: a non-owning, type-erased view of a memory resource carrying its properties in
// its type (resource_ref<device_accessible>), and its stream-ordered sibling.
#pragma once

#include <cstddef>
#include <source_location>
#include <type_traits>
#include <typeinfo>

#include "cuwrap/error.hpp"
#include "cuwrap/mr/any_resource.hpp"
#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/mr/erased.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// Refers to a resource with at least `Properties` (and, when `Ordered`, a stream-ordered one):
/// the resource must outlive the reference. Two pointers, cheap to copy; each call is one
/// indirect call to the resource's own. A reference to an any_resource refers to the resource
/// it holds (so it stays valid while that any_resource is not moved from, assigned to or
/// destroyed); one to a moved-from any_resource is empty and its allocate() throws
/// cuwrap::usage_error. It converts to a resource_ref of fewer properties. Two references are
/// equal when their resources are of the same type and compare equal.
template <bool Ordered, class... Properties>
class basic_resource_ref
    : public detail::cccl_async_names<basic_resource_ref<Ordered, Properties...>>,
      public detail::with_property<Properties>... {
 public:
  /// Refers to `r`. Only resources with every one of `Properties` convert: a missing property
  /// is a compile-time error.
  template <class R>
  requires(!detail::is_erased<R>::value) &&
      (!std::is_const_v<R>)&&resource_with<R, Properties...> &&
      (!Ordered || stream_ordered_resource<R>)
          basic_resource_ref(R& r) noexcept  // NOLINT: converting, as CCCL's resource_ref
      : vtable_{&detail::vtable_for<R>},
  resource_{&r} {}
  /// Refers to the resource `r` holds.
  template <bool O, class... Others>
  requires(O || !Ordered) &&
      detail::has_all<basic_any_resource<O, Others...>, Properties...> basic_resource_ref(
          basic_any_resource<O, Others...>& r) noexcept  // NOLINT: converting
      : vtable_{r.vtable_},
  resource_{r.resource_} {}
  /// The same resource, promising fewer properties.
  template <bool O, class... Others>
  requires(O || !Ordered) && detail::has_all<basic_resource_ref<O, Others...>, Properties...> &&
      (!std::is_same_v<basic_resource_ref<O, Others...>, basic_resource_ref>)
          basic_resource_ref(basic_resource_ref<O, Others...> r) noexcept  // NOLINT: converting
      : vtable_{r.vtable_},
  resource_{r.resource_} {}

  /// The resource's allocate(bytes, alignment).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current()) const {
    cuwrap::detail::expect_not_moved_from(resource_ != nullptr, "resource_ref", "allocate", where);
    return vtable_->allocate(resource_, bytes, alignment);
  }
  /// The resource's deallocate(p, bytes, alignment); nothing for an empty reference.
  void deallocate(void* p, std::size_t bytes,
                  std::size_t alignment = default_alignment) const noexcept {
    if (resource_ != nullptr) {
      vtable_->deallocate(resource_, p, bytes, alignment);
    }
  }
  /// The resource's allocate(s, bytes, alignment).
  [[nodiscard]] void* allocate(
      stream_ref s, std::size_t bytes, std::size_t alignment = default_alignment,
      std::source_location where = std::source_location::current()) const requires Ordered {
    cuwrap::detail::expect_not_moved_from(resource_ != nullptr, "resource_ref", "allocate", where);
    return vtable_->allocate_ordered(resource_, s, bytes, alignment);
  }
  /// The resource's deallocate(s, p, bytes, alignment).
  void deallocate(
      stream_ref s, void* p, std::size_t bytes, std::size_t alignment = default_alignment,
      std::source_location where = std::source_location::current()) const requires Ordered {
    cuwrap::detail::expect_not_moved_from(resource_ != nullptr, "resource_ref", "deallocate",
                                          where);
    vtable_->deallocate_ordered(resource_, s, p, bytes, alignment);
  }

  /// True for a reference to a moved-from any_resource.
  [[nodiscard]] bool empty() const noexcept { return resource_ == nullptr; }
  /// The resource's type (typeid(void) when empty).
  [[nodiscard]] const std::type_info& type() const noexcept {
    return resource_ != nullptr ? vtable_->type : typeid(void);
  }
  /// The resource if it is an `R`, else nullptr.
  template <class R>
  [[nodiscard]] R* target() const noexcept {
    return type() == typeid(R) ? static_cast<R*>(resource_) : nullptr;
  }

  /// Equal when the resources are of the same type and compare equal.
  friend bool operator==(const basic_resource_ref& a, const basic_resource_ref& b) {
    return detail::erased_equal(a.vtable_, a.resource_, b.vtable_, b.resource_);
  }

 private:
  template <bool, class...>
  friend class basic_resource_ref;

  const detail::resource_vtable* vtable_;
  void* resource_;
};

/// A non-owning, type-erased synchronous resource with `Properties`.
template <class... Properties>
using resource_ref = basic_resource_ref<false, Properties...>;
/// A non-owning, type-erased stream-ordered resource with `Properties`.
template <class... Properties>
using stream_ordered_resource_ref = basic_resource_ref<true, Properties...>;

}  // namespace cuwrap::mr
