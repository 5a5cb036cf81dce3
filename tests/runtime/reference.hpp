#pragma once
// A plain reference for runtime graphs: every node of a builder evaluated in double with scalar
// index loops (no kernels of nax, no fusion, no memory plan), stored back in the node's dtype.

#include <nax/core/broadcast.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/graph/builder.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/ops/random.hpp>
#include <nax/runtime/dyn_tensor.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reference {

namespace g = nax::graph;

// A tensor in double with its concrete shape.
struct dense {
  nax::shape shape;
  std::vector<std::size_t> ext;
  std::vector<double> v;

  std::size_t offset(std::span<const std::size_t> idx) const {
    std::size_t o = 0;
    for (std::size_t i = 0; i < ext.size(); ++i) o = o * ext[i] + idx[i];
    return o;
  }
};

// Calls f(idx) for every index of `ext` in row-major order.
template <class F>
void for_each_index(const std::vector<std::size_t>& ext, F f) {
  std::vector<std::size_t> idx(ext.size(), 0);
  for (std::size_t e : ext)
    if (e == 0) return;
  while (true) {
    f(std::span<const std::size_t>(idx));
    std::size_t i = ext.size();
    while (i > 0) {
      if (++idx[i - 1] < ext[i - 1]) break;
      idx[--i] = 0;
    }
    if (i == 0) return;
  }
}

template <class T>
double read(const nax::dyn_tensor& t, std::size_t i) {
  return static_cast<double>(static_cast<const T*>(t.data())[i]);
}

inline double read_any(const nax::dyn_tensor& t, std::size_t i) {
  switch (t.dtype()) {
    case nax::dtype::f32: return read<float>(t, i);
    case nax::dtype::f64: return read<double>(t, i);
    case nax::dtype::i32: return read<std::int32_t>(t, i);
    case nax::dtype::i64: return read<std::int64_t>(t, i);
    case nax::dtype::u8:
    case nax::dtype::boolean: return read<std::uint8_t>(t, i);
  }
  return 0;
}

inline dense from_tensor(const nax::dyn_tensor& t) {
  dense d{t.shape(), {}, {}};
  for (const nax::dim& x : t.shape().dims()) d.ext.push_back(x.extent());
  d.v.resize(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) d.v[i] = read_any(t, i);
  return d;
}

// How far a step along each axis of `out` moves in operand `in` (concrete extents `in_ext`,
// row-major), by the broadcast rule: axes placed by name or from the right, an axis of extent 1
// (or one the operand lacks) does not move. An element's offset is the sum of index x step.
inline std::vector<std::size_t> operand_steps(const nax::shape& in,
                                              const std::vector<std::size_t>& in_ext,
                                              const nax::shape& out) {
  std::vector<std::size_t> map(in.rank());
  nax::broadcast_axis_map(in, out, map);
  std::vector<std::size_t> step(out.rank(), 0);
  std::size_t stride = 1;
  for (std::size_t i = in.rank(); i-- > 0;) {
    if (in_ext[i] != 1) step[map[i]] += stride;
    stride *= in_ext[i];
  }
  return step;
}

inline std::size_t offset_by(std::span<const std::size_t> idx,
                             const std::vector<std::size_t>& step) {
  std::size_t o = 0;
  for (std::size_t i = 0; i < step.size(); ++i) o += idx[i] * step[i];
  return o;
}

inline double apply(nax::ops::id op, std::span<const double> a) {
  return nax::ops::with_op(op, [&](auto o) -> double {
    using Op = decltype(o);
    if constexpr (Op::selects)
      return a[0] != 0 ? a[1] : a[2];
    else if constexpr (Op::arity == 1)
      return static_cast<double>(Op::apply(a[0]));
    else
      return static_cast<double>(Op::apply(a[0], a[1]));
  });
}

