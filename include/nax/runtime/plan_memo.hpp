#pragma once
// Elementwise plans made during one specialization, by op, dtypes, extents and strides: a graph
// repeats its layers, and a repeated step copies its plan instead of planning again.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>

#include <nax/core/dtype.hpp>
#include <nax/kernels/elementwise.hpp>
#include <nax/ops/list.hpp>

namespace nax::runtime {

class plan_memo {
 public:
  /// The plan for this key, made by `make()` the first time.
  template <class Make>
  kernels::elementwise_plan elementwise(ops::id op, std::span<const nax::dtype> types,
                                        std::span<const std::size_t> extents,
                                        std::span<const std::ptrdiff_t> strides, Make&& make) {
    ew_key k{};
    if (types.size() > k.types.size() || extents.size() > k.extents.size() ||
        strides.size() > k.strides.size())
      return make();
    k.op = static_cast<std::uint8_t>(op);
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

}  // namespace nax::runtime
