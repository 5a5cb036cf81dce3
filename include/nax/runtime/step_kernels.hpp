#pragma once
// The kernel of each kind of step, planned for concrete shapes: make_step_kernel turns a step of
// a program and the concrete shapes of its values into a step_kernel whose run() does no shape
// arithmetic. Operand consistency that symbolic inference could not prove (an axis unified with a
// static extent, then bound to another) is checked here, once per specialization.

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/linkage.hpp>
#include <nax/kernels/step_kernel.hpp>
#if NAX_RUNTIME_DEFINES_KERNELS
#include <nax/core/shape_error.hpp>
#include <nax/kernels/copy.hpp>
#include <nax/kernels/dense_epilogue.hpp>
#include <nax/kernels/elementwise.hpp>
#include <nax/kernels/fused_reduce.hpp>
#include <nax/kernels/gemm.hpp>
#include <nax/kernels/gemm_plan.hpp>
#include <nax/kernels/reduce.hpp>
#include <nax/kernels/rows.hpp>
#include <nax/runtime/dyn_tensor.hpp>
#endif

namespace nax::runtime {

using kernels::step_kernel;

/// Scratch memory a step needs during its run; its offset in the arena is written to *offset
/// once the specialization's memory plan is made.
struct scratch_request {
  std::size_t bytes = 0;
  std::size_t* offset = nullptr;
  std::size_t step = 0;  // the step that needs it (its lifetime)
};

using extents_vector = nax::detail::small_vector<std::size_t, 6>;
using strides_vector = nax::detail::small_vector<std::ptrdiff_t, 6>;

/// The kernels of all of p's steps, in order, for the concrete `shapes` of p's values; the
/// scratch memory each step needs is appended to `scratch`. (The one function of the runtime
/// that NAX_SEPARATE_RUNTIME compiles elsewhere: see linkage.hpp.)
NAX_RUNTIME_INLINE std::vector<std::unique_ptr<step_kernel>> make_step_kernels(
    const graph::program& p, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch);

#if NAX_RUNTIME_DEFINES_KERNELS
namespace detail {

inline extents_vector extents_of(const nax::shape& s) {
  extents_vector e;
  e.resize(s.rank());
  for (std::size_t i = 0; i < s.rank(); ++i) e[i] = s[i].extent();
  return e;
}

inline strides_vector dense_strides(const nax::shape& s) {
  strides_vector st;
  st.resize(s.rank());
  std::ptrdiff_t acc = 1;
  for (std::size_t i = s.rank(); i-- > 0;) {
    st[i] = acc;
    acc *= static_cast<std::ptrdiff_t>(s[i].extent());
  }
  return st;
}

inline std::string step_label(const graph::program_step& s) {
  if (s.kind == graph::op_kind::elementwise) return std::string(graph::elementwise_name(s.code));
  if (s.kind == graph::op_kind::reduce)
    return "reduce_" + std::string(name(static_cast<graph::reduce_kind>(s.code)));
  if (s.kernel) return s.kernel->label();
  return std::string(name(s.kind));
}

[[noreturn]] inline void throw_extent_mismatch(const graph::program_step& s, const nax::shape& a,
                                               std::size_t ai, const nax::shape& b, std::size_t bi,
                                               std::string_view what) {
  const dim& d = a[ai].has_name() ? a[ai] : b[bi];
  nax::detail::throw_shape_error("nax::graph::", step_label(s), ": ", d.describe(), " is ",
                                 a[ai].extent(), " in ", what, " but ", b[bi].extent(),
                                 " in the result (", nax::detail::concrete_string(a), " vs ",
                                 nax::detail::concrete_string(b), ")");
}

// Calls f.template operator()<T>() with T the C++ type of a floating dtype.
template <class F>
decltype(auto) with_floating(nax::dtype t, F&& f) {
  if (t == nax::dtype::f64) return f.template operator()<double>();
  return f.template operator()<float>();
}

}  // namespace detail

// --- elementwise --------------------------------------------------------------------------------

class elementwise_step final : public step_kernel {
 public:
  elementwise_step(kernels::elementwise_plan plan, std::span<const graph::value_index> args,
                   graph::value_index result)
      : plan_(std::move(plan)), result_(result) {
    for (graph::value_index a : args) args_.push_back(a);
  }
  /// The plan made by `make_plan()` right in place (a plan is a few hundred bytes).
  template <std::invocable MakePlan>
  elementwise_step(MakePlan&& make_plan, std::span<const graph::value_index> args,
                   graph::value_index result)
      : plan_(make_plan()), result_(result) {
    for (graph::value_index a : args) args_.push_back(a);
  }
  void run(void* const* values, std::byte*) const override {
    const void* in[3];
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    void* out[1] = {values[result_]};
    kernels::run_elementwise(plan_, in, out);
  }

