#pragma once
// The expression protocol of the typed layer. An expression E (a tensor, a view, a scalar or an
// op node) has
//   E::value_type   the element type it yields (bool for comparisons)
//   E::axes_type    nax::axes<...> of its axes (broadcasting is by name)
//   E::lane_type    the element type whose SIMD width it is evaluated at (void: "the context's",
//                   for bool leaves)
//   e.extent<A>()   its extent along axis A
//   e.cursor<D>()   a cursor that evaluates it over destination axes D, row by row
// Nodes are lazy: building `x * 2 + b` computes nothing; assignment runs one loop (evaluate.hpp).
//
// One concept per header under typed/expression/:
//   base.hpp        expression_base and the nax::expression concept
//   lanes.hpp       the lane an expression is read at
//   readers.hpp     row readers (contiguous, strided, splatted)
//   cursor.hpp      the cursor protocol at the leaves (leaf_cursor, load_tail, row_reader)
//   scalar.hpp      scalars
//   owned_leaf.hpp  rvalue tensors kept alive by the node that reads them
//   operand.hpp     what an operand becomes inside a node
//   mask_reader.hpp a bool operand read at another lane's width (an i64 mask over floats)
//   op_node.hpp     elementwise op nodes and their dtype rule
//   cast.hpp        conversions
//   assignable.hpp  which expression axes a destination takes

#include <nax/typed/expression/assignable.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/cast.hpp>
#include <nax/typed/expression/cursor.hpp>
#include <nax/typed/expression/lanes.hpp>
#include <nax/typed/expression/mask_reader.hpp>
#include <nax/typed/expression/op_node.hpp>
#include <nax/typed/expression/operand.hpp>
#include <nax/typed/expression/owned_leaf.hpp>
#include <nax/typed/expression/readers.hpp>
#include <nax/typed/expression/reads_deferred.hpp>
#include <nax/typed/expression/scalar.hpp>
