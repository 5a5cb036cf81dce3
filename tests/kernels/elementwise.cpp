#include <nax/kernels/elementwise.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace k = nax::kernels;
using nax::dtype;
using operand = k::elementwise_operand;

namespace {

// --- a plain reference: one element at a time, the ops' scalar bodies --------------------------

struct scalar {
  dtype t = dtype::f32;
  double f = 0;        // f32, f64
  std::int64_t i = 0;  // i32, i64, bool
};

template <class T>
scalar make(T v) {
  scalar s;
  s.t = nax::dtype_of<T>;
  if constexpr (std::is_floating_point_v<T>)
    s.f = v;
  else
    s.i = static_cast<std::int64_t>(v);
  return s;
}

template <class T>
T as(const scalar& s) {
  if constexpr (std::is_same_v<T, bool>)
    return s.i != 0;
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(s.f);
  else
    return static_cast<T>(s.i);
}

template <class Op>
constexpr bool is_logical =
    std::is_same_v<Op, nax::ops::logical_and> || std::is_same_v<Op, nax::ops::logical_or> ||
    std::is_same_v<Op, nax::ops::logical_not>;

template <class Op, class T>
constexpr bool ref_takes() {
  constexpr bool fl = std::is_floating_point_v<T>;
  constexpr bool num = fl || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
  if constexpr (is_logical<Op>)
    return std::is_same_v<T, bool>;
  else if constexpr (std::is_same_v<Op, nax::ops::where>)
    return num || std::is_same_v<T, bool>;
  else if constexpr (Op::floating_only)
    return fl;
  else
    return num;
}

template <class Op, class T>
scalar ref_apply_typed(const std::vector<scalar>& a) {
  if constexpr (!ref_takes<Op, T>()) {
    FAIL("reference: op not defined for this type");
    return {};
  } else if constexpr (std::is_same_v<Op, nax::ops::where>) {
    return make<T>(Op::apply(as<bool>(a[0]), as<T>(a[1]), as<T>(a[2])));
  } else if constexpr (Op::arity == 1) {
    return make<std::conditional_t<Op::yields_bool, bool, T>>(Op::apply(as<T>(a[0])));
  } else {
    return make<std::conditional_t<Op::yields_bool, bool, T>>(Op::apply(as<T>(a[0]), as<T>(a[1])));
  }
}

scalar ref_apply(nax::ops::id op, const std::vector<scalar>& a) {
  return nax::ops::with_op(op, [&](auto o) {
    using Op = decltype(o);
    const dtype t = a[std::is_same_v<Op, nax::ops::where> ? 1 : 0].t;
    switch (t) {
      case dtype::f32: return ref_apply_typed<Op, float>(a);
      case dtype::f64: return ref_apply_typed<Op, double>(a);
      case dtype::i32: return ref_apply_typed<Op, std::int32_t>(a);
      case dtype::i64: return ref_apply_typed<Op, std::int64_t>(a);
      case dtype::boolean: return ref_apply_typed<Op, bool>(a);
      default: FAIL("reference: bad dtype"); return scalar{};
    }
  });
}

// A tensor's raw storage.
struct buffer {
  dtype t = dtype::f32;
  std::vector<std::byte> bytes;
  buffer() = default;
  buffer(dtype type, std::size_t n) : t(type), bytes(n * nax::size_of(type) + 1) {}
  std::size_t size() const { return bytes.size() / nax::size_of(t); }
  void* data() { return bytes.data(); }
  scalar get(std::size_t i) const {
    auto read = [&]<class T>() {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      return v;
    };
    switch (t) {
      case dtype::f32: return make(read.operator()<float>());
      case dtype::f64: return make(read.operator()<double>());
      case dtype::i32: return make(read.operator()<std::int32_t>());
      case dtype::i64: return make(read.operator()<std::int64_t>());
      case dtype::boolean: {
        const auto b = read.operator()<std::uint8_t>();
        REQUIRE(b <= 1);  // bools are stored as 0 or 1
        return make(b != 0);
      }
      default: FAIL("bad dtype"); return scalar{};
    }
  }
  void set(std::size_t i, const scalar& s) {
    auto write = [&]<class T>(T v) { std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T)); };
    switch (t) {
      case dtype::f32: return write(as<float>(s));
      case dtype::f64: return write(as<double>(s));
      case dtype::i32: return write(as<std::int32_t>(s));
      case dtype::i64: return write(as<std::int64_t>(s));
      case dtype::boolean: return write(static_cast<std::uint8_t>(s.i != 0));
      default: FAIL("bad dtype");
    }
  }
};

std::mt19937_64& rng() {
  static std::mt19937_64 g(20240611);
  return g;
}

// Values of the kind `data` names, for dtype t.
enum class data { any, positive, nonzero, ties, mask };

