#pragma once
// nax's vectorized transcendental functions, one header each under nax/simd/math/:
//
//   nax::simd::exp, log, tanh, sigmoid, silu, erf, gelu, gelu_tanh, sin, cos
//
// Each takes float, double or an xsimd::batch of either (any architecture), and a scalar call
// gives bit for bit what each lane of a batch call gives, so a loop's tail can be computed with
// scalars, with a padded batch or with a batch of one value, interchangeably. Error bounds are
// in each header and in docs/simd_math.md; tests/simd/math.cpp checks them.
//
// Call them qualified: unqualified exp(batch) finds xsimd::exp by argument-dependent lookup.

#include <nax/simd/math/erf.hpp>
#include <nax/simd/math/exp.hpp>
#include <nax/simd/math/gelu.hpp>
#include <nax/simd/math/gelu_tanh.hpp>
#include <nax/simd/math/lanes.hpp>
#include <nax/simd/math/log.hpp>
#include <nax/simd/math/sigmoid.hpp>
#include <nax/simd/math/silu.hpp>
#include <nax/simd/math/sin_cos.hpp>
#include <nax/simd/math/tanh.hpp>
