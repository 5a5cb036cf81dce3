#pragma once
// A runtime graph decoded from fuzz bytes, shared by the builder target (any shapes, any
// attributes) and the run target (small shapes it can run and check against the reference):
// parameters, then a sequence of ops of the builder, each with operands picked from the values
// made so far and with axes, extents and attributes from the bytes, valid or not. Every op of
// nax::graph::builder and of graph/ops.hpp is reachable. An op that nax refuses must throw
// nax::shape_error (or, for random's parameters, std::invalid_argument, as ops/random.hpp
// documents); the decoder counts those and goes on with the next op. Any other exception, a
// crash or a sanitizer report is a finding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nax/core/dim.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/graph/builder.hpp>
#include <nax/graph/ops.hpp>
#include <nax/ops/list.hpp>

#include "bytes.hpp"

namespace fuzz {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

struct decoded_graph {
  g::builder b;
  std::vector<g::value> params;  // in the order made: run's inputs
  std::vector<g::value> pool;    // every value made, parameters included
  std::size_t refused = 0;       // ops nax refused (shape_error or invalid_argument)
};

/// How wild the decoded graph may be. `runnable`: shapes over a few small axes (batch, seq<=8,
/// h = 3, k = 4, unnamed 1 and 2, rarely an empty axis), no integer division or multiplication
/// (undefined or overflowing, as in C++: docs/kernels.md), slices and pads within small numbers;
/// otherwise extents, bounds, names and attributes are anything.
struct graph_options {
  bool runnable = false;
  std::size_t max_ops = 24;
};

/// The nodes of b, one a line, and the outputs: for messages.
inline std::string describe(const g::builder& b, std::span<const g::value> outs) {
  std::string s;
  for (std::size_t id = 0; id < b.size(); ++id) {
    const g::node& n = b.at(static_cast<g::node_id>(id));
    s.append("\n  %").append(std::to_string(id)).append(" = ");
    s.append(g::op_label(n.op)).append("(");
    for (g::node_id a : n.inputs) s.append(" %").append(std::to_string(a));
    s.append(" ) : ").append(n.shape.to_string());
  }
  s.append("\n  outputs:");
  for (const g::value& v : outs) s.append(" %").append(std::to_string(v.id()));
  for (const g::axis_alias& a : b.axis_aliases())
    s.append("\n  alias: ").append(a.alias.view()).append(" bound as ").append(a.source.view());
  return s;
}

class graph_decoder {
 public:
  graph_decoder(bytes& in, decoded_graph& out, graph_options options)
      : in_(in), out_(out), options_(options) {}

  void decode() {
    const std::size_t params = in_.range(1, 4);
    for (std::size_t i = 0; i < params; ++i) add_parameter();
    if (out_.pool.empty()) {  // every one refused: one that is not
      out_.params.push_back(out_.b.parameter("x", shape(dtype::f32, {dim("batch")})));
      out_.pool.push_back(out_.params.back());
    }
    const std::size_t ops = in_.range(1, options_.max_ops);
    for (std::size_t i = 0; i < ops && !in_.empty(); ++i) {
      try {
        add_op();
      } catch (const nax::shape_error&) {
        ++out_.refused;
      } catch (const std::invalid_argument&) {
        ++out_.refused;  // random's parameters (ops/random.hpp)
      }
    }
  }

 private:
  // --- choices --------------------------------------------------------------------------------

  std::string name() {
    static const char* const names[] = {"batch", "seq", "h", "k", "one", "two", "m", ""};
    const std::uint8_t c = in_.byte();
    if (options_.runnable || c < 232) return names[c % 8];
    if (c < 244) return std::string("new") + std::to_string(c % 4);  // (appends: see npy.hpp)
    return in_.text(3);
  }

  // A fresh axis name (for ops that need one), or sometimes one the graph has.
  std::string new_name() {
    if (in_.byte() < 200) {
      std::string n = "n";
      n.append(std::to_string(fresh_++));
      return n;
    }
    return name();
  }

  std::size_t extent() {
    if (options_.runnable) return in_.range(0, 5);
    switch (in_.byte() % 8) {
      case 0: return in_.word(8);
      case 1: return std::size_t(1) << in_.range(16, 63);
      case 2: return in_.word(4);
      default: return in_.range(0, 9);
    }
  }