buffer random_buffer(dtype t, std::size_t n, data kind = data::any) {
  buffer b(t, n);
  std::uniform_real_distribution<double> u(-4.0, 4.0), pos(0.05, 5.0), mag(0.5, 4.0);
  std::uniform_int_distribution<int> small(-3, 3), ints(-1000, 1000), digit(1, 9), coin(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    scalar s;
    s.t = t;
    const bool flt = t == dtype::f32 || t == dtype::f64;
    switch (kind) {
      case data::any: s.f = u(rng()), s.i = ints(rng()); break;
      case data::positive: s.f = pos(rng()), s.i = digit(rng()); break;
      case data::nonzero:
        s.f = mag(rng()) * (coin(rng()) ? 1 : -1), s.i = digit(rng()) * (coin(rng()) ? 1 : -1);
        break;
      case data::ties: s.f = 0.5 * small(rng()), s.i = small(rng()); break;
      case data::mask: s.i = coin(rng()); break;
    }
    if (t == dtype::boolean) s.i = coin(rng());
    if (flt) s.i = 0;
    b.set(i, s);
  }
  return b;
}

bool close(const scalar& got, const scalar& want, double rel) {
  if (got.t == dtype::f32 || got.t == dtype::f64) {
    if (std::isnan(want.f)) return std::isnan(got.f);
    if (rel == 0) return got.f == want.f;
    return std::abs(got.f - want.f) <= rel * std::max(1.0, std::abs(want.f));
  }
  return got.i == want.i;
}

// An input: its buffer and its strides over the output's axes.
struct arg {
  buffer data;
  std::vector<std::ptrdiff_t> strides;
};

// A dense input of `in_extents` broadcast into `out` (input axis a is output axis map[a]).
arg broadcast_arg(dtype t, const std::vector<std::size_t>& in_extents,
                  const std::vector<std::size_t>& map, const std::vector<std::size_t>& out,
                  data kind = data::any) {
  std::size_t n = 1;
  for (std::size_t e : in_extents) n *= e;
  return {random_buffer(t, n, kind), k::broadcast_strides(in_extents, map, out)};
}

arg dense_arg(dtype t, const std::vector<std::size_t>& out, data kind = data::any) {
  std::vector<std::size_t> map(out.size());
  for (std::size_t a = 0; a < out.size(); ++a) map[a] = a;
  return broadcast_arg(t, out, map, out, kind);
}

// Evaluates the program one element at a time.
std::vector<buffer> reference(const k::elementwise_program& p, const std::vector<std::size_t>& out,
                              const std::vector<arg>& args, std::span<const dtype> out_types) {
  std::size_t size = 1;
  for (std::size_t e : out) size *= e;
  std::vector<buffer> res;
  for (dtype t : out_types) res.emplace_back(t, size);
  std::vector<std::size_t> idx(out.size(), 0);
  for (std::size_t f = 0; f < size; ++f) {
    std::size_t rest = f;
    for (std::size_t a = out.size(); a-- > 0;) idx[a] = rest % out[a], rest /= out[a];
    std::vector<scalar> in(args.size()), val(p.instructions.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::ptrdiff_t off = 0;
      for (std::size_t a = 0; a < out.size(); ++a)
        off += static_cast<std::ptrdiff_t>(idx[a]) * args[i].strides[a];
      in[i] = args[i].data.get(static_cast<std::size_t>(off));
    }
    for (std::size_t j = 0; j < p.instructions.size(); ++j) {
      const auto& ins = p.instructions[j];
      std::vector<scalar> a(nax::ops::arity(ins.op));
      for (std::size_t x = 0; x < a.size(); ++x)
        a[x] = ins.args[x].from == operand::source::input ? in[ins.args[x].index]
                                                          : val[ins.args[x].index];
      val[j] = ref_apply(ins.op, a);
    }
    for (std::size_t o = 0; o < p.outputs.size(); ++o) res[o].set(f, val[p.outputs[o]]);
  }
  return res;
}

// Outputs are written `shift` bytes past a 64-byte boundary (streamed stores need alignment).
std::vector<buffer> run(const k::elementwise_plan& plan, std::vector<arg>& args, std::size_t size,
                        std::size_t shift = 0) {
  std::vector<buffer> outs;
  std::vector<std::vector<std::byte>> storage;
  std::vector<void*> out;
  for (dtype t : plan.output_dtypes) {
    outs.emplace_back(t, size);
    storage.emplace_back(outs.back().bytes.size() + 128);
    std::byte* const raw = storage.back().data();
    std::byte* const at = raw + (64 - reinterpret_cast<std::uintptr_t>(raw) % 64) % 64 + shift;
    // Poison, so an element the kernel fails to write shows.
    std::memset(at, 0x5a, outs.back().bytes.size());
    out.push_back(at);
  }
  std::vector<const void*> in;
  for (arg& a : args) in.push_back(a.data.data());
  k::run_elementwise(plan, in.data(), out.data());
  for (std::size_t o = 0; o < outs.size(); ++o)
    std::memcpy(outs[o].bytes.data(), out[o], outs[o].bytes.size());
  return outs;
}

