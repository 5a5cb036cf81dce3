#pragma once
// Reverse-mode autodiff on the runtime graph: gradients are graph building (seed 000). grad
// walks a builder's nodes from the outputs back to the `wrt` values and adds each node's
// vector-Jacobian product (graph/vjp/) to the same builder, so the gradients are ordinary values:
// compiled, fused, specialized and cached with the forward graph they read.
//
//   auto loss = g::mean(g::sum(d * d, {"out"}), {"batch"});    // rank 0
//   std::vector<g::value> dw = g::grad(loss, {w1, b1});        // one per wrt, of its shape
//   nax::executable ex = g::compile(b, {loss, dw[0], dw[1]});
//
// Only f32 and f64 values carry gradients: an integer or bool value (argmax, a comparison,
// iota) stops them, as a constant or random node does. A wrt value the outputs do not depend on
// gets zeros. A node on the way whose op has no VJP is an error naming it, never a silent zero.

#include <initializer_list>
#include <span>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/builder.hpp>

namespace nax::NAX_ISA::graph {

/// The gradient of `loss` (rank 0, f32 or f64) with respect to each of `wrt` (parameters or
/// intermediates of loss's builder, f32 or f64), each of its value's shape.
NAX_RUNTIME_INLINE std::vector<value> grad(const value& loss, std::span<const value> wrt);
inline std::vector<value> grad(const value& loss, std::initializer_list<value> wrt) {
  return grad(loss, std::span(wrt.begin(), wrt.size()));
}

/// The gradients of the sum of several losses (each rank 0).
NAX_RUNTIME_INLINE std::vector<value> grad(std::span<const value> losses,
                                           std::span<const value> wrt);

/// The vector-Jacobian product of the outputs ys at the seed cotangents dys (dys[i] of ys[i]'s
/// shape): for each w of wrt, the sum over i of dys[i] times the derivative of ys[i] by w.
NAX_RUNTIME_INLINE std::vector<value> grad(std::span<const value> ys, std::span<const value> wrt,
                                           std::span<const value> dys);
inline std::vector<value> grad(const value& y, std::initializer_list<value> wrt, const value& dy) {
  return grad(std::span(&y, 1), std::span(wrt.begin(), wrt.size()), std::span(&dy, 1));
}

}  // namespace nax::graph

#if NAX_RUNTIME_DEFINITIONS
#include <optional>
#include <string>
#include <type_traits>

#include <nax/core/shape_error.hpp>
#include <nax/graph/differentiable_kernel.hpp>
#include <nax/graph/external_kernel.hpp>
#include <nax/graph/ops.hpp>
#include <nax/graph/vjp/common.hpp>
#include <nax/graph/vjp/cumsum.hpp>
#include <nax/graph/vjp/dot_general.hpp>
#include <nax/graph/vjp/elementwise.hpp>
#include <nax/graph/vjp/layout.hpp>
#include <nax/graph/vjp/reduce.hpp>
#include <nax/graph/vjp/rows.hpp>
#include <nax/graph/vjp/take.hpp>

namespace nax::NAX_ISA::graph {
namespace detail {

inline bool carries_gradient(const nax::shape& s) {
  return s.dtype() == nax::dtype::f32 || s.dtype() == nax::dtype::f64;
}

inline std::string node_label(const node& n) {
  // Appended to one string: g++ 12's -Wrestrict misreads `"'" + std::string(...)` at -O3.
  std::string label;
  if (const auto* e = n.op.get_if<external_op>())
    label.append("external node '").append(e->kernel->label());
  else
    label.append("'").append(name(n.kind()));
  return label.append("'");
}

// The kernel of an external node that says how to differentiate it, or null.
inline const differentiable_kernel* differentiable(const node& n) {
  const auto* e = n.op.get_if<external_op>();
  return e ? dynamic_cast<const differentiable_kernel*>(e->kernel.get()) : nullptr;
}

// An external node's VJP, from its kernel (differentiable_kernel.hpp).
inline void vjp_external(const vjp_context& c, const differentiable_kernel& k) {
  std::vector<value> args;
  for (std::size_t i = 0; i < c.n.inputs.size(); ++i) args.push_back(c.operand(i));
  const std::vector<std::optional<value>> d = k.vjp(args, c.y, c.dy);
  if (d.size() != args.size())
    nax::detail::throw_shape_error("nax::graph::grad: external node '", k.label(), "' gave ",
                                   d.size(), " cotangents for ", args.size(), " operands");
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!d[i] || !c.wants[i]) continue;
    if (d[i]->shape() != c.shape_of(i))
      nax::detail::throw_shape_error("nax::graph::grad: external node '", k.label(),
                                     "' gave a cotangent of shape ", d[i]->shape().to_string(),
                                     " for operand ", i, " of shape ", c.shape_of(i).to_string());
    c.give(i, *d[i]);
  }
}