  dim vocabulary_dim() {
    switch (in_.byte() % 10) {
      case 0:
      case 1: return dim("batch");
      case 2: return dim::bounded("seq", 8);
      case 3:
      case 4: return dim::named("h", 3);
      case 5: return dim::named("k", 4);
      case 6: return dim(1);
      case 7: return dim(2);
      case 8: return in_.byte() < 32 ? dim::named("e", 0) : dim::named("one", 1);
      default: return dim::named("two", 2);
    }
  }

  dim any_dim() {
    if (options_.runnable || in_.byte() < 128) return vocabulary_dim();
    const std::uint8_t kind = in_.byte() % 6;
    const std::string n = name();
    const std::size_t e = extent();
    switch (kind) {
      case 0: return dim(e);
      case 1: return n.empty() ? dim(nax::dynamic) : dim(n);
      case 2: return dim::bounded(n, e);  // (a bound of 0 throws shape_error: an op refused)
      case 3: return dim::named(n, e);
      case 4: return dim(nax::upto(e));
      default: return dim(nax::dynamic);
    }
  }

  dtype pick_dtype() {
    const std::uint8_t c = in_.byte();
    if (c < 150) return dtype::f32;
    if (c < 200) return dtype::f64;
    if (c < 220) return dtype::i32;
    if (c < 235) return dtype::i64;
    if (c < 250) return dtype::boolean;
    return dtype::u8;
  }

  std::vector<dim> dims(std::size_t most) {
    std::vector<dim> d;
    const std::size_t rank = in_.range(0, most);
    for (std::size_t i = 0; i < rank; ++i) d.push_back(any_dim());
    return d;
  }

  shape make_shape(dtype t, const std::vector<dim>& d) {
    return shape(t, std::span<const dim>(d.data(), d.size()));
  }

  g::value pick() { return out_.pool[in_.below(out_.pool.size())]; }

  // An axis of x, by position or by name (perhaps one it has not, or a position past its rank).
  g::axis_ref axis(const g::value& x) {
    const shape& s = x.shape();
    const std::uint8_t c = in_.byte();
    if (c < 150 || s.rank() == 0) {
      if (c % 32 == 0) return g::axis_ref(s.rank() + in_.range(0, 2));
      return g::axis_ref(in_.below(std::max<std::size_t>(1, s.rank())));
    }
    const dim& d = s[in_.below(s.rank())];
    if (d.has_name() && c < 230) return g::axis_ref(names_.emplace_back(d.name().view()));
    return g::axis_ref(names_.emplace_back(name()));
  }

  std::int64_t small_int(std::int64_t lo, std::int64_t hi) {
    if (!options_.runnable && in_.byte() < 16) {
      static const std::int64_t odd[] = {std::numeric_limits<std::int64_t>::min(),
                                         std::numeric_limits<std::int64_t>::max(),
                                         -1,
                                         std::int64_t(1) << 31,
                                         std::int64_t(1) << 40,
                                         std::numeric_limits<std::int32_t>::max()};
      return odd[in_.below(6)];
    }
    return lo + static_cast<std::int64_t>(in_.range(0, static_cast<std::uint64_t>(hi - lo)));
  }

  double scalar(dtype t) {
    if (options_.runnable) {
      if (t == dtype::f32 || t == dtype::f64)
        return in_.byte() < 8 ? in_.real() : (static_cast<double>(in_.byte()) - 128) / 32;
      return static_cast<double>(in_.range(0, 6)) - 3;
    }
    return in_.real();
  }

  // A rank-0 integer for sizes and starts: a constant, a dimension size, or anything.
  g::value int_scalar() {
    const std::uint8_t c = in_.byte() % 4;
    const dtype t = in_.flag() ? dtype::i32 : dtype::i64;
    if (c == 0) return out_.b.constant(static_cast<double>(small_int(-2, 9)), t);
    if (c == 1) {
      g::value x = pick();
      return g::get_dimension_size(x, axis(x), t);
    }
    if (c == 2) {
      const g::value a = int_scalar(), b = int_scalar();
      const g::value args[2] = {a, b};
      static const nax::ops::id ops[] = {nax::ops::id::add, nax::ops::id::sub, nax::ops::id::min,
                                         nax::ops::id::max};
      return out_.b.elementwise(ops[in_.below(4)], args);
    }
    return pick();
  }

  // --- parameters and ops ---------------------------------------------------------------------