// Plans and runs `p` and checks every output element against the reference; `rel` is the
// relative tolerance for floating-point results (0: exact).
void check(const k::elementwise_program& p, const std::vector<std::size_t>& out,
           std::vector<arg> args, std::size_t block = 0, double rel = 0,
           k::elementwise_streaming streaming = k::elementwise_streaming::automatic,
           std::size_t shift = 0) {
  std::vector<std::ptrdiff_t> strides;
  for (const arg& a : args) strides.insert(strides.end(), a.strides.begin(), a.strides.end());
  const k::elementwise_plan plan = k::plan_elementwise(p, out, strides, block, streaming);
  CHECK(plan.stream == (streaming == k::elementwise_streaming::always));
  std::size_t size = 1;
  for (std::size_t e : out) size *= e;
  const std::vector<buffer> got = run(plan, args, size, shift);
  const std::vector<buffer> want = reference(p, out, args, plan.output_dtypes);
  for (std::size_t o = 0; o < got.size(); ++o) {
    std::size_t bad = 0;
    for (std::size_t f = 0; f < size; ++f) {
      const scalar g = got[o].get(f), w = want[o].get(f);
      if (!close(g, w, rel) && bad++ < 3)
        FAIL_CHECK("output ", o, " element ", f, ": got ", g.f, "/", g.i, ", want ", w.f, "/", w.i,
                   " (block ", plan.block, ", size ", size, ")");
    }
    CHECK(bad == 0);
  }
}

k::elementwise_program one_op(nax::ops::id op, const std::vector<dtype>& types) {
  k::elementwise_program p;
  p.inputs = types;
  std::vector<operand> args;
  for (std::size_t i = 0; i < types.size(); ++i)
    args.push_back(operand::input(static_cast<std::uint32_t>(i)));
  k::elementwise_instruction ins;
  ins.op = op;
  std::copy(args.begin(), args.end(), ins.args.begin());
  p.instructions.push_back(ins);
  p.outputs = {0};
  return p;
}

template <class Op>
constexpr nax::ops::id idx = Op::id;

// The data an op's operand a needs.
data operand_data(nax::ops::id op, std::size_t a) {
  return nax::ops::with_op(op, [&](auto o) {
    using Op = decltype(o);
    using namespace nax::ops;
    if constexpr (std::is_same_v<Op, nax::ops::log> || std::is_same_v<Op, nax::ops::sqrt> ||
                  std::is_same_v<Op, rsqrt>)
      return data::positive;
    else if constexpr (std::is_same_v<Op, nax::ops::pow>)
      return a == 0 ? data::positive : data::any;
    else if constexpr (std::is_same_v<Op, nax::ops::div>)
      return a == 1 ? data::nonzero : data::any;
    else if constexpr (std::is_same_v<Op, where>)
      return a == 0 ? data::mask : data::any;
    else if constexpr (Op::yields_bool || std::is_same_v<Op, nax::ops::min> ||
                       std::is_same_v<Op, nax::ops::max>)
      return data::ties;
    else
      return data::any;
  });
}

// Checks op over `value` operands of `out` (the same shape each) for every size.
void check_op(nax::ops::id op, dtype value) {
  const bool is_where = op == idx<nax::ops::where>;
  std::vector<dtype> types(nax::ops::arity(op), value);
  if (is_where) types[0] = dtype::boolean;
  const double rel = 0;  // every op's scalar body gives its vector body's bits
  for (std::size_t n : {1, 3, 7, 17, 63, 64, 65, 1000, 4099}) {
    CAPTURE(n);
    std::vector<arg> args;
    for (std::size_t a = 0; a < types.size(); ++a)
      args.push_back(dense_arg(types[a], {n}, operand_data(op, a)));
    check(one_op(op, types), {n}, args, 0, rel);
  }
}

}  // namespace

// --- every op, every dtype it takes -------------------------------------------------------------

TEST_CASE("every op on f32 and f64, sizes that hit tails and blocks") {
  for (std::size_t i = 0; i < nax::ops::count; ++i) {
    const auto op = static_cast<nax::ops::id>(i);
    if (op >= idx<nax::ops::logical_and> && op <= idx<nax::ops::logical_not>) continue;
    for (dtype t : {dtype::f32, dtype::f64}) {
      CAPTURE(nax::ops::name(op));
      CAPTURE(nax::name(t));
      check_op(op, t);
    }
  }
}

TEST_CASE("integer ops on i32 and i64") {
  using namespace nax::ops;
  for (nax::ops::id op :
       {idx<add>, idx<sub>, idx<mul>, idx<nax::ops::div>, idx<neg>, idx<nax::ops::abs>,
        idx<nax::ops::min>, idx<nax::ops::max>, idx<relu>, idx<equal>, idx<not_equal>, idx<less>,
        idx<less_equal>, idx<greater>, idx<greater_equal>, idx<where>}) {
    for (dtype t : {dtype::i32, dtype::i64}) {
      CAPTURE(nax::ops::name(op));
      CAPTURE(nax::name(t));
      check_op(op, t);
    }
  }
}

TEST_CASE("logical ops and where over bools") {
  using namespace nax::ops;
  for (nax::ops::id op : {idx<logical_and>, idx<logical_or>, idx<logical_not>, idx<where>}) {
    CAPTURE(nax::ops::name(op));
    check_op(op, dtype::boolean);
  }
}

TEST_CASE("a plan's output dtypes follow the ops' dtype rule") {
  using namespace nax::ops;
  auto out_type = [](nax::ops::id op, std::vector<dtype> types) {
    const std::vector<std::size_t> out{4};
    const std::vector<std::ptrdiff_t> s(types.size(), 1);
    const auto plan = k::plan_elementwise_op(op, types, out, s);
    REQUIRE(plan.output_dtypes.size() == 1);
    return plan.output_dtypes[0];
  };
  CHECK(out_type(idx<add>, {dtype::f32, dtype::f32}) == dtype::f32);
  CHECK(out_type(idx<less>, {dtype::f32, dtype::f32}) == dtype::boolean);
  CHECK(out_type(idx<equal>, {dtype::i64, dtype::i64}) == dtype::boolean);
  CHECK(out_type(idx<logical_or>, {dtype::boolean, dtype::boolean}) == dtype::boolean);
  CHECK(out_type(idx<where>, {dtype::boolean, dtype::i32, dtype::i32}) == dtype::i32);
}

