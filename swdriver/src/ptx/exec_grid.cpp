// The launch's CTAs and workers (exec_machine.hpp): the resident set (CTAs started and not
// finished, at most Launch::max_resident; a new one is admitted when one finishes, in blockIdx
// order), the turns the workers take on them, and how the first fault ends the launch.
#include <algorithm>
#include <system_error>
#include <thread>

#include "ptx/exec_machine.hpp"

namespace swcu::ptx::detail {

Grid::Grid(Launch& launch) : l(launch), p(*launch.program) {
  nthreads = l.block[0] * l.block[1] * l.block[2];
  nwarps = (nthreads + 31) / 32;
  shared_size = p.dynamic_shared_offset + l.dynamic_shared;
  if (l.dynamic_shared == 0) shared_size = p.static_shared;
  shared_size = std::max(shared_size, p.static_shared);
  total = std::uint64_t{l.grid[0]} * l.grid[1] * l.grid[2];
  resident = l.max_resident == 0 ? total : std::min(total, l.max_resident);
  resident = std::max<std::uint64_t>(resident, 1);
  heap = l.heap;
  heap_blocks.store(heap.size(), std::memory_order_relaxed);
  start = std::chrono::steady_clock::now();
}

Outcome Grid::run() {
  const std::uint64_t workers = std::min<std::uint64_t>(
      {std::max(l.workers, 1u), resident, std::max<std::uint64_t>(total, 1)});
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (std::uint64_t i = 1; i < workers; ++i) {
    try {
      threads.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // no more threads: fewer workers
    }
  }
  work();
  for (std::thread& t : threads) t.join();
  if (error_) std::rethrow_exception(error_);
  return outcome_;
}

void Grid::work() noexcept {
  try {
    Machine m(*this);
    m.work();
  } catch (const KernelFault& f) {
    fail(f);
  } catch (const Stopped&) {
    // another worker ended the launch
  } catch (...) {
    const std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
    stop.store(true, std::memory_order_relaxed);
    changed_.notify_all();
  }
}

std::unique_ptr<Cta> Grid::take() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) return nullptr;
    if (next_ < total && running_ < resident) {
      std::unique_ptr<Cta> c;
      if (!spare_.empty()) {
        c = std::move(spare_.back());
        spare_.pop_back();
      } else {
        c = std::make_unique<Cta>();
      }
      c->linear = next_++;
      c->started = false;
      ++running_;
      return c;
    }
    if (!ready_.empty()) {
      std::unique_ptr<Cta> c = std::move(ready_.front());
      ready_.pop_front();
      return c;
    }
    if (running_ == 0) return nullptr;  // every CTA finished
    changed_.wait(lock);
  }
}

void Grid::put(std::unique_ptr<Cta> c, bool finished) {
  {
    const std::lock_guard lock(mutex_);
    if (finished) {
      --running_;
      spare_.push_back(std::move(c));
    } else {
      ready_.push_back(std::move(c));
    }
  }
  changed_.notify_all();
}

void Grid::fail(KernelFault f) {
  {
    const std::lock_guard lock(mutex_);
    if (!failed_ && !error_) {
      failed_ = true;
      outcome_ = {f.fault, std::move(f.what)};
    }
    stop.store(true, std::memory_order_relaxed);
  }
  changed_.notify_all();
}

Machine::Machine(Grid& g)
    : g_(g),
      l_(g.l),
      p_(g.p),
      entry_(p_.functions[l_.entry]),
      nthreads_(g.nthreads),
      nwarps_(g.nwarps),
      shared_size_(g.shared_size) {}

void Machine::work() {
  for (;;) {
    std::unique_ptr<Cta> c = g_.take();
    if (!c) return;
    if (!c->started) start_cta(*c);
    const bool finished = turn(*c);
    g_.put(std::move(c), finished);
  }
}

}  // namespace swcu::ptx::detail

namespace swcu::ptx {

Outcome execute(Launch& launch) {
  detail::Grid g(launch);
  return g.run();
}

}  // namespace swcu::ptx
