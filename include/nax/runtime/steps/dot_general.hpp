#pragma once
// The step of dot_general (and of a fused dense node: the same GEMM with a bias and an
// activation in its epilogue). Each operand is read in place when its batch, row and column
// groups of axes each flatten to one stride, else permuted into scratch first.

#include <memory>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/step_kernel.hpp>
#include <nax/runtime/scratch.hpp>
#include <nax/runtime/step_request.hpp>

namespace nax::NAX_ISA::runtime {

class plan_memo;

/// The kernel of a dot_general or fused_dense step s; operands that need a permuted copy append
/// their scratch to `scratch`.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_dot_general_step(
    const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch);

/// The same, copying the kernel of an earlier step of the same op and shapes that `memo` kept.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_dot_general_step(
    const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch, plan_memo& memo);

/// The kernel of s copied from `like`, the kernel of a step of the same op whose operands and
/// result have the shapes of s's (s's scratch appended to `scratch`).
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_dot_general_step(
    const kernels::step_kernel& like, const graph::program_step& s,
    std::span<const nax::shape> shapes, std::vector<scratch_request>& scratch);

/// The step factories of dot_general and fused_dense (runtime/step_request.hpp): the above.
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::dot_general_op&,
                                                                   const step_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::fused_dense_op&,
                                                                   const step_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::dot_general_op&, const step_copy_request& request);
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::fused_dense_op&, const step_copy_request& request);

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/kernels/dense_epilogue.hpp>
#include <nax/kernels/gemm.hpp>
#include <nax/kernels/gemm_plan.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#include <nax/runtime/kernel_arena.hpp>
#include <nax/runtime/operand_layout.hpp>
#include <nax/runtime/plan_memo.hpp>

namespace nax::NAX_ISA::runtime {
namespace detail {

// An operand of a GEMM as the product needs it: batch, row and column groups of axes, each with
// one stride, or else a dense copy in that order made in scratch before the product.
struct gemm_operand {
  std::ptrdiff_t bs = 0, rs = 0, cs = 0;
  bool copy = false;
  kernels::copy_plan copy_plan;
  std::size_t scratch_bytes = 0;  // the copy's size (its offset is each step's own)
};

// What steps of one op over operands of the same shapes share.
struct dot_plans {
  kernels::gemm_plan gemm;
  gemm_operand ga, gb;
  std::ptrdiff_t c_rs = 0, c_bs = 0;
  kernels::detail::ew_fn activation = nullptr;  // fused: applied to C's finished rows
};

// The single stride of axes `group` (in that order) of a dense tensor, if they flatten to one.
inline bool group_stride(std::span<const std::size_t> group, const extents_vector& ext,
                         const strides_vector& st, std::ptrdiff_t& out) {
  out = 0;
  std::ptrdiff_t expect = -1;
  for (std::size_t k = group.size(); k-- > 0;) {
    const std::size_t a = group[k];
    if (ext[a] == 1) continue;
    if (expect == -1)
      out = st[a];
    else if (st[a] != expect)
      return false;
    expect = st[a] * static_cast<std::ptrdiff_t>(ext[a]);
  }
  return true;
}

inline std::size_t product(std::span<const std::size_t> group, const extents_vector& ext) {
  std::size_t n = 1;
  for (std::size_t a : group) n *= ext[a];
  return n;
}

// Plans `op`, operand x read as groups (g0, g1, g2) of its axes.
inline void plan_gemm_operand(const nax::shape& x, std::span<const std::size_t> g0,
                              std::span<const std::size_t> g1, std::span<const std::size_t> g2,
                              gemm_operand& op) {
  const extents_vector ext = extents_of(x);
  const strides_vector st = dense_strides(x);
  op = {};
  if (group_stride(g0, ext, st, op.bs) && group_stride(g1, ext, st, op.rs) &&
      group_stride(g2, ext, st, op.cs))
    return;
  // Permute into (g0, g1, g2) order: the copy is read in that order, written densely.
  op = {};
  op.copy = true;
  extents_vector order_ext;
  strides_vector src, dst;
  for (auto g : {g0, g1, g2})
    for (std::size_t a : g) {
      order_ext.push_back(ext[a]);
      src.push_back(st[a]);
    }
  dst.resize(order_ext.size());
  std::ptrdiff_t acc = 1;
  for (std::size_t i = order_ext.size(); i-- > 0;) {
    dst[i] = acc;
    acc *= static_cast<std::ptrdiff_t>(order_ext[i]);
  }
  op.copy_plan = kernels::plan_copy(size_of(x.dtype()), order_ext, src, dst);
  const auto n1 = static_cast<std::ptrdiff_t>(product(g1, ext)),
             n2 = static_cast<std::ptrdiff_t>(product(g2, ext));
  op.bs = n1 * n2;
  op.rs = n2;
  op.cs = 1;
  op.scratch_bytes = x.num_bytes();
}

template <class T>
class dot_step final : public kernels::step_kernel, public arena_allocated {
 public:
  /// `plans`' product of values a and b into c; an operand copied into scratch asks for its bytes
  /// in `scratch` (where the memory plan writes the offset).
  dot_step(shared_plan<dot_plans> plans, graph::value_index a, graph::value_index b,
           graph::value_index c, std::vector<scratch_request>& scratch)
      : plans_(std::move(plans)), a_(a), b_(b), c_(c) {
    if (plans_->ga.copy) scratch.push_back({plans_->ga.scratch_bytes, &a_scratch_});
    if (plans_->gb.copy) scratch.push_back({plans_->gb.scratch_bytes, &b_scratch_});
  }
  dot_step(const dot_step&) = delete;
  dot_step& operator=(const dot_step&) = delete;
  void run(void* const* values, std::byte* arena) const override {
    const dot_plans& p = *plans_;
    const T* pa = static_cast<const T*>(values[a_]);
    const T* pb = static_cast<const T*>(values[b_]);
    if (p.ga.copy) {
      kernels::run_copy(p.ga.copy_plan, pa, arena + a_scratch_);
      pa = reinterpret_cast<const T*>(arena + a_scratch_);
    }
    if (p.gb.copy) {
      kernels::run_copy(p.gb.copy_plan, pb, arena + b_scratch_);
      pb = reinterpret_cast<const T*>(arena + b_scratch_);
    }
    const kernels::matrix_ref<const T> ma(pa, p.ga.rs, p.ga.cs, p.ga.bs),
        mb(pb, p.gb.rs, p.gb.cs, p.gb.bs);
    const kernels::matrix_ref<T> mc(static_cast<T*>(values[c_]), p.c_rs, 1, p.c_bs);
    if (bias == graph::no_value && p.activation == nullptr) {
      kernels::gemm<T>(p.gemm, ma, mb, mc);
    } else {  // a fused dense step
      kernels::dense_epilogue<T> epi;
      if (bias != graph::no_value) epi.bias = static_cast<const T*>(values[bias]);
      epi.act = p.activation;
      kernels::gemm<T>(p.gemm, ma, mb, mc, T(1), T(0), epi);
    }
  }