// --- broadcasting and layouts -------------------------------------------------------------------

TEST_CASE("broadcasts in every position, block sizes that cross rows") {
  using namespace nax::ops;
  const auto add2 = one_op(idx<add>, {dtype::f32, dtype::f32});
  const auto sub2 = one_op(idx<sub>, {dtype::f64, dtype::f64});
  for (std::size_t block : {0, 1, 5, 16, 64}) {
    CAPTURE(block);
    for (std::size_t m : {1, 3, 17, 65}) {
      for (std::size_t n : {1, 7, 64, 1000}) {
        CAPTURE(m);
        CAPTURE(n);
        const std::vector<std::size_t> out{m, n};
        // [m, n] + [n] (trailing bias), [n] + [m, n], [m, n] - [m, 1], [m, 1] - [1, n] (both),
        // [m, n] + scalar, scalar - [m, n].
        check(add2, out, {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {n}, {1}, out)},
              block);
        check(add2, out, {broadcast_arg(dtype::f32, {n}, {1}, out), dense_arg(dtype::f32, out)},
              block);
        check(sub2, out,
              {dense_arg(dtype::f64, out), broadcast_arg(dtype::f64, {m, 1}, {0, 1}, out)}, block);
        check(sub2, out,
              {broadcast_arg(dtype::f64, {m, 1}, {0, 1}, out),
               broadcast_arg(dtype::f64, {1, n}, {0, 1}, out)},
              block);
        check(add2, out, {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {}, {}, out)},
              block);
        check(sub2, out, {broadcast_arg(dtype::f64, {}, {}, out), dense_arg(dtype::f64, out)},
              block);
      }
    }
  }
}

TEST_CASE("broadcasts over rank 3 and 4: leading, middle, trailing") {
  using namespace nax::ops;
  const auto mul2 = one_op(idx<mul>, {dtype::f32, dtype::f32});
  const auto lrelu = one_op(idx<leaky_relu>, {dtype::f64, dtype::f64});
  for (std::size_t block : {0, 7, 32}) {
    for (const std::vector<std::size_t>& out :
         {std::vector<std::size_t>{3, 5, 17}, {2, 65, 3}, {7, 1, 63}, {4, 3, 2, 9}}) {
      CAPTURE(block);
      CAPTURE(out.size());
      CAPTURE(out[1]);
      const std::size_t r = out.size();
      std::vector<std::size_t> lead(out.begin() + 1, out.end()), lead_map(r - 1);
      for (std::size_t a = 0; a + 1 < r; ++a) lead_map[a] = a + 1;
      std::vector<std::size_t> mid(out), mid_map(r);
      mid[1] = 1;
      for (std::size_t a = 0; a < r; ++a) mid_map[a] = a;
      std::vector<std::size_t> tail(out.begin(), out.end() - 1), tail_map(r - 1);
      for (std::size_t a = 0; a + 1 < r; ++a) tail_map[a] = a;
      // Missing leading axis; extent-1 middle axis; missing trailing axis; only the middle axis.
      check(mul2, out, {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, lead, lead_map, out)},
            block);
      check(mul2, out, {broadcast_arg(dtype::f32, mid, mid_map, out), dense_arg(dtype::f32, out)},
            block);
      check(mul2, out, {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, tail, tail_map, out)},
            block);
      check(lrelu, out,
            {broadcast_arg(dtype::f64, {out[1]}, {1}, out),
             broadcast_arg(dtype::f64, tail, tail_map, out)},
            block);
    }
  }
}

TEST_CASE("splatted operands of every kind of op") {
  using namespace nax::ops;
  // Column values ([m, 1]) and scalars read by unary, binary, comparison and ternary ops; both
  // operands of a binary op splatted. Long rows keep blocks within a row, short ones do not.
  k::elementwise_program p;
  p.inputs = {dtype::f32, dtype::f32, dtype::f32, dtype::boolean};
  const auto x = operand::input(0), col = operand::input(1), s = operand::input(2),
             m = operand::input(3);
  const auto e = p.append(idx<nax::ops::exp>, {s});      // 0: unary of a scalar
  const auto a = p.append(idx<add>, {x, e});             // 1
  const auto cs = p.append(idx<sub>, {col, s});          // 2: both splatted
  const auto lt = p.append(idx<less>, {x, col});         // 3: comparison with a splat
  const auto w = p.append(idx<where>, {m, cs, a});       // 4: mask and value splatted
  const auto mx = p.append(idx<nax::ops::max>, {s, w});  // 5: splat first
  (void)lt;
  (void)mx;
  p.outputs = {5, 3, 2};
  for (std::size_t block : {0, 8}) {
    for (std::size_t n : {3, 130}) {
      CAPTURE(block);
      CAPTURE(n);
      const std::vector<std::size_t> out{7, n};
      check(p, out,
            {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {7, 1}, {0, 1}, out),
             broadcast_arg(dtype::f32, {}, {}, out), broadcast_arg(dtype::boolean, {7}, {0}, out)},
            block);
    }
  }
  // Which inputs a plan reads splatted: a binary op on values takes one splatted operand.
  const std::vector<std::size_t> out{7, 130};
  std::vector<std::ptrdiff_t> st{130, 1, 0, 0};
  const std::vector<dtype> ff{dtype::f32, dtype::f32};
  CHECK(k::plan_elementwise_op(idx<add>, ff, out, st).inputs[1].access ==
        k::detail::ew_access::splat);
  CHECK(k::plan_elementwise_op(idx<less>, ff, out, st).inputs[1].access ==
        k::detail::ew_access::gather);
  CHECK(k::plan_elementwise_op(idx<nax::ops::tanh>, std::vector<dtype>{dtype::f32},
                               std::vector<std::size_t>{5}, std::vector<std::ptrdiff_t>{0})
            .inputs[0]
            .access == k::detail::ew_access::gather);
}