  void add_parameter() {
    std::string n = "p";
    n.append(std::to_string(out_.params.size()));
    if (!options_.runnable && in_.byte() < 8 && !out_.params.empty()) n = "p0";  // twice
    // Names unique within a shape, mostly (a repeated one is refused: a parameter the less).
    std::vector<dim> d;
    try {
      d = dims(options_.runnable ? 3 : 5);
    } catch (const nax::shape_error&) {  // a bound of 0
      ++out_.refused;
      return;
    }
    if (in_.byte() < 240) {
      std::vector<dim> unique;
      for (const dim& x : d) {
        bool seen = false;
        for (const dim& y : unique) seen = seen || (x.has_name() && x.name() == y.name());
        if (!seen) unique.push_back(x);
      }
      d = unique;
    }
    try {
      const g::value p = out_.b.parameter(n, make_shape(pick_dtype(), d));
      out_.params.push_back(p);
      out_.pool.push_back(p);
    } catch (const nax::shape_error&) {
      ++out_.refused;
    }
  }

  void keep(const g::value& v) { out_.pool.push_back(v); }

  void add_op() {
    g::builder& b = out_.b;
    const std::uint8_t op = in_.byte() % 30;
    g::value x = pick();
    const dtype xt = x.shape().dtype();
    const bool integer = xt != dtype::f32 && xt != dtype::f64;
    switch (op) {
      case 0:
      case 1:
      case 2: {  // elementwise, by the op list
        const auto id = static_cast<nax::ops::id>(in_.below(nax::ops::count));
        const std::size_t arity = nax::ops::info_of(id).arity;
        if (options_.runnable && integer && (id == nax::ops::id::div || id == nax::ops::id::mul))
          return;
        std::vector<g::value> args{x};
        for (std::size_t i = 1; i < arity; ++i)
          args.push_back(in_.byte() < 64 ? b.constant(scalar(xt), xt) : pick());
        if (arity == 3 && in_.flag()) args[0] = g::greater(x, b.constant(scalar(xt), xt));
        return keep(b.elementwise(id, args));
      }
      case 3: {  // reduce
        std::vector<g::axis_ref> axes;
        const std::size_t n = in_.range(0, 3);
        for (std::size_t i = 0; i < n; ++i) axes.push_back(axis(x));
        const auto kind = static_cast<nax::ops::reduce_kind>(in_.range(0, 3));
        return keep(b.reduce(kind, x, axes));
      }
      case 4: {
        const g::arg_kind kind = in_.flag() ? g::arg_kind::argmax : g::arg_kind::argmin;
        return keep(b.arg_reduce(kind, x, axis(x)));
      }
      case 5: {  // dot_general
        const g::value y = pick();
        std::vector<g::axis_pair> contract, batch;
        const std::size_t nc = in_.range(0, 2), nb = in_.range(0, 1);
        for (std::size_t i = 0; i < nc; ++i) contract.push_back({axis(x), axis(y)});
        for (std::size_t i = 0; i < nb; ++i) batch.push_back({axis(x), axis(y)});
        return keep(b.dot_general(x, y, contract, batch));
      }
      case 6: {  // transpose: a permutation, or a wrong one
        std::vector<std::size_t> order(x.shape().rank());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[in_.below(i)]);
        std::vector<g::axis_ref> perm(order.begin(), order.end());
        const std::uint8_t c = in_.byte();
        if (c < 16) perm.push_back(axis(x));
        if (c >= 16 && c < 32 && !perm.empty()) perm[in_.below(perm.size())] = axis(x);
        if (c >= 32 && c < 40 && !perm.empty()) perm.pop_back();
        return keep(b.transpose(x, perm));
      }
      case 7: return keep(b.softmax(x, axis(x)));
      case 8: {  // layer_norm: gamma and beta over the axis, made if asked
        const g::axis_ref a = axis(x);
        g::value gamma = pick(), beta = pick();
        if (in_.flag() && a.index != g::axis_ref::by_name && a.index < x.shape().rank()) {
          const std::vector<dim> row{x.shape()[a.index]};
          gamma = g::full(b, make_shape(xt, row), scalar(xt));
          beta = g::full(b, make_shape(xt, row), scalar(xt));
        }
        const double eps = options_.runnable ? 1e-3 : in_.real();
        return keep(b.layer_norm(x, gamma, beta, a, eps));
      }
      case 9: return keep(b.reshape(x, reshape_target(x)));
      case 10: return keep(b.broadcast(x, broadcast_target(x)));
      case 11: {  // slice
        const g::axis_ref a = axis(x);
        const std::int64_t start = small_int(-1, 4);
        const std::int64_t stop = in_.byte() < 64 ? g::slice_end : small_int(-1, 6);
        return keep(b.slice(x, a, start, stop, small_int(0, 3)));
      }
      case 12: {  // concat, along a static axis or a named bounded one
        std::vector<g::value> xs{x};
        const std::size_t n = in_.range(0, 2);
        for (std::size_t i = 0; i < n; ++i) xs.push_back(in_.flag() ? x : pick());
        const g::axis_ref a = axis(x);
        if (in_.flag()) return keep(b.concat(xs, a, names_.emplace_back(new_name())));
        return keep(b.concat(xs, a));
      }
      case 13: {  // pad by static amounts
        const g::axis_ref a = axis(x);
        const std::int64_t low = small_int(-1, 3), high = small_int(-1, 3);
        return keep(b.pad(x, a, low, high, scalar(xt)));
      }
      case 14: {
        const g::axis_ref a = axis(x);
        return keep(b.rename(x, a, names_.emplace_back(new_name())));
      }
      case 15: {  // split: one part may be dynamic
        const g::axis_ref a = axis(x);
        const dim outer = split_part(), inner = split_part();
        return keep(b.split(x, a, outer, inner));
      }
      case 16: {
        const g::axis_ref a = axis(x), c = axis(x);
        return keep(b.merge(x, a, c, names_.emplace_back(new_name())));
      }
      case 17: {  // iota over x's shape, or over one of its axes
        const dtype t = pick_dtype();
        if (in_.flag()) return keep(g::iota(x, axis(x), t));
        return keep(b.iota(nax::shape(t, x.shape().dims()), axis(x)));
      }
      case 18: {  // random
        const auto d = static_cast<nax::ops::distribution>(in_.range(0, 2));
        const std::uint64_t seed = in_.word(2);
        const nax::rng key(seed, in_.byte());
        const double lo = in_.byte() < 200 ? 0.0 : scalar(dtype::f64);
        const double hi = in_.byte() < 200 ? 1.0 : scalar(dtype::f64);
        const dtype t = in_.flag() ? dtype::f32 : (in_.flag() ? dtype::f64 : pick_dtype());
        return keep(b.random(nax::shape(t, x.shape().dims()), d, key, lo, hi));
      }
      case 19: {
        const dtype t = pick_dtype();
        return keep(b.constant(scalar(t), t));
      }
      case 20: {
        const dtype t = in_.flag() ? dtype::i32 : pick_dtype();
        return keep(g::get_dimension_size(x, axis(x), t));
      }
      case 21: {
        const g::axis_ref a = axis(x);
        const g::value start = int_scalar();
        return keep(b.dynamic_slice(x, a, start, small_int(0, 4)));
      }
      case 22: {
        const g::value update = in_.flag() ? pick() : slice_of(x);
        const g::axis_ref a = axis(x);
        return keep(b.dynamic_update_slice(x, update, a, int_scalar()));
      }
      case 23: {
        const g::axis_ref a = axis(x);
        const g::value size = int_scalar();
        return keep(b.set_dimension_size(x, a, size, names_.emplace_back(new_name())));
      }
      case 24: {  // pad by run-time amounts
        const g::axis_ref a = axis(x);
        const g::value low = int_scalar(), high = int_scalar();
        const std::size_t bound = options_.runnable ? in_.range(0, 12) : extent();
        const double v = scalar(xt);
        return keep(b.pad(x, a, low, high, v, names_.emplace_back(new_name()), bound));
      }
      case 25: {  // tensors made from a rule
        const dtype t = pick_dtype();
        switch (in_.byte() % 5) {
          case 0: return keep(g::full_like(x, scalar(xt)));
          case 1: {
            const g::axis_ref r = axis(x);
            return keep(g::eye(x, r, axis(x), t));
          }
          case 2: {
            const g::axis_ref r = axis(x);
            return keep(g::tril(x, r, axis(x), t));
          }
          case 3: return keep(g::one_hot(x, any_dim(), t));
          default: return keep(g::full(b, make_shape(t, dims(3)), scalar(t)));
        }
      }
      case 26: return add_parameter();
      case 27: {  // an elementwise chain, the fusion passes' favourite
        g::value y = x;
        const std::size_t n = in_.range(1, 4);
        for (std::size_t i = 0; i < n; ++i) {
          const g::value c = in_.flag() ? b.constant(scalar(xt), xt) : x;
          const g::value args[2] = {y, c};
          y = b.elementwise(in_.flag() ? nax::ops::id::add : nax::ops::id::sub, args);
          if (!integer) y = in_.flag() ? g::tanh(y) : g::exp(g::neg(g::abs(y)));
        }
        return keep(y);
      }
      case 28: {  // the patterns the fusion passes look for: softmax and layer_norm spelled out
        if (integer) return;
        const g::axis_ref a = axis(x);
        if (in_.flag()) {
          const g::value e = g::exp(x - b.reduce(nax::ops::reduce_kind::max, x, {&a, 1}));
          return keep(e / b.reduce(nax::ops::reduce_kind::sum, e, {&a, 1}));
        }
        const g::value d = x - b.reduce(nax::ops::reduce_kind::mean, x, {&a, 1});
        const g::value v = b.reduce(nax::ops::reduce_kind::mean, d * d, {&a, 1});
        return keep(d * g::rsqrt(v + 1e-3));
      }
      default: {  // dense: a product, a bias, an activation
        const g::value y = pick();
        const g::axis_ref a = axis(x), c = axis(y);
        g::value p = g::dot_general(x, y, {{a, c}});
        if (in_.flag()) p = p + pick();
        return keep(in_.flag() ? g::gelu(p) : g::relu(p));
      }
    }
  }

