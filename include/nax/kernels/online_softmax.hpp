#pragma once
// One step of an online softmax: a running maximum `most` and the running sum `total` of
// exp(score - most) over the scores so far, updated by one more score s with one exp. A new
// maximum rescales what was summed by exp(most - s), and s's own weight is exp(0) = 1; otherwise
// s's weight is exp(s - most). The step returns both factors, for callers that accumulate
// weighted values beside the sum (acc = acc * scale + weight * value: the GAT kernel, the vertex
// programs' softmax_sum). Scalars branch; SIMD vectors select lane by lane, with the same bits as
// the scalar form in each lane (the sum's product rounded on its own, simd::op_result: a
// compiler may fuse a scalar `a * b + c` into one multiply-add but not the vector one). The row
// kernels' long rows keep a form of their own (softmax_row::online): a padded lane there must add
// nothing to the sum.

#include <nax/core/isa.hpp>
#include <nax/simd/arch.hpp>

namespace nax::NAX_ISA::detail {

template <class U>
struct online_weights {
  U scale;   // what the sum (and the accumulator) so far is multiplied by
  U weight;  // the new score's own weight
};

/// Adds score s to the running (most, total); exp is the caller's exponential (its precision).
template <class U, class Exp>
online_weights<U> online_softmax_step(const U& s, U& most, U& total, Exp exp) {
  if constexpr (simd::is_vec_v<U>) {
    const auto up = s > most;
    const U e = exp(xsimd::select(up, most - s, s - most));
    const U one(typename U::value_type(1));
    const online_weights<U> w{xsimd::select(up, e, one), xsimd::select(up, one, e)};
    most = xsimd::select(up, s, most);
    total = simd::op_result(total * w.scale) + w.weight;
    return w;
  } else {
    online_weights<U> w{U(1), U(1)};
    if (s > most) {
      w.scale = exp(most - s);
      most = s;
    } else {
      w.weight = exp(s - most);
    }
    total = simd::op_result(total * w.scale) + w.weight;
    return w;
  }
}

}  // namespace nax::NAX_ISA::detail