 private:
  kernels::elementwise_plan plan_;
  nax::detail::small_vector<graph::value_index, 3> args_;
  graph::value_index result_;
};

// The strides of dense operand `in` over the axes of `out`, its axis i read along out's axis
// axis_map[i] (an axis of extent 1 broadcasts). Extents a binding made disagree throw, naming
// the step.
inline strides_vector operand_strides(const graph::program_step& s, const nax::shape& in,
                                      std::size_t operand, const nax::shape& out,
                                      std::span<const std::size_t> out_ext,
                                      std::span<const std::size_t> axis_map) {
  const extents_vector in_ext = detail::extents_of(in);
  for (std::size_t i = 0; i < in.rank(); ++i)
    if (in_ext[i] != 1 && in_ext[i] != out_ext[axis_map[i]])
      detail::throw_extent_mismatch(s, in, i, out, axis_map[i],
                                    nax::detail::message("operand ", operand));
  strides_vector st;
  st.resize(out.rank());
  kernels::broadcast_strides(in_ext, axis_map, out_ext, std::span(st.data(), st.size()));
  return st;
}

// An elementwise operand's strides, as the builder broadcast it: rank 0 everywhere, by name when
// all axes of both are named, else by position.
inline strides_vector broadcast_strides(const graph::program_step& s, const nax::shape& in,
                                        std::size_t operand, const nax::shape& out,
                                        std::span<const std::size_t> out_ext) {
  const bool by_name = graph::detail::all_named(in) && graph::detail::all_named(out);
  extents_vector axis_map;
  for (std::size_t i = 0; i < in.rank(); ++i) {
    std::size_t j = i;
    if (by_name)  // interned names: compared by address
      for (j = 0; j < out.rank() && out[j].name() != in[i].name(); ++j) {
      }
    axis_map.push_back(j);
  }
  return operand_strides(s, in, operand, out, out_ext, axis_map);
}

// The same two, reading out's extents themselves.
inline strides_vector operand_strides(const graph::program_step& s, const nax::shape& in,
                                      std::size_t operand, const nax::shape& out,
                                      std::span<const std::size_t> axis_map) {
  return operand_strides(s, in, operand, out, detail::extents_of(out), axis_map);
}
inline strides_vector broadcast_strides(const graph::program_step& s, const nax::shape& in,
                                        std::size_t operand, const nax::shape& out) {
  return broadcast_strides(s, in, operand, out, detail::extents_of(out));
}

// --- dot_general --------------------------------------------------------------------------------

// An operand of a GEMM as the product needs it: batch, row and column groups of axes, each with
// one stride, or else a dense copy in that order made in scratch before the product.
struct gemm_operand {
  std::ptrdiff_t bs = 0, rs = 0, cs = 0;
  bool copy = false;
  kernels::copy_plan copy_plan;
  std::size_t scratch = 0;
};

namespace detail {

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

// Plans `op`, operand x read as groups (g0, g1, g2) of its axes (op's address is where its
// scratch offset will be written).
inline void plan_gemm_operand(const nax::shape& x, std::span<const std::size_t> g0,
                              std::span<const std::size_t> g1, std::span<const std::size_t> g2,
                              std::vector<scratch_request>& scratch, gemm_operand& op) {
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
  scratch.push_back({x.num_bytes(), &op.scratch});
}

}  // namespace detail

template <class T>
class dot_step final : public step_kernel {
 public:
  dot_step(graph::value_index a, graph::value_index b, graph::value_index c)
      : a_(a), b_(b), c_(c) {}
  void run(void* const* values, std::byte* arena) const override {
    const T* pa = static_cast<const T*>(values[a_]);
    const T* pb = static_cast<const T*>(values[b_]);
    if (ga.copy) {
      kernels::run_copy(ga.copy_plan, pa, arena + ga.scratch);
      pa = reinterpret_cast<const T*>(arena + ga.scratch);
    }
    if (gb.copy) {
      kernels::run_copy(gb.copy_plan, pb, arena + gb.scratch);
      pb = reinterpret_cast<const T*>(arena + gb.scratch);
    }
    const kernels::matrix_ref<const T> ma(pa, ga.rs, ga.cs, ga.bs), mb(pb, gb.rs, gb.cs, gb.bs);
    const kernels::matrix_ref<T> mc(static_cast<T*>(values[c_]), c_rs, 1, c_bs);
    if (bias == graph::no_value && activation == nullptr) {
      kernels::gemm<T>(plan, ma, mb, mc);
    } else {  // a fused dense step
      kernels::dense_epilogue<T> epi;
      if (bias != graph::no_value) epi.bias = static_cast<const T*>(values[bias]);
      epi.act = activation;
      kernels::gemm<T>(plan, ma, mb, mc, T(1), T(0), epi);
    }
  }

