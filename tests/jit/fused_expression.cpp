// An elementwise expression over traced values is its ops in the graph, fused as a builder
// graph's and bitwise equal to the eager evaluation; one a double cannot spell is one node
// running the typed evaluator's loop. A mask of one element type selects values of another,
// traced and in the graph's own where.
#include "jit_helpers.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

using namespace jit_test;

namespace {

const auto elementwise = [](auto x, auto y) {
  return nax::where(x > 0.0f, nax::exp(-x) * y, nax::tanh(x) + y * y) + 1.0f;
};

}  // namespace

TEST_CASE("jit: a pure elementwise function is its ops, fused as a builder graph's") {
  auto f =
      nax::jit(elementwise, nax::input<float, batch, hidden>("x"), nax::input<float, hidden>("y"));
  // y * y, over hidden alone, is computed once rather than per row; the rest is one group.
  const std::vector<g::program_step>& steps = f.executable().program().steps;
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].kind() == g::op_kind::elementwise);
  CHECK(steps[1].kind() == g::op_kind::fused_elementwise);

  nax::tensor<float, hidden> y;
  fill(y, 1);
  for (std::size_t n : {1, 3, 64}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 2 + static_cast<std::uint32_t>(n));
    const nax::tensor<float, batch, hidden> got = f(x, y);
    check_close(got, nax::eval(eager(elementwise, x, y)), 0);  // the typed loop's bits
  }

  // A strided view is copied before the run.
  nax::tensor<float, batch, hidden> wide(batch(6));
  fill(wide, 5);
  const nax::tensor_view<const float, batch, hidden> every_other(
      wide.data(), nax::extents<batch, hidden>(batch(3)), {2 * 24, 1});
  check_close(f(every_other, y), nax::eval(elementwise(every_other, y)), 0);
}

TEST_CASE("jit: an i64 scalar a double cannot hold makes its expression one node of its own") {
  static constexpr std::int64_t big = (std::int64_t{1} << 60) + 1;  // no double holds it
  auto exact = nax::jit([](auto x) { return x * std::int64_t{3} + std::int64_t{1}; },
                        nax::input<std::int64_t, batch>("x"));
  auto inexact = nax::jit([](auto x) { return x * std::int64_t{3} + big; },
                          nax::input<std::int64_t, batch>("x"));
  REQUIRE(exact.executable().program().steps.size() == 1);
  CHECK(exact.executable().program().steps[0].kind() == g::op_kind::fused_elementwise);
  REQUIRE(inexact.executable().program().steps.size() == 1);
  const g::program_step& s = inexact.executable().program().steps[0];
  REQUIRE(s.kind() == g::op_kind::external);
  CHECK(s.as<g::external_op>().kernel->label() == "fused: mul, add");

  nax::tensor<std::int64_t, batch> x{batch(5)};
  for (std::size_t i = 0; i < 5; ++i) x(i) = static_cast<std::int64_t>(i) - 2;
  const nax::tensor<std::int64_t, batch> e = exact(x), n = inexact(x);
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(e(i) == x(i) * 3 + 1);
    CHECK(n(i) == x(i) * 3 + big);
  }
}

TEST_CASE("jit: two different fused expressions over the same inputs stay two nodes") {
  auto f = nax::jit([](auto x) { return std::tuple(x * 2.0f, x + 1.0f); },
                    nax::input<float, batch, hidden>("x"));
  CHECK(f.executable().program().steps.size() == 2);
  nax::tensor<float, batch, hidden> x{batch(2)};
  fill(x, 1);
  const auto [twice, plus_one] = f(x);
  check_close(twice, nax::eval(x.view() * 2.0f), 0);
  check_close(plus_one, nax::eval(x.view() + 1.0f), 0);
}

TEST_CASE("jit: RMSNorm spelled with mean and rsqrt is one fused layer_norm step") {
  // As docs/llama.md writes it: the squares, their mean, the scale in one row kernel.
  const auto rms_norm = [](auto x, auto gamma) {
    return nax::eval(x * nax::rsqrt(nax::mean<hidden>(x * x) + 1e-5f) * gamma);
  };
  auto f =
      nax::jit(rms_norm, nax::input<float, batch, hidden>("x"), nax::input<float, hidden>("gamma"));
  const std::vector<g::program_step>& steps = f.executable().program().steps;
  REQUIRE(steps.size() == 1);
  REQUIRE(steps[0].fused);
  CHECK(steps[0].fused->kind == g::fusion_kind::layer_norm);
  CHECK_FALSE(steps[0].as<g::layer_norm_op>().centered);
  nax::tensor<float, hidden> gamma;
  fill(gamma, 3);
  for (std::size_t n : {1, 5}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 4 + static_cast<std::uint32_t>(n), -3.0f, 2.0f);
    check_close(f(x, gamma), nax::eval(eager(rms_norm, x, gamma)), 0);  // the eager bits
  }
}

