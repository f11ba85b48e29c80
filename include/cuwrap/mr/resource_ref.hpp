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
      public detail::with_property<Properties>...,
      public detail::erased_calls<basic_resource_ref<Ordered, Properties...>, Ordered> {
 public:
  /// The name in moved-from errors.
  static constexpr const char* erased_name = "resource_ref";

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

 private:
  template <bool, class...>
  friend class basic_resource_ref;
  friend detail::erased_calls<basic_resource_ref, Ordered>;

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
