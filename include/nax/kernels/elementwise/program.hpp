#pragma once
// The program format of the runtime elementwise kernel: elementwise ops (nax::ops::id, the op
// list of ops/list.hpp) over k inputs, as a chain or a tree, with one or more outputs. A program
// says what to compute; plan_elementwise (planner.hpp) decides how, once per shape.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::kernels {

/// An operand of an instruction: program input `index`, or the result of (earlier) instruction
/// `index`.
struct elementwise_operand {
  enum class source : std::uint8_t { input, result };
  source from = source::input;
  std::uint32_t index = 0;

  static constexpr elementwise_operand input(std::uint32_t i) noexcept {
    return {source::input, i};
  }
  static constexpr elementwise_operand result(std::uint32_t i) noexcept {
    return {source::result, i};
  }
  friend bool operator==(const elementwise_operand&, const elementwise_operand&) = default;
};

/// One op of a program: op applied to args[0, ops::arity(op)).
struct elementwise_instruction {
  ops::id op = ops::id::add;
  std::array<elementwise_operand, 3> args{};
};

/// Elementwise ops over k inputs: instructions in order, each reading inputs and results of
/// earlier instructions; outputs[o] is the instruction whose result is output o (an instruction
/// may be listed more than once). Each result's dtype is its op's (ops::result_dtype):
/// comparisons and logical ops give bool, where(mask, a, b) gives a's type, the others their
/// operands' type.
struct elementwise_program {
  std::vector<dtype> inputs;
  std::vector<elementwise_instruction> instructions;
  std::vector<std::uint32_t> outputs;

  /// Appends instruction `op` over `args` and returns its result as an operand.
  elementwise_operand append(ops::id op, std::initializer_list<elementwise_operand> args) {
    elementwise_instruction ins;
    ins.op = op;
    std::copy_n(args.begin(), std::min<std::size_t>(args.size(), 3), ins.args.begin());
    instructions.push_back(ins);
    return elementwise_operand::result(static_cast<std::uint32_t>(instructions.size() - 1));
  }
};

}  // namespace nax::kernels
