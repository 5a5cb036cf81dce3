// nax::jit end to end: a generic lambda traced once, run over several bindings against the same
// lambda run eagerly on typed tensors; the specialization cache; concurrent calls; errors naming
// the input and the axis.
#include "jit_helpers.hpp"

#include <nax/typed/layout.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

using namespace jit_test;

namespace {

const auto dense_gelu = [](auto x, auto w, auto b) {
  return nax::gelu(nax::dot<hidden>(x, w) + b);
};

}  // namespace

TEST_CASE(
    "jit: gelu(dot(x, w) + b) is one dense step, as in a builder graph, equal to eager code") {
  auto f = nax::jit(dense_gelu, nax::input<float, batch, hidden>("x"),
                    nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
  const nax::executable& ex = f.executable();
  // The traced add and gelu are graph ops: fuse_dense makes them the GEMM's epilogue.
  CHECK(step_kinds(ex) == std::vector{g::op_kind::fused_dense});
  CHECK(ex.to_dot().find("label=\"gelu\"") != std::string::npos);
  CHECK(ex.program().input_names == std::vector<std::string>{"x", "w", "b"});

  nax::tensor<float, hidden, ff> w;
  nax::tensor<float, ff> b;
  fill(w, 1);
  fill(b, 2);
  for (std::size_t n : {1, 3, 64}) {
    CAPTURE(n);
    nax::tensor<float, batch, hidden> x{batch(n)};
    fill(x, 3 + static_cast<std::uint32_t>(n));
    const nax::tensor<float, batch, ff> y = f(x, w, b);
    check_close(y, nax::tensor<float, batch, ff>(eager(dense_gelu, x, w, b)));
  }
  nax::specialization_stats s = ex.stats();
  CHECK(s.misses == 3);
  CHECK(s.hits == 0);
  CHECK(s.live == 3);

  // A binding seen before is a hit; views are accepted as well as tensors.
  nax::tensor<float, batch, hidden> x(batch(3));
  fill(x, 9);
  const nax::tensor<float, batch, ff> y = f(x.view(), w, b);
  check_close(y, nax::tensor<float, batch, ff>(eager(dense_gelu, x, w, b)));
  s = ex.stats();
  CHECK(s.misses == 3);
  CHECK(s.hits == 1);
}

TEST_CASE("jit: strided views are copied dense, and give the bits dense tensors give") {
  auto f = nax::jit(dense_gelu, nax::input<float, batch, hidden>("x"),
                    nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
  nax::tensor<float, ff, hidden> w_stored;  // w stored transposed: a permuted view
  nax::tensor<float, batch, hidden> x_rows(batch(7));
  nax::tensor<float, ff> b;
  fill(w_stored, 4);
  fill(x_rows, 5);
  fill(b, 6);
  const auto w = nax::permute<hidden, ff>(w_stored);
  const auto x = nax::slice<batch>(x_rows, 2, 6);  // rows are contiguous: no copy needed
  const nax::tensor<float, batch, ff> y = f(x, w, b);
  const nax::tensor<float, batch, hidden> x_dense(x);
  const nax::tensor<float, hidden, ff> w_dense(w);
  const nax::tensor<float, batch, ff> want = f(x_dense, w_dense, b);
  REQUIRE(y.extent<batch>() == 4);
  CHECK(std::equal(y.data(), y.data() + y.size(), want.data()));
  CHECK(x_dense(0, 1) == x_rows(2, 1));
  CHECK(w_dense(3, 5) == w_stored(5, 3));
}

TEST_CASE("jit: arguments go by axis name, in any order, and give the bits in-order ones give") {
  auto f = nax::jit(dense_gelu, nax::input<float, batch, hidden>("x"),
                    nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
  nax::tensor<float, ff, hidden> w_stored;  // [ff, hidden] for input [hidden, ff]
  nax::tensor<float, hidden, batch> x_stored(batch(5));
  nax::tensor<float, ff> b;
  fill(w_stored, 7);
  fill(x_stored, 8);
  fill(b, 9);
  const nax::tensor<float, batch, ff> y = f(x_stored, w_stored, b);
  const nax::tensor<float, batch, hidden> x(nax::permute<batch, hidden>(x_stored));
  const nax::tensor<float, hidden, ff> w(nax::permute<hidden, ff>(w_stored));
  const nax::tensor<float, batch, ff> want = f(x, w, b);
  REQUIRE(y.extent<batch>() == 5);
  CHECK(std::equal(y.data(), y.data() + y.size(), want.data()));
  CHECK(x(4, 2) == x_stored(2, 4));
  // A view of the permuted order is taken the same way.
  const nax::tensor<float, batch, ff> from_views = f(x_stored.view(), w_stored.view(), b);
  CHECK(std::equal(from_views.data(), from_views.data() + from_views.size(), want.data()));
  CHECK(f.executable().stats().live == 1);  // one binding, {batch: 5}, whatever the order
}

TEST_CASE("jit: concurrent calls with different bindings") {
  auto f = nax::jit(dense_gelu, nax::input<float, batch, hidden>("x"),
                    nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
  nax::tensor<float, hidden, ff> w;
  nax::tensor<float, ff> b;
  fill(w, 1);
  fill(b, 2);
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      nax::tensor<float, batch, hidden> x(batch(static_cast<std::size_t>(1 + t % 2)));
      fill(x, static_cast<std::uint32_t>(t));
      const nax::tensor<float, batch, ff> want = eager(dense_gelu, x, w, b);
      bool same = true;
      for (int i = 0; i < 50; ++i) {
        const nax::tensor<float, batch, ff> y = f(x, w, b);
        same = same && std::equal(y.begin(), y.end(), want.begin());
      }
      ok[static_cast<std::size_t>(t)] = same;
    });
  for (std::thread& t : threads) t.join();
  CHECK(ok == std::vector<int>(4, 1));
  CHECK(f.executable().stats().live == 2);
}

TEST_CASE("jit: traced from several threads at once, and one jitted function evicting under them") {
  // Each thread traces and compiles its own function while the others do, then calls it and a
  // shared one whose cache holds 2 of the 4 bindings the threads use: every call evicts.
  auto shared =
      nax::jit({.max_specializations = 2}, dense_gelu, nax::input<float, batch, hidden>("x"),
               nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
  nax::tensor<float, hidden, ff> w;
  nax::tensor<float, ff> b;
  fill(w, 5);
  fill(b, 6);
  constexpr int users = 4, calls = 12;
  std::vector<int> wrong(users, 0);
  std::vector<std::size_t> own_live(users, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < users; ++t)
    threads.emplace_back([&, t] {
      auto own = nax::jit(dense_gelu, nax::input<float, batch, hidden>("x"),
                          nax::input<float, hidden, ff>("w"), nax::input<float, ff>("b"));
      for (int i = 0; i < calls; ++i) {
        nax::tensor<float, batch, hidden> x(batch(static_cast<std::size_t>(1 + (t + i) % 4)));
        fill(x, static_cast<std::uint32_t>(10 * t + i));
        const nax::tensor<float, batch, ff> want = eager(dense_gelu, x, w, b);
        const nax::tensor<float, batch, ff> a = own(x, w, b), c = shared(x, w, b);
        if (!std::equal(a.begin(), a.end(), want.begin())) ++wrong[static_cast<std::size_t>(t)];
        if (!std::equal(c.begin(), c.end(), want.begin())) ++wrong[static_cast<std::size_t>(t)];
      }
      own_live[static_cast<std::size_t>(t)] = own.executable().stats().live;
    });
  for (std::thread& t : threads) t.join();
  CHECK(wrong == std::vector<int>(users, 0));
  CHECK(own_live == std::vector<std::size_t>(users, 4));
  const nax::specialization_stats s = shared.executable().stats();
  CHECK(s.hits + s.misses == users * calls);
  CHECK(s.live <= 2);
  CHECK(s.evictions >= 2);  // 4 bindings through 2 places
}

TEST_CASE("jit: wrong extents throw nax::shape_error naming the input and the axis") {
  auto add = nax::jit([](auto a, auto b) { return a + b; }, nax::input<float, batch, hidden>("a"),
                      nax::input<float, batch, hidden>("b"));
  nax::tensor<float, batch, hidden> a(batch(3)), b(batch(4));
  fill(a, 1);
  fill(b, 2);
  CHECK_THROWS_WITH_AS(add(a, b), "axis 'batch': input 'b' has 4 but input 'a' has 3",
                       nax::shape_error);
  CHECK(add.executable().stats().misses == 0);
  // Bounded axes: beyond the bound is caught by the typed tensor already; at the bound it runs.
  auto bounded =
      nax::jit([](auto q) { return nax::sum<head>(q); }, nax::input<float, batch, seq, head>("q"));
  nax::tensor<float, batch, seq, head> q(batch(2), seq(64));
  fill(q, 3);
  check_close(bounded(q), nax::sum<head>(q));
}
