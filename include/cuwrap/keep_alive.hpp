// Keeping an owner (a buffer, a shared_ptr, any movable object) alive until a stream has passed
// the current point, so that destroying memory that queued work still uses is safe.
#pragma once

#include <concepts>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/stream.hpp"

namespace cuwrap {

namespace detail {
/// An owner waiting for its stream, type-erased.
struct kept_alive_base {
  virtual ~kept_alive_base() = default;
};
template <class T>
struct kept_alive final : kept_alive_base {
  explicit kept_alive(T&& v) : value{std::move(v)} {}
  T value;
};
/// Hands `owner` to the stream (src/keep_alive.cpp).
void keep_alive(stream_ref s, std::unique_ptr<kept_alive_base> owner, std::source_location where);
}  // namespace detail

/// Takes `owner` (moved in) and keeps it alive until `s` has run the work queued so far, then
/// destroys it on cuwrap's release thread. After this call the caller may drop every other
/// reference: a device_buffer whose kernel is still queued is freed only after that kernel ran.
///
/// How: a host function (cuLaunchHostFunc, one driver call, after one cuStreamGetCaptureInfo)
/// runs when the stream reaches this point. Host functions may not call the driver (cuda.h on
/// cuLaunchHostFunc: "The host function must not make any CUDA API calls. Attempting to use a
/// CUDA API may result in CUDA_ERROR_NOT_PERMITTED, but this is not required."), and an
/// owner's destructor usually does (cuMemFree), so the
/// host function does not destroy the owner: it hands it to a queue that a thread cuwrap starts
/// on the first keep_alive() drains, destroying owners there, where driver calls are allowed.
/// The owner is therefore destroyed some time after the stream passed the point, not at it;
/// release_kept_alive() waits for (or does) every release that is due.
///
/// While `s` is capturing, the captured graph owns `owner` instead (a user object retained by
/// the capture's graph, cuUserObjectCreate + cuGraphRetainUserObject): it lives as long as the
/// graph and every executable graph made from it, and is then released the same way.
///
/// Throws cuwrap::usage_error if `s` was moved from, and cuwrap::error if a driver call fails;
/// then `owner` has been destroyed on the calling thread (the stream never got it).
/// Owners still queued when the process exits are not destroyed.
template <class T>
requires(!std::is_lvalue_reference_v<T>) &&
    std::move_constructible<T> void keep_alive(
        stream_ref s, T&& owner, std::source_location where = std::source_location::current()) {
  detail::keep_alive(s, std::make_unique<detail::kept_alive<T>>(std::move(owner)), where);
}

/// Destroys, on the calling thread, every owner whose stream has passed its point and that the
/// release thread has not taken yet, and waits until the release thread has destroyed those it
/// took. After a stream's synchronize(), every owner handed to it before is destroyed once this
/// returns. Must not be called from a host function (it may call the driver).
void release_kept_alive();

}  // namespace cuwrap
