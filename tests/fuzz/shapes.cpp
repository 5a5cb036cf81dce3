// Fuzz target: runtime shapes and bindings (nax/core). Dimensions made from arbitrary extents,
// bounds and names (shape::make), then everything core does with them: to_string, index_of,
// num_elements and num_bytes, bindings (bind, set, find, order, equality, hash), resolve,
// extract_bindings of one input and of several, unify_dims, unify_shapes, broadcast_shapes and
// broadcast_axis_map, and dyn_tensor's element count. Each is either checked against a plain
// reference written here (from the rules of docs/shapes.md and the headers' comments) or
// against a property (unification is symmetric; a broadcast result maps back to its operands).
// nax::shape_error is the only exception allowed, and only where the reference expects one.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/broadcast.hpp>
#include <nax/core/dim.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/unify.hpp>
#include <nax/runtime/dyn_tensor.hpp>

#include "bytes.hpp"

namespace {

using fuzz::fail;
using nax::dim;
using nax::shape;

std::string pick_name(fuzz::bytes& in) {
  static const char* const names[] = {"", "batch", "seq", "h", "k", "kseq", "a", "b"};
  const std::uint8_t c = in.byte();
  if (c < 240) return names[c % 8];
  return in.text(4);  // anything, up to 4 bytes
}

std::size_t pick_extent(fuzz::bytes& in) {
  switch (in.byte() % 8) {
    case 0: return in.word(8);  // anything, nax::dynamic_extent included
    case 1: return std::size_t(1) << in.range(16, 63);
    case 2: return in.word(4);
    default: return in.range(0, 9);
  }
}

// A dimension as a user could write it; nullopt where nax must refuse it (and did).
std::optional<dim> pick_dim(fuzz::bytes& in) {
  const std::uint8_t kind = in.byte() % 8;
  const std::string name = pick_name(in);
  const std::size_t e = pick_extent(in);
  try {
    switch (kind) {
      case 0: return dim(e);
      case 1: return dim(name.empty() ? "batch" : name);
      case 2: return dim::bounded(name.empty() ? "seq" : name, e);
      case 3: return dim::named(name, e);
      case 4: return dim(nax::dynamic);
      case 5: return dim(nax::upto(e));
      case 6: {
        const auto v = static_cast<std::int64_t>(in.word(8));
        const dim d(v);
        if (v < -1) fail("dim(", v, ") accepted a negative extent");
        return d;
      }
      default: return dim(static_cast<int>(in.range(0, 12)) - 2);
    }
  } catch (const nax::shape_error&) {
    // Only a negative extent or a bound of 0 (or of nax::unbounded) is refused.
    const bool bad_bound = (kind == 2 || kind == 5) && (e == 0 || e == nax::unbounded);
    if (!bad_bound && kind != 6 && kind != 7) fail("a valid dimension was refused");
    return std::nullopt;
  }
}

shape pick_shape(fuzz::bytes& in) {
  const auto type = static_cast<nax::dtype>(in.range(0, 5));
  std::vector<dim> dims;
  const std::size_t rank = in.range(0, 8);
  for (std::size_t i = 0; i < rank; ++i)
    if (auto d = pick_dim(in)) dims.push_back(*d);
  const shape s = shape::make(type, std::span<const dim>(dims));
  if (s.rank() != dims.size() || s.dtype() != type) fail("shape::make lost dimensions");
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (!(s[i] == dims[i]) || !(s.at(i) == dims[i])) fail("shape::make changed dimension ", i);
  return s;
}

template <class F>
bool throws_shape_error(F f) {
  try {
    f();
    return false;
  } catch (const nax::shape_error&) {
    return true;
  }
}

void check_shape(const shape& s) {
  const std::string text = s.to_string();
  bool dynamic = false, named = false;
  for (const dim& d : s.dims()) {
    dynamic = dynamic || d.is_dynamic();
    named = named || d.has_name();
    if (d.is_static() == d.is_dynamic()) fail("a dim is both static and dynamic");
  }
  if (s.is_dynamic() != dynamic || s.is_fully_concrete() == dynamic || s.has_named_axes() != named)
    fail("is_dynamic/has_named_axes of ", text);
  if (!throws_shape_error([&] { (void)s.at(s.rank()); })) fail("at(rank) of ", text);
  for (std::size_t i = 0; i < s.rank(); ++i)
    if (s[i].has_name()) {
      const auto j = s.index_of(s[i].name().view());
      if (!j || *j > i || !(s[*j].name() == s[i].name())) fail("index_of of ", text);
    }
  if (s.index_of("")) fail("index_of(\"\") found an unnamed axis in ", text);
  // The element count: the exact product, or shape_error if a dim is dynamic or it overflows.
  // (Flags and values rather than std::optional: g++ 12 -O3 warns falsely on this use of it.)
  bool has_count = !dynamic, has_bytes = false;
  std::size_t count = 1, bytes = 0;
  for (const dim& d : s.dims())
    if (has_count && __builtin_mul_overflow(count, d.extent(), &count)) has_count = false;
  if (!dynamic)
    for (const dim& d : s.dims())
      if (d.extent() == 0) has_count = true, count = 0;  // (0 whatever the others are)
  if (has_count) has_bytes = !__builtin_mul_overflow(count, nax::size_of(s.dtype()), &bytes);
  try {
    const std::size_t n = s.num_elements();
    if (!has_count || n != count) fail("num_elements of ", text, " is ", n);
  } catch (const nax::shape_error&) {
    if (has_count) fail("num_elements of ", text, " threw");
  }
  try {
    const std::size_t n = s.num_bytes();
    if (!has_bytes || n != bytes) fail("num_bytes of ", text, " is ", n);
  } catch (const nax::shape_error&) {
    if (has_bytes) fail("num_bytes of ", text, " threw");
  }
  // A dyn_tensor of a concrete shape: its size, or shape_error if its bytes overflow (small
  // ones only are allocated).
  if (!dynamic && (!has_bytes || bytes <= (1u << 16))) {
    try {
      const nax::dyn_tensor t(s);
      if (!has_bytes || t.size() != count || t.bytes() != bytes) fail("dyn_tensor of ", text);
    } catch (const nax::shape_error&) {
      if (has_bytes) fail("dyn_tensor of ", text, " threw");
    }
  }
}

// unify_dims by the rules (core/unify.hpp): names unify, static beats dynamic, the smaller bound.
std::optional<dim> unify_reference(const dim& a, const dim& b) {
  if (a.has_name() && b.has_name() && !(a.name() == b.name())) return std::nullopt;
  const nax::axis_name n = a.has_name() ? a.name() : b.name();
  if (a.is_static() && b.is_static())
    return a.extent() == b.extent() ? std::optional(dim::named(n, a.extent())) : std::nullopt;
  if (a.is_static() || b.is_static()) {
    const dim& s = a.is_static() ? a : b;
    const dim& d = a.is_static() ? b : a;
    return s.extent() > d.bound() ? std::nullopt : std::optional(dim::named(n, s.extent()));
  }
  const std::size_t bound = std::min(a.bound(), b.bound());
  return bound == nax::unbounded ? dim(n) : dim::bounded(n, bound);
}

std::optional<dim> unify(const dim& a, const dim& b) {
  try {
    return nax::unify_dims(a, b);
  } catch (const nax::shape_error&) {
    return std::nullopt;
  }
}

void check_unify(const shape& a, const shape& b) {
  for (std::size_t i = 0; i < std::min(a.rank(), b.rank()); ++i) {
    const std::optional<dim> got = unify(a[i], b[i]), back = unify(b[i], a[i]),
                             want = unify_reference(a[i], b[i]);
    if (got.has_value() != want.has_value() || (got && !(*got == *want)))
      fail("unify_dims(", a[i].to_string(), ", ", b[i].to_string(), ")");
    if (got.has_value() != back.has_value() || (got && !(*got == *back)))
      fail("unify_dims is not symmetric on ", a[i].to_string(), ", ", b[i].to_string());
    if (got && !(unify(*got, a[i]) == got)) fail("unify_dims(r, a) != r");
  }
  std::optional<shape> whole;
  try {
    whole = nax::unify_shapes(a, b);
  } catch (const nax::shape_error&) {
  }
  bool ok = a.dtype() == b.dtype() && a.rank() == b.rank();
  for (std::size_t i = 0; ok && i < a.rank(); ++i) ok = unify_reference(a[i], b[i]).has_value();
  if (ok != whole.has_value()) fail("unify_shapes(", a.to_string(), ", ", b.to_string(), ")");
  if (whole)
    for (std::size_t i = 0; i < a.rank(); ++i)
      if (!((*whole)[i] == *unify_reference(a[i], b[i])))
        fail("unify_shapes(", a.to_string(), ", ", b.to_string(), ") at ", i);
}

// The broadcast result r of a and b: each operand's axes map into r, and each axis refines to
// its place in r (or is a static 1 that broadcasts).
void check_broadcast(const shape& a, const shape& b, nax::dtype type) {
  // (Names are unique within a shape wherever shapes broadcast: the builder refuses others.)
  for (const shape* x : {&a, &b})
    for (std::size_t i = 0; i < x->rank(); ++i)
      if ((*x)[i].has_name() && x->index_of((*x)[i].name().view()) != i) return;
  std::optional<shape> r;
  try {
    r = nax::broadcast_shapes(a, b, type);
  } catch (const nax::shape_error&) {
    // Ranks 0 broadcast everywhere; from the right, a pair that unifies never fails.
    if (a.rank() == 0 || b.rank() == 0) fail("a scalar did not broadcast");
    return;
  }
  if (r->dtype() != type) fail("broadcast_shapes: dtype");
  if (!nax::broadcasts_by_name(a, b) && r->rank() != std::max(a.rank(), b.rank()))
    fail("broadcast_shapes(", a.to_string(), ", ", b.to_string(), ") has rank ", r->rank());
  for (const shape* x : {&a, &b}) {
    if (x->rank() == 0) continue;
    std::vector<std::size_t> map(x->rank());
    try {
      nax::broadcast_axis_map(*x, *r, map);
    } catch (const nax::shape_error&) {
      fail("broadcast_axis_map(", x->to_string(), ", ", r->to_string(), ") threw");
    }
    for (std::size_t i = 0; i < x->rank(); ++i) {
      if (map[i] >= r->rank()) fail("broadcast_axis_map out of range");
      const dim& d = (*x)[i];
      const dim& o = (*r)[map[i]];
      if (d.is_static() && d.extent() == 1) continue;
      const std::optional<dim> u = unify_reference(d, o);
      if (!u || !(*u == o))
        fail("broadcast_shapes(", a.to_string(), ", ", b.to_string(), ") = ", r->to_string(), ": ",
             d.to_string(), " does not go to ", o.to_string());
    }
  }
}

// extract_bindings of one pattern and concrete shape, by the rules of core/extract_bindings.hpp.
std::optional<nax::bindings> extract_reference(const shape& p, const shape& c, nax::bindings out) {
  if (p.dtype() != c.dtype() || p.rank() != c.rank()) return std::nullopt;
  for (std::size_t i = 0; i < p.rank(); ++i) {
    if (c[i].is_dynamic()) return std::nullopt;
    if (p[i].has_name() && c[i].has_name() && !(p[i].name() == c[i].name())) return std::nullopt;
    const std::size_t v = c[i].extent();
    if (p[i].is_static()) {
      if (v != p[i].extent()) return std::nullopt;
      continue;
    }
    if (v > p[i].bound()) return std::nullopt;
    if (!p[i].has_name()) continue;
    if (const auto was = out.find(p[i].name())) {
      if (*was != v) return std::nullopt;
    } else {
      out.bind(p[i].name(), v);
    }
  }
  return out;
}

// A concrete shape for pattern p: its static extents, dynamic ones from `values` (or anything).
shape concrete_for(const shape& p, fuzz::bytes& in, std::map<std::string, std::size_t>& values) {
  std::vector<dim> dims;
  for (const dim& d : p.dims()) {
    const std::uint8_t how = in.byte() % 16;
    const std::string n(d.name().view());
    std::size_t e = d.is_static() ? d.extent() : in.range(0, 20);
    if (!n.empty() && d.is_dynamic()) {
      if (auto it = values.find(n); it != values.end() && how != 0)
        e = it->second;
      else
        values[n] = e;
    }
    if (how == 1) e = pick_extent(in);  // a wrong one, perhaps
    if (how == 2) {
      dims.push_back(dim(nax::dynamic));  // not concrete
      continue;
    }
    dims.push_back(how == 3 ? dim::named(pick_name(in), e) : dim::named(d.name(), e));
  }
  const auto type = in.byte() % 32 == 0 ? static_cast<nax::dtype>(in.range(0, 5)) : p.dtype();
  return shape(type, std::span<const dim>(dims));
}

void check_extract(const std::vector<shape>& patterns, fuzz::bytes& in) {
  std::map<std::string, std::size_t> values;
  std::vector<shape> given;
  for (const shape& p : patterns) given.push_back(concrete_for(p, in, values));
  // One input at a time.
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    const std::optional<nax::bindings> want = extract_reference(patterns[k], given[k], {});
    std::optional<nax::bindings> got;
    try {
      got = nax::extract_bindings(patterns[k], given[k]);
    } catch (const nax::shape_error&) {
    }
    if (got.has_value() != want.has_value() || (got && !(*got == *want)))
      fail("extract_bindings(", patterns[k].to_string(), ", ", given[k].to_string(), ")");
    if (!got) continue;
    // Resolving the pattern by what was extracted gives the concrete extents.
    const shape r = patterns[k].resolve(*got);
    for (std::size_t i = 0; i < r.rank(); ++i)
      if (r[i].is_static() ? r[i].extent() != given[k][i].extent() : r[i].has_name())
        fail("resolve(extract_bindings) of ", patterns[k].to_string(), " is ", r.to_string());
  }
  // All of them merged.
  std::optional<nax::bindings> want = nax::bindings{};
  for (std::size_t k = 0; k < patterns.size() && want; ++k)
    want = extract_reference(patterns[k], given[k], *want);
  std::vector<nax::binding_source> sources;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < patterns.size(); ++k) names.push_back(in.flag() ? "" : "in");
  for (std::size_t k = 0; k < patterns.size(); ++k)
    sources.push_back({names[k], patterns[k], given[k]});
  std::optional<nax::bindings> got;
  try {
    got = nax::extract_bindings(std::span<const nax::binding_source>(sources));
  } catch (const nax::shape_error&) {
  }
  if (got.has_value() != want.has_value() || (got && !(*got == *want)))
    fail("extract_bindings of ", patterns.size(), " inputs");
}