  // A part of split: named, static or (rarely) dynamic.
  dim split_part() {
    if (in_.byte() < 40) return dim(new_name());
    const std::string n = new_name();
    return dim::named(n, extent());
  }

  // A slice of x along one axis (for dynamic_update_slice's update).
  g::value slice_of(const g::value& x) {
    if (x.shape().rank() == 0) return x;
    return out_.b.slice(x, in_.below(x.shape().rank()), 0, small_int(0, 3));
  }

  // x's dims, changed: an axis split or merged, a 1 added or dropped, renamed, or anything.
  shape reshape_target(const g::value& x) {
    const shape& s = x.shape();
    std::vector<dim> d(s.dims().begin(), s.dims().end());
    switch (in_.byte() % 6) {
      case 0:
        d.insert(d.begin() + static_cast<std::ptrdiff_t>(in_.below(d.size() + 1)), dim(1));
        break;
      case 1: {  // merge two neighbouring static axes
        if (d.size() < 2) break;
        const std::size_t i = in_.below(d.size() - 1);
        if (d[i].is_static() && d[i + 1].is_static()) {
          const std::size_t e = d[i].extent() * d[i + 1].extent();
          d.erase(d.begin() + static_cast<std::ptrdiff_t>(i));
          d[i] = dim(e);
        }
        break;
      }
      case 2: {  // split a static axis
        if (d.empty()) break;
        const std::size_t i = in_.below(d.size());
        if (d[i].is_static() && d[i].extent() % 2 == 0) {
          d[i] = dim(d[i].extent() / 2);
          d.insert(d.begin() + static_cast<std::ptrdiff_t>(i), dim(2));
        }
        break;
      }
      case 3:  // move a dynamic axis
        if (d.size() >= 2) std::swap(d[0], d[d.size() - 1]);
        break;
      case 4: d = dims(4); break;
      default:
        if (!d.empty()) d[in_.below(d.size())] = any_dim();
    }
    const dtype t = in_.byte() < 16 ? pick_dtype() : s.dtype();
    return make_shape(t, d);
  }

  // x's dims with others added (before, after, between), a 1 perhaps widened.
  shape broadcast_target(const g::value& x) {
    const shape& s = x.shape();
    std::vector<dim> d(s.dims().begin(), s.dims().end());
    const std::size_t n = in_.range(0, 2);
    for (std::size_t i = 0; i < n; ++i)
      d.insert(d.begin() + static_cast<std::ptrdiff_t>(in_.below(d.size() + 1)), any_dim());
    for (dim& e : d)
      if (e.is_static() && e.extent() == 1 && in_.flag()) e = any_dim();
    if (in_.byte() < 16) d = dims(4);
    return make_shape(in_.byte() < 8 ? pick_dtype() : s.dtype(), d);
  }

  bytes& in_;
  decoded_graph& out_;
  graph_options options_;
  std::size_t fresh_ = 0;
  std::deque<std::string> names_;  // the text behind axis_refs by name (a deque: stays put)
};

}  // namespace fuzz
