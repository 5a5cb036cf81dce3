#pragma once
// nax: typed tensors with named axes. The one header users include.

#include <nax/core/axis.hpp>
#include <nax/core/axis_list.hpp>
#include <nax/core/axis_name.hpp>
#include <nax/core/bindings.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/extent.hpp>
#include <nax/core/extents.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/core/fixed_string.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/shape_of.hpp>
#include <nax/core/unify.hpp>
#include <nax/io/print.hpp>
#include <nax/runtime/thread_pool.hpp>
#include <nax/simd/arch.hpp>
#include <nax/simd/math.hpp>
#include <nax/simd/ops.hpp>
#include <nax/typed/elementwise.hpp>
#include <nax/typed/evaluate.hpp>
#include <nax/typed/expression.hpp>
#include <nax/typed/reduce.hpp>
#include <nax/typed/tensor.hpp>
#include <nax/typed/tensor_view.hpp>
