#pragma once
// The reductions the graph's reduce nodes name and the runtime's kernels compute (their bodies:
// ops/reducers.hpp).

#include <cstdint>
#include <string_view>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::ops {

enum class reduce_kind : std::uint8_t { sum, mean, max, min };

/// "sum", "mean", "max" or "min".
constexpr std::string_view name(reduce_kind k) noexcept {
  switch (k) {
    case reduce_kind::sum: return "sum";
    case reduce_kind::mean: return "mean";
    case reduce_kind::max: return "max";
    case reduce_kind::min: return "min";
  }
  return "?";
}

}  // namespace nax::ops
