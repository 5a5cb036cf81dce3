#pragma once
// What run() checks of its inputs against the program's parameters, laid out once per
// executable so that the hit path reads the extents of the dynamic axes with no name lookups:
// per dimension, its static extent or bound, its name, and for a dynamic axis the key slot it
// fills (the first dimension with that axis sets it, the others must agree).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nax/core/axis_name.hpp>
#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/program.hpp>
#include <nax/runtime/binding_key.hpp>
#include <nax/runtime/dyn_tensor.hpp>

namespace nax::NAX_ISA::runtime {

class input_signature {
 public:
  NAX_RUNTIME_INLINE explicit input_signature(const graph::program& p);

  /// The extents of the dynamic axes read off `inputs` (one per parameter) into ext (sized to
  /// the program's dynamic axes), or false if any input is not as its pattern says.
  NAX_RUNTIME_INLINE bool read_extents(std::span<const dyn_tensor> inputs,
                                       std::size_t* ext) const noexcept;

  /// The key of `inputs` (for runs on `threads` threads) with the full binding extraction: what
  /// read_extents refused throws here, with the message naming the input and the axis
  /// (core/extract_bindings.hpp). The value axes' places are left for runtime/value_axes.hpp.
  NAX_RUNTIME_INLINE void extract(const graph::program& p, std::span<const dyn_tensor> inputs,
                                  std::size_t threads, extents_key& key) const;

 private:
  static constexpr std::uint32_t no_slot = ~std::uint32_t{0};
  // One dimension of an input's pattern.
  struct dim_check {
    axis_name name;                // a concrete dimension with a name must have this one
    std::size_t extent = 0;        // static: the extent; dynamic: the bound
    std::uint32_t slot = no_slot;  // dynamic and named: its axis's index in dynamic_axes
    bool dynamic = false;
    bool first = false;  // the first dimension of all inputs with this axis: it sets the extent
  };
  struct input_check {
    nax::dtype type = nax::dtype::f32;
    std::uint32_t begin = 0, rank = 0;  // its dimensions in dims_
  };

  std::vector<input_check> inputs_;
  std::vector<dim_check> dims_;
};

}  // namespace nax::runtime

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>

#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::runtime {

NAX_RUNTIME_INLINE input_signature::input_signature(const graph::program& p) {
  std::vector<bool> seen(p.dynamic_axes.size(), false);
  for (std::size_t k = 0; k < p.num_inputs(); ++k) {
    const nax::shape& pat = p.values[k].shape;
    inputs_.push_back({pat.dtype(), static_cast<std::uint32_t>(dims_.size()),
                       static_cast<std::uint32_t>(pat.rank())});
    for (const dim& d : pat.dims()) {
      dim_check c;
      c.name = d.name();
      c.dynamic = d.is_dynamic();
      c.extent = c.dynamic ? d.bound() : d.extent();
      if (c.dynamic && d.has_name()) {
        const auto at = std::find(p.dynamic_axes.begin(), p.dynamic_axes.end(), d.name()) -
                        p.dynamic_axes.begin();
        c.slot = static_cast<std::uint32_t>(at);
        c.first = !seen[c.slot];
        seen[c.slot] = true;
      }
      dims_.push_back(c);
    }
  }
}

NAX_RUNTIME_INLINE bool input_signature::read_extents(std::span<const dyn_tensor> inputs,
                                                      std::size_t* ext) const noexcept {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const nax::shape& c = inputs[k].shape();
    const input_check& in = inputs_[k];
    if (c.dtype() != in.type || c.rank() != in.rank) return false;
    const dim* cd = c.dims().data();
    const dim_check* pd = dims_.data() + in.begin;
    for (std::size_t i = 0; i < in.rank; ++i) {
      const dim_check& d = pd[i];
      const std::size_t v = cd[i].extent();
      if (v == dynamic_extent) return false;
      if (cd[i].has_name() && !d.name.empty() && cd[i].name() != d.name) return false;
      if (!d.dynamic) {
        if (v != d.extent) return false;
        continue;
      }
      if (v > d.extent) return false;
      if (d.slot == no_slot) continue;
      if (d.first)
        ext[d.slot] = v;
      else if (ext[d.slot] != v)
        return false;
    }
  }
  return true;
}

NAX_RUNTIME_INLINE void input_signature::extract(const graph::program& p,
                                                 std::span<const dyn_tensor> inputs,
                                                 std::size_t threads, extents_key& key) const {
  std::vector<binding_source> src;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    src.push_back({p.input_names[k], p.values[k].shape, inputs[k].shape()});
  nax::bindings b;
  extract_bindings(src, b);
  const std::span<const axis_name> in_axes(p.dynamic_axes.data(), p.num_input_axes());
  if (!key_of(in_axes, b, threads, key))
    nax::detail::throw_shape_error("nax::executable::run: the inputs bind ", b.to_string(),
                                   ", not every dynamic axis of the graph");
  key.resize(p.dynamic_axes.size() + 1);  // the value axes' places, then the thread count
  key[p.dynamic_axes.size()] = threads;
}

}  // namespace nax::runtime
#endif  // NAX_RUNTIME_DEFINITIONS