// bindings against a std::map; resolve against the rules.
void check_bindings(const std::vector<shape>& shapes, fuzz::bytes& in) {
  nax::bindings b, reordered;
  std::map<std::string, std::size_t> want;
  const std::size_t n = in.range(0, 10);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = pick_name(in);
    const std::size_t v = in.flag() ? pick_extent(in) : in.range(0, 20);
    if (in.flag()) {
      if (name.empty()) {
        if (!throws_shape_error([&] { b.set(name, v); })) fail("bound an unnamed axis");
        continue;
      }
      b.set(name, v);
      want[name] = v;
      continue;
    }
    const auto it = want.find(name);
    const bool refused = name.empty() || (it != want.end() && it->second != v);
    if (throws_shape_error([&] { b.bind(name, v); }) != refused) fail("bindings::bind");
    if (!refused) want[name] = v;
  }
  if (b.size() != want.size()) fail("bindings::size");
  std::string text = "{";
  for (const auto& [name, v] : want) {
    if (b.find(std::string_view(name)) != v || b.at(name) != v) fail("bindings::find");
    if (text.size() > 1) text.append(", ");
    text.append(name).append(": ").append(std::to_string(v));
  }
  text.push_back('}');
  // Names in order (std::map's byte order is axis_name's order).
  if (b.to_string() != text) fail("bindings::to_string: ", b.to_string(), " vs ", text);
  for (auto it = want.rbegin(); it != want.rend(); ++it) reordered.bind(it->first, it->second);
  if (!(reordered == b) || reordered.hash() != b.hash() || !(reordered.key() == b.key()))
    fail("bindings equality or hash depends on the order of binding");
  // resolve by b.
  for (const shape& s : shapes) {
    bool refused = false;
    for (const dim& d : s.dims())
      if (d.is_dynamic() && d.has_name())
        if (const auto it = want.find(std::string(d.name().view())); it != want.end())
          refused = refused || it->second > d.bound();
    std::optional<shape> r;
    try {
      r = s.resolve(b);
    } catch (const nax::shape_error&) {
    }
    if (r.has_value() == refused) fail("resolve(", s.to_string(), ", ", b.to_string(), ")");
    if (!r) continue;
    for (std::size_t i = 0; i < s.rank(); ++i) {
      const dim& d = s[i];
      const auto it = want.find(std::string(d.name().view()));
      const bool bound = d.is_dynamic() && d.has_name() && it != want.end();
      const dim expect = bound ? dim::named(d.name(), it->second) : d;
      if (!((*r)[i] == expect)) fail("resolve(", s.to_string(), ", ", b.to_string(), ")");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::bytes in(data, size);
  std::vector<shape> shapes;
  const std::size_t n = in.range(1, 4);
  for (std::size_t i = 0; i < n; ++i) shapes.push_back(pick_shape(in));
  for (const shape& s : shapes) check_shape(s);
  for (const shape& a : shapes)
    for (const shape& b : shapes) {
      check_unify(a, b);
      check_broadcast(a, b, static_cast<nax::dtype>(in.range(0, 5)));
    }
  check_extract(shapes, in);
  check_bindings(shapes, in);
  (void)nax::unify_axis_name(shapes[0].rank() ? shapes[0][0].name().view() : "", "");
  return 0;
}
