// docs/streams-and-events.md: stream memory operations (a host thread releasing a wait through
// mapped pinned memory, a batch, the same wait as a graph node) and typed stream attributes.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <thread>
#include <vector>

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  const cuwrap::scoped_current_context current{ctx};  // for mailbox.device()
  cuwrap::stream gpu{ctx}, other{ctx};
  cuwrap::pinned_buffer<std::uint32_t> mailbox{ctx, 1, cuwrap::pinned_flags::device_mapped};
  mailbox[0] = 0;
  cuwrap::device_buffer<std::uint32_t> results{ctx, 2};
  cuwrap::fill(results.span(), 0u);

  // gpu waits until the host posts a ticket >= 1, then writes 10 into results[0].
  gpu.wait_value(mailbox.device(), 1u, cuwrap::wait_condition::greater_equal);
  gpu.write_value(results.span().subspan(0, 1), 10u);
  // other: a batch of two operations in one driver call.
  other.batch(cuwrap::memop_batch{}
                  .write(results.span().subspan(1, 1), 20u)
                  .barrier(cuwrap::memory_barrier_scope::device));
  other.synchronize();  // does not wait for gpu: a memory wait blocks only its own stream

  std::thread host([&mailbox] { std::atomic_ref<std::uint32_t>(mailbox[0]).store(1); });
  gpu.synchronize();  // returns once the host's store released the wait
  host.join();

  // The same in a graph: a memory operation node waits for ticket 2; the write after it runs
  // once the host posts it.
  cuwrap::graph g{ctx};
  cuwrap::memop_batch wait_ticket, write_result;
  wait_ticket.wait(mailbox.device(), 2u, cuwrap::wait_condition::greater_equal);
  write_result.write(results.span().subspan(0, 1), 30u);
  const cuwrap::graph_node waited = cuwrap::add_memops(g, wait_ticket);
  (void)cuwrap::add_memops(g, write_result, {waited});
  const cuwrap::graph_exec exec = g.instantiate();
  exec.launch(gpu);
  std::atomic_ref<std::uint32_t>(mailbox[0]).store(2);
  gpu.synchronize();

  // Typed attributes: an L2 persistence window over `results` for this stream's kernels.
  gpu.set_access_policy_window({results.data(), results.size_bytes(), 1.0f,
                                cuwrap::access_property::persisting,
                                cuwrap::access_property::streaming});
  other.copy_attributes_from(gpu);

  std::vector<std::uint32_t> out(2);
  cuwrap::copy(out, results);
  std::printf("results %u %u, window %zu bytes\n", out[0], out[1],
              other.access_policy_window().bytes);
  return out == std::vector<std::uint32_t>{30, 20} ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
} catch (const cuwrap::usage_error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
