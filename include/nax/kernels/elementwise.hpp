#pragma once
// The runtime fused-elementwise kernel: a program of elementwise ops (a chain or a tree over k
// inputs, with one or more outputs) run over dense row-major outputs whose shapes are known only
// at run time. Inputs are read through strides over the output's index space (0 = broadcast).
//
// No code generation and no per-element switch: the planner resolves, once per shape, a function
// pointer per instruction (op x dtype x which operands are splatted) and a block size; the kernel
// then walks the instruction list once per block of a few hundred elements, and each call runs
// the op's own body (nax/ops/elementwise.hpp, the typed evaluator's) over the whole block.
// Intermediate results live in block buffers on the stack, sized to stay in L1; outputs are written
// in place (large ones from a block buffer with non-temporal stores).
//
//   plan_elementwise(program, out_extents, input_strides[, block])   once per shape
//   run_elementwise(plan, inputs, outputs)                           many times; never allocates

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <nax/core/dtype.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/cache_info.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/elementwise_ops.hpp>
#include <nax/ops/elementwise.hpp>
#include <nax/simd/arch.hpp>

namespace nax::kernels {

// --- programs ---------------------------------------------------------------------------------

/// An operand of an instruction: program input `index`, or the result of (earlier) instruction
/// `index`.
struct elementwise_operand {
  enum class source : std::uint8_t { input, result };
  source from = source::input;
  std::uint32_t index = 0;

  static constexpr elementwise_operand input(std::uint32_t i) noexcept {
    return {source::input, i};
  }
  static constexpr elementwise_operand result(std::uint32_t i) noexcept {
    return {source::result, i};
  }
  friend bool operator==(const elementwise_operand&, const elementwise_operand&) = default;
};

/// One op of a program: elementwise_ops[op] applied to args[0, elementwise_arity(op)).
struct elementwise_instruction {
  std::uint8_t op = 0;
  std::array<elementwise_operand, 3> args{};
};

/// Elementwise ops over k inputs: instructions in order, each reading inputs and results of
/// earlier instructions; outputs[o] is the instruction whose result is output o (an instruction
/// may be listed more than once). Each result's dtype follows its op: comparisons and logical
/// ops give bool, where(mask, a, b) gives a's type, the others their operands' type.
struct elementwise_program {
  std::vector<dtype> inputs;
  std::vector<elementwise_instruction> instructions;
  std::vector<std::uint32_t> outputs;

