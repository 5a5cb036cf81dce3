#pragma once
// A fused step's place in the native tier: its program and plan give the source of its native
// kernel, asked for from the step's tier once the step is hot (after_runs runs that spent
// after_seconds in the interpreter, both counted here) or at once; the step then reads the
// kernel's block function on each run, without a lock, and hands it to the elementwise kernel in
// place of the interpreter's instructions.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/kernels/elementwise/native_source.hpp>
#include <nax/kernels/elementwise/plan.hpp>
#include <nax/kernels/elementwise/program.hpp>
#include <nax/kernels/elementwise/run.hpp>
#include <nax/runtime/native/tier.hpp>

namespace nax::NAX_ISA::runtime::native {

class slot {
 public:
  /// Puts the slot under tier t (nothing if t is off, or the program has too many outputs); under
  /// eager, returns once the kernel is ready or has failed.
  void attach(tier& t, const kernels::elementwise_program& program,
              const kernels::elementwise_plan& plan) {
    if (!t.enabled() || program.outputs.size() > kernels::detail::ew_native_outputs) return;
    tier_ = &t;
    if (t.after_runs() == 0) {  // (then after_nanoseconds() is 0 too)
      requested_.store(true, std::memory_order_relaxed);
      request(program, plan);
    }
  }

  /// Calls body(the block function once it is ready, else nullptr). Until the kernel is asked
  /// for, a run with nullptr (the interpreter) is counted and timed towards asking for it.
  template <class Body>
  void run(const kernels::elementwise_program& program, const kernels::elementwise_plan& plan,
           Body&& body) const {
    if (const native_kernel* k = kernel_.load(std::memory_order_acquire))
      return body(k->fn.load(std::memory_order_acquire));
    if (tier_ == nullptr || requested_.load(std::memory_order_relaxed)) return body(nullptr);
    const auto start = std::chrono::steady_clock::now();
    body(nullptr);
    const auto spent = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                             start)
            .count());
    const std::size_t runs = runs_.fetch_add(1, std::memory_order_relaxed) + 1;
    const std::uint64_t ns = interpreted_ns_.fetch_add(spent, std::memory_order_relaxed) + spent;
    if (runs >= tier_->after_runs() && ns >= tier_->after_nanoseconds() &&
        !requested_.exchange(true, std::memory_order_relaxed))
      request(program, plan);
  }

  /// Whether the native kernel runs.
  bool native() const {
    const native_kernel* k = kernel_.load(std::memory_order_acquire);
    return k != nullptr && k->fn.load(std::memory_order_acquire) != nullptr;
  }

 private:
  void request(const kernels::elementwise_program& program,
               const kernels::elementwise_plan& plan) const {
    std::vector<kernels::native_input> access;
    for (const kernels::detail::ew_input& in : plan.inputs)
      access.push_back(
          in.access == kernels::detail::ew_access::unused  ? kernels::native_input::unused
          : in.access == kernels::detail::ew_access::splat ? kernels::native_input::splat
                                                           : kernels::native_input::contiguous);
    std::string source = kernels::native_source(program, access);
    if (!source.empty())
      kernel_.store(tier_->request(std::move(source)), std::memory_order_release);
  }

  tier* tier_ = nullptr;
  mutable std::atomic<std::size_t> runs_{0};
  mutable std::atomic<std::uint64_t> interpreted_ns_{0};  // the runs' time in the interpreter
  mutable std::atomic<bool> requested_{false};
  mutable std::atomic<const native_kernel*> kernel_{nullptr};
};

}  // namespace nax::runtime::native