TEST_CASE("gathered inputs: transposed and strided layouts") {
  using namespace nax::ops;
  const auto add2 = one_op(idx<add>, {dtype::f32, dtype::f32});
  for (std::size_t block : {0, 4, 16}) {
    for (std::size_t m : {1, 5, 33}) {
      for (std::size_t n : {3, 64, 65}) {
        CAPTURE(block);
        CAPTURE(m);
        CAPTURE(n);
        const std::vector<std::size_t> out{m, n};
        // x stored [n, m], read as [m, n]; y every other element of a [m, 2n] buffer.
        arg xt{random_buffer(dtype::f32, m * n),
               {std::ptrdiff_t{1}, static_cast<std::ptrdiff_t>(m)}};
        arg y2{random_buffer(dtype::f32, 2 * m * n),
               {static_cast<std::ptrdiff_t>(2 * n), std::ptrdiff_t{2}}};
        check(add2, out, {xt, dense_arg(dtype::f32, out)}, block);
        check(add2, out, {xt, y2}, block);
        check(add2, out, {broadcast_arg(dtype::f32, {n}, {1}, out), y2}, block);
      }
    }
  }
}

TEST_CASE("the planner collapses axes contiguous for every operand") {
  using namespace nax::ops;
  const std::vector<dtype> ff{dtype::f32, dtype::f32};
  const std::vector<std::size_t> out{4, 5, 6};
  const auto same = k::broadcast_strides(out, std::vector<std::size_t>{0, 1, 2}, out);
  std::vector<std::ptrdiff_t> s(same);
  s.insert(s.end(), same.begin(), same.end());
  const auto flat = k::plan_elementwise_op(idx<add>, ff, out, s);
  CHECK(flat.rank == 1);
  CHECK(std::vector<std::size_t>(flat.extents.begin(), flat.extents.end()) ==
        std::vector<std::size_t>{120});
  CHECK(flat.blocks == 1);
  CHECK(flat.inputs[0].access == k::detail::ew_access::in_place);

  // [b, n] + [n]: rows x contiguous, the bias read in place along each row.
  const std::vector<std::size_t> bn{1000, 512};
  std::vector<std::ptrdiff_t> bias = k::broadcast_strides(bn, std::vector<std::size_t>{0, 1}, bn);
  const auto b1 =
      k::broadcast_strides(std::vector<std::size_t>{512}, std::vector<std::size_t>{1}, bn);
  bias.insert(bias.end(), b1.begin(), b1.end());
  const auto rows = k::plan_elementwise_op(idx<add>, ff, bn, bias, 256);
  CHECK(rows.rank == 2);
  CHECK(rows.row_blocks);
  CHECK(rows.inputs[0].access == k::detail::ew_access::in_place);
  CHECK(rows.inputs[1].access == k::detail::ew_access::in_place);
  CHECK(rows.blocks == 1000 * 2);

  // An extent-1 axis anywhere merges away.
  const std::vector<std::size_t> with_one{3, 1, 8};
  const auto d = k::broadcast_strides(with_one, std::vector<std::size_t>{0, 1, 2}, with_one);
  std::vector<std::ptrdiff_t> dd(d);
  dd.insert(dd.end(), d.begin(), d.end());
  CHECK(k::plan_elementwise_op(idx<add>, ff, with_one, dd).rank == 1);
}

TEST_CASE("rank 0 and zero-size outputs") {
  using namespace nax::ops;
  const auto add2 = one_op(idx<add>, {dtype::f64, dtype::f64});
  check(add2, {}, {dense_arg(dtype::f64, {}), dense_arg(dtype::f64, {})});
  check(one_op(idx<nax::ops::exp>, {dtype::f32}), {}, {dense_arg(dtype::f32, {})});

  for (const std::vector<std::size_t>& out :
       {std::vector<std::size_t>{0}, {3, 0}, {0, 5}, {2, 0, 4}}) {
    std::vector<std::ptrdiff_t> s(2 * out.size(), 0);
    const auto plan =
        k::plan_elementwise_op(idx<add>, std::vector<dtype>{dtype::f32, dtype::f32}, out, s);
    CHECK(plan.size == 0);
    CHECK(plan.blocks == 0);
    k::run_elementwise(plan, nullptr, nullptr);  // touches nothing
  }
}