  /// Appends instruction `op` over `args` and returns its result as an operand.
  elementwise_operand append(std::size_t op, std::initializer_list<elementwise_operand> args) {
    elementwise_instruction ins;
    ins.op = static_cast<std::uint8_t>(op);
    std::copy_n(args.begin(), std::min<std::size_t>(args.size(), 3), ins.args.begin());
    instructions.push_back(ins);
    return elementwise_operand::result(static_cast<std::uint32_t>(instructions.size() - 1));
  }
};

namespace detail {

inline constexpr std::string_view ew_prefix = "nax::kernels::elementwise: ";

inline bool ew_numeric(dtype t) noexcept {
  return t == dtype::f32 || t == dtype::f64 || t == dtype::i32 || t == dtype::i64;
}
inline bool ew_floating(dtype t) noexcept { return t == dtype::f32 || t == dtype::f64; }

template <class Op>
inline constexpr bool ew_logical =
    std::is_same_v<Op, ops::logical_and> || std::is_same_v<Op, ops::logical_or> ||
    std::is_same_v<Op, ops::logical_not>;
template <class Op>
inline constexpr bool ew_where = std::is_same_v<Op, ops::where>;
// Ops that read or write bools run a scalar loop (see ew_scalar_body).
template <class Op>
inline constexpr bool ew_scalar_op = Op::yields_bool || ew_where<Op>;

/// Whether op Op runs on value type T (the type of its non-mask operands).
template <class Op, class T>
inline constexpr bool ew_supports = [] {
  constexpr bool floating = std::is_same_v<T, float> || std::is_same_v<T, double>;
  constexpr bool numeric =
      floating || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
  if constexpr (ew_logical<Op>)
    return std::is_same_v<T, bool>;
  else if constexpr (ew_where<Op>)
    return numeric || std::is_same_v<T, bool>;
  else if constexpr (Op::floating_only)
    return floating;
  else
    return numeric;
}();

}  // namespace detail

/// The dtype of op `op`'s result over operands of `types`; nax::shape_error naming the op and
/// the dtypes if the op does not take them.
inline dtype elementwise_result_dtype(std::size_t op, std::span<const dtype> types) {
  using detail::ew_prefix;
  if (op >= elementwise_op_count)
    nax::detail::throw_shape_error(ew_prefix, "unknown op ", op, " (there are ",
                                   elementwise_op_count, ")");
  const std::string_view name = elementwise_name(op);
  const std::size_t arity = elementwise_arity(op);
  if (types.size() != arity)
    nax::detail::throw_shape_error(ew_prefix, name, " takes ", arity, " operand",
                                   arity == 1 ? "" : "s", ", given ", types.size());
  return with_elementwise_op(op, [&](auto o) {
    using Op = decltype(o);
    std::size_t first = 0;
    if constexpr (detail::ew_where<Op>) {
      if (types[0] != dtype::boolean)
        nax::detail::throw_shape_error(ew_prefix, name, " needs a bool mask, got ",
                                       nax::name(types[0]));
      first = 1;
    }
    const dtype t = types[first];
    for (std::size_t i = first + 1; i < types.size(); ++i)
      if (types[i] != t)
        nax::detail::throw_shape_error(ew_prefix, name, " needs operands of one type, got ",
                                       nax::name(t), " and ", nax::name(types[i]));
    if constexpr (detail::ew_logical<Op>) {
      if (t != dtype::boolean)
        nax::detail::throw_shape_error(ew_prefix, name, " needs bool, got ", nax::name(t));
      return dtype::boolean;
    } else if constexpr (detail::ew_where<Op>) {
      if (!detail::ew_numeric(t) && t != dtype::boolean)
        nax::detail::throw_shape_error(ew_prefix, name, " needs f32, f64, i32, i64 or bool, got ",
                                       nax::name(t));
      return t;
    } else {
      if (Op::floating_only && !detail::ew_floating(t))
        nax::detail::throw_shape_error(ew_prefix, name, " needs f32 or f64, got ", nax::name(t));
      if (!detail::ew_numeric(t))
        nax::detail::throw_shape_error(ew_prefix, name, " needs f32, f64, i32 or i64, got ",
                                       nax::name(t));
      return Op::yields_bool ? dtype::boolean : t;
    }
  });
}

// --- broadcast strides ------------------------------------------------------------------------

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

// --- block bodies -----------------------------------------------------------------------------

namespace detail {

/// One instruction over one block: n elements, one pointer per operand (a splatted operand's
/// points at its one value), the result's pointer.
using ew_fn = void (*)(std::size_t n, const void* const* args, void* out);

// bool is stored as one byte, 0 or 1.
template <class T>
using ew_storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

template <class T>
constexpr T ew_pad() {
  return T(1);  // a value every op takes (1 / 1, log 1, ...) for the lanes past a block's end
}

template <bool Splat, class T>
simd::vec<T> ew_load(const T* p, const simd::vec<T>& splat, std::size_t i) {
  if constexpr (Splat)
    return splat;
  else
    return simd::vec<T>::load_unaligned(p + i);
}

template <bool Splat, class T>
simd::vec<T> ew_load_tail(const T* p, const simd::vec<T>& splat, std::size_t i, std::size_t m) {
  if constexpr (Splat) {
    return splat;
  } else {
    alignas(64) T tmp[simd::width<T>];
    for (std::size_t j = 0; j < simd::width<T>; ++j) tmp[j] = j < m ? p[i + j] : ew_pad<T>();
    return simd::vec<T>::load_aligned(tmp);
  }
}

// Ops on values (f32, f64, i32, i64 in, the same out): the op's vector body, and for the tail a
// padded vector, so an element's value does not depend on where the block boundaries fall.
template <class Op, class T, unsigned Splat, std::size_t... J>
void ew_vector_body(std::size_t n, const void* const* args, void* out, std::index_sequence<J...>) {
  using V = simd::vec<T>;
  constexpr std::size_t w = V::size;
  const T* const p[] = {static_cast<const T*>(args[J])...};
  const V s[] = {V((Splat >> J & 1u) != 0 ? *p[J] : T(0))...};
  T* const o = static_cast<T*>(out);
  std::size_t i = 0;
  for (; i + w <= n; i += w)
    Op::apply(ew_load<(Splat >> J & 1u) != 0>(p[J], s[J], i)...).store_unaligned(o + i);
  if (i < n) {
    const std::size_t m = n - i;
    alignas(64) T res[w];
    Op::apply(ew_load_tail<(Splat >> J & 1u) != 0>(p[J], s[J], i, m)...).store_aligned(res);
    std::copy_n(res, m, o + i);
  }
}

// The type of operand J of Op over values T: where's mask and logical operands are bool.
template <class Op, class T, std::size_t J>
using ew_arg_t = std::conditional_t<(ew_where<Op> && J == 0) || ew_logical<Op>, bool, T>;

template <class A, class S>
A ew_read(const S& v) {
  if constexpr (std::is_same_v<A, bool>)
    return v != 0;
  else
    return v;
}

// Ops that read or write bools (comparisons, logic, where): a scalar loop over the block with the
// op's scalar body. Vectorizing them would mean widening and narrowing masks between one byte
// per element and the lanes of T; the compiler vectorizes some of these loops itself.
template <class Op, class T, unsigned Splat, std::size_t... J>
void ew_scalar_body(std::size_t n, const void* const* args, void* out, std::index_sequence<J...>) {
  using R = std::conditional_t<Op::yields_bool, bool, T>;
  const std::tuple<const ew_storage<ew_arg_t<Op, T, J>>*...> p{
      static_cast<const ew_storage<ew_arg_t<Op, T, J>>*>(args[J])...};
  auto* const o = static_cast<ew_storage<R>*>(out);
  for (std::size_t i = 0; i < n; ++i)
    o[i] = static_cast<ew_storage<R>>(
        Op::apply(ew_read<ew_arg_t<Op, T, J>>(std::get<J>(p)[(Splat >> J & 1u) != 0 ? 0 : i])...));
}

/// The block body of Op over values T, operand J read as one splatted value where bit J of
/// Splat is set.
template <class Op, class T, unsigned Splat>
void ew_body(std::size_t n, const void* const* args, void* out) {
  using seq = std::make_index_sequence<elementwise_arity_of<Op>>;
  if constexpr (ew_scalar_op<Op>)
    ew_scalar_body<Op, T, Splat>(n, args, out, seq{});
  else
    ew_vector_body<Op, T, Splat>(n, args, out, seq{});
}

/// Whether op `op` has a body that reads the operands of `mask` splatted: binary ops on values,
/// one operand (a scalar, a bias along rows, `x * 2`). Other splatted operands are filled into a
/// block buffer: fewer bodies to compile, and they are rare or cheap next to the op.
inline bool ew_takes_splat(std::size_t op, unsigned mask) {
  return mask == 0 || (elementwise_arity(op) == 2 && mask != 3 &&
                       with_elementwise_op(op, [](auto o) { return !ew_scalar_op<decltype(o)>; }));
}

/// The body of op `op` over values of dtype `t` with splat mask `splat` (resolved once, at plan
/// time). Precondition: elementwise_result_dtype accepted the operands, ew_takes_splat the mask.
inline ew_fn ew_resolve(std::size_t op, dtype t, unsigned splat) {
  return with_elementwise_op(op, [&](auto o) -> ew_fn {
    using Op = decltype(o);
    auto pick = [&]<class T>() -> ew_fn {
      if constexpr (!ew_supports<Op, T>)
        return nullptr;
      else if constexpr (elementwise_arity_of<Op> == 2 && !ew_scalar_op<Op>)
        return splat == 1   ? &ew_body<Op, T, 1>
               : splat == 2 ? &ew_body<Op, T, 2>
                            : &ew_body<Op, T, 0>;
      else
        return &ew_body<Op, T, 0>;
    };
    switch (t) {
      case dtype::f32: return pick.template operator()<float>();
      case dtype::f64: return pick.template operator()<double>();
      case dtype::i32: return pick.template operator()<std::int32_t>();
      case dtype::i64: return pick.template operator()<std::int64_t>();
      case dtype::boolean: return pick.template operator()<bool>();
      case dtype::u8: return nullptr;
    }
    return nullptr;
  });
}

// --- plan pieces ------------------------------------------------------------------------------

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

namespace detail {

// Copies `count` elements of `Size` bytes read at `stride` elements to dst (short runs element
// by element: a row of a few elements is not worth a call to memcpy).
template <std::size_t Size>
void ew_copy_strided(std::byte* dst, const std::byte* src, std::ptrdiff_t stride,
                     std::size_t count) {
  if (stride == 1 && count * Size > 64) {
    std::memcpy(dst, src, count * Size);
  } else {
    for (std::size_t j = 0; j < count; ++j)
      std::memcpy(dst + j * Size, src + static_cast<std::ptrdiff_t>(j) * stride * Size, Size);
  }
}

// Gathers flat output positions [f0, f0 + len), which may span several rows, of an input with
// collapsed strides `st` into dst.
template <std::size_t Size>
void ew_gather_rows(std::byte* dst, const std::byte* base, const elementwise_plan& p,
                    const std::ptrdiff_t* st, std::size_t f0, std::size_t len) {
  if (p.rank == 1)
    return ew_copy_strided<Size>(
        dst, base + static_cast<std::ptrdiff_t>(f0) * st[0] * static_cast<std::ptrdiff_t>(Size),
        st[0], len);
  const std::size_t r0 = f0 / p.inner;
  std::size_t c = f0 % p.inner;
  std::ptrdiff_t off = 0;
  for (std::size_t j = p.rank - 1, r = r0; j-- > 0;) {
    off += static_cast<std::ptrdiff_t>(r % p.extents[j]) * st[j];
    r /= p.extents[j];
  }
  const std::ptrdiff_t inner = st[p.rank - 1];
  // The next row: step the outer multi-index like an odometer, adjusting the offset; the axis
  // next to the row is counted here, the outer ones (wrapped rarely) divided out.
  const std::size_t j1 = p.rank - 2, e1 = p.extents[j1];
  std::size_t i1 = r0 % e1;
  for (std::size_t r = r0, done = 0; done < len; ++r) {
    const std::size_t piece = std::min(p.inner - c, len - done);
    ew_copy_strided<Size>(
        dst + done * Size,
        base + (off + static_cast<std::ptrdiff_t>(c) * inner) * static_cast<std::ptrdiff_t>(Size),
        inner, piece);
    done += piece;
    c = 0;
    off += st[j1];
    if (++i1 < e1) continue;
    i1 = 0;
    off -= static_cast<std::ptrdiff_t>(e1) * st[j1];
    for (std::size_t j = j1, q = (r + 1) / e1; j-- > 0;) {
      off += st[j];
      if (q % p.extents[j] != 0) break;
      off -= static_cast<std::ptrdiff_t>(p.extents[j]) * st[j];
      q /= p.extents[j];
    }
  }
}

inline void ew_gather(std::size_t size, std::byte* dst, const std::byte* base,
                      const elementwise_plan& p, const std::ptrdiff_t* st, std::size_t f0,
                      std::size_t len) {
  switch (size) {
    case 1: return ew_gather_rows<1>(dst, base, p, st, f0, len);
    case 4: return ew_gather_rows<4>(dst, base, p, st, f0, len);
    default: return ew_gather_rows<8>(dst, base, p, st, f0, len);
  }
}

inline void ew_gather_strided(std::size_t size, std::byte* dst, const std::byte* src,
                              std::ptrdiff_t stride, std::size_t len) {
  switch (size) {
    case 1: return ew_copy_strided<1>(dst, src, stride, len);
    case 4: return ew_copy_strided<4>(dst, src, stride, len);
    default: return ew_copy_strided<8>(dst, src, stride, len);
  }
}

// Copies `bytes` from a block buffer to dst (aligned to simd::stream_alignment) with
// non-temporal stores; the bytes past the last whole vector with plain ones.
inline void ew_stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  using V = simd::vec<float>;  // bit patterns only: no arithmetic on the values
  constexpr std::size_t vb = sizeof(V);
  std::size_t i = 0;
  for (; i + vb <= bytes; i += vb)
    simd::stream_store(reinterpret_cast<float*>(dst + i),
                       V::load_aligned(reinterpret_cast<const float*>(src + i)));
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
}

// Asks for the block after [flat, flat + len) of a dense input of `size` elements to be fetched
// into the caches. The program reads a block's inputs in its first instructions only; without
// this, the next block's lines would come from memory only once it starts, and memory would sit
// idle while the other instructions run.
inline void ew_prefetch_next(const std::byte* base, std::size_t flat, std::size_t len,
                             std::size_t size, std::size_t element) {
  const std::size_t end = std::min(size, flat + 2 * len);
  for (std::size_t b = (flat + len) * element; b < end * element; b += 64)
    __builtin_prefetch(base + b, 0, 3);
}

/// Runs flat output positions [flat, flat + len) of plan p on the calling thread: len at most
/// p.block and, with row_blocks, within row r from column c0 (flat = r * p.inner + c0). Outputs
/// hold the elements from flat position out_base on. `scratch`: ew_scratch_bytes, 64-aligned.
inline void ew_run_span(const elementwise_plan& p, const void* const* in, void* const* out,
                        std::size_t flat, std::size_t len, std::size_t r, std::size_t c0,
                        std::size_t out_base, std::byte* scratch) {
  auto* const table = reinterpret_cast<const void**>(scratch);
  const std::size_t k = p.inputs.size();
  if (p.row_blocks) {
    for (std::size_t i = 0; i < k; ++i) {
      const ew_input& in_i = p.inputs[i];
      if (in_i.access == ew_access::unused) continue;
      const std::ptrdiff_t* st = p.strides.data() + i * p.rank;
      std::ptrdiff_t off = static_cast<std::ptrdiff_t>(c0) * in_i.inner_step;
      for (std::size_t j = p.rank - 1, q = r; j-- > 0;) {
        off += static_cast<std::ptrdiff_t>(q % p.extents[j]) * st[j];
        q /= p.extents[j];
      }
      const std::byte* src =
          static_cast<const std::byte*>(in[i]) + off * static_cast<std::ptrdiff_t>(in_i.size);
      if (in_i.access == ew_access::in_place && c0 + len < p.inner)  // the rest of the row
        ew_prefetch_next(src, 0, len, p.inner - c0, in_i.size);
      if (in_i.access == ew_access::gather) {
        ew_gather_strided(in_i.size, scratch + in_i.buffer, src, in_i.inner_step, len);
        table[i] = scratch + in_i.buffer;
      } else {
        table[i] = src;
      }
    }
  } else {
    for (std::size_t i = 0; i < k; ++i) {
      const ew_input& in_i = p.inputs[i];
      const auto* base = static_cast<const std::byte*>(in[i]);
      switch (in_i.access) {
        case ew_access::unused: break;
        case ew_access::in_place:
          table[i] = base + flat * in_i.size;
          ew_prefetch_next(base, flat, len, p.size, in_i.size);
          break;
        case ew_access::splat: table[i] = base; break;
        case ew_access::gather:
          ew_gather(in_i.size, scratch + in_i.buffer, base, p, p.strides.data() + i * p.rank, flat,
                    len);
          table[i] = scratch + in_i.buffer;
          break;
      }
    }
  }
  for (const ew_step& s : p.steps) {
    std::byte* const dst = s.output == ew_no_output ? nullptr
                                                    : static_cast<std::byte*>(out[s.output]) +
                                                          (flat - out_base) * s.size;
    const bool stream = dst != nullptr && p.stream &&
                        reinterpret_cast<std::uintptr_t>(dst) % simd::stream_alignment == 0;
    void* const o = dst != nullptr && !stream ? static_cast<void*>(dst)
                                              : static_cast<void*>(scratch + s.buffer);
    table[s.value] = o;
    const void* const a[3] = {table[s.args[0]], table[s.args[1]], table[s.args[2]]};
    s.fn(len, a, o);
    if (stream) ew_stream_copy(dst, static_cast<const std::byte*>(o), len * s.size);
  }
  for (const ew_copy& c : p.copies)
    std::memcpy(static_cast<std::byte*>(out[c.to]) + (flat - out_base) * c.size,
                static_cast<const std::byte*>(out[c.from]) + (flat - out_base) * c.size,
                len * c.size);
}

/// Runs blocks [lo, hi) of plan p on the calling thread. Outputs hold the elements from flat
/// position out_base on (a fused reduction computes its input a chunk of rows at a time).
inline void ew_run_blocks(const elementwise_plan& p, const void* const* in, void* const* out,
                          std::size_t lo, std::size_t hi, std::size_t out_base = 0) {
  // Pointer table first, then gather buffers and block buffers (offsets from the planner).
  alignas(64) std::byte scratch[ew_scratch_bytes];
  for (std::size_t b = lo; b < hi; ++b) {
    if (p.row_blocks) {
      const std::size_t r = b / p.segments, c0 = (b % p.segments) * p.block;
      ew_run_span(p, in, out, r * p.inner + c0, std::min(p.block, p.inner - c0), r, c0, out_base,
                  scratch);
    } else {
      const std::size_t flat = b * p.block;
      ew_run_span(p, in, out, flat, std::min(p.block, p.size - flat), 0, 0, out_base, scratch);
    }
  }
  if (p.stream) simd::stream_fence();  // before another thread reads what this one streamed
}

/// Runs flat output positions [f0, f1) of plan p on the calling thread, wherever they start and
/// end (spans of at most a block, cut at rows with row_blocks). Outputs hold the elements from
/// flat position out_base on.
inline void ew_run_range(const elementwise_plan& p, const void* const* in, void* const* out,
                         std::size_t f0, std::size_t f1, std::size_t out_base) {
  alignas(64) std::byte scratch[ew_scratch_bytes];
  for (std::size_t f = f0; f < f1;) {
    if (p.row_blocks) {
      const std::size_t r = f / p.inner, c0 = f % p.inner;
      const std::size_t len = std::min({p.block, p.inner - c0, f1 - f});
      ew_run_span(p, in, out, f, len, r, c0, out_base, scratch);
      f += len;
    } else {
      const std::size_t len = std::min(p.block, f1 - f);
      ew_run_span(p, in, out, f, len, 0, 0, out_base, scratch);
      f += len;
    }
  }
  if (p.stream) simd::stream_fence();
}

inline constexpr std::size_t ew_align(std::size_t bytes) noexcept {
  return (bytes + 63) & ~std::size_t{63};
}

/// Bytes between consecutive block buffers beyond their size: buffers a multiple of 4 KiB apart
/// make every load of a body look like it aliases its store to the same page offset (4K
/// aliasing: the load waits for the store's address check).
inline constexpr std::size_t ew_skew = 192;

}  // namespace detail

// --- planning ---------------------------------------------------------------------------------

namespace detail {

// plan_elementwise over a program given as spans (so that a one-op program need not be built
// in vectors). Temporaries are small_vectors: a graph step's program allocates nothing.
inline elementwise_plan plan_elementwise_spans(std::span<const dtype> program_inputs,
                                               std::span<const elementwise_instruction> code,
                                               std::span<const std::uint32_t> program_outputs,
                                               std::span<const std::size_t> out_extents,
                                               std::span<const std::ptrdiff_t> input_strides,
                                               std::size_t block, elementwise_streaming streaming) {
  using detail::ew_prefix;
  const std::size_t k = program_inputs.size(), n = code.size();
  const std::size_t r = out_extents.size();
  elementwise_plan p;

  // The program: operands, dtypes, which results are needed (dead instructions are dropped).
  nax::detail::small_vector<dtype, 8> types;
  types.resize(k + n);
  std::copy(program_inputs.begin(), program_inputs.end(), types.begin());
  for (std::size_t j = 0; j < n; ++j) {
    const elementwise_instruction& ins = code[j];
    if (ins.op >= elementwise_op_count)
      nax::detail::throw_shape_error(ew_prefix, "unknown op ", ins.op, " (there are ",
                                     elementwise_op_count, ")");
    const std::size_t arity = elementwise_arity(ins.op);
    std::array<dtype, 3> arg_types{};
    for (std::size_t a = 0; a < arity; ++a) {
      const elementwise_operand& x = ins.args[a];
      if (x.from == elementwise_operand::source::input && x.index >= k)
        nax::detail::throw_shape_error(ew_prefix, "instruction ", j, " (", elementwise_name(ins.op),
                                       ") reads input ", x.index, ", the program has ", k,
                                       " inputs");
      if (x.from == elementwise_operand::source::result && x.index >= j)
        nax::detail::throw_shape_error(ew_prefix, "instruction ", j, " (", elementwise_name(ins.op),
                                       ") reads the result of instruction ", x.index,
                                       ", not of an earlier one");
      arg_types[a] = types[x.from == elementwise_operand::source::input ? x.index : k + x.index];
    }
    types[k + j] = elementwise_result_dtype(ins.op, std::span(arg_types.data(), arity));
  }
  if (program_outputs.empty())
    nax::detail::throw_shape_error(ew_prefix, "the program has no outputs");
  for (std::size_t o = 0; o < program_outputs.size(); ++o)
    if (program_outputs[o] >= n)
      nax::detail::throw_shape_error(ew_prefix, "output ", o, " is instruction ",
                                     program_outputs[o], ", the program has ", n, " instructions");
  if (input_strides.size() != k * r)
    nax::detail::throw_shape_error(ew_prefix, input_strides.size(), " strides for ", k,
                                   " inputs over ", r, " axes (expected ", k * r, ")");

  auto entry = [k](const elementwise_operand& x) -> std::uint32_t {
    return static_cast<std::uint32_t>(x.from == elementwise_operand::source::input ? x.index
                                                                                   : k + x.index);
  };
  nax::detail::small_vector<std::uint32_t, 4> output_of;  // first output listing it
  output_of.resize(n);
  std::fill(output_of.begin(), output_of.end(), detail::ew_no_output);
  for (std::size_t o = 0; o < program_outputs.size(); ++o) {
    const std::uint32_t j = program_outputs[o];
    p.output_dtypes.push_back(types[k + j]);
    if (output_of[j] == detail::ew_no_output)
      output_of[j] = static_cast<std::uint32_t>(o);
    else
      p.copies.push_back({output_of[j], static_cast<std::uint32_t>(o),
                          static_cast<std::uint8_t>(size_of(types[k + j]))});
  }
  nax::detail::small_vector<bool, 8> needed;
  nax::detail::small_vector<std::size_t, 8> last_use;
  needed.resize(k + n);
  last_use.resize(k + n);
  for (std::uint32_t j : program_outputs) needed[k + j] = true;
  for (std::size_t j = n; j-- > 0;) {
    if (!needed[k + j]) continue;
    const elementwise_instruction& ins = code[j];
    for (std::size_t a = 0; a < elementwise_arity(ins.op); ++a) {
      const std::uint32_t e = entry(ins.args[a]);
      if (!needed[e]) last_use[e] = j;
      needed[e] = true;
    }
  }

  // Streamed outputs (see elementwise_plan::stream): the distinct outputs' bytes against this
  // core's share of the last-level cache.
  {
    std::size_t elements = 1, bytes = 0;
    for (std::size_t e : out_extents) elements *= e;
    for (std::size_t j = 0; j < n; ++j)
      if (output_of[j] != detail::ew_no_output) bytes += elements * size_of(types[k + j]);
    const cache_sizes& caches = machine_caches();
    p.stream =
        streaming == elementwise_streaming::always ||
        (streaming == elementwise_streaming::automatic && bytes >= caches.l3 / caches.l3_sharing);
  }
  // Whether result j lives only in the output (else in a block buffer, streamed or not).
  auto in_output = [&](std::size_t j) { return output_of[j] != detail::ew_no_output && !p.stream; };

  // Block buffers: a result that is not an output takes a buffer from its instruction to its
  // last use; an instruction may write over an operand's buffer that it is the last to read,
  // unless the operand's elements are narrower than the result's (a bool mask read by where on
  // doubles): writing element i would then overwrite elements after i not yet read.
  nax::detail::small_vector<std::uint32_t, 4> slot_of;
  slot_of.resize(n);
  std::size_t slots = 0;
  {
    nax::detail::small_vector<std::uint32_t, 4> free_slots, after;
    for (std::size_t j = 0; j < n; ++j) {
      if (!needed[k + j]) continue;
      const elementwise_instruction& ins = code[j];
      after.clear();
      for (std::size_t a = 0; a < elementwise_arity(ins.op); ++a) {
        const std::uint32_t e = entry(ins.args[a]);
        if (e < k || last_use[e] != j || output_of[e - k] != detail::ew_no_output) continue;
        // (So outputs' buffers, when streamed, are never reused.)
        const std::uint32_t slot = slot_of[e - k];
        if (std::find(free_slots.begin(), free_slots.end(), slot) != free_slots.end() ||
            std::find(after.begin(), after.end(), slot) != after.end())
          continue;
        (size_of(types[e]) < size_of(types[k + j]) ? after : free_slots).push_back(slot);
      }
      if (!in_output(j)) {
        if (free_slots.empty()) {
          slot_of[j] = static_cast<std::uint32_t>(slots++);
        } else {
          slot_of[j] = free_slots.back();
          free_slots.resize(free_slots.size() - 1);
        }
      }
      for (std::uint32_t slot : after) free_slots.push_back(slot);
    }
  }

  // Geometry: the output's axes coalesced over the inputs' strides (extent-1 axes dropped,
  // neighbours every input steps through as one merged).
  {
    strided_layout<6, 3> g(out_extents, k, input_strides);
    g.coalesce();
    p.size = g.size();
    p.rank = g.rank();
    p.extents.assign(g.extents().begin(), g.extents().end());
    p.inner = p.extents.back();
    p.strides.resize(k * p.rank);
    for (std::size_t i = 0; i < k; ++i)
      std::copy(g.strides(i).begin(), g.strides(i).end(), p.strides.begin() + i * p.rank);
  }

  // Inputs: dense (in place over the flat index), all-zero strides (one value), or other.
  nax::detail::small_vector<bool, 4> used, dense, scalar;
  used.resize(k);
  dense.resize(k);
  scalar.resize(k);
  std::fill(dense.begin(), dense.end(), true);
  std::fill(scalar.begin(), scalar.end(), true);
  for (std::size_t j = 0; j < n; ++j)
    if (needed[k + j])
      for (std::size_t a = 0; a < elementwise_arity(code[j].op); ++a)
        if (code[j].args[a].from == elementwise_operand::source::input)
          used[code[j].args[a].index] = true;
  for (std::size_t i = 0; i < k; ++i) {
    std::ptrdiff_t step = 1;
    for (std::size_t g = p.rank; g-- > 0;) {
      const std::ptrdiff_t s = p.strides[i * p.rank + g];
      dense[i] = dense[i] && s == step;
      scalar[i] = scalar[i] && s == 0;
      step *= static_cast<std::ptrdiff_t>(p.extents[g]);
    }
  }

  // Block size: every block buffer (8 bytes per element, whatever its dtype) on the stack, and
  // by default within half of L1, in [256, 1024] elements; 4096 if there are none.
  const std::size_t table = detail::ew_align(sizeof(void*) * (k + n));
  auto block_for = [&](std::size_t gathers, std::size_t gather_bytes) {
    const std::size_t per_element = 8 * slots + gather_bytes;
    const std::size_t fixed = table + (64 + detail::ew_skew) * (slots + gathers);
    const std::size_t cap = fixed >= detail::ew_scratch_bytes ? 0
                            : per_element == 0 ? std::numeric_limits<std::size_t>::max()
                                               : (detail::ew_scratch_bytes - fixed) / per_element;
    if (cap == 0)
      nax::detail::throw_shape_error(ew_prefix, "the program needs ", slots, " block buffers and ",
                                     gathers, " gathered inputs, too many for ",
                                     detail::ew_scratch_bytes, " bytes of scratch");
    if (block != 0) return std::min(block, cap);
    const std::size_t b =
        per_element == 0
            ? 4096
            : std::clamp<std::size_t>(machine_caches().l1d / 2 / per_element / 64 * 64, 256, 1024);
    return cap >= b ? b : cap >= 16 ? cap / 16 * 16 : cap;
  };
  // A first estimate, counting as gathered the inputs gathered if blocks run across rows.
  {
    std::size_t gathers = 0, gather_bytes = 0;
    for (std::size_t i = 0; i < k; ++i)
      if (used[i] && !dense[i] && !scalar[i]) ++gathers, gather_bytes += size_of(program_inputs[i]);
    p.block = block_for(gathers, gather_bytes);
  }

  // Blocks stay within a row when rows are long enough (a quarter block): an input with unit or
  // zero stride along the row is then read in place or splatted. Shorter rows are run across,
  // and inputs that are not dense are gathered.
  p.row_blocks = p.rank > 1 && p.inner >= p.block / 4;  // rank 1: no divisions
  p.inputs.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    detail::ew_input& in = p.inputs[i];
    in.size = static_cast<std::uint8_t>(size_of(program_inputs[i]));
    in.inner_step = p.strides[i * p.rank + p.rank - 1];
    if (!used[i])
      in.access = detail::ew_access::unused;
    else if (p.row_blocks)
      in.access = in.inner_step == 1   ? detail::ew_access::in_place
                  : in.inner_step == 0 ? detail::ew_access::splat
                                       : detail::ew_access::gather;
    else
      in.access = dense[i]    ? detail::ew_access::in_place
                  : scalar[i] ? detail::ew_access::splat
                              : detail::ew_access::gather;
  }
  // Only binary ops on values have bodies that read one operand splatted (see ew_resolve); any
  // other reader of a splatted input has it filled into a block buffer instead.
  auto splat_mask = [&](const elementwise_instruction& ins) {
    unsigned mask = 0;
    for (std::size_t a = 0; a < elementwise_arity(ins.op); ++a)
      if (ins.args[a].from == elementwise_operand::source::input &&
          p.inputs[ins.args[a].index].access == detail::ew_access::splat)
        mask |= 1u << a;
    return mask;
  };
  for (std::size_t j = 0; j < n; ++j) {
    const elementwise_instruction& ins = code[j];
    if (!needed[k + j]) continue;
    for (unsigned mask; (mask = splat_mask(ins)) != 0 && !detail::ew_takes_splat(ins.op, mask);) {
      for (std::size_t a = elementwise_arity(ins.op); a-- > 0;)
        if (mask >> a & 1u) {
          p.inputs[ins.args[a].index].access = detail::ew_access::gather;
          break;
        }
    }
  }
  {
    std::size_t gathers = 0, gather_bytes = 0;
    for (const detail::ew_input& in : p.inputs)
      if (in.access == detail::ew_access::gather) ++gathers, gather_bytes += in.size;
    p.block = std::min(p.block, block_for(gathers, gather_bytes));
  }
  p.segments = (p.inner + p.block - 1) / p.block;
  p.blocks = p.size == 0    ? 0
             : p.row_blocks ? (p.size / p.inner) * p.segments
                            : (p.size + p.block - 1) / p.block;
  std::size_t offset = table;
  for (detail::ew_input& in : p.inputs)
    if (in.access == detail::ew_access::gather) {
      in.buffer = static_cast<std::uint32_t>(offset);
      offset += detail::ew_align(p.block * in.size) + detail::ew_skew;
    }
  const std::size_t slot_base = offset;

