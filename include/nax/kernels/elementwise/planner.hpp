#pragma once
// Planning an elementwise program (program.hpp) for one output shape and input layout, in named
// phases: the program's value types and liveness; whether outputs stream; block buffers for the
// intermediate results; the loop geometry (the output's axes coalesced over the inputs'
// strides); how each input is read per block and the block size; the scratch layout; the body
// of each instruction; the parallel grain. Temporaries are small_vectors: planning a graph step
// (one op, few axes) allocates nothing.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include <nax/core/dtype.hpp>
#include <nax/core/isa.hpp>
#include <nax/core/row_major.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>
#include <nax/core/strided_layout.hpp>
#include <nax/exec/cache_info.hpp>
#include <nax/exec/tuning.hpp>
#include <nax/kernels/elementwise/bodies.hpp>
#include <nax/kernels/elementwise/plan.hpp>
#include <nax/kernels/elementwise/program.hpp>
#include <nax/ops/dtype_rules.hpp>
#include <nax/ops/list.hpp>

namespace nax::NAX_ISA::kernels {
namespace detail {

inline constexpr std::string_view ew_prefix = "nax::kernels::elementwise: ";

/// nax::shape_error unless `op` names an op of the list (a program may come from outside).
inline void ew_check_op(ops::id op) {
  if (!ops::is_valid(static_cast<std::size_t>(op)))
    nax::detail::throw_shape_error(ew_prefix, "unknown op ", static_cast<std::size_t>(op),
                                   " (there are ", ops::count, ")");
}

/// What the planner knows of a program before any geometry. Values are numbered as the block
/// pointer table holds them: inputs 0..k-1, then instruction j's result k + j.
struct ew_program_facts {
  std::size_t k = 0, n = 0;                   // inputs, instructions
  nax::detail::small_vector<dtype, 8> types;  // per value
  nax::detail::small_vector<std::uint32_t, 4>
      output_of;                                       // per instruction: first output listing it
  nax::detail::small_vector<bool, 8> needed;           // per value: an output depends on it
  nax::detail::small_vector<std::size_t, 8> last_use;  // per value: the last reader's index