// --- programs -----------------------------------------------------------------------------------

TEST_CASE("programs: chains, trees with fan-out, several outputs, repeated inputs") {
  using namespace nax::ops;
  // Streamed too: outputs written from block buffers with non-temporal stores where a block's
  // output is vector-aligned (shift 0: most blocks), else stored plainly (shift 8: whole
  // elements off a vector boundary; few or no blocks aligned).
  const auto never = k::elementwise_streaming::never, always = k::elementwise_streaming::always;
  struct variant {
    std::size_t block;
    k::elementwise_streaming streaming;
    std::size_t shift;
  };
  for (const variant& v :
       {variant{0, never, 0}, variant{3, never, 0}, variant{16, never, 0}, variant{100, never, 0},
        variant{0, always, 0}, variant{16, always, 0}, variant{100, always, 8}}) {
    // (Not a structured binding: clang 14 cannot capture one in doctest's CAPTURE lambdas.)
    const std::size_t block = v.block, shift = v.shift;
    const k::elementwise_streaming streaming = v.streaming;
    CAPTURE(streaming == always);
    CAPTURE(shift);
    for (const std::vector<std::size_t>& out :
         {std::vector<std::size_t>{1}, {4099}, {17, 7}, {5, 64}, {3, 65, 2}}) {
      CAPTURE(block);
      CAPTURE(out.size());
      CAPTURE(out[0]);
      const std::size_t r = out.size();
      std::vector<std::size_t> map(r);
      for (std::size_t a = 0; a < r; ++a) map[a] = a;
      std::vector<std::size_t> row{out.back()};
      const std::vector<std::size_t> row_map{r - 1};

      // gelu(x * w + b) * 0.5: a chain, with a trailing bias and a scalar.
      {
        k::elementwise_program p;
        p.inputs = {dtype::f32, dtype::f32, dtype::f32, dtype::f32};
        const auto t0 = p.append(idx<mul>, {operand::input(0), operand::input(1)});
        const auto t1 = p.append(idx<add>, {t0, operand::input(2)});
        const auto t2 = p.append(idx<gelu>, {t1});
        p.append(idx<mul>, {t2, operand::input(3)});
        p.outputs = {3};
        check(
            p, out,
            {dense_arg(dtype::f32, out), dense_arg(dtype::f32, out),
             broadcast_arg(dtype::f32, row, row_map, out), broadcast_arg(dtype::f32, {}, {}, out)},
            block, 0, streaming, shift);
      }
      // A tree with fan-out: u = x - y; outputs exp(u) * u, u, and (u < y ? u : x * x); x is read
      // three times, y twice; a dead instruction.
      {
        k::elementwise_program p;
        p.inputs = {dtype::f64, dtype::f64};
        const auto x = operand::input(0), y = operand::input(1);
        const auto u = p.append(idx<sub>, {x, y});         // 0
        const auto e = p.append(idx<nax::ops::exp>, {u});  // 1
        const auto eu = p.append(idx<mul>, {e, u});        // 2
        const auto m = p.append(idx<less>, {u, y});        // 3
        const auto xx = p.append(idx<mul>, {x, x});        // 4
        p.append(idx<nax::ops::sqrt>, {xx});               // 5: dead
        const auto w = p.append(idx<where>, {m, u, xx});   // 6
        (void)eu;
        (void)w;
        p.outputs = {2, 0, 6, 3};
        check(
            p, out,
            {dense_arg(dtype::f64, out, data::ties), broadcast_arg(dtype::f64, row, row_map, out)},
            block, 0, streaming, shift);
      }
      // Several outputs, one listed twice, one also read later; integer and bool results.
      {
        k::elementwise_program p;
        p.inputs = {dtype::i32, dtype::i32, dtype::boolean};
        const auto a = operand::input(0), b = operand::input(1), c = operand::input(2);
        const auto s = p.append(idx<add>, {a, b});             // 0
        const auto g = p.append(idx<greater>, {s, b});         // 1
        const auto both = p.append(idx<logical_and>, {g, c});  // 2
        const auto n = p.append(idx<logical_not>, {both});     // 3
        p.append(idx<where>, {n, s, a});                       // 4
        (void)n;
        p.outputs = {4, 0, 2, 0, 3};
        check(p, out,
              {dense_arg(dtype::i32, out), broadcast_arg(dtype::i32, {}, {}, out),
               broadcast_arg(dtype::boolean, row, row_map, out)},
              block, 0, streaming, shift);
      }
    }
  }
}

TEST_CASE("outputs beyond this core's share of the last-level cache are streamed") {
  const nax::cache_sizes& caches = nax::machine_caches();
  const std::size_t share = caches.l3 / caches.l3_sharing;  // bytes
  const k::elementwise_program p = one_op(idx<nax::ops::exp>, {dtype::f32});
  const std::ptrdiff_t unit[1] = {1};
  const std::size_t big[1] = {share / 4}, small[1] = {share / 4 - 1};
  CHECK(k::plan_elementwise(p, big, unit).stream);
  CHECK_FALSE(k::plan_elementwise(p, small, unit).stream);
  CHECK_FALSE(k::plan_elementwise(p, big, unit, 0, k::elementwise_streaming::never).stream);
}