  kernels::gemm_plan plan;
  gemm_operand ga, gb;
  std::ptrdiff_t c_rs = 0, c_bs = 0;
  graph::value_index bias = graph::no_value;    // fused: one value per column of C
  kernels::detail::ew_fn activation = nullptr;  // fused: applied to C's finished rows

 private:
  graph::value_index a_, b_, c_;
};

inline std::unique_ptr<step_kernel> make_dot_step(const graph::program_step& s,
                                                  std::span<const nax::shape> shapes,
                                                  std::vector<scratch_request>& scratch) {
  const nax::shape &as = shapes[s.args[0]], &bs = shapes[s.args[1]], &cs = shapes[s.result];
  using group = nax::detail::small_vector<std::size_t, 6>;
  group a_batch, a_free, a_con, b_batch, b_free, b_con;
  nax::detail::small_vector<bool, 6> a_used, b_used;
  a_used.resize(as.rank());
  b_used.resize(bs.rank());
  const std::size_t nc = static_cast<std::size_t>(s.ints[0]);
  const std::size_t nb = static_cast<std::size_t>(s.ints[1 + 2 * nc]);
  auto pair = [&](std::size_t at, group& ga, group& gb, const char* role) {
    const auto i = static_cast<std::size_t>(s.ints[at]),
               j = static_cast<std::size_t>(s.ints[at + 1]);
    if (as[i].extent() != bs[j].extent())
      nax::detail::throw_shape_error(
          "nax::graph::dot_general: ", role, " ", (as[i].has_name() ? as[i] : bs[j]).describe(),
          " is ", as[i].extent(), " in operand 0 but ", bs[j].extent(), " in operand 1 (",
          nax::detail::concrete_string(as), " vs ", nax::detail::concrete_string(bs), ")");
    ga.push_back(i);
    gb.push_back(j);
    a_used[i] = b_used[j] = true;
  };
  for (std::size_t k = 0; k < nc; ++k) pair(1 + 2 * k, a_con, b_con, "contracting");
  for (std::size_t k = 0; k < nb; ++k) pair(2 + 2 * nc + 2 * k, a_batch, b_batch, "batch");
  for (std::size_t i = 0; i < as.rank(); ++i)
    if (!a_used[i]) a_free.push_back(i);
  for (std::size_t j = 0; j < bs.rank(); ++j)
    if (!b_used[j]) b_free.push_back(j);

  const extents_vector ae = detail::extents_of(as), be = detail::extents_of(bs);
  const std::size_t batch = detail::product(a_batch, ae), m = detail::product(a_free, ae),
                    k = detail::product(a_con, ae), n = detail::product(b_free, be);
  return detail::with_floating(as.dtype(), [&]<class T>() -> std::unique_ptr<step_kernel> {
    auto step = std::make_unique<dot_step<T>>(s.args[0], s.args[1], s.result);
    detail::plan_gemm_operand(as, a_batch, a_free, a_con, scratch, step->ga);
    detail::plan_gemm_operand(bs, b_batch, b_con, b_free, scratch, step->gb);
    step->plan = kernels::plan_gemm<T>(m, n, k, batch);
    step->c_rs = static_cast<std::ptrdiff_t>(n);
    step->c_bs = static_cast<std::ptrdiff_t>(m * n);
    (void)cs;
    if (s.kind == graph::op_kind::fused_dense) {
      if (s.args.size() > 2) step->bias = s.args[2];
      if (s.code != graph::no_activation)
        step->activation = kernels::dense_activation<T>(static_cast<ops::id>(s.code));
    }
    return step;
  });
}

// --- reductions, row ops, transposes ------------------------------------------------------------

class reduce_step final : public step_kernel {
 public:
  reduce_step(kernels::reduce_plan plan, graph::value_index in, graph::value_index out)
      : plan_(std::move(plan)), in_(in), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_reduce(plan_, values[in_], values[out_]);
  }

