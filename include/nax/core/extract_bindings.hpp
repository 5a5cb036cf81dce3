#pragma once
// nax::extract_bindings: reads the extents of a pattern's named dynamic axes off a concrete
// shape, for one input or merged across named inputs.

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <nax/core/bindings.hpp>
#include <nax/core/shape.hpp>
#include <nax/core/shape_error.hpp>

namespace nax {

/// One input of a multi-input extraction: its name (for messages), its pattern and the concrete
/// shape it was given.
struct binding_source {
  std::string_view input;
  const shape& pattern;
  const shape& concrete;
};

namespace core_detail {

inline std::string describe_input(std::string_view input, std::size_t index) {
  return input.empty() ? message("input ", index) : message("input '", input, "'");
}

inline std::string where(const dim& d, std::size_t i) {
  return d.has_name() ? message("dimension ", i, " (axis '", d.name().view(), "')")
                      : message("dimension ", i);
}

// Checks `concrete` against `pattern` and adds the pattern's named dynamic axes to `out`.
// Returns the position of the first axis
// whose value conflicts with one already in `out`, or pattern.rank() if none does: the caller
// knows where the earlier value came from and words that error.
inline std::size_t extract_into(const shape& pattern, const shape& concrete, bindings& out) {
  if (pattern.dtype() != concrete.dtype())
    throw_shape_error("dtype mismatch: pattern ", pattern.to_string(), " is ",
                      name(pattern.dtype()), ", got ", concrete.to_string());
  if (pattern.rank() != concrete.rank())
    throw_shape_error("rank mismatch: pattern ", pattern.to_string(), " has rank ", pattern.rank(),
                      ", got ", concrete.to_string(), " with rank ", concrete.rank());
  for (std::size_t i = 0; i < pattern.rank(); ++i) {
    const dim& p = pattern[i];
    const dim& c = concrete[i];
    if (c.is_dynamic())
      throw_shape_error("the shape given, ", concrete.to_string(),
                        ", is not concrete: ", where(c, i), " is dynamic");
    if (p.has_name() && c.has_name() && p.name() != c.name())
      throw_shape_error("dimension ", i, " is axis '", p.name().view(),
                        "' in the pattern but axis '", c.name().view(), "' in the shape given");
    const std::size_t v = c.extent();
    if (p.is_static()) {
      if (v != p.extent())
        throw_shape_error(where(p, i), " mismatch: pattern has ", p.extent(), ", got ", v);
      continue;
    }
    if (v > p.bound())
      throw_shape_error(p.has_name() ? message("axis '", p.name().view(), "'") : where(p, i),
                        ": extent ", v, " exceeds its bound ", p.bound());
    if (!p.has_name()) continue;
    if (auto bound = out.find(p.name())) {
      if (*bound != v) return i;
    } else {
      out.bind(p.name(), v);
    }
  }
  return pattern.rank();
}

}  // namespace core_detail

/// The bindings of `pattern`'s named dynamic axes read off `concrete`. nax::shape_error on a
/// dtype or rank mismatch, a static dimension that differs, an axis with conflicting values
/// ("axis 'batch' has conflicting values: 32 vs 64"), an extent above a bound, or a concrete
/// shape that is not fully concrete.
inline bindings extract_bindings(const shape& pattern, const shape& concrete) {
  bindings out;
  const std::size_t i = core_detail::extract_into(pattern, concrete, out);
  if (i < pattern.rank())
    core_detail::throw_shape_error("axis '", pattern[i].name().view(),
                              "' has conflicting values: ", *out.find(pattern[i].name()), " vs ",
                              concrete[i].extent());
  return out;
}

/// The bindings of several inputs merged into `out` (cleared first; reuse it to avoid
/// allocating). Errors name the input: "input 'a': rank mismatch: ...", and a conflict between
/// inputs names both: "axis 'batch': input 'b' has 64 but input 'a' has 32".
inline void extract_bindings(std::span<const binding_source> inputs, bindings& out) {
  out.clear();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const binding_source& in = inputs[k];
    std::size_t i = 0;
    try {
      i = core_detail::extract_into(in.pattern, in.concrete, out);
    } catch (const shape_error& e) {
      core_detail::throw_shape_error(core_detail::describe_input(in.input, k), ": ", e.what());
    }
    if (i == in.pattern.rank()) continue;
    // Error path: find who bound the axis first, this input or an earlier one.
    const axis_name axis = in.pattern[i].name();
    const std::size_t earlier = *out.find(axis), now = in.concrete[i].extent();
    std::size_t first = k;
    for (std::size_t j = 0; j < k && first == k; ++j)
      for (const dim& d : inputs[j].pattern.dims())
        if (d.is_dynamic() && d.name() == axis) first = j;
    if (first == k)
      core_detail::throw_shape_error(core_detail::describe_input(in.input, k), ": axis '", axis.view(),
                                "' has conflicting values: ", earlier, " vs ", now);
    core_detail::throw_shape_error("axis '", axis.view(), "': ", core_detail::describe_input(in.input, k),
                              " has ", now, " but ",
                              core_detail::describe_input(inputs[first].input, first), " has ", earlier);
  }
}

inline bindings extract_bindings(std::span<const binding_source> inputs) {
  bindings out;
  extract_bindings(inputs, out);
  return out;
}

/// `nax::extract_bindings({{"a", pattern_a, shape_a}, {"b", pattern_b, shape_b}})`.
inline bindings extract_bindings(std::initializer_list<binding_source> inputs) {
  return extract_bindings(std::span<const binding_source>(inputs.begin(), inputs.size()));
}

}  // namespace nax
