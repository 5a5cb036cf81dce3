#pragma once
// One step of a specialization, ready to run: the op's kernel with every shape-dependent choice
// made (loop geometry, GEMM plan, thread split), reading and writing the values of one run
// through a table of addresses. A run is a walk over these with one indirect call per step.

#include <cstddef>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::kernels {

class step_kernel {
 public:
  virtual ~step_kernel() = default;
  /// values[v] is the address of value v in this run; arena is the run's scratch memory (for
  /// the step's own temporaries, at offsets its specialization planned).
  virtual void run(void* const* values, std::byte* arena) const = 0;
  /// How many threads the step uses when it runs alone (its plan's split), or 0 if its
  /// parallel loops decide when they run (level 2's scheduler then estimates it from the size).
  virtual std::size_t tasks() const noexcept { return 0; }
  /// Whether run() does nothing (a reshape whose result is its operand's buffer).
  virtual bool does_nothing() const noexcept { return false; }
};

}  // namespace nax::kernels