namespace {

using cols = nax::axis<"cols">;

// where(m > n, a, b): a comparison of M elements selecting V values (different lane widths).
const auto select_by = [](auto m, auto n, auto a, auto b) { return nax::where(m > n, a, b); };

// select_by under nax::jit and eagerly, against a plain loop, with 13 columns (a full vector
// and a tail at every width) and the mask varying within each vector.
template <class M, class V>
void check_select_by() {
  CAPTURE(nax::name(nax::dtype_of<M>));
  CAPTURE(nax::name(nax::dtype_of<V>));
  auto f = nax::jit(select_by, nax::input<M, batch, cols>("m"), nax::input<M, cols>("n"),
                    nax::input<V, batch, cols>("a"), nax::input<V, batch, cols>("b"));
  for (const std::size_t rows : {1, 3}) {
    CAPTURE(rows);
    const std::size_t c = 13;
    nax::tensor<M, batch, cols> m{batch(rows), cols(c)};
    nax::tensor<M, cols> n(cols{c});
    nax::tensor<V, batch, cols> a{batch(rows), cols(c)}, b{batch(rows), cols(c)};
    for (std::size_t k = 0; k < m.size(); ++k) {
      m.data()[k] = static_cast<M>((k * 7 + 3) % 11) - M(5);
      a.data()[k] = static_cast<V>(k + 1);
      b.data()[k] = -static_cast<V>(2 * k + 1);
    }
    for (std::size_t k = 0; k < c; ++k) n(k) = static_cast<M>(k % 4) - M(1);
    const nax::tensor<V, batch, cols> got = f(m, n, a, b);
    const nax::tensor<V, batch, cols> eager_got = select_by(m.view(), n.view(), a.view(), b.view());
    std::size_t taken = 0;
    for (std::size_t y = 0; y < rows; ++y)
      for (std::size_t x = 0; x < c; ++x) {
        CAPTURE(x);
        const bool pick = m(y, x) > n(x);
        taken += pick;
        CHECK(got(y, x) == (pick ? a(y, x) : b(y, x)));
        CHECK(eager_got(y, x) == (pick ? a(y, x) : b(y, x)));
      }
    CHECK(taken > 0);  // both sides are selected
    CHECK(taken < m.size());
  }
}

}  // namespace

TEST_CASE("jit: a comparison of one element type selects values of another") {
  check_select_by<std::int64_t, float>();
  check_select_by<std::int32_t, double>();
  check_select_by<float, std::int64_t>();
  check_select_by<std::int32_t, float>();
}

// The graph's own where (what nax::graph users build, run by the runtime's elementwise kernels,
// fused and one op at a time): a mask from an i64 comparison selecting f32 values.
TEST_CASE("graph: where selects f32 values by an i64 comparison") {
  const std::size_t n = 13;
  for (const bool fusion : {true, false}) {
    CAPTURE(fusion);
    g::builder bld;
    auto m = bld.parameter("m", nax::shape::make(nax::dtype::i64, {"batch"}));
    auto k = bld.parameter("k", nax::shape::make(nax::dtype::i64, {"batch"}));
    auto a = bld.parameter("a", nax::shape::make(nax::dtype::f32, {"batch"}));
    auto y = g::where(g::greater(m, k), a, -a);
    auto ex = g::compile(bld, {y}, {.fusion = fusion});
    const nax::shape si = nax::shape::make(nax::dtype::i64, {nax::dim::named("batch", n)});
    const nax::shape sf = nax::shape::make(nax::dtype::f32, {nax::dim::named("batch", n)});
    nax::dyn_tensor mi(si), ki(si), ai(sf);
    for (std::size_t j = 0; j < n; ++j) {
      mi.data<std::int64_t>()[j] = static_cast<std::int64_t>((j * 7 + 3) % 11) - 5;
      ki.data<std::int64_t>()[j] = static_cast<std::int64_t>(j % 4) - 1;
      ai.data<float>()[j] = static_cast<float>(j + 1);
    }
    const std::vector<nax::dyn_tensor> out = ex.run({mi, ki, ai});
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].dtype() == nax::dtype::f32);
    std::size_t taken = 0;
    for (std::size_t j = 0; j < n; ++j) {
      CAPTURE(j);
      const bool pick = mi.data<std::int64_t>()[j] > ki.data<std::int64_t>()[j];
      taken += pick;
      const float want = pick ? ai.data<float>()[j] : -ai.data<float>()[j];
      CHECK(out[0].data<float>()[j] == want);
    }
    CHECK(taken > 0);
    CHECK(taken < n);
  }
}