 private:
  kernels::reduce_plan plan_;
  graph::value_index in_, out_;
};

class copy_step final : public step_kernel {
 public:
  copy_step(kernels::copy_plan plan, graph::value_index in, std::size_t in_offset_bytes,
            graph::value_index out)
      : plan_(std::move(plan)), in_(in), in_offset_(in_offset_bytes), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_copy(plan_, static_cast<const std::byte*>(values[in_]) + in_offset_, values[out_]);
  }

 private:
  kernels::copy_plan plan_;
  graph::value_index in_;
  std::size_t in_offset_;
  graph::value_index out_;
};

// concat: each operand copied to its place along the axis.
class concat_step final : public step_kernel {
 public:
  struct part {
    kernels::copy_plan plan;
    graph::value_index in;
    std::size_t out_offset;  // bytes
  };
  concat_step(std::vector<part> parts, graph::value_index out)
      : parts_(std::move(parts)), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    for (const part& p : parts_)
      kernels::run_copy(p.plan, values[p.in], static_cast<std::byte*>(values[out_]) + p.out_offset);
  }

 private:
  std::vector<part> parts_;
  graph::value_index out_;
};

class softmax_step final : public step_kernel {
 public:
  softmax_step(kernels::rows_plan plan, graph::value_index in, graph::value_index out)
      : plan_(std::move(plan)), in_(in), out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_softmax(plan_, values[in_], values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  graph::value_index in_, out_;
};

class layer_norm_step final : public step_kernel {
 public:
  layer_norm_step(kernels::rows_plan plan, std::span<const graph::value_index> args, double epsilon,
                  graph::value_index out)
      : plan_(std::move(plan)),
        x_(args[0]),
        gamma_(args[1]),
        beta_(args[2]),
        eps_(epsilon),
        out_(out) {}
  void run(void* const* values, std::byte*) const override {
    kernels::run_layer_norm(plan_, values[x_], values[gamma_], values[beta_], eps_, values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  graph::value_index x_, gamma_, beta_;
  double eps_;
  graph::value_index out_;
};

/// Elementwise plans made during one specialization, by op, dtypes, extents and strides: a
/// graph repeats its layers, and a repeated step copies its plan instead of planning again.
class plan_memo {
 public:
  /// The plan for this key, made by `make()` the first time.
  template <class Make>
  kernels::elementwise_plan elementwise(std::uint8_t op, std::span<const nax::dtype> types,
                                        std::span<const std::size_t> extents,
                                        std::span<const std::ptrdiff_t> strides, Make&& make) {
    ew_key k{};
    if (types.size() > k.types.size() || extents.size() > k.extents.size() ||
        strides.size() > k.strides.size())
      return make();
    k.op = op;
    k.arity = static_cast<std::uint8_t>(types.size());
    k.rank = static_cast<std::uint8_t>(extents.size());
    std::copy(types.begin(), types.end(), k.types.begin());
    std::copy(extents.begin(), extents.end(), k.extents.begin());
    std::copy(strides.begin(), strides.end(), k.strides.begin());
    auto it = elementwise_.find(k);
    if (it == elementwise_.end()) it = elementwise_.emplace(k, make()).first;
    return it->second;
  }

 private:
  struct ew_key {
    std::uint8_t op = 0, arity = 0, rank = 0;
    std::array<nax::dtype, 3> types{};
    std::array<std::size_t, 6> extents{};
    std::array<std::ptrdiff_t, 18> strides{};
    friend bool operator==(const ew_key&, const ew_key&) = default;
  };
  struct ew_key_hash {
    std::size_t operator()(const ew_key& k) const noexcept {
      std::uint64_t h = (std::uint64_t{k.op} << 16 | std::uint64_t{k.arity} << 8 | k.rank) ^
                        0x9e3779b97f4a7c15ull;
      auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull + (h >> 31); };
      // The used part only (the rest is zero).
      for (std::size_t i = 0; i < k.arity; ++i) mix(static_cast<std::uint64_t>(k.types[i]));
      for (std::size_t i = 0; i < k.rank; ++i) mix(k.extents[i]);
      for (std::size_t i = 0; i < std::size_t{k.arity} * k.rank; ++i)
        mix(static_cast<std::uint64_t>(k.strides[i]));
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<ew_key, kernels::elementwise_plan, ew_key_hash> elementwise_;
};

// --- fused steps (nax/graph/fusion.hpp) ----------------------------------------------------------

// A fused elementwise group: its decomposition run as one elementwise program, writing the
// step's result and its extra results.
class fused_elementwise_step final : public step_kernel {
 public:
  fused_elementwise_step(kernels::elementwise_plan plan, std::vector<graph::value_index> inputs,
                         const graph::program_step& s)
      : plan_(std::move(plan)), args_(std::move(inputs)) {
    outs_.push_back(s.result);
    outs_.insert(outs_.end(), s.extra_results.begin(), s.extra_results.end());
  }
  void run(void* const* values, std::byte*) const override {
    constexpr std::size_t inline_pointers = 32;
    const void* in_small[inline_pointers];
    void* out_small[inline_pointers];
    std::vector<const void*> in_big;
    std::vector<void*> out_big;
    const void** in = in_small;
    void** out = out_small;
    if (args_.size() > inline_pointers) in = (in_big.resize(args_.size()), in_big.data());
    if (outs_.size() > inline_pointers) out = (out_big.resize(outs_.size()), out_big.data());
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    for (std::size_t o = 0; o < outs_.size(); ++o) out[o] = values[outs_[o]];
    kernels::run_elementwise(plan_, in, out);
  }

 private:
  kernels::elementwise_plan plan_;
  std::vector<graph::value_index> args_, outs_;
};

/// The elementwise program of the first `count` ops of fused step s's decomposition, over the
/// iteration shape `over`. Its inputs are the step's arguments, then one per broadcast op (its
/// argument read through the op's axis map, so the op costs nothing); `bound` receives the value
/// each input reads, `strides` the strides it is read with, `of` the program operand of each op
/// (an input for a broadcast op, else an instruction's result).
inline kernels::elementwise_program group_program(const graph::program_step& s,
                                                  std::span<const nax::shape> shapes,
                                                  const nax::shape& over, std::size_t count,
                                                  std::vector<std::ptrdiff_t>& strides,
                                                  std::vector<graph::value_index>& bound,
                                                  std::vector<kernels::elementwise_operand>& of) {
  const graph::decomposition& d = *s.fused;
  const extents_vector over_ext = detail::extents_of(over);
  std::vector<bool> read(s.args.size(), false);  // by an elementwise op (not a broadcast)
  for (std::size_t j = 0; j < count; ++j)
    if (d.ops[j].kind != graph::op_kind::broadcast)
      for (std::uint32_t in : d.ops[j].inputs)
        if (d.is_arg(in)) read[in] = true;
  kernels::elementwise_program program;
  for (std::size_t i = 0; i < s.args.size(); ++i) {
    const nax::shape& in = shapes[s.args[i]];
    program.inputs.push_back(in.dtype());
    bound.push_back(s.args[i]);
    // Every op of the group has the iteration shape's axes, so each operand is read as the
    // builder broadcast it to its op.
    if (read[i]) {
      const strides_vector st = broadcast_strides(s, in, i, over, over_ext);
      strides.insert(strides.end(), st.begin(), st.end());
    } else {  // read only through broadcast ops: unused as itself
      strides.insert(strides.end(), over.rank(), 0);
    }
  }
  of.clear();
  for (std::size_t j = 0; j < count; ++j) {
    const graph::decomposed_op& op = d.ops[j];
    auto operand = [&](std::uint32_t in) {
      return d.is_arg(in) ? kernels::elementwise_operand::input(in) : of[in - d.num_args];
    };
    if (op.kind == graph::op_kind::broadcast) {  // its target has the iteration shape's axes
      const std::uint32_t a = op.inputs[0];
      const nax::shape& in = shapes[s.args[a]];
      extents_vector axis_map;
      for (std::int32_t t : op.ints) axis_map.push_back(static_cast<std::size_t>(t));
      const strides_vector st = operand_strides(s, in, a, over, over_ext, axis_map);
      strides.insert(strides.end(), st.begin(), st.end());
      of.push_back(
          kernels::elementwise_operand::input(static_cast<std::uint32_t>(program.inputs.size())));
      program.inputs.push_back(in.dtype());
      bound.push_back(s.args[a]);
      continue;
    }
    kernels::elementwise_instruction ins;
    ins.op = static_cast<ops::id>(op.code);
    for (std::size_t a = 0; a < op.inputs.size(); ++a) ins.args[a] = operand(op.inputs[a]);
    of.push_back(kernels::elementwise_operand::result(
        static_cast<std::uint32_t>(program.instructions.size())));
    program.instructions.push_back(ins);
  }
  return program;
}

inline std::unique_ptr<step_kernel> make_fused_elementwise_step(
    const graph::program_step& s, std::span<const nax::shape> shapes) {
  const graph::decomposition& d = *s.fused;
  const nax::shape& out = shapes[s.result];
  std::vector<std::ptrdiff_t> strides;
  std::vector<graph::value_index> bound;
  std::vector<kernels::elementwise_operand> operand_of;
  kernels::elementwise_program program =
      group_program(s, shapes, out, d.ops.size(), strides, bound, operand_of);
  // (Results are elementwise ops: the fusion pass takes no broadcast whose value leaves.)
  for (std::uint32_t r : d.results) program.outputs.push_back(operand_of[r].index);
  return std::make_unique<fused_elementwise_step>(
      kernels::plan_elementwise(program, detail::extents_of(out), strides), std::move(bound), s);
}

// layer_norm recognized from primitives: gamma and beta may be absent (then 1 and 0, held here).
class fused_layer_norm_step final : public step_kernel {
 public:
  fused_layer_norm_step(kernels::rows_plan plan, const graph::program_step& s, std::size_t n)
      : plan_(std::move(plan)), eps_(s.scalar), x_(s.args[0]), out_(s.result) {
    std::size_t a = 1;
    if (s.ints[1] != 0) gamma_ = s.args[a++];
    if (s.ints[2] != 0) beta_ = s.args[a++];
    detail::with_floating(plan_.type, [&]<class T>() {
      ones_.resize(n * sizeof(T));
      zeros_.assign(n * sizeof(T), std::byte{0});
      for (std::size_t i = 0; i < n; ++i) reinterpret_cast<T*>(ones_.data())[i] = T(1);
    });
  }
  void run(void* const* values, std::byte*) const override {
    kernels::run_layer_norm(
        plan_, values[x_], gamma_ == graph::no_value ? ones_.data() : values[gamma_],
        beta_ == graph::no_value ? zeros_.data() : values[beta_], eps_, values[out_]);
  }

 private:
  kernels::rows_plan plan_;
  double eps_;
  graph::value_index x_, gamma_ = graph::no_value, beta_ = graph::no_value, out_;
  std::vector<std::byte> ones_, zeros_;
};

// An elementwise group reduced over a run of its axes (kernels/fused_reduce.hpp): the group's
// result is never written to memory.
class fused_reduce_step final : public step_kernel {
 public:
  fused_reduce_step(kernels::fused_reduce_plan plan, std::vector<graph::value_index> inputs,
                    const graph::program_step& s)
      : plan_(std::move(plan)), args_(std::move(inputs)), result_(s.result) {}

  void run(void* const* values, std::byte* arena) const override {
    constexpr std::size_t inline_pointers = 32;
    const void* in_small[inline_pointers];
    std::vector<const void*> in_big;
    const void** in = in_small;
    if (args_.size() > inline_pointers) in = (in_big.resize(args_.size()), in_big.data());
    for (std::size_t i = 0; i < args_.size(); ++i) in[i] = values[args_[i]];
    kernels::run_fused_reduce(plan_, in, values[result_], arena + scratch);
  }

  std::size_t scratch = 0;  // partial rows in the arena (plan.scratch_bytes)

 private:
  kernels::fused_reduce_plan plan_;
  std::vector<graph::value_index> args_;
  graph::value_index result_;
};

inline std::unique_ptr<step_kernel> make_fused_reduce_step(const graph::program& p,
                                                           const graph::program_step& s,
                                                           std::span<const nax::shape> shapes,
                                                           std::vector<scratch_request>& scratch) {
  const graph::decomposition& d = *s.fused;
  const std::size_t last = d.ops.size() - 1;  // the reduction; the group's ops precede it
  const std::uint32_t e = d.ops[last].inputs[0] - static_cast<std::uint32_t>(d.num_args);
  // (e is an elementwise op: the fusion pass takes no broadcast as a group's result.)
  // The group's concrete shape: its symbolic one under the binding the program's inputs carry
  // (not only the step's arguments: a broadcast in the group may bring an axis none of them has).
  nax::bindings b;
  for (graph::value_index a = 0; a < p.num_inputs(); ++a) {
    const nax::shape& sym = p.values[a].shape;
    for (std::size_t i = 0; i < sym.rank(); ++i)
      if (sym[i].is_dynamic() && sym[i].has_name()) b.set(sym[i].name(), shapes[a][i].extent());
  }
  const nax::shape group = d.ops[e].shape.resolve(b);
  std::vector<std::ptrdiff_t> strides;
  std::vector<graph::value_index> bound;
  std::vector<kernels::elementwise_operand> operand_of;
  kernels::elementwise_program program =
      group_program(s, shapes, group, last, strides, bound, operand_of);
  program.outputs = {operand_of[e].index};
  const extents_vector ext = detail::extents_of(group);
  // The reduced axes are a contiguous run (ascending ints): [outer, reduced, inner].
  const auto lo = static_cast<std::size_t>(s.ints[0]);
  const auto hi = static_cast<std::size_t>(s.ints[s.ints.size() - 1]) + 1;
  std::size_t outer = 1, reduced = 1, inner = 1;
  for (std::size_t i = 0; i < ext.size(); ++i)
    (i < lo ? outer : i < hi ? reduced : inner) *= ext[i];
  kernels::fused_reduce_plan plan = kernels::plan_fused_reduce(
      kernels::plan_elementwise(program, ext, strides, 0, kernels::elementwise_streaming::never),
      static_cast<ops::reduce_kind>(s.code), outer, reduced, inner);
  const std::size_t bytes = plan.scratch_bytes;
  auto step = std::make_unique<fused_reduce_step>(std::move(plan), std::move(bound), s);
  if (bytes != 0) scratch.push_back({bytes, &step->scratch});
  return step;
}

/// The kernel of step `s` of `p`, for the concrete `shapes` of p's values.
/// `memo`, if given, lends plans made for earlier steps of the same specialization.
inline std::unique_ptr<step_kernel> make_step_kernel(const graph::program& p,
                                                     const graph::program_step& s,
                                                     std::span<const nax::shape> shapes,
                                                     std::vector<scratch_request>& scratch,
                                                     plan_memo* memo = nullptr) {
  (void)p;
  const nax::shape& out = shapes[s.result];
  const extents_vector out_ext = detail::extents_of(out);
  switch (s.kind) {
    case graph::op_kind::elementwise: {
      nax::detail::small_vector<std::ptrdiff_t, 18> strides;
      nax::detail::small_vector<nax::dtype, 3> types;
      for (std::size_t i = 0; i < s.args.size(); ++i) {
        const strides_vector st = broadcast_strides(s, shapes[s.args[i]], i, out, out_ext);
        for (std::ptrdiff_t x : st) strides.push_back(x);
        types.push_back(shapes[s.args[i]].dtype());
      }
      const std::span<const nax::dtype> ts(types.data(), types.size());
      const std::span<const std::ptrdiff_t> sts(strides.data(), strides.size());
      auto plan = [&] {
        return kernels::plan_elementwise_op(static_cast<ops::id>(s.code), ts, out_ext, sts);
      };
      return std::make_unique<elementwise_step>(
          [&] { return memo ? memo->elementwise(s.code, ts, out_ext, sts, plan) : plan(); }, s.args,
          s.result);
    }
    case graph::op_kind::reduce: {
      const nax::shape& in = shapes[s.args[0]];
      extents_vector axes;
      for (std::int32_t a : s.ints) axes.push_back(static_cast<std::size_t>(a));
      return std::make_unique<reduce_step>(
          kernels::plan_reduce(in.dtype(), static_cast<ops::reduce_kind>(s.code),
                               detail::extents_of(in), axes),
          s.args[0], s.result);
    }
    case graph::op_kind::dot_general: return make_dot_step(s, shapes, scratch);
    case graph::op_kind::transpose: {
      const nax::shape& in = shapes[s.args[0]];
      const strides_vector dense = detail::dense_strides(in);
      strides_vector src;
      for (std::int32_t a : s.ints) src.push_back(dense[static_cast<std::size_t>(a)]);
      return std::make_unique<copy_step>(
          kernels::plan_copy(size_of(in.dtype()), out_ext, src, detail::dense_strides(out)),
          s.args[0], 0, s.result);
    }
    case graph::op_kind::softmax:
      return std::make_unique<softmax_step>(
          kernels::plan_rows(out.dtype(), out_ext, static_cast<std::size_t>(s.ints[0])), s.args[0],
          s.result);
    case graph::op_kind::layer_norm: {
      const auto axis = static_cast<std::size_t>(s.ints[0]);
      if (s.fused)
        return std::make_unique<fused_layer_norm_step>(
            kernels::plan_rows(out.dtype(), out_ext, axis), s, out[axis].extent());
      for (std::size_t k = 1; k < 3; ++k)
        if (shapes[s.args[k]][0].extent() != out[axis].extent())
          detail::throw_extent_mismatch(s, shapes[s.args[k]], 0, out, axis,
                                        k == 1 ? "gamma" : "beta");
      return std::make_unique<layer_norm_step>(kernels::plan_rows(out.dtype(), out_ext, axis),
                                               s.args, s.scalar, s.result);
    }
    case graph::op_kind::reshape: {  // both dense: the same bytes
      const std::size_t bytes[1] = {out.num_bytes()};
      const std::ptrdiff_t unit[1] = {1};
      return std::make_unique<copy_step>(kernels::plan_copy(1, bytes, unit, unit), s.args[0], 0,
                                         s.result);
    }
    case graph::op_kind::broadcast: {
      const nax::shape& in = shapes[s.args[0]];
      extents_vector axis_map;
      for (std::int32_t j : s.ints) axis_map.push_back(static_cast<std::size_t>(j));
      return std::make_unique<copy_step>(
          kernels::plan_copy(size_of(in.dtype()), out_ext,
                             operand_strides(s, in, 0, out, out_ext, axis_map),
                             detail::dense_strides(out)),
          s.args[0], 0, s.result);
    }
    case graph::op_kind::slice: {
      const nax::shape& in = shapes[s.args[0]];
      const auto axis = static_cast<std::size_t>(s.ints[0]);
      const auto start = static_cast<std::size_t>(s.ints[1]),
                 stop = static_cast<std::size_t>(s.ints[2]);
      const auto step = static_cast<std::ptrdiff_t>(s.ints[3]);
      if (stop > in[axis].extent())
        nax::detail::throw_shape_error("nax::graph::slice: stop ", stop, " is past the end of ",
                                       in[axis].describe(), ", whose extent is ", in[axis].extent(),
                                       " (", nax::detail::concrete_string(in), ")");
      strides_vector src = detail::dense_strides(in);
      const std::size_t offset = start * static_cast<std::size_t>(src[axis]) * size_of(in.dtype());
      src[axis] *= step;
      return std::make_unique<copy_step>(
          kernels::plan_copy(size_of(in.dtype()), out_ext, src, detail::dense_strides(out)),
          s.args[0], offset, s.result);
    }
    case graph::op_kind::concat: {
      const auto axis = static_cast<std::size_t>(s.ints[0]);
      const strides_vector dst = detail::dense_strides(out);
      std::vector<concat_step::part> parts;
      std::size_t at = 0;
      for (graph::value_index a : s.args) {
        const nax::shape& in = shapes[a];
        for (std::size_t i = 0; i < in.rank(); ++i)
          if (i != axis && in[i].extent() != out[i].extent())
            detail::throw_extent_mismatch(s, in, i, out, i,
                                          nax::detail::message("operand ", parts.size()));
        parts.push_back({kernels::plan_copy(size_of(in.dtype()), detail::extents_of(in),
                                            detail::dense_strides(in), dst),
                         a, at * static_cast<std::size_t>(dst[axis]) * size_of(in.dtype())});
        at += in[axis].extent();
      }
      return std::make_unique<concat_step>(std::move(parts), s.result);
    }
    case graph::op_kind::external:
      return s.kernel->make(std::span<const graph::value_index>(s.args.data(), s.args.size()),
                            s.result, shapes);
    case graph::op_kind::fused_elementwise: return make_fused_elementwise_step(s, shapes);
    case graph::op_kind::fused_dense: return make_dot_step(s, shapes, scratch);
    case graph::op_kind::fused_reduce: return make_fused_reduce_step(p, s, shapes, scratch);
    case graph::op_kind::parameter:
    case graph::op_kind::constant: break;
  }
  nax::detail::throw_shape_error("nax::executable: no kernel for ", name(s.kind));
}
NAX_RUNTIME_INLINE std::vector<std::unique_ptr<step_kernel>> make_step_kernels(
    const graph::program& p, std::span<const nax::shape> shapes,
    std::vector<scratch_request>& scratch) {
  plan_memo memo;
  std::vector<std::unique_ptr<step_kernel>> kernels;
  kernels.reserve(p.steps.size());
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const std::size_t before = scratch.size();
    kernels.push_back(make_step_kernel(p, p.steps[i], shapes, scratch, &memo));
    for (std::size_t k = before; k < scratch.size(); ++k) scratch[k].step = i;
  }
  return kernels;
}
#endif  // NAX_RUNTIME_DEFINES_KERNELS

}  // namespace nax::runtime
