#pragma once
// The reductions the runtime kernels compute; the graph's reduce nodes name them too.

#include <cstdint>
#include <string_view>

namespace nax::kernels {

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

}  // namespace nax::kernels
