// Driver logs: a bounded buffer of entries with sequence numbers (CUlogIterator), and callbacks.
#include "core/logs.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <list>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "core/api.hpp"

// The handle cuLogsRegisterCallback returns (cuda.h declares the struct, never defines it).
struct CUlogsCallbackEntry_st {
  CUlogsCallback fn;
  void* data;
};

namespace swcu {
namespace {

// "The maximum size of the buffer is 25600 bytes."
constexpr std::size_t kCapacity = 25600;

struct Entry {
  unsigned int seq;
  CUlogLevel level;
  std::string text;
};

struct Logs {
  std::mutex mutex;
  std::deque<Entry> entries;  ///< oldest first, at most kCapacity bytes of text in all
  std::size_t bytes = 0;
  unsigned int next_seq = 0;                    ///< the iterator of the next entry (cuLogsCurrent)
  std::list<CUlogsCallbackEntry_st> callbacks;  ///< stable addresses: the handles
  std::vector<std::pair<CUlogLevel, std::string>> pending;  ///< not yet delivered
  std::atomic<bool> has_pending{false};
};

Logs& logs() {
  static Logs* l = new Logs;  // never destroyed: reports may come from atexit handlers
  return *l;
}

// The entries from `from` on as lines, as many of the most recent as fit in `capacity` bytes
// (the null terminator included) after a truncation notice when some are left out or were
// overwritten. Returns false when not even one entry fits.
bool dump(Logs& l, unsigned int from, std::size_t capacity, std::string& out) {
  std::vector<const Entry*> picked;
  bool overwritten = !l.entries.empty() && from < l.entries.front().seq;
  for (const Entry& e : l.entries) {
    if (e.seq >= from) picked.push_back(&e);
  }
  if (picked.empty()) return true;
  const std::string notice = "[swcuda: older log messages were left out]\n";
  std::size_t used = 1;  // the null terminator
  std::size_t first = picked.size();
  while (first > 0 && used + picked[first - 1]->text.size() + 1 <= capacity) {
    used += picked[first - 1]->text.size() + 1;
    --first;
  }
  if (first == picked.size()) return false;  // the newest alone does not fit
  if (first > 0 || overwritten) {
    // Make room for the notice at the head.
    while (first < picked.size() - 1 && used + notice.size() > capacity) {
      used -= picked[first]->text.size() + 1;
      ++first;
    }
    if (used + notice.size() <= capacity) out += notice;
  }
  for (std::size_t i = first; i < picked.size(); ++i) {
    out += picked[i]->text;
    out += '\n';
  }
  return true;
}

}  // namespace

void report(CUlogLevel level, const std::string& message) noexcept {
  std::fprintf(stderr, "swcuda: %s\n", message.c_str());
  std::fflush(stderr);
  try {
    Logs& l = logs();
    const std::lock_guard lock(l.mutex);
    const std::string text = message.substr(0, kCapacity - 2);
    l.bytes += text.size() + 1;
    l.entries.push_back({l.next_seq++, level, text});
    while (l.bytes > kCapacity) {
      l.bytes -= l.entries.front().text.size() + 1;
      l.entries.pop_front();
    }
    if (!l.callbacks.empty()) {
      l.pending.emplace_back(level, text);
      l.has_pending.store(true, std::memory_order_release);
    }
  } catch (...) {  // out of memory: the stderr line is all there is
  }
}

void deliver_logs() noexcept {
  Logs& l = logs();
  if (!l.has_pending.load(std::memory_order_acquire)) return;
  std::vector<std::pair<CUlogLevel, std::string>> batch;
  std::vector<CUlogsCallbackEntry_st> callbacks;
  try {
    const std::lock_guard lock(l.mutex);
    batch.swap(l.pending);
    l.has_pending.store(false, std::memory_order_relaxed);
    callbacks.assign(l.callbacks.begin(), l.callbacks.end());
  } catch (...) {
    return;
  }
  for (auto& [level, text] : batch) {
    for (const auto& c : callbacks) c.fn(c.data, level, text.data(), text.size());
  }
}

}  // namespace swcu

extern "C" {

using swcu::Sym;

CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                CUlogsCallbackHandle* callback_out) {
  return swcu::call_uninitialized(Sym::cuLogsRegisterCallback, [=](swcu::State&) -> CUresult {
    if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::Logs& l = swcu::logs();
    const std::lock_guard lock(l.mutex);
    CUlogsCallbackEntry_st& entry = l.callbacks.emplace_back(callbackFunc, userData);
    if (callback_out != nullptr) *callback_out = &entry;
    return CUDA_SUCCESS;
  });
}

CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  return swcu::call_uninitialized(Sym::cuLogsUnregisterCallback, [=](swcu::State&) -> CUresult {
    swcu::Logs& l = swcu::logs();
    const std::lock_guard lock(l.mutex);
    const auto it = std::find_if(l.callbacks.begin(), l.callbacks.end(),
                                 [callback](const auto& c) { return &c == callback; });
    if (it == l.callbacks.end()) return CUDA_ERROR_INVALID_VALUE;
    l.callbacks.erase(it);
    return CUDA_SUCCESS;
  });
}

CUresult cuLogsCurrent(CUlogIterator* iterator_out, unsigned int flags) {
  return swcu::call_uninitialized(Sym::cuLogsCurrent, [=](swcu::State&) -> CUresult {
    if (iterator_out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    swcu::Logs& l = swcu::logs();
    const std::lock_guard lock(l.mutex);
    *iterator_out = l.next_seq;
    return CUDA_SUCCESS;
  });
}

// "The driver will always null terminate the buffer but there will not be a null character
// between log entries, only a newline ... If there are no messages to dump, *size will be set
// to 0 and the function will return CUDA_SUCCESS. If the provided buffer is not large enough to
// hold any messages, *size will be set to 0 and the function will return
// CUDA_ERROR_INVALID_VALUE." *size excludes the terminator.
CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                            unsigned int flags) {
  return swcu::call_uninitialized(Sym::cuLogsDumpToMemory, [=](swcu::State&) -> CUresult {
    if (buffer == nullptr || size == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    swcu::Logs& l = swcu::logs();
    const std::lock_guard lock(l.mutex);
    std::string text;
    if (!swcu::dump(l, iterator != nullptr ? *iterator : 0, *size, text)) {
      *size = 0;
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (*size > 0) {
      std::memcpy(buffer, text.data(), text.size());
      buffer[text.size()] = '\0';
    }
    *size = text.size();
    if (iterator != nullptr) *iterator = l.next_seq;
    return CUDA_SUCCESS;
  });
}

CUresult cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile, unsigned int flags) {
  return swcu::call_uninitialized(Sym::cuLogsDumpToFile, [=](swcu::State&) -> CUresult {
    if (pathToFile == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    swcu::Logs& l = swcu::logs();
    const std::lock_guard lock(l.mutex);
    std::string text;
    swcu::dump(l, iterator != nullptr ? *iterator : 0, swcu::kCapacity * 2, text);
    std::FILE* f = std::fopen(pathToFile, "w");
    if (f == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) return CUDA_ERROR_INVALID_VALUE;
    if (iterator != nullptr) *iterator = l.next_seq;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