inline std::string no_vjp_message(const node& n, node_id v) {
  return nax::detail::message("nax::graph::grad: no VJP for ", node_label(n), " of shape ",
                              n.shape.to_string(), " (node ", v, ")");
}

// Node n's VJP: its operands' cotangents from its own (c.dy), by its op's record
// (graph/op_record.hpp). An error here naming an op struct means its record says
// gradient_rule::vjp and graph/vjp/ has no vjp(const X_op&, const vjp_context&).
inline void vjp_of(const vjp_context& c) {
  if (const differentiable_kernel* k = differentiable(c.n)) return vjp_external(c, *k);
  c.n.op.visit([&](const auto& op) {
    using op_struct = std::remove_cvref_t<decltype(op)>;
    if constexpr (op_struct::record.gradient == gradient_rule::vjp)
      vjp(op, c);
    else if constexpr (op_struct::record.gradient == gradient_rule::refused)
      nax::detail::throw_shape_error(no_vjp_message(c.n, c.y.id()));
  });
}

// An op with a VJP has it for every node of it, unless an overload on its struct (graph/vjp/)
// says otherwise.
template <class Op>
std::string vjp_refusal(const Op&, const builder&, const node&) {
  return {};
}

// Why node v has no VJP, or "" when it has one. grad asks this of every node it will visit
// before it adds any node, so that a grad that throws leaves the builder as it was.
inline std::string vjp_refusal(const builder& b, node_id v) {
  const node& n = b.at(v);
  if (differentiable(n)) return "";
  return n.op.visit([&](const auto& op) -> std::string {
    using op_struct = std::remove_cvref_t<decltype(op)>;
    if constexpr (op_struct::record.gradient == gradient_rule::refused)
      return no_vjp_message(n, v);
    else
      return vjp_refusal(op, b, n);
  });
}

// grad's body: the seeds are dys, or ones (rank-0 losses) made only once everything is checked.
inline std::vector<value> grad_from(std::span<const value> ys, std::span<const value> wrt,
                                    std::span<const value> dys, bool unit_seeds);
inline std::vector<value> differentiate(builder& b, std::span<const value> ys,
                                        std::span<const value> wrt, std::span<const value> dys,
                                        bool unit_seeds, const std::vector<char>& needed);

}  // namespace detail

NAX_RUNTIME_INLINE std::vector<value> grad(std::span<const value> ys, std::span<const value> wrt,
                                           std::span<const value> dys) {
  return detail::grad_from(ys, wrt, dys, false);
}

