#pragma once
// nax::size<A>(x): x's extent along axis A as a rank-0 i32 tensor, the value StableHLO's
// get_dimension_size gives. A generic lambda calling it runs eagerly on tensors and, under
// nax::jit, adds a get_dimension_size node (jit/traced_ops.hpp) whose value is the run's extent,
// whatever extent the specialization serving the run was made for (docs/bounded.md).

#include <cstdint>
#include <type_traits>
#include <utility>

#include <nax/core/axis_list.hpp>
#include <nax/core/diagnostics.hpp>
#include <nax/core/isa.hpp>
#include <nax/typed/creation.hpp>
#include <nax/typed/expression.hpp>

namespace nax::NAX_ISA {

template <class A, class X>
requires expression<X> tensor<std::int32_t> size(X&& x) {
  using E = detail::expression_of<X>;
  // An error here means A is not an axis of x.
  static_assert(detail::require<axes_contains_v<typename E::axes_type, A>,
                                error::axis_not_in_list<detail::axis_diagnostic_name<A>>>);
  return full<std::int32_t>(static_cast<std::int32_t>(x.template extent<A>()));
}

}  // namespace nax