  // Steps: each needed instruction's body, resolved for its dtype and splatted operands.
  for (std::size_t j = 0; j < n; ++j) {
    if (!needed[k + j]) continue;
    const elementwise_instruction& ins = code[j];
    detail::ew_step s;
    s.value = static_cast<std::uint32_t>(k + j);
    s.args.fill(s.value);  // operands past the arity: a valid entry, never read
    for (std::size_t a = 0; a < elementwise_arity(ins.op); ++a) s.args[a] = entry(ins.args[a]);
    const dtype value_type = types[s.args[ins.op == elementwise_index<ops::where> ? 1 : 0]];
    s.fn = detail::ew_resolve(ins.op, value_type, splat_mask(ins));
    s.size = static_cast<std::uint8_t>(size_of(types[k + j]));
    s.output = output_of[j];
    s.buffer = static_cast<std::uint32_t>(
        slot_base + slot_of[j] * (detail::ew_align(p.block * 8) + detail::ew_skew));
    p.steps.push_back(s);
  }
  p.values = k + n;

  // Parallel chunks of at least nax::detail::parallel_grain_elements elements for a one-instruction
  // program, fewer for longer ones (more work per element), never under 4096.
  const std::size_t per_block =
      std::max<std::size_t>(1, p.row_blocks ? std::min(p.block, p.inner) : p.block);
  const std::size_t grain_elements = std::max<std::size_t>(
      4096, nax::detail::parallel_grain_elements / std::max<std::size_t>(1, p.steps.size()));
  p.grain = std::max<std::size_t>(1, (grain_elements + per_block - 1) / per_block);
  return p;
}

}  // namespace detail

