#pragma once
// What a cumulative sum along an axis takes besides its operand (ONNX CumSum's attributes):
// nax::cumsum<A>(x, options) in typed code and under nax::jit, graph::cumsum(x, axis, options)
// in the builder. Its loop is kernels/cumsum.hpp.

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA {

/// Element j of a cumulative sum along an axis of extent n is the sum of x's elements along it
/// at positions 0..j (`exclusive`: 0..j-1, and 0 at j = 0); with `reverse`, at positions j..n-1
/// (`exclusive`: j+1..n-1, and 0 at j = n - 1). The sums are taken in order along the axis,
/// starting from the first position counted (the last with `reverse`).
struct cumsum_options {
  bool exclusive = false;
  bool reverse = false;
  friend bool operator==(const cumsum_options&, const cumsum_options&) = default;
};

}  // namespace nax::NAX_ISA