// Evaluates every node of b, or only the nodes `outputs` need (when given: as a compiled graph
// does, which never computes the others; the rest stay empty); inputs in parameter order.
inline std::vector<dense> evaluate(const g::builder& b, std::span<const nax::dyn_tensor> inputs,
                                   std::span<const g::value> outputs = {}) {
  std::vector<dense> vals(b.size());
  std::vector<bool> needed(b.size(), outputs.empty());
  for (const g::value& o : outputs) needed[o.id()] = true;
  // The axis a node binds by its values (a set_dimension_size's, a concat's along a dynamic
  // axis), if any: a compiled graph computes such a node when a node it computes has that axis
  // as a dynamic one (a static axis of the same name needs no binding).
  auto binds_axis = [&](const g::node& n) -> std::string_view {
    if (n.kind() == g::op_kind::set_dimension_size)
      return n.shape[n.as<g::set_dimension_size_op>().axis].name();
    if (const auto* c = n.op.get_if<g::concat_op>(); c && n.shape[c->axis].is_dynamic())
      return n.shape[c->axis].name();
    return {};
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t id = b.size(); id-- > 0;)
      if (needed[id])
        for (g::node_id a : b.at(static_cast<g::node_id>(id)).inputs) needed[a] = true;
    for (std::size_t id = 0; id < b.size(); ++id) {
      const std::string_view axis = binds_axis(b.at(static_cast<g::node_id>(id)));
      if (needed[id] || axis.empty()) continue;
      for (std::size_t u = 0; u < b.size() && !needed[id]; ++u)
        if (needed[u])
          for (const nax::dim& d : b.at(static_cast<g::node_id>(u)).shape.dims())
            if (d.is_dynamic() && d.name() == axis) needed[id] = grew = true;
    }
  }
  std::vector<nax::binding_source> sources;
  std::size_t k = 0;
  for (const g::node& n : b.nodes())
    if (n.kind() == g::op_kind::parameter) {
      sources.push_back({n.as<g::parameter_op>().name, n.shape, inputs[k].shape()});
      ++k;
    }
  nax::bindings binds = nax::extract_bindings(sources);
  // A renamed axis, bound as its source: once the source is bound (by the inputs, or later by a
  // set_dimension_size or a concat).
  auto bind_aliases = [&] {
    for (const g::axis_alias& a : b.axis_aliases())
      if (const auto v = binds.find(a.source); v && !binds.find(a.alias)) binds.set(a.alias, *v);
  };
  bind_aliases();
  k = 0;
  for (std::size_t id = 0; id < b.size(); ++id) {
    const g::node& n = b.at(static_cast<g::node_id>(id));
    dense& out = vals[id];
    if (!needed[id] && n.kind() != g::op_kind::parameter) continue;
    if (n.kind() == g::op_kind::set_dimension_size)  // its axis is bound by its size, a value
      binds.set(n.shape[n.as<g::set_dimension_size_op>().axis].name(),
                static_cast<std::size_t>(vals[n.inputs[1]].v[0]));
    if (const auto* c = n.op.get_if<g::concat_op>(); c && n.shape[c->axis].is_dynamic()) {
      std::size_t sum = 0;  // a concat along bounded axes: its own axis, bound by the sum
      for (g::node_id a : n.inputs) sum += vals[a].ext[c->axis];
      binds.set(n.shape[c->axis].name(), sum);
    }
    bind_aliases();
    out.shape = n.shape.resolve(binds);
    if (out.shape.is_dynamic()) {  // (appends: g++ 12 warns falsely on "..." + std::string)
      std::string why = "reference: node ";
      why.append(std::to_string(id)).append(" of shape ").append(out.shape.to_string());
      throw std::logic_error(why.append(" has an axis no binding gives"));
    }
    for (const nax::dim& x : out.shape.dims()) out.ext.push_back(x.extent());
    std::size_t count = 1;
    for (std::size_t e : out.ext) count *= e;
    out.v.assign(count, 0.0);
    auto arg = [&](std::size_t i) -> const dense& { return vals[n.inputs[i]]; };
    switch (n.kind()) {
      case g::op_kind::parameter: out = from_tensor(inputs[k++]); break;
      case g::op_kind::constant: out.v[0] = n.as<g::constant_op>().value; break;
      case g::op_kind::elementwise: {
        std::vector<std::vector<std::size_t>> steps;
        for (std::size_t i = 0; i < n.inputs.size(); ++i)
          steps.push_back(operand_steps(arg(i).shape, arg(i).ext, out.shape));
        std::vector<double> a(n.inputs.size());
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          for (std::size_t i = 0; i < n.inputs.size(); ++i)
            a[i] = arg(i).v[offset_by(idx, steps[i])];
          out.v[out.offset(idx)] = reference::apply(n.as<g::elementwise_op>().op, a);
        });
        break;
      }
      case g::op_kind::reduce: {
        const dense& x = arg(0);
        std::vector<bool> reduced(x.ext.size(), false);
        for (std::uint32_t a : n.as<g::reduce_op>().axes) reduced[a] = true;
        const nax::ops::reduce_kind kind = n.as<g::reduce_op>().kind;
        std::vector<double> acc(count, kind == nax::ops::reduce_kind::max   ? -INFINITY
                                       : kind == nax::ops::reduce_kind::min ? INFINITY
                                                                            : 0.0);
        std::size_t per = 1;
        for (std::size_t i = 0; i < x.ext.size(); ++i)
          if (reduced[i]) per *= x.ext[i];
        // A step along a kept axis of x moves in the result; along a reduced one it does not.
        std::vector<std::size_t> kept_step(x.ext.size(), 0);
        for (std::size_t i = x.ext.size(), stride = 1; i-- > 0;)
          if (!reduced[i]) {
            kept_step[i] = stride;
            stride *= x.ext[i];
          }
        for_each_index(x.ext, [&](std::span<const std::size_t> idx) {
          double& a = acc[offset_by(idx, kept_step)];
          const double xv = x.v[x.offset(idx)];
          if (kind == nax::ops::reduce_kind::max)
            a = std::max(a, xv);
          else if (kind == nax::ops::reduce_kind::min)
            a = std::min(a, xv);
          else
            a += xv;
        });
        if (kind == nax::ops::reduce_kind::mean)
          for (double& a : acc) a /= static_cast<double>(per);
        out.v = acc;
        break;
      }
      case g::op_kind::dot_general: {
        const dense &a = arg(0), &c = arg(1);
        const g::dot_general_op& dg = n.as<g::dot_general_op>();
        const std::size_t nc = dg.contract.size(), nb = dg.batch.size();
        std::vector<int> a_role(a.ext.size(), -1), c_role(c.ext.size(), -1);
        std::vector<std::size_t> con_ext;
        for (std::size_t i = 0; i < nc; ++i) {
          a_role[dg.contract[i].lhs] = static_cast<int>(i);
          c_role[dg.contract[i].rhs] = static_cast<int>(i);
          con_ext.push_back(a.ext[dg.contract[i].lhs]);
        }
        std::vector<std::size_t> a_batch, c_batch;
        for (std::size_t i = 0; i < nb; ++i) {
          a_batch.push_back(dg.batch[i].lhs);
          c_batch.push_back(dg.batch[i].rhs);
          a_role[a_batch.back()] = -2;
          c_role[c_batch.back()] = -2;
        }
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          // Result axes: batch, a's free, c's free.
          std::vector<std::size_t> ai(a.ext.size()), ci(c.ext.size());
          std::size_t r = 0;
          for (std::size_t i = 0; i < nb; ++i, ++r) ai[a_batch[i]] = ci[c_batch[i]] = idx[r];
          for (std::size_t i = 0; i < a.ext.size(); ++i)
            if (a_role[i] == -1) ai[i] = idx[r++];
          for (std::size_t i = 0; i < c.ext.size(); ++i)
            if (c_role[i] == -1) ci[i] = idx[r++];
          double sum = 0;
          for_each_index(con_ext, [&](std::span<const std::size_t> kk) {
            for (std::size_t i = 0; i < a.ext.size(); ++i)
              if (a_role[i] >= 0) ai[i] = kk[static_cast<std::size_t>(a_role[i])];
            for (std::size_t i = 0; i < c.ext.size(); ++i)
              if (c_role[i] >= 0) ci[i] = kk[static_cast<std::size_t>(c_role[i])];
            sum += a.v[a.offset(ai)] * c.v[c.offset(ci)];
          });
          out.v[out.offset(idx)] = sum;
        });
        break;
      }
      case g::op_kind::transpose:
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> src(idx.size());
          for (std::size_t i = 0; i < idx.size(); ++i)
            src[n.as<g::transpose_op>().perm[i]] = idx[i];
          out.v[out.offset(idx)] = arg(0).v[arg(0).offset(src)];
        });
        break;
      case g::op_kind::softmax:
      case g::op_kind::layer_norm: {
        const dense& x = arg(0);
        const std::size_t axis = n.kind() == g::op_kind::softmax ? n.as<g::softmax_op>().axis
                                                                 : n.as<g::layer_norm_op>().axis;
        std::vector<std::size_t> outer = x.ext;
        outer[axis] = 1;
        for_each_index(outer, [&](std::span<const std::size_t> base) {
          std::vector<std::size_t> idx(base.begin(), base.end());
          const std::size_t len = x.ext[axis];
          std::vector<double> row(len);
          for (std::size_t j = 0; j < len; ++j) {
            idx[axis] = j;
            row[j] = x.v[x.offset(idx)];
          }
          if (n.kind() == g::op_kind::softmax) {
            double mx = -INFINITY, s = 0;
            for (double r : row) mx = std::max(mx, r);
            for (double r : row) s += std::exp(r - mx);
            for (double& r : row)
              r = n.as<g::softmax_op>().log ? (r - mx) - std::log(s) : std::exp(r - mx) / s;
          } else {
            double mean = 0, var = 0;
            for (double r : row) mean += r;
            mean /= static_cast<double>(len);
            for (double r : row) var += (r - mean) * (r - mean);
            var /= static_cast<double>(len);
            for (std::size_t j = 0; j < len; ++j)
              row[j] = (row[j] - mean) / std::sqrt(var + n.as<g::layer_norm_op>().epsilon) *
                           arg(1).v[j] +
                       arg(2).v[j];
          }
          for (std::size_t j = 0; j < len; ++j) {
            idx[axis] = j;
            out.v[out.offset(idx)] = row[j];
          }
        });
        break;
      }
      case g::op_kind::reshape: out.v = arg(0).v; break;
      case g::op_kind::broadcast:
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          const dense& x = arg(0);
          std::vector<std::size_t> src(x.ext.size());
          for (std::size_t i = 0; i < src.size(); ++i)
            src[i] = x.ext[i] == 1 ? 0 : idx[n.as<g::broadcast_op>().axis_map[i]];
          out.v[out.offset(idx)] = x.v[x.offset(src)];
        });
        break;
      case g::op_kind::slice:
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> src(idx.begin(), idx.end());
          const g::slice_op& sl = n.as<g::slice_op>();
          src[sl.axis] =
              static_cast<std::size_t>(sl.start) + idx[sl.axis] * static_cast<std::size_t>(sl.step);
          out.v[out.offset(idx)] = arg(0).v[arg(0).offset(src)];
        });
        break;
      case g::op_kind::concat: {
        const std::size_t axis = n.as<g::concat_op>().axis;
        std::size_t at = 0;
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
          const dense& x = arg(i);
          for_each_index(x.ext, [&](std::span<const std::size_t> idx) {
            std::vector<std::size_t> dst(idx.begin(), idx.end());
            dst[axis] += at;
            out.v[out.offset(dst)] = x.v[x.offset(idx)];
          });
          at += x.ext[axis];
        }
        break;
      }
      case g::op_kind::set_dimension_size: {
        const std::size_t axis = n.as<g::set_dimension_size_op>().axis;
        const dense& x = arg(0);
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          if (idx[axis] < x.ext[axis]) out.v[out.offset(idx)] = x.v[x.offset(idx)];
        });
        break;
      }
      case g::op_kind::dimension_size:
        out.v[0] = static_cast<double>(arg(0).ext[n.as<g::dimension_size_op>().axis]);
        break;
      case g::op_kind::dynamic_slice:
      case g::op_kind::dynamic_update_slice: {
        // XLA's clamping: start in [0, extent - size].
        const bool update = n.kind() == g::op_kind::dynamic_update_slice;
        const std::size_t axis =
            update ? n.as<g::dynamic_update_slice_op>().axis : n.as<g::dynamic_slice_op>().axis;
        const dense& x = arg(0);
        const dense& part = update ? arg(1) : out;
        const double wanted = arg(update ? 2 : 1).v[0];
        const double last = static_cast<double>(x.ext[axis] - part.ext[axis]);
        const auto start = static_cast<std::size_t>(std::clamp(wanted, 0.0, last));
        if (update) out.v = x.v;
        for_each_index(part.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> at(idx.begin(), idx.end());
          at[axis] += start;
          if (update)
            out.v[out.offset(at)] = part.v[part.offset(idx)];
          else
            out.v[out.offset(idx)] = x.v[x.offset(at)];
        });
        break;
      }
      case g::op_kind::convert: {
        // static_cast: rounded to float, toward zero to an integer type, nonzero to true.
        const dense& x = arg(0);
        for (std::size_t i = 0; i < count; ++i) {
          const double v = x.v[i];
          switch (out.shape.dtype()) {
            case nax::dtype::f32: out.v[i] = static_cast<double>(static_cast<float>(v)); break;
            case nax::dtype::f64: out.v[i] = v; break;
            case nax::dtype::boolean: out.v[i] = v != 0 ? 1 : 0; break;
            default: out.v[i] = std::trunc(v); break;
          }
        }
        break;
      }
      case g::op_kind::take:
      case g::op_kind::scatter_add: {
        // out[p, j..., s] = x[p, idx[j...], s]; scatter_add adds the updates there instead.
        const bool scatter = n.kind() == g::op_kind::scatter_add;
        const std::size_t axis =
            scatter ? n.as<g::scatter_add_op>().axis : n.as<g::take_op>().axis;
        const dense& x = arg(0);
        const dense& ix = arg(1);
        const dense& taken = scatter ? arg(2) : out;
        const std::size_t r = ix.ext.size();
        if (scatter) out.v = x.v;
        for_each_index(taken.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> j(idx.begin() + static_cast<std::ptrdiff_t>(axis),
                                     idx.begin() + static_cast<std::ptrdiff_t>(axis + r));
          std::vector<std::size_t> at(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(axis));
          at.push_back(static_cast<std::size_t>(ix.v[ix.offset(j)]));
          at.insert(at.end(), idx.begin() + static_cast<std::ptrdiff_t>(axis + r), idx.end());
          if (scatter)
            out.v[out.offset(at)] += taken.v[taken.offset(idx)];
          else
            out.v[out.offset(idx)] = x.v[x.offset(at)];
        });
        break;
      }
      case g::op_kind::iota: {
        const std::size_t axis = n.as<g::iota_op>().axis;
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          out.v[out.offset(idx)] = static_cast<double>(idx[axis]);
        });
        break;
      }
      case g::op_kind::random: {
        const g::random_op& r = n.as<g::random_op>();
        const std::uint64_t key = nax::ops::random_key(r.key);
        for (std::size_t i = 0; i < count; ++i)
          out.v[i] = out.shape.dtype() == nax::dtype::f32
                         ? nax::ops::random_sample<float>(key, r.distribution, r.a, r.b, i)
                         : nax::ops::random_sample<double>(key, r.distribution, r.a, r.b, i);
        break;
      }
      case g::op_kind::arg_reduce: {
        const dense& x = arg(0);
        const g::arg_reduce_op& op = n.as<g::arg_reduce_op>();
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> src(idx.begin(), idx.end());
          src.insert(src.begin() + op.axis, 0);
          std::size_t best = 0;
          for (std::size_t j = 0; j < x.ext[op.axis]; ++j) {
            src[op.axis] = j;
            const double v = x.v[x.offset(src)];
            src[op.axis] = best;
            const double b = x.v[x.offset(src)];
            if (std::isnan(b)) break;
            if (std::isnan(v) || (op.kind == g::arg_kind::argmax ? v > b : v < b)) best = j;
          }
          out.v[out.offset(idx)] = static_cast<double>(best);
        });
        break;
      }
      case g::op_kind::cumsum: {
        const dense& x = arg(0);
        const g::cumsum_op& op = n.as<g::cumsum_op>();
        const std::size_t extent = x.ext[op.axis];
        for_each_index(out.ext, [&](std::span<const std::size_t> idx) {
          std::vector<std::size_t> src(idx.begin(), idx.end());
          const std::size_t j = idx[op.axis];
          double sum = 0;
          for (std::size_t i = 0; i < extent; ++i) {
            const bool counted = op.options.reverse ? (op.options.exclusive ? i > j : i >= j)
                                                    : (op.options.exclusive ? i < j : i <= j);
            if (!counted) continue;
            src[op.axis] = i;
            sum += x.v[x.offset(src)];
          }
          out.v[out.offset(idx)] = sum;
        });
        break;
      }
      default: throw std::logic_error("reference: no op " + std::string(g::name(n.kind())));
    }
    // An integer node holds integers (the mean of integers truncates toward zero, as nax's), a
    // bool node 0 or 1 (a bool constant of 2 is true).
    if (out.shape.dtype() == nax::dtype::i32 || out.shape.dtype() == nax::dtype::i64 ||
        out.shape.dtype() == nax::dtype::u8)
      for (double& v : out.v) v = std::trunc(v);
    if (out.shape.dtype() == nax::dtype::boolean)
      for (double& v : out.v) v = v != 0;
  }
  return vals;
}

// Deterministic values in [lo, hi] for a float tensor.
inline nax::dyn_tensor random_tensor(nax::shape s, std::mt19937& rng, double lo = -1,
                                     double hi = 1) {
  nax::dyn_tensor t(std::move(s));
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.dtype() == nax::dtype::f32)
      static_cast<float*>(t.data())[i] = static_cast<float>(u(rng));
    else
      static_cast<double*>(t.data())[i] = u(rng);
  }
  return t;
}

// Random values for the parameters `params` under binding b.
inline std::vector<nax::dyn_tensor> random_inputs(std::span<const g::value> params,
                                                  const nax::bindings& b, std::mt19937& rng) {
  std::vector<nax::dyn_tensor> in;
  for (const g::value& p : params) in.push_back(random_tensor(p.shape().resolve(b), rng));
  return in;
}

// Largest |got - want| / (1 + |want|).
inline double max_error(const nax::dyn_tensor& got, const dense& want) {
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    e = std::max(e, std::abs(read_any(got, i) - want.v[i]) / (1 + std::abs(want.v[i])));
  return e;
}

}  // namespace reference