  std::size_t tasks() const noexcept override { return plans_->gemm.tasks(); }
  const shared_plan<dot_plans>& plans() const noexcept { return plans_; }

  graph::value_index bias = graph::no_value;  // fused: one value per column of C

 private:
  shared_plan<dot_plans> plans_;
  std::size_t a_scratch_ = 0, b_scratch_ = 0;  // the copies' offsets in the arena
  graph::value_index a_, b_, c_;
};

// Calls f.template operator()<T>() with T the C++ type of a floating dtype.
template <class F>
decltype(auto) with_floating(nax::dtype t, F&& f) {
  if (t == nax::dtype::f64) return f.template operator()<double>();
  return f.template operator()<float>();
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_dot_general_step(
    const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch) {
  const auto* fused = s.op.get_if<graph::fused_dense_op>();
  const graph::dot_general_op& dg = fused ? fused->dot : s.as<graph::dot_general_op>();
  const nax::shape &as = shapes[s.args[0]], &bs = shapes[s.args[1]];
  using group = nax::detail::small_vector<std::size_t, 6>;
  group a_batch, a_free, a_con, b_batch, b_free, b_con;
  nax::detail::small_vector<bool, 6> a_used, b_used;
  a_used.resize(as.rank());
  b_used.resize(bs.rank());
  auto pair = [&](const graph::axis_pair_index& p, group& ga, group& gb, const char* role) {
    const std::size_t i = p.lhs, j = p.rhs;
    if (as[i].extent() != bs[j].extent())
      nax::detail::throw_shape_error(
          "nax::graph::dot_general: ", role, " ", (as[i].has_name() ? as[i] : bs[j]).describe(),
          " is ", as[i].extent(), " in operand 0 but ", bs[j].extent(), " in operand 1 (",
          nax::detail::concrete_string(as), " vs ", nax::detail::concrete_string(bs), ")");
    ga.push_back(i);
    gb.push_back(j);
    a_used[i] = b_used[j] = true;
  };
  for (const graph::axis_pair_index& p : dg.contract) pair(p, a_con, b_con, "contracting");
  for (const graph::axis_pair_index& p : dg.batch) pair(p, a_batch, b_batch, "batch");
  for (std::size_t i = 0; i < as.rank(); ++i)
    if (!a_used[i]) a_free.push_back(i);
  for (std::size_t j = 0; j < bs.rank(); ++j)
    if (!b_used[j]) b_free.push_back(j);

  const extents_vector ae = extents_of(as), be = extents_of(bs);
  const std::size_t batch = detail::product(a_batch, ae), m = detail::product(a_free, ae),
                    k = detail::product(a_con, ae), n = detail::product(b_free, be);
  return detail::with_floating(as.dtype(), [&]<class T>() -> std::unique_ptr<kernels::step_kernel> {
    detail::dot_plans plans;
    detail::plan_gemm_operand(as, a_batch, a_free, a_con, plans.ga);
    detail::plan_gemm_operand(bs, b_batch, b_con, b_free, plans.gb);
    plans.gemm = kernels::plan_gemm<T>(m, n, k, batch);
    plans.c_rs = static_cast<std::ptrdiff_t>(n);
    plans.c_bs = static_cast<std::ptrdiff_t>(m * n);
    if (fused && fused->has_activation)
      plans.activation = kernels::dense_activation<T>(fused->activation);
    auto step = std::make_unique<detail::dot_step<T>>(
        shared_plan<detail::dot_plans>(std::move(plans)), s.args[0], s.args[1], s.result, scratch);
    if (fused && fused->has_bias) step->bias = s.args[2];
    return step;
  });
}

// The same, copying the kernel of an earlier step of the same op and shapes that `memo` kept
// (the plans depend on nothing else; the planning thread count is that of the whole pass).
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_dot_general_step(
    const graph::program_step& s, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch, plan_memo& memo) {
  const auto* fused = s.op.get_if<graph::fused_dense_op>();
  const std::uint64_t key = detail::step_shapes_key(s, shapes, 0);
  // (Not a structured binding: clang 14's lambdas cannot capture one.)
  const auto found = memo.similar_step<graph::program_step, kernels::step_kernel>(key);
  const graph::program_step* const like = found.first;
  const kernels::step_kernel* const kernel = found.second;
  auto same_op = [&] {
    if (like->kind() != s.kind()) return false;
    if (fused) return *fused == like->as<graph::fused_dense_op>();
    return s.as<graph::dot_general_op>() == like->as<graph::dot_general_op>();
  };
  if (kernel && same_op() && detail::same_shapes(*like, s, shapes))
    return copy_dot_general_step(*kernel, s, shapes, scratch);
  std::unique_ptr<kernels::step_kernel> step = make_dot_general_step(s, shapes, scratch);
  memo.keep_step(key, &s, step.get());
  return step;
}

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_dot_general_step(
    const kernels::step_kernel& like, const graph::program_step& s,
    std::span<const nax::shape> shapes, std::vector<scratch_request>& scratch) {
  const auto* fused = s.op.get_if<graph::fused_dense_op>();
  return detail::with_floating(shapes[s.args[0]].dtype(),
                               [&]<class T>() -> std::unique_ptr<kernels::step_kernel> {
                                 auto step = std::make_unique<detail::dot_step<T>>(
                                     static_cast<const detail::dot_step<T>&>(like).plans(),
                                     s.args[0], s.args[1], s.result, scratch);
                                 if (fused && fused->has_bias) step->bias = s.args[2];
                                 return step;
                               });
}

namespace detail {

inline std::unique_ptr<kernels::step_kernel> make_product_step(const step_request& request) {
  return request.memo
             ? make_dot_general_step(request.step, request.shapes, request.scratch, *request.memo)
             : make_dot_general_step(request.step, request.shapes, request.scratch);
}

}  // namespace detail

NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::dot_general_op&,
                                                                   const step_request& request) {
  return detail::make_product_step(request);
}
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> make_step(const graph::fused_dense_op&,
                                                                   const step_request& request) {
  return detail::make_product_step(request);
}
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::dot_general_op&, const step_copy_request& request) {
  return copy_dot_general_step(request.like, request.step, request.shapes, request.scratch);
}
NAX_RUNTIME_INLINE std::unique_ptr<kernels::step_kernel> copy_step(
    const graph::fused_dense_op&, const step_copy_request& request) {
  return copy_dot_general_step(request.like, request.step, request.shapes, request.scratch);
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
