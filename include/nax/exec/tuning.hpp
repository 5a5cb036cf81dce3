#pragma once
// The tuning constants every parallel loop of nax shares, in one place: how much work a chunk of
// a parallel loop must hold before splitting it pays for waking another thread.

#include <cstddef>

#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::detail {

/// Elements per parallel work item below which splitting does not pay (32 Ki elements: about
/// 10 us of a cheap elementwise op on one core, against ~1 us to hand a chunk to a worker).
inline constexpr std::size_t parallel_grain_elements = std::size_t{1} << 15;

/// The same for loops that move bytes rather than compute (copies): 128 KiB per chunk.
inline constexpr std::size_t parallel_grain_bytes = std::size_t{1} << 17;

}  // namespace nax::detail
