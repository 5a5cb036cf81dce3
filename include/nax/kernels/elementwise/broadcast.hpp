#pragma once
// How a dense row-major input is read over an elementwise kernel's output index space: its
// strides per output axis, 0 along the axes it is broadcast over.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA::kernels {

/// Writes to `strides` (one per output axis, in elements) how a dense row-major input of extents
/// `in_extents` is read over the output's index space, where input axis a is output axis
/// axis_map[a]. Output axes no input axis maps to, and input axes of extent 1, get stride 0 (a
/// broadcast). nax::shape_error if an input extent is neither 1 nor the output's, or the map is
/// not one-to-one into the output's axes.
inline void broadcast_strides(std::span<const std::size_t> in_extents,
                              std::span<const std::size_t> axis_map,
                              std::span<const std::size_t> out_extents,
                              std::span<std::ptrdiff_t> strides) {
  constexpr std::string_view prefix = "nax::kernels::broadcast_strides: ";
  if (axis_map.size() != in_extents.size())
    nax::detail::throw_shape_error(prefix, in_extents.size(), " input axes but ", axis_map.size(),
                                   " axis map entries");
  if (strides.size() != out_extents.size())
    nax::detail::throw_shape_error(prefix, "room for ", strides.size(), " strides, the output has ",
                                   out_extents.size(), " axes");
  std::fill(strides.begin(), strides.end(), std::ptrdiff_t{0});
  std::ptrdiff_t step = 1;
  for (std::size_t a = in_extents.size(); a-- > 0;) {
    const std::size_t k = axis_map[a];
    if (k >= out_extents.size())
      nax::detail::throw_shape_error(prefix, "input axis ", a, " maps to output axis ", k,
                                     ", the output has ", out_extents.size(), " axes");
    for (std::size_t b = a + 1; b < axis_map.size(); ++b)
      if (axis_map[b] == k)
        nax::detail::throw_shape_error(prefix, "input axes ", a, " and ", b,
                                       " both map to output axis ", k);
    if (in_extents[a] != 1 && in_extents[a] != out_extents[k])
      nax::detail::throw_shape_error(prefix, "input axis ", a, " has extent ", in_extents[a],
                                     ", output axis ", k, " has ", out_extents[k]);
    if (in_extents[a] != 1) strides[k] = step;
    step *= static_cast<std::ptrdiff_t>(in_extents[a]);
  }
}

/// The same, returned.
inline std::vector<std::ptrdiff_t> broadcast_strides(std::span<const std::size_t> in_extents,
                                                     std::span<const std::size_t> axis_map,
                                                     std::span<const std::size_t> out_extents) {
  std::vector<std::ptrdiff_t> s(out_extents.size());
  broadcast_strides(in_extents, axis_map, out_extents, s);
  return s;
}

}  // namespace nax::kernels