TEST_CASE("a long program reuses block buffers") {
  using namespace nax::ops;
  // ((x + 1) * (x + 2) + (x + 3) * (x + 4) ...): many temporaries, some live at once.
  k::elementwise_program p;
  p.inputs = {dtype::f32, dtype::f32};
  const auto x = operand::input(0), one = operand::input(1);
  operand acc = p.append(idx<add>, {x, one});
  for (int i = 0; i < 20; ++i) {
    const auto a = p.append(idx<add>, {acc, one});
    const auto b = p.append(idx<mul>, {a, x});
    const auto c = p.append(idx<nax::ops::tanh>, {b});
    acc = p.append(idx<add>, {c, a});
  }
  p.outputs = {static_cast<std::uint32_t>(p.instructions.size() - 1)};
  const std::vector<std::size_t> out{9, 130};
  for (std::size_t block : {0, 8, 200})
    check(p, out, {dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {}, {}, out)}, block);
}

TEST_CASE("a one-instruction program may write over its dense input") {
  using namespace nax::ops;
  const std::vector<std::size_t> out{5, 67};
  std::vector<arg> args{dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {67}, {1}, out)};
  const std::vector<buffer> want = reference(one_op(idx<sub>, {dtype::f32, dtype::f32}), out, args,
                                             std::vector<dtype>{dtype::f32});
  std::vector<std::ptrdiff_t> st(args[0].strides);
  st.insert(st.end(), args[1].strides.begin(), args[1].strides.end());
  const auto plan =
      k::plan_elementwise_op(idx<sub>, std::vector<dtype>{dtype::f32, dtype::f32}, out, st, 16);
  const void* in[2] = {args[0].data.data(), args[1].data.data()};
  void* o[1] = {args[0].data.data()};
  k::run_elementwise(plan, in, o);
  CHECK(args[0].data.bytes == want[0].bytes);
}

TEST_CASE("multi-threaded runs equal single-threaded ones") {
  using namespace nax::ops;
  k::elementwise_program p;
  p.inputs = {dtype::f32, dtype::f32};
  const auto t = p.append(idx<mul>, {operand::input(0), operand::input(1)});
  const auto g = p.append(idx<silu>, {t});
  p.append(idx<greater>, {g, operand::input(1)});
  p.outputs = {1, 2};
  const std::vector<std::size_t> out{(1u << 20) + 3, 3};
  std::vector<arg> args{dense_arg(dtype::f32, out), broadcast_arg(dtype::f32, {3}, {1}, out)};
  std::vector<std::ptrdiff_t> strides;
  for (const arg& a : args) strides.insert(strides.end(), a.strides.begin(), a.strides.end());
  const auto plan = k::plan_elementwise(p, out, strides);
  CHECK(plan.blocks >= 4 * plan.grain);  // enough blocks for several chunks

  const int before = nax::num_threads();
  nax::set_num_threads(1);
  const auto one = run(plan, args, out[0] * out[1]);
  nax::set_num_threads(4);
  const auto four = run(plan, args, out[0] * out[1]);
  nax::set_num_threads(before);
  REQUIRE(one.size() == 2);
  CHECK(one[0].bytes == four[0].bytes);
  CHECK(one[1].bytes == four[1].bytes);
  check(p, {4099, 3},
        {dense_arg(dtype::f32, {4099, 3}), broadcast_arg(dtype::f32, {3}, {1}, {4099, 3})});
}

// --- helpers and errors -------------------------------------------------------------------------

TEST_CASE("broadcast_strides") {
  using v = std::vector<std::size_t>;
  using s = std::vector<std::ptrdiff_t>;
  CHECK(k::broadcast_strides(v{2, 3}, v{0, 1}, v{2, 3}) == s{3, 1});
  CHECK(k::broadcast_strides(v{3}, v{1}, v{2, 3}) == s{0, 1});
  CHECK(k::broadcast_strides(v{2, 1}, v{0, 1}, v{2, 3}) == s{1, 0});
  CHECK(k::broadcast_strides(v{}, v{}, v{2, 3}) == s{0, 0});
  CHECK(k::broadcast_strides(v{4, 2}, v{2, 0}, v{2, 3, 4}) == s{1, 0, 2});  // permuted
  CHECK(k::broadcast_strides(v{5, 1, 4}, v{0, 2, 1}, v{5, 4, 7}) == s{4, 1, 0});

  CHECK_THROWS_WITH_AS(k::broadcast_strides(v{2, 4}, v{0, 1}, v{2, 3}),
                       "nax::kernels::broadcast_strides: input axis 1 has extent 4, output axis "
                       "1 has 3",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::broadcast_strides(v{2, 3}, v{0}, v{2, 3}),
                       "nax::kernels::broadcast_strides: 2 input axes but 1 axis map entries",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::broadcast_strides(v{3}, v{2}, v{2, 3}),
                       "nax::kernels::broadcast_strides: input axis 0 maps to output axis 2, the "
                       "output has 2 axes",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::broadcast_strides(v{3, 3}, v{1, 1}, v{3, 3}),
                       "nax::kernels::broadcast_strides: input axes 0 and 1 both map to output "
                       "axis 1",
                       nax::shape_error);
  s room(1);
  CHECK_THROWS_WITH_AS(k::broadcast_strides(v{3}, v{1}, v{2, 3}, room),
                       "nax::kernels::broadcast_strides: room for 1 strides, the output has 2 axes",
                       nax::shape_error);
}