/// Plans `program` for an output of `out_extents` (row-major; every output of the program has
/// this shape, dense). `input_strides` holds, for each input i, its strides in elements over
/// the output's axes at [i * rank, (i + 1) * rank) (0 where it is broadcast; see
/// broadcast_strides). `block`: elements per block, 0 for a default that keeps every block
/// buffer in L1. `streaming`: whether outputs are written around the caches (automatic: when
/// larger than this core's share of the last-level cache). nax::shape_error for a malformed
/// program, an op given dtypes it does not take, or strides of the wrong count.
inline elementwise_plan plan_elementwise(
    const elementwise_program& program, std::span<const std::size_t> out_extents,
    std::span<const std::ptrdiff_t> input_strides, std::size_t block = 0,
    elementwise_streaming streaming = elementwise_streaming::automatic) {
  return detail::plan_elementwise_spans(program.inputs, program.instructions, program.outputs,
                                        out_extents, input_strides, block, streaming);
}

/// Plans the one-instruction program op(input 0, ..., input arity - 1) -> output 0.
inline elementwise_plan plan_elementwise_op(std::size_t op, std::span<const dtype> input_types,
                                            std::span<const std::size_t> out_extents,
                                            std::span<const std::ptrdiff_t> input_strides,
                                            std::size_t block = 0) {
  (void)elementwise_result_dtype(op, input_types);  // the op, the operand count, the dtypes
  elementwise_instruction ins;
  ins.op = static_cast<std::uint8_t>(op);
  for (std::size_t a = 0; a < input_types.size(); ++a)
    ins.args[a] = elementwise_operand::input(static_cast<std::uint32_t>(a));
  const std::uint32_t output = 0;
  return detail::plan_elementwise_spans(input_types, std::span(&ins, 1), std::span(&output, 1),
                                        out_extents, input_strides, block,
                                        elementwise_streaming::automatic);
}

// --- running ----------------------------------------------------------------------------------

/// Runs plan p: inputs[i] points at input i's first element (laid out as the plan's strides
/// say), outputs[o] at output o's dense row-major buffer of output_dtypes[o]. Blocks are split
/// over nax's thread pool when there are enough; a small output runs on the calling thread with
/// no synchronization. Never allocates. Outputs must not overlap inputs, except that the output
/// of a one-instruction program may be the very buffer of a dense input of its dtype.
inline void run_elementwise(const elementwise_plan& p, const void* const* inputs,
                            void* const* outputs) {
  if (p.blocks < 2 * p.grain) {
    if (p.blocks != 0) detail::ew_run_blocks(p, inputs, outputs, 0, p.blocks);
    return;
  }
  parallel_for(0, p.blocks, p.grain, [&](std::size_t lo, std::size_t hi) {
    detail::ew_run_blocks(p, inputs, outputs, lo, hi);
  });
}

}  // namespace nax::kernels
