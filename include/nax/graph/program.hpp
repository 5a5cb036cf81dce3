#pragma once
// What level 1 of the two-level JIT gives level 2: a linear program. The graph's nodes, after the
// passes, in execution order as steps over values; each value with its symbolic shape, its role
// (which decides where its memory comes from at run time) and the steps between which it must
// stay alive. Nothing here depends on extents; level 2 (runtime/specialization.hpp) resolves
// them per axis binding.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/axis_alias.hpp>
#include <nax/graph/decomposition.hpp>
#include <nax/graph/op.hpp>
#include <nax/graph/value_axis.hpp>

namespace nax::NAX_ISA::graph {

using value_index = std::uint32_t;
inline constexpr value_index no_value = std::numeric_limits<value_index>::max();

/// What a value of the program is, which decides where its memory comes from at run time.
enum class value_role : std::uint8_t {
  input,         // the caller's tensor for parameter `index`
  constant,      // a scalar held by the specialization
  intermediate,  // a slice of the run's arena, live over [first_step, last_step]
  output,        // the caller's result `index`, written by the step that computes it
};

struct program_value {
  nax::shape shape;  // symbolic
  value_role role = value_role::intermediate;
  std::uint32_t index = 0;   // input: the parameter's position; output: the result's position
  double scalar = 0;         // a constant's value
  std::uint32_t origin = 0;  // the builder node
  std::uint32_t first_step = 0, last_step = 0;
};

/// One op of the linear plan: `result = op(args...)`.
struct program_step {
  attributes op;
  nax::detail::small_vector<value_index, 3> args;
  value_index result = no_value;
  std::vector<value_index> extra_results;      // a fused step's values besides `result`, in order
  std::shared_ptr<const decomposition> fused;  // a fused step's: the ops it replaces
  std::uint32_t origin = 0;                    // the builder node of its result

  op_kind kind() const noexcept { return kind_of(op); }
  template <class A>
  const A& as() const {
    return op.template get<A>();
  }
};

/// Steps that can run tile by tile along one axis (graph/pipeline_chains.hpp): consecutive
/// steps of the program, every operand and result that has `axis` having it first (with one
/// extent), and no step reducing, moving or generating along it.
/// Level 2 picks the tile size per binding (runtime/pipeline.hpp).
struct pipeline_chain {
  std::vector<std::uint32_t> steps;  // ascending, consecutive
  axis_name axis;                    // the tile axis
};

/// A compiled graph: values (inputs first, in the builder's parameter order), steps in execution
/// order, and for each requested result the value it is.
struct program {
  std::vector<program_value> values;
  std::vector<program_step> steps;
  std::vector<std::string> input_names;  // by parameter position
  std::vector<value_index> outputs;      // by result position
  /// The named dynamic axes of the inputs, sorted, then the value axes', in value_axes' order:
  /// the axes a binding gives extents to.
  std::vector<axis_name> dynamic_axes;
  /// The axes no input has, whose extents a run computes (graph/value_axis.hpp), each from the
  /// extents before it in dynamic_axes.
  std::vector<value_axis> value_axes;
  /// The renamed dynamic axes (graph::builder::rename), each bound as its source, one of
  /// dynamic_axes: specialization binds them from the binding of dynamic_axes.
  std::vector<axis_alias> axis_aliases;
  /// The chains level 2 may pipeline (empty when compile_options::pipelining is off).
  std::vector<pipeline_chain> pipelines;
  /// The builder node graph::grad began the backward graph at (no_value if none): a value of an
  /// earlier node that a step of a later one reads is an activation the backward keeps.
  std::uint32_t gradient_begin = no_value;

  const program_value& input(std::size_t k) const { return values[k]; }
  std::size_t num_inputs() const { return input_names.size(); }
  /// The dynamic axes of the inputs: the first ones of dynamic_axes.
  std::size_t num_input_axes() const { return dynamic_axes.size() - value_axes.size(); }
};

}  // namespace nax::graph