TEST_CASE("the planner rejects what it cannot run, naming the op and the dtypes") {
  using namespace nax::ops;
  const std::vector<std::size_t> out{4};
  const std::vector<std::ptrdiff_t> s1{1}, s2{1, 1}, s3{1, 1, 1};
  auto plan_op = [&](nax::ops::id op, std::vector<dtype> types) {
    const std::vector<std::ptrdiff_t> s(types.size(), 1);
    return k::plan_elementwise_op(op, types, out, s);
  };
  const std::string pre = "nax::kernels::elementwise: ";
  CHECK_THROWS_WITH_AS(plan_op(idx<nax::ops::exp>, {dtype::i32}),
                       (pre + "exp: needs floating-point operands (f32 or f64), not i32").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<nax::ops::pow>, {dtype::i64, dtype::i64}),
                       (pre + "pow: needs floating-point operands (f32 or f64), not i64").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<add>, {dtype::boolean, dtype::boolean}),
                       (pre + "add: needs f32, f64, i32 or i64 operands, not bool").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<less>, {dtype::u8, dtype::u8}),
                       (pre + "less: needs f32, f64, i32 or i64 operands, not u8").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(
      plan_op(idx<add>, {dtype::f32, dtype::f64}),
      (pre + "add: element types differ: operand 0 is f32, operand 1 is f64").c_str(),
      nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<logical_and>, {dtype::f32, dtype::f32}),
                       (pre + "logical_and: needs bool operands, not f32").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<where>, {dtype::f32, dtype::f32, dtype::f32}),
                       (pre + "where: the mask (operand 0) is f32, not bool").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<where>, {dtype::boolean, dtype::u8, dtype::u8}),
                       (pre + "where: needs f32, f64, i32, i64 or bool values, not u8").c_str(),
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(
      plan_op(idx<where>, {dtype::boolean, dtype::f32, dtype::i32}),
      (pre + "where: element types differ: operand 1 is f32, operand 2 is i32").c_str(),
      nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<add>, {dtype::f32}),
                       (pre + "add: takes 2 operands, given 1").c_str(), nax::shape_error);
  CHECK_THROWS_WITH_AS(plan_op(idx<neg>, {dtype::f32, dtype::f32}),
                       (pre + "neg: takes 1 operand, given 2").c_str(), nax::shape_error);
  const std::string count = std::to_string(nax::ops::count);  // (the list's length)
  CHECK_THROWS_WITH_AS(plan_op(static_cast<nax::ops::id>(nax::ops::count), {dtype::f32}),
                       (pre + "unknown op " + count + " (there are " + count + ")").c_str(),
                       nax::shape_error);

  // Malformed programs.
  k::elementwise_program p;
  p.inputs = {dtype::f32};
  p.append(idx<add>, {operand::input(0), operand::input(1)});
  p.outputs = {0};
  CHECK_THROWS_WITH_AS(
      k::plan_elementwise(p, out, s1),
      (pre + "instruction 0 (add) reads input 1, the program has 1 inputs").c_str(),
      nax::shape_error);
  p.instructions[0].args[1] = operand::result(0);
  CHECK_THROWS_WITH_AS(
      k::plan_elementwise(p, out, s1),
      (pre + "instruction 0 (add) reads the result of instruction 0, not of an earlier one")
          .c_str(),
      nax::shape_error);
  p.instructions[0].args[1] = operand::input(0);
  p.instructions[0].op = static_cast<nax::ops::id>(200);
  CHECK_THROWS_WITH_AS(k::plan_elementwise(p, out, s1),
                       (pre + "unknown op 200 (there are " + count + ")").c_str(),
                       nax::shape_error);
  p.instructions[0].op = idx<add>;
  p.outputs = {};
  CHECK_THROWS_WITH_AS(k::plan_elementwise(p, out, s1),
                       (pre + "the program has no outputs").c_str(), nax::shape_error);
  p.outputs = {0, 1};
  CHECK_THROWS_WITH_AS(k::plan_elementwise(p, out, s1),
                       (pre + "output 1 is instruction 1, the program has 1 instructions").c_str(),
                       nax::shape_error);
  p.outputs = {0};
  CHECK_THROWS_WITH_AS(k::plan_elementwise(p, out, s2),
                       (pre + "2 strides for 1 inputs over 1 axes (expected 1)").c_str(),
                       nax::shape_error);
  CHECK_NOTHROW(k::plan_elementwise(p, out, s1));
  (void)s3;

  // A program whose live values cannot fit a block in the scratch area.
  k::elementwise_program big;
  big.inputs = {dtype::f64};
  std::vector<operand> live;
  for (int i = 0; i < 600; ++i) live.push_back(big.append(idx<neg>, {operand::input(0)}));
  operand acc = live[0];
  for (int i = 1; i < 600; ++i)
    acc = big.append(idx<add>, {acc, live[static_cast<std::size_t>(i)]});
  big.outputs = {static_cast<std::uint32_t>(big.instructions.size() - 1)};
  CHECK_THROWS_WITH_AS(
      k::plan_elementwise(big, out, s1),
      (pre + "the program needs 600 block buffers and 0 gathered inputs, too many for 32768 "
             "bytes of scratch")
          .c_str(),
      nax::shape_error);
}