  std::uint32_t entry(const elementwise_operand& x) const {
    return static_cast<std::uint32_t>(x.from == elementwise_operand::source::input ? x.index
                                                                                   : k + x.index);
  }
  bool is_output(std::size_t j) const { return output_of[j] != ew_no_output; }
};

/// Phase 1: every value's dtype, checking each instruction's op, operands and dtypes.
inline void ew_value_types(std::span<const dtype> program_inputs,
                           std::span<const elementwise_instruction> code, ew_program_facts& f) {
  f.k = program_inputs.size();
  f.n = code.size();
  f.types.resize(f.k + f.n);
  std::copy(program_inputs.begin(), program_inputs.end(), f.types.begin());
  for (std::size_t j = 0; j < f.n; ++j) {
    const elementwise_instruction& ins = code[j];
    ew_check_op(ins.op);
    const std::size_t arity = ops::arity(ins.op);
    std::array<dtype, 3> arg_types{};
    for (std::size_t a = 0; a < arity; ++a) {
      const elementwise_operand& x = ins.args[a];
      if (x.from == elementwise_operand::source::input && x.index >= f.k)
        nax::detail::throw_shape_error(ew_prefix, "instruction ", j, " (", ops::name(ins.op),
                                       ") reads input ", x.index, ", the program has ", f.k,
                                       " inputs");
      if (x.from == elementwise_operand::source::result && x.index >= j)
        nax::detail::throw_shape_error(ew_prefix, "instruction ", j, " (", ops::name(ins.op),
                                       ") reads the result of instruction ", x.index,
                                       ", not of an earlier one");
      arg_types[a] = f.types[f.entry(x)];
    }
    f.types[f.k + j] =
        ops::result_dtype(ins.op, std::span<const dtype>(arg_types.data(), arity), ew_prefix);
  }
}

/// Phase 2: the outputs: each one's dtype, the first listing of each instruction, and a copy
/// for each later listing.
inline void ew_outputs(std::span<const std::uint32_t> program_outputs, ew_program_facts& f,
                       elementwise_plan& p) {
  if (program_outputs.empty())
    nax::detail::throw_shape_error(ew_prefix, "the program has no outputs");
  for (std::size_t o = 0; o < program_outputs.size(); ++o)
    if (program_outputs[o] >= f.n)
      nax::detail::throw_shape_error(ew_prefix, "output ", o, " is instruction ",
                                     program_outputs[o], ", the program has ", f.n,
                                     " instructions");
  f.output_of.resize(f.n);
  std::fill(f.output_of.begin(), f.output_of.end(), ew_no_output);
  for (std::size_t o = 0; o < program_outputs.size(); ++o) {
    const std::uint32_t j = program_outputs[o];
    p.output_dtypes.push_back(f.types[f.k + j]);
    if (!f.is_output(j))
      f.output_of[j] = static_cast<std::uint32_t>(o);
    else
      p.copies.push_back({f.output_of[j], static_cast<std::uint32_t>(o),
                          static_cast<std::uint8_t>(size_of(f.types[f.k + j]))});
  }
}

/// Phase 3: which values the outputs need (dead instructions are dropped) and the last
/// instruction that reads each.
inline void ew_liveness(std::span<const elementwise_instruction> code,
                        std::span<const std::uint32_t> program_outputs, ew_program_facts& f) {
  f.needed.resize(f.k + f.n);
  f.last_use.resize(f.k + f.n);
  for (std::uint32_t j : program_outputs) f.needed[f.k + j] = true;
  for (std::size_t j = f.n; j-- > 0;) {
    if (!f.needed[f.k + j]) continue;
    const elementwise_instruction& ins = code[j];
    for (std::size_t a = 0; a < ops::arity(ins.op); ++a) {
      const std::uint32_t e = f.entry(ins.args[a]);
      if (!f.needed[e]) f.last_use[e] = j;
      f.needed[e] = true;
    }
  }
}

/// Phase 4: whether the outputs stream (elementwise_plan::stream): their distinct bytes against
/// this core's share of the last-level cache.
inline bool ew_streams(const ew_program_facts& f, std::span<const std::size_t> out_extents,
                       elementwise_streaming streaming) {
  const std::size_t elements = nax::core_detail::element_count(out_extents);
  std::size_t bytes = 0;
  for (std::size_t j = 0; j < f.n; ++j)
    if (f.is_output(j)) bytes += elements * size_of(f.types[f.k + j]);
  const cache_sizes& caches = machine_caches();
  return streaming == elementwise_streaming::always ||
         (streaming == elementwise_streaming::automatic && bytes >= caches.l3 / caches.l3_sharing);
}

/// Block buffers: slot_of[j] is instruction j's, for the results that live in one.
struct ew_slots {
  nax::detail::small_vector<std::uint32_t, 4> slot_of;
  std::size_t count = 0;
};

/// Phase 5: block buffers. A result that is not written in place into its output takes a buffer
/// from its instruction to its last use; an instruction may write over an operand's buffer that
/// it is the last to read, unless the operand's elements are narrower than the result's (a bool
/// mask read by where on doubles): writing element i would then overwrite elements after i not
/// yet read. Outputs' buffers (when streamed) are never reused.
inline ew_slots ew_block_buffers(std::span<const elementwise_instruction> code,
                                 const ew_program_facts& f, bool stream) {
  ew_slots s;
  s.slot_of.resize(f.n);
  nax::detail::small_vector<std::uint32_t, 4> free_slots, after;
  auto is_free = [&](std::uint32_t slot) {
    return std::find(free_slots.begin(), free_slots.end(), slot) != free_slots.end() ||
           std::find(after.begin(), after.end(), slot) != after.end();
  };
  for (std::size_t j = 0; j < f.n; ++j) {
    if (!f.needed[f.k + j]) continue;
    const elementwise_instruction& ins = code[j];
    after.clear();
    for (std::size_t a = 0; a < ops::arity(ins.op); ++a) {
      const std::uint32_t e = f.entry(ins.args[a]);
      if (e < f.k || f.last_use[e] != j || f.is_output(e - f.k)) continue;
      const std::uint32_t slot = s.slot_of[e - f.k];
      if (is_free(slot)) continue;
      (size_of(f.types[e]) < size_of(f.types[f.k + j]) ? after : free_slots).push_back(slot);
    }
    const bool in_output = f.is_output(j) && !stream;
    if (!in_output) {
      if (free_slots.empty()) {
        s.slot_of[j] = static_cast<std::uint32_t>(s.count++);
      } else {
        s.slot_of[j] = free_slots.back();
        free_slots.resize(free_slots.size() - 1);
      }
    }
    for (std::uint32_t slot : after) free_slots.push_back(slot);
  }
  return s;
}

/// Phase 6: the loop geometry: the output's axes coalesced over the inputs' strides (extent-1
/// axes dropped, neighbours every input steps through as one merged).
inline void ew_geometry(std::span<const std::size_t> out_extents, std::size_t k,
                        std::span<const std::ptrdiff_t> input_strides, elementwise_plan& p) {
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

/// How the inputs are laid out over the whole geometry: read at all, dense (in place over the
/// flat index), all-zero strides (one value).
struct ew_input_layouts {
  nax::detail::small_vector<bool, 4> used, dense, scalar;
};

inline ew_input_layouts ew_layouts(std::span<const elementwise_instruction> code,
                                   const ew_program_facts& f, const elementwise_plan& p) {
  ew_input_layouts l;
  l.used.resize(f.k);
  l.dense.resize(f.k);
  l.scalar.resize(f.k);
  for (std::size_t j = 0; j < f.n; ++j)
    if (f.needed[f.k + j])
      for (std::size_t a = 0; a < ops::arity(code[j].op); ++a)
        if (code[j].args[a].from == elementwise_operand::source::input)
          l.used[code[j].args[a].index] = true;
  for (std::size_t i = 0; i < f.k; ++i) {
    bool dense = true, scalar = true;
    std::ptrdiff_t step = 1;
    for (std::size_t g = p.rank; g-- > 0;) {
      const std::ptrdiff_t s = p.strides[i * p.rank + g];
      dense = dense && s == step;
      scalar = scalar && s == 0;
      step *= static_cast<std::ptrdiff_t>(p.extents[g]);
    }
    l.dense[i] = dense;
    l.scalar[i] = scalar;
  }
  return l;
}

/// The block size: every block buffer (8 bytes per element, whatever its dtype) and gather
/// buffer on the stack, after the pointer table (`table` bytes), and by default within half of
/// L1, in [256, 1024] elements; 4096 if there are none. `requested`: the caller's, 0 for the
/// default.
inline std::size_t ew_block_for(std::size_t table, std::size_t slots, std::size_t gathers,
                                std::size_t gather_bytes, std::size_t requested) {
  const std::size_t per_element = 8 * slots + gather_bytes;
  const std::size_t fixed = table + (64 + ew_skew) * (slots + gathers);
  const std::size_t cap = fixed >= ew_scratch_bytes ? 0
                          : per_element == 0        ? std::numeric_limits<std::size_t>::max()
                                                    : (ew_scratch_bytes - fixed) / per_element;
  if (cap == 0)
    nax::detail::throw_shape_error(ew_prefix, "the program needs ", slots, " block buffers and ",
                                   gathers, " gathered inputs, too many for ", ew_scratch_bytes,
                                   " bytes of scratch");
  if (requested != 0) return std::min(requested, cap);
  const std::size_t b =
      per_element == 0
          ? 4096
          : std::clamp<std::size_t>(machine_caches().l1d / 2 / per_element / 64 * 64, 256, 1024);
  return cap >= b ? b : cap >= 16 ? cap / 16 * 16 : cap;
}

/// The operands of `ins` that are inputs read splatted, as a bit mask (bit a: operand a).
inline unsigned ew_splat_mask(const elementwise_instruction& ins, const elementwise_plan& p) {
  unsigned mask = 0;
  for (std::size_t a = 0; a < ops::arity(ins.op); ++a)
    if (ins.args[a].from == elementwise_operand::source::input &&
        p.inputs[ins.args[a].index].access == ew_access::splat)
      mask |= 1u << a;
  return mask;
}

/// Phase 7: how each input is read per block, and the block size. Blocks stay within a row
/// when rows are long enough (a quarter block): an input with unit or zero stride along the row
/// is then read in place or splatted. Shorter rows are run across, and inputs that are not dense
/// are gathered. Only some bodies read a splatted operand (ew_takes_splat); any other reader of
/// a splatted input has it gathered instead.
inline void ew_input_access(std::span<const dtype> program_inputs,
                            std::span<const elementwise_instruction> code,
                            const ew_program_facts& f, std::size_t slots, std::size_t requested,
                            elementwise_plan& p) {
  const ew_input_layouts l = ew_layouts(code, f, p);
  const std::size_t table = ew_align(sizeof(void*) * (f.k + f.n));
  {  // A first estimate, counting as gathered the inputs gathered if blocks run across rows.
    std::size_t gathers = 0, gather_bytes = 0;
    for (std::size_t i = 0; i < f.k; ++i)
      if (l.used[i] && !l.dense[i] && !l.scalar[i])
        ++gathers, gather_bytes += size_of(program_inputs[i]);
    p.block = ew_block_for(table, slots, gathers, gather_bytes, requested);
  }
  p.row_blocks = p.rank > 1 && p.inner >= p.block / 4;  // rank 1: no divisions
  p.inputs.resize(f.k);
  for (std::size_t i = 0; i < f.k; ++i) {
    ew_input& in = p.inputs[i];
    in.size = static_cast<std::uint8_t>(size_of(program_inputs[i]));
    in.inner_step = p.strides[i * p.rank + p.rank - 1];
    if (!l.used[i])
      in.access = ew_access::unused;
    else if (p.row_blocks)
      in.access = in.inner_step == 1   ? ew_access::in_place
                  : in.inner_step == 0 ? ew_access::splat
                                       : ew_access::gather;
    else
      in.access = l.dense[i]    ? ew_access::in_place
                  : l.scalar[i] ? ew_access::splat
                                : ew_access::gather;
  }
  for (std::size_t j = 0; j < f.n; ++j) {
    const elementwise_instruction& ins = code[j];
    if (!f.needed[f.k + j]) continue;
    for (unsigned mask; (mask = ew_splat_mask(ins, p)) != 0 && !ew_takes_splat(ins.op, mask);)
      for (std::size_t a = ops::arity(ins.op); a-- > 0;)
        if (mask >> a & 1u) {
          p.inputs[ins.args[a].index].access = ew_access::gather;
          break;
        }
  }
  std::size_t gathers = 0, gather_bytes = 0;
  for (const ew_input& in : p.inputs)
    if (in.access == ew_access::gather) ++gathers, gather_bytes += in.size;
  p.block = std::min(p.block, ew_block_for(table, slots, gathers, gather_bytes, requested));
}

/// Phase 8: blocks per run and the scratch layout: the pointer table, then a buffer per
/// gathered input; returns where the block buffers start.
inline std::size_t ew_scratch_layout(const ew_program_facts& f, elementwise_plan& p) {
  p.segments = (p.inner + p.block - 1) / p.block;
  p.blocks = p.size == 0    ? 0
             : p.row_blocks ? (p.size / p.inner) * p.segments
                            : (p.size + p.block - 1) / p.block;
  std::size_t offset = ew_align(sizeof(void*) * (f.k + f.n));
  for (ew_input& in : p.inputs)
    if (in.access == ew_access::gather) {
      in.buffer = static_cast<std::uint32_t>(offset);
      offset += ew_align(p.block * in.size) + ew_skew;
    }
  return offset;
}

/// Phase 9: each needed instruction's step: its body, resolved for its dtype and splatted
/// operands, and where its result goes.
inline void ew_steps(std::span<const elementwise_instruction> code, const ew_program_facts& f,
                     const ew_slots& slots, std::size_t slot_base, elementwise_plan& p) {
  for (std::size_t j = 0; j < f.n; ++j) {
    if (!f.needed[f.k + j]) continue;
    const elementwise_instruction& ins = code[j];
    ew_step s;
    s.value = static_cast<std::uint32_t>(f.k + j);
    s.args.fill(s.value);  // operands past the arity: a valid entry, never read
    for (std::size_t a = 0; a < ops::arity(ins.op); ++a) s.args[a] = f.entry(ins.args[a]);
    // The value operands' type: where's follow its mask.
    const bool selects = ops::info_of(ins.op).operands == ops::operand_class::select;
    s.fn = ew_resolve(ins.op, f.types[s.args[selects ? 1 : 0]], ew_splat_mask(ins, p));
    s.size = static_cast<std::uint8_t>(size_of(f.types[f.k + j]));
    s.output = f.output_of[j];
    s.buffer = static_cast<std::uint32_t>(slot_base +
                                          slots.slot_of[j] * (ew_align(p.block * 8) + ew_skew));
    p.steps.push_back(s);
  }
  p.values = f.k + f.n;
}

/// Phase 10: parallel chunks of at least parallel_grain_elements elements for a one-instruction
/// program, fewer for longer ones (more work per element), never under 4096.
inline void ew_parallel_grain(elementwise_plan& p) {
  const std::size_t per_block =
      std::max<std::size_t>(1, p.row_blocks ? std::min(p.block, p.inner) : p.block);
  const std::size_t grain_elements = std::max<std::size_t>(
      4096, nax::detail::parallel_grain_elements / std::max<std::size_t>(1, p.steps.size()));
  p.grain = std::max<std::size_t>(1, (grain_elements + per_block - 1) / per_block);
}

// plan_elementwise over a program given as spans (so that a one-op program need not be built
// in vectors).
inline elementwise_plan plan_elementwise_spans(std::span<const dtype> program_inputs,
                                               std::span<const elementwise_instruction> code,
                                               std::span<const std::uint32_t> program_outputs,
                                               std::span<const std::size_t> out_extents,
                                               std::span<const std::ptrdiff_t> input_strides,
                                               std::size_t block, elementwise_streaming streaming) {
  elementwise_plan p;
  ew_program_facts f;
  ew_value_types(program_inputs, code, f);
  ew_outputs(program_outputs, f, p);
  const std::size_t r = out_extents.size();
  if (input_strides.size() != f.k * r)
    nax::detail::throw_shape_error(ew_prefix, input_strides.size(), " strides for ", f.k,
                                   " inputs over ", r, " axes (expected ", f.k * r, ")");
  ew_liveness(code, program_outputs, f);
  p.stream = ew_streams(f, out_extents, streaming);
  const ew_slots slots = ew_block_buffers(code, f, p.stream);
  ew_geometry(out_extents, f.k, input_strides, p);
  ew_input_access(program_inputs, code, f, slots.count, block, p);
  const std::size_t slot_base = ew_scratch_layout(f, p);
  ew_steps(code, f, slots, slot_base, p);
  ew_parallel_grain(p);
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
inline elementwise_plan plan_elementwise_op(ops::id op, std::span<const dtype> input_types,
                                            std::span<const std::size_t> out_extents,
                                            std::span<const std::ptrdiff_t> input_strides,
                                            std::size_t block = 0) {
  detail::ew_check_op(op);
  (void)ops::result_dtype(op, input_types, detail::ew_prefix);  // the operand count, the dtypes
  elementwise_instruction ins;
  ins.op = op;
  for (std::size_t a = 0; a < input_types.size(); ++a)
    ins.args[a] = elementwise_operand::input(static_cast<std::uint32_t>(a));
  const std::uint32_t output = 0;
  return detail::plan_elementwise_spans(input_types, std::span(&ins, 1), std::span(&output, 1),
                                        out_extents, input_strides, block,
                                        elementwise_streaming::automatic);
}

}  // namespace nax::kernels