namespace detail {

inline std::vector<value> grad_from(std::span<const value> ys, std::span<const value> wrt,
                                    std::span<const value> dys, bool unit_seeds) {
  if (ys.empty()) nax::detail::throw_shape_error("nax::graph::grad: no output to differentiate");
  if (!unit_seeds && dys.size() != ys.size())
    nax::detail::throw_shape_error("nax::graph::grad: ", ys.size(), " outputs but ", dys.size(),
                                   " seed cotangents");
  builder& b = ys[0].owner();
  const std::size_t n = b.size();  // the forward graph: the nodes made before grad
  auto check = [&](const value& v, const char* what, std::size_t i) {
    if (&v.owner() != &b)
      nax::detail::throw_shape_error("nax::graph::grad: ", what, " ", i,
                                     " belongs to another builder");
    if (!detail::carries_gradient(v.shape()))
      nax::detail::throw_shape_error("nax::graph::grad: ", what, " ", i, " is ",
                                     v.shape().to_string(), "; gradients are of f32 or f64 values");
  };
  for (std::size_t i = 0; i < ys.size(); ++i) {
    check(ys[i], "output", i);
    if (unit_seeds) {
      if (ys[i].shape().rank() != 0)
        nax::detail::throw_shape_error("nax::graph::grad: loss ", i, " is ",
                                       ys[i].shape().to_string(),
                                       ", not rank 0 (give a seed cotangent: grad(y, wrt, dy))");
      continue;
    }
    check(dys[i], "seed cotangent", i);
    if (!(dys[i].shape() == ys[i].shape()))
      nax::detail::throw_shape_error("nax::graph::grad: seed cotangent ", i, " is ",
                                     dys[i].shape().to_string(), ", output ", i, " is ",
                                     ys[i].shape().to_string());
  }
  std::vector<char> wanted(n, 0);
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    check(wrt[i], "wrt value", i);
    wanted[wrt[i].id()] = 1;
  }
  // needed[v]: v carries a gradient and depends on a wrt value (only those get cotangents).
  std::vector<char> needed(n, 0);
  for (node_id v = 0; v < n; ++v) {
    const node& nd = b.at(v);
    if (!detail::carries_gradient(nd.shape)) continue;
    bool depends = wanted[v] != 0;
    for (node_id in : nd.inputs) depends = depends || needed[in];
    needed[v] = depends;
  }
  // The nodes the walk below will differentiate (reached from an output, with an operand that
  // needs a cotangent): each must have a VJP, checked before any node is added.
  std::vector<char> reached(n, 0);
  for (const value& y : ys) reached[y.id()] = needed[y.id()];
  for (node_id v = n; v-- > 0;) {
    if (!reached[v]) continue;
    bool any = false;
    for (node_id in : b.at(v).inputs)
      if (needed[in]) {
        reached[in] = 1;
        any = true;
      }
    if (!any) continue;
    if (const std::string why = vjp_refusal(b, v); !why.empty())
      nax::detail::throw_shape_error(why);
  }
  // (Marked once everything is checked: a grad that throws leaves the builder as it was; and
  // should a VJP still refuse a shape, the nodes made before it are dropped.)
  const auto before = grad_access::saved(b);
  try {
    return differentiate(b, ys, wrt, dys, unit_seeds, needed);
  } catch (...) {
    grad_access::restore(b, before);
    throw;
  }
}

// grad_from's walk, once every node it visits is known to have a VJP.
inline std::vector<value> differentiate(builder& b, std::span<const value> ys,
                                        std::span<const value> wrt, std::span<const value> dys,
                                        bool unit_seeds, const std::vector<char>& needed) {
  const std::size_t n = needed.size();
  grad_access::mark_gradient_begin(b, static_cast<node_id>(n));
  std::vector<std::optional<value>> cotangent(n);
  for (std::size_t i = 0; i < ys.size(); ++i)
    if (needed[ys[i].id()]) {
      const value seed = unit_seeds ? b.constant(1.0, ys[i].shape().dtype()) : dys[i];
      std::optional<value>& c = cotangent[ys[i].id()];
      c = c ? *c + seed : seed;
    }
  for (node_id v = n; v-- > 0;) {
    if (!needed[v] || !cotangent[v]) continue;
    const node nd = b.at(v);  // a copy: the VJP adds nodes
    std::vector<char> wants(nd.inputs.size(), 0);
    bool any = false;
    for (std::size_t i = 0; i < nd.inputs.size(); ++i) {
      wants[i] = needed[nd.inputs[i]];
      any = any || wants[i];
    }
    if (!any) continue;
    const vjp_context c{b, nd, b.value_of(v), *cotangent[v], wants, &cotangent};
    vjp_of(c);
  }
  std::vector<value> out;
  out.reserve(wrt.size());
  for (const value& w : wrt) out.push_back(cotangent[w.id()] ? *cotangent[w.id()] : zeros_like(w));
  return out;
}

}  // namespace detail

NAX_RUNTIME_INLINE std::vector<value> grad(std::span<const value> losses,
                                           std::span<const value> wrt) {
  return detail::grad_from(losses, wrt, {}, true);
}

NAX_RUNTIME_INLINE std::vector<value> grad(const value& loss, std::span<const value> wrt) {
  return grad(std::span(&loss, 1), wrt);
}

}  // namespace nax::graph
#endif  // NAX_RUNTIME_DEFINITIONS
