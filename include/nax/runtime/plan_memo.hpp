#pragma once
// Elementwise plans made during one specialization, by op, dtypes, extents and strides: a graph
// repeats its layers, and a repeated step copies its plan instead of planning again; a step
// whose operands and result have the shapes of an earlier one's copies that one's kernel.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/shape.hpp>
#include <nax/graph/program.hpp>
#include <nax/kernels/elementwise.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::runtime {

namespace detail {

// A hash of the dtype, names and extents of `x`, mixed into h.
inline std::uint64_t mix_shape(std::uint64_t h, const nax::shape& x) noexcept {
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull + (h >> 29); };
  mix(static_cast<std::uint64_t>(x.dtype()) << 8 | x.rank());
  for (const nax::dim& d : x.dims()) {
    mix(d.name().hash());
    mix(d.extent());
  }
  return h;
}

// A key of step s's kind, `salt` (what else its kernel depends on) and the shapes of its result
// and operands.
inline std::uint64_t step_shapes_key(const graph::program_step& s,
                                     std::span<const nax::shape> shapes,
                                     std::uint64_t salt) noexcept {
  std::uint64_t key =
      0x9e3779b97f4a7c15ull ^
      (static_cast<std::uint64_t>(s.kind()) << 32 | (salt + 1)) * 0xff51afd7ed558ccdull;
  key = mix_shape(key, shapes[s.result]);
  for (graph::value_index a : s.args) key = mix_shape(key, shapes[a]);
  return key;
}

// Whether steps a and b, of the same kind, read and write values of the same shapes.
inline bool same_shapes(const graph::program_step& a, const graph::program_step& b,
                        std::span<const nax::shape> shapes) noexcept {
  if (a.args.size() != b.args.size() || !(shapes[a.result] == shapes[b.result])) return false;
  for (std::size_t i = 0; i < a.args.size(); ++i)
    if (!(shapes[a.args[i]] == shapes[b.args[i]])) return false;
  return true;
}

}  // namespace detail

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

  /// The step and kernel kept under `key` by keep_step (null if none): a step made earlier in
  /// this specialization whose kernel depends on nothing but what the caller hashed into `key`
  /// (which compares that step with its own before copying the kernel).
  template <class Step, class Kernel>
  std::pair<const Step*, const Kernel*> similar_step(std::uint64_t key) const {
    const auto it = steps_.find(key);
    if (it == steps_.end()) return {nullptr, nullptr};
    return {static_cast<const Step*>(it->second.first),
            static_cast<const Kernel*>(it->second.second)};
  }
  /// Keeps `step` and its `kernel` under `key` (the first kept stays).
  void keep_step(std::uint64_t key, const void* step, const void* kernel) {
    steps_.try_emplace(key, step, kernel);
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
  struct identity_hash {
    std::size_t operator()(std::uint64_t k) const noexcept { return static_cast<std::size_t>(k); }
  };
  std::unordered_map<std::uint64_t, std::pair<const void*, const void*>, identity_hash> steps_;
};

}  // namespace nax::runtime
