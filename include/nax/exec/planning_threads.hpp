#pragma once
// The thread count a kernel plan is made for. Plans choose their thread split when they are made
// (kernels/gemm_plan.hpp, rows.hpp, reduce.hpp); a specialization of the runtime is made for the
// thread count of the runs it serves, which it sets here for the time it plans, so that a run
// never uses a plan made for another count (runtime/specialization.hpp).

#include <cstddef>

#include <nax/core/isa.hpp>
#include <nax/exec/thread_pool.hpp>

namespace nax::NAX_ISA::detail {

inline thread_local std::size_t planning_threads_override = 0;

/// The thread count plans made now are for: num_threads(), unless a planning_threads_scope on
/// this thread says otherwise.
[[nodiscard]] inline std::size_t planning_threads() noexcept {
  const std::size_t t = planning_threads_override;
  return t != 0 ? t : static_cast<std::size_t>(num_threads());
}

/// Plans made on this thread while it lives are for `threads` threads.
class planning_threads_scope {
 public:
  explicit planning_threads_scope(std::size_t threads) noexcept
      : saved_(planning_threads_override) {
    planning_threads_override = threads;
  }
  planning_threads_scope(const planning_threads_scope&) = delete;
  planning_threads_scope& operator=(const planning_threads_scope&) = delete;
  ~planning_threads_scope() { planning_threads_override = saved_; }

 private:
  std::size_t saved_;
};

}  // namespace nax::detail
