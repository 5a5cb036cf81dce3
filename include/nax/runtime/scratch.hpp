#pragma once
// Scratch memory a step asks for when it is planned (a permuted GEMM operand, partial sums):
// the specialization's memory plan gives it an offset in the run's arena, live during the step.

#include <cstddef>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::runtime {

struct scratch_request {
  std::size_t bytes = 0;
  std::size_t* offset = nullptr;  // where the memory plan writes the offset
  std::size_t step = 0;           // the step that needs it (its lifetime)
};

}  // namespace nax::runtime
