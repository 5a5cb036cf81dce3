#pragma once
// The runtime fused-elementwise kernel: a program of elementwise ops (a chain or a tree over k
// inputs, with one or more outputs) run over dense row-major outputs whose shapes are known only
// at run time. Inputs are read through strides over the output's index space (0 = broadcast).
//
// No code generation and no per-element switch: the planner resolves, once per shape, a function
// pointer per instruction (op x dtype x which operands are splatted) and a block size; the kernel
// then walks the instruction list once per block of a few hundred elements, and each call runs
// the op's own body (nax/ops/elementwise.hpp, the typed evaluator's) over the whole block.
// Intermediate results live in block buffers on the stack, sized to stay in L1; outputs are
// written in place (large ones from a block buffer with non-temporal stores).
//
//   plan_elementwise(program, out_extents, input_strides[, block])   once per shape
//   run_elementwise(plan, inputs, outputs)                           many times; never allocates
//
// One concept per header under kernels/elementwise/:
//   program.hpp    the program format (instructions over nax::ops::id)
//   broadcast.hpp  the strides a broadcast input is read with
//   bodies.hpp     the block body of each op x dtype x splatted operands
//   plan.hpp       a planned program
//   planner.hpp    planning, in phases
//   run.hpp        running a plan

#include <nax/kernels/elementwise/bodies.hpp>
#include <nax/kernels/elementwise/broadcast.hpp>
#include <nax/kernels/elementwise/plan.hpp>
#include <nax/kernels/elementwise/planner.hpp>
#include <nax/kernels/elementwise/program.hpp>
#include <nax/kernels/elementwise/run.hpp>
