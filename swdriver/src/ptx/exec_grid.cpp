// The launch's CTAs and workers (exec_machine.hpp): the resident set (CTAs started and not
// finished, at most Launch::max_resident rounded down to whole clusters, at least one cluster;
// a cluster's CTAs are admitted together when a whole cluster has finished, in cluster order
// and by rank within a cluster), the turns the workers take on them, and how the first fault
// ends the launch.
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
  // the callers check that the cluster divides the grid; one that does not runs as clusters
  // of one CTA
  for (int i = 0; i < 3; ++i) {
    if (l.cluster[i] == 0 || l.grid[i] % l.cluster[i] != 0) {
      l.cluster[0] = l.cluster[1] = l.cluster[2] = 1;
    }
  }
  for (int i = 0; i < 3; ++i) {
    const unsigned c = std::max(l.cluster[i], 1u);
    cluster_size *= c;
    nclusters[i] = l.grid[i] / c;
  }
  resident = l.max_resident == 0 ? total : std::min(total, l.max_resident);
  // whole clusters (cuOccupancyMaxActiveClusters: blocks per SM x SMs / cluster size)
  resident = std::max<std::uint64_t>(resident / cluster_size, 1) * cluster_size;
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
    if (next_ < total && running_ + cluster_size <= resident) {
      std::unique_ptr<Cta> c = admit();
      c->cluster->held.fetch_add(1, std::memory_order_relaxed);
      return c;
    }
    if (!ready_.empty()) {
      std::unique_ptr<Cta> c = std::move(ready_.front());
      ready_.pop_front();
      c->cluster->held.fetch_add(1, std::memory_order_relaxed);
      return c;
    }
    if (running_ == 0) return nullptr;  // every CTA finished
    changed_.wait(lock);
  }
}

std::unique_ptr<Cta> Grid::spare_cta() {
  if (spare_.empty()) return std::make_unique<Cta>();
  std::unique_ptr<Cta> c = std::move(spare_.back());
  spare_.pop_back();
  return c;
}

std::unique_ptr<Cta> Grid::admit() {
  Cluster* k = nullptr;
  if (!spare_clusters_.empty()) {
    k = spare_clusters_.back();
    spare_clusters_.pop_back();
  } else {
    clusters_.push_back(std::make_unique<Cluster>());
    k = clusters_.back().get();
  }
  k->linear = next_ / cluster_size;
  std::uint64_t rest = k->linear;
  k->id[0] = static_cast<unsigned>(rest % nclusters[0]);
  rest /= nclusters[0];
  k->id[1] = static_cast<unsigned>(rest % nclusters[1]);
  k->id[2] = static_cast<unsigned>(rest / nclusters[1]);
  k->ctas.assign(cluster_size, nullptr);
  k->finished = 0;
  k->done.clear();
  k->live = std::uint64_t{cluster_size} * nthreads;
  k->arrived = 0;
  k->phase.store(0, std::memory_order_relaxed);
  k->idle_turns.store(0, std::memory_order_relaxed);
  k->held.store(0, std::memory_order_relaxed);
  std::unique_ptr<Cta> first;
  for (std::uint32_t r = 0; r < cluster_size; ++r) {
    std::unique_ptr<Cta> c = spare_cta();
    c->cluster = k;
    c->rank = r;
    const unsigned cx = std::max(l.cluster[0], 1u), cy = std::max(l.cluster[1], 1u);
    c->cluster_ctaid[0] = r % cx;
    c->cluster_ctaid[1] = (r / cx) % cy;
    c->cluster_ctaid[2] = r / (cx * cy);
    for (int i = 0; i < 3; ++i) {
      c->ctaid[i] = k->id[i] * std::max(l.cluster[i], 1u) + c->cluster_ctaid[i];
    }
    c->linear = c->ctaid[0] +
                std::uint64_t{l.grid[0]} * (c->ctaid[1] + std::uint64_t{l.grid[1]} * c->ctaid[2]);
    c->started = false;
    // allocated now: the cluster's other CTAs may access it before this one starts
    c->shared.assign(shared_size + 16, 0);
    k->ctas[r] = c.get();
    if (r == 0) {
      first = std::move(c);
    } else {
      ready_.push_back(std::move(c));
    }
  }
  next_ += cluster_size;
  running_ += cluster_size;
  if (cluster_size > 1) changed_.notify_all();
  return first;
}

void Grid::put(std::unique_ptr<Cta> c, bool finished) {
  {
    const std::lock_guard lock(mutex_);
    c->cluster->held.fetch_sub(1, std::memory_order_relaxed);
    if (finished) {
      // the cluster's slots are free when all its CTAs finished (until then the others may
      // still access this CTA's shared memory)
      Cluster* k = c->cluster;
      k->done.push_back(std::move(c));
      if (++k->finished == cluster_size) {
        for (std::unique_ptr<Cta>& d : k->done) spare_.push_back(std::move(d));
        k->done.clear();
        running_ -= cluster_size;
        spare_clusters_.push_back(k);
      }
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
