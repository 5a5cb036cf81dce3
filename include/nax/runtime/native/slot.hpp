#pragma once
// A fused step's place in the native tier: its program and plan give the source of its native
// kernel, asked for from the step's tier once the step is hot (after_runs runs) or at once; the
// step then reads the kernel's block function on each run, without a lock, and hands it to the
// elementwise kernel in place of the interpreter's instructions.

#include <atomic>
#include <cstddef>
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
    if (t.after_runs() == 0) request(program, plan);
  }

  /// The block function once it is ready, else nullptr: then the run counts towards asking for
  /// it.
  kernels::native::block_fn function(const kernels::elementwise_program& program,
                                     const kernels::elementwise_plan& plan) const {
    if (const native_kernel* k = kernel_.load(std::memory_order_acquire))
      return k->fn.load(std::memory_order_acquire);
    if (tier_ && runs_.fetch_add(1, std::memory_order_relaxed) + 1 == tier_->after_runs())
      request(program, plan);
    return nullptr;
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
  mutable std::atomic<const native_kernel*> kernel_{nullptr};
};

}  // namespace nax::runtime::native
