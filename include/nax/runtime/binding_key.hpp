#pragma once
// The key of a specialization: the extents of a program's dynamic axes, in the program's order
// (graph::program::dynamic_axes) — the complete binding, never a lossy hash of it — followed by
// the thread count of the runs it serves (a specialization's plans split work for one count).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include <nax/core/axis_name.hpp>
#include <nax/core/bindings.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/small_vector.hpp>

namespace nax::NAX_ISA::runtime {

using extents_key = nax::detail::small_vector<std::size_t, 8>;

struct extents_key_hash {
  std::size_t operator()(const extents_key& k) const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (std::size_t v : k) h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};
struct extents_key_equal {
  bool operator()(const extents_key& a, const extents_key& b) const noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)  // a loop: a call to memcmp costs more here
      if (a[i] != b[i]) return false;
    return true;
  }
};

/// b and `threads` as the key over `axes`; false if b does not bind every one of them.
inline bool key_of(std::span<const axis_name> axes, const nax::bindings& b, std::size_t threads,
                   extents_key& key) {
  key.resize(axes.size() + 1);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::optional<std::size_t> v = b.find(axes[i]);
    if (!v) return false;
    key[i] = *v;
  }
  key[axes.size()] = threads;
  return true;
}

/// The binding a key over `axes` stands for.
inline nax::bindings bindings_of(std::span<const axis_name> axes, const extents_key& key) {
  nax::bindings b;
  for (std::size_t i = 0; i < axes.size(); ++i) b.bind(axes[i], key[i]);
  return b;
}

/// The thread count a key is for.
inline std::size_t threads_of(const extents_key& key) { return key[key.size() - 1]; }

}  // namespace nax::runtime
