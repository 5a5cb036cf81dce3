#pragma once
// A planned elementwise program (made by plan_elementwise, planner.hpp; run by run_elementwise,
// run.hpp): the coalesced loop geometry, the block size and parallel grain, how each input is
// read per block, and per instruction the block body to call and where its result goes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/kernels/elementwise/bodies.hpp>

namespace nax::NAX_ISA::kernels {
namespace detail {

/// How an input is read per block: unused; in place (a pointer into it: unit stride along the
/// block); splatted (one value: stride 0 along the block); gathered into a block buffer.
enum class ew_access : std::uint8_t { unused, in_place, splat, gather };

struct ew_input {
  ew_access access = ew_access::unused;
  std::uint8_t size = 0;          // bytes per element
  std::uint32_t buffer = 0;       // gather: byte offset of its buffer in the scratch area
  std::ptrdiff_t inner_step = 0;  // stride along the collapsed inner axis
};

inline constexpr std::uint32_t ew_no_output = std::numeric_limits<std::uint32_t>::max();

struct ew_step {
  ew_fn fn = nullptr;
  std::array<std::uint32_t, 3> args{};  // pointer-table entries: input i, or k + instruction
  std::uint32_t value = 0;              // the result's entry: k + instruction
  std::uint32_t output = ew_no_output;  // written in place into this output, or
  std::uint32_t buffer = 0;             // into the block buffer at this scratch byte offset
                                        // (an output's, when streamed: then copied out)
  std::uint8_t size = 0;                // bytes per element of the result
};

/// An output listed again after its first listing: copied from that one per block.
struct ew_copy {
  std::uint32_t from = 0, to = 0;
  std::uint8_t size = 0;
};

/// Bytes of block buffers (and pointer tables) on each running thread's stack.
inline constexpr std::size_t ew_scratch_bytes = 32 * 1024;

inline constexpr std::size_t ew_align(std::size_t bytes) noexcept {
  return (bytes + 63) & ~std::size_t{63};
}

/// Bytes between consecutive block buffers beyond their size: buffers a multiple of 4 KiB apart
/// make every load of a body look like it aliases its store to the same page offset (4K
/// aliasing: the load waits for the store's address check).
inline constexpr std::size_t ew_skew = 192;

}  // namespace detail

/// Whether a plan writes its outputs around the caches (elementwise_plan::stream).
enum class elementwise_streaming : std::uint8_t { automatic, always, never };

/// A program planned for one output shape and input layout: the collapsed loop geometry, block
/// size and parallel grain, and per instruction the body to call. Made by plan_elementwise; read
/// by run_elementwise. Copyable; running it does not modify it (several threads may run one).
struct elementwise_plan {
  std::size_t size = 0;      // output elements (0: running does nothing)
  std::size_t block = 0;     // elements per block
  std::size_t blocks = 0;    // blocks per run
  std::size_t grain = 1;     // blocks per parallel chunk, at least
  bool row_blocks = true;    // blocks stay within a row (else they run across short rows)
  std::size_t segments = 1;  // blocks per row, with row_blocks
  std::size_t rank = 1;      // of the collapsed geometry (>= 1)
  std::size_t inner = 1;     // the collapsed inner extent (a row)
  // Inline capacities fit a graph step (one op; 2 inputs of collapsed rank <= 4, or 3 of rank
  // <= 2): planning one allocates nothing. Larger ones spill to the heap.
  nax::detail::small_vector<std::size_t, 4> extents;  // collapsed, outer to inner
  // collapsed; input i's at [i * rank, (i + 1) * rank)
  nax::detail::small_vector<std::ptrdiff_t, 8> strides;
  nax::detail::small_vector<detail::ew_input, 3> inputs;  // per program input
  nax::detail::small_vector<detail::ew_step, 2> steps;    // the instructions outputs need, in order
  nax::detail::small_vector<detail::ew_copy, 1> copies;
  nax::detail::small_vector<dtype, 2> output_dtypes;  // per output
  std::size_t values = 0;  // pointer-table entries: inputs + instructions
  // Outputs larger than this core's share of the last-level cache are written around the caches
  // (non-temporal stores from a block buffer: no read for ownership, no eviction of the inputs)
  // where a block's output is vector-aligned. A caller that writes outputs into a buffer meant
  // to stay in cache turns it off.
  bool stream = false;

  [[nodiscard]] std::size_t num_inputs() const noexcept { return inputs.size(); }
  [[nodiscard]] std::size_t num_outputs() const noexcept { return output_dtypes.size(); }
};

}  // namespace nax::kernels
