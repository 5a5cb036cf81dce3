// docs/errors.md's cases: axes, typed tensors, expressions and typed ops (error_cases.hpp).
#include "error_cases.hpp"

namespace error_cases {

void add_typed_cases(case_map& c) {
  // Axes and bindings.
  c["axis-negative"] = [] { (void)batch(-1); };
  c["axis-static"] = [] { (void)hidden(5); };
  c["axis-bound"] = [] { (void)seq(513); };
  c["bindings-conflict"] = [] {
    nax::bindings b{{"batch", 32}};
    b.bind("batch", 64);
  };

  // Typed tensors and views.
  c["tensor-bound"] = [] { nax::tensor<float, batch, seq> x(batch{1}, nax::axis<"seq">{600}); };
  c["tensor-values"] = [] {
    const std::vector<float> six(6, 1.f);
    (void)nax::tensor<float, batch, hidden>::from(six, batch{3});
  };
  c["tensor-overflow"] = [] {
    const std::size_t big = std::size_t{1} << 32;
    nax::tensor<float, a_ax, b_ax> x(a_ax{big}, b_ax{big});
  };
  c["tensor-assign"] = [] {
    nax::tensor<float, batch, hidden> x(batch{2}), y(batch{3});
    x.fill(1);
    y = x * 2.0f;
  };
  c["tensor-empty"] = [] {
    nax::tensor<float, batch, hidden> x(batch{0});
    CHECK(x.size() == 0);
    CHECK((x.data() == nullptr));
    x.fill(1);
    x = nax::exp(x) * 2.0f;
    const nax::tensor<float, hidden, batch> t = nax::permute<hidden, batch>(x);
    CHECK(t.size() == 0);
    nax::tensor_view<float, batch, hidden> v(nullptr, batch{0});  // empty: null is fine
    CHECK(v.size() == 0);
  };
  c["view-null"] = [] { nax::tensor_view<float, batch, hidden> v(nullptr, batch{2}); };
  c["view-misaligned"] = [] {
    alignas(16) static std::byte bytes[64] = {};
    nax::tensor_view<float, batch, hidden> v(reinterpret_cast<float*>(bytes + 2), batch{2});
  };

  // Expressions.
  c["expr-broadcast"] = [] {
    nax::tensor<float, batch, hidden> x(batch{2}), y(batch{3});
    (void)(x + y);
  };
  c["expr-nan"] = [] {
    nax::tensor<float, batch, hidden> x(batch{3});
    x.fill(1);
    x(0, 1) = nan;
    x(1, 2) = inf;
    x(2, 3) = -inf;
    const auto y = nax::eval(nax::relu(nax::max(x, 0.5f) * 2.0f - x));
    const auto z = nax::eval(x - x);
    const auto e = nax::eval(nax::exp(x));
    CHECK(std::isnan(y(0, 1)));
    CHECK(std::isnan(z(1, 2)));  // inf - inf
    CHECK(e(1, 2) == inf);
    CHECK(e(2, 3) == 0);
    CHECK(y(0, 0) == 1);  // the other elements keep their values
    const auto mask = nax::eval(x != x);
    CHECK(mask(0, 1));
    CHECK(!mask(0, 0));
  };

  // dot.
  c["dot-extent"] = [] {
    nax::tensor<float, batch, k_ax> a(batch{2}, k_ax{3});
    nax::tensor<float, k_ax, hidden> b(k_ax{4});
    (void)nax::dot<k_ax>(a, b);
  };
  c["dot-nan"] = [] {
    nax::tensor<float, batch, k_ax> a(batch{3}, k_ax{5});
    nax::tensor<float, k_ax, hidden> w(k_ax{5});
    a.fill(1);
    w.fill(0.5f);
    a(1, 2) = nan;
    w(4, 3) = inf;
    const nax::tensor<float, batch, hidden> y = nax::dot<k_ax>(a, w);
    for (std::size_t j = 0; j < 4; ++j) CHECK(std::isnan(y(1, j)));  // row 1 read the NaN
    CHECK(y(0, 0) == 2.5f);
    CHECK(y(0, 3) == inf);
    CHECK(y(2, 3) == inf);
  };
  c["dot-empty"] = [] {
    nax::tensor<float, batch, k_ax> a(batch{2}, k_ax{0});
    nax::tensor<float, k_ax, hidden> w(k_ax{0});
    const nax::tensor<float, batch, hidden> y = nax::dot<k_ax>(a, w);
    for (float v : y) CHECK(v == 0);
    nax::tensor<float, batch, k_ax> none(batch{0}, k_ax{3});
    nax::tensor<float, k_ax, hidden> w3(k_ax{3});
    w3.fill(1);
    CHECK(nax::dot<k_ax>(none, w3).size() == 0);
  };

  // Reductions, softmax, layer_norm.
  c["reduce-max-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{0});
    (void)nax::max<k_ax>(x);
  };
  c["reduce-mean-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{0});
    (void)nax::mean<k_ax>(x);
  };
  c["argmax-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{0});
    (void)nax::argmax<k_ax>(x);
  };
  c["reduce-sum-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{0});
    const auto s = nax::sum<k_ax>(x);
    CHECK(s.size() == 2);
    for (float v : s) CHECK(v == 0);
    CHECK(nax::max<batch>(x).size() == 0);  // over a non-empty axis: an empty result
  };
  c["reduce-nan"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{3}, k_ax{9});
    x.fill(1);
    x(0, 8) = nan;
    x(1, 4) = nan;
    x(2, 0) = inf;
    const auto s = nax::sum<k_ax>(x), mx = nax::max<k_ax>(x), mn = nax::min<k_ax>(x);
    const auto am = nax::argmax<k_ax>(x);
    for (std::size_t r = 0; r < 2; ++r) {
      CHECK(std::isnan(s(r)));
      CHECK(std::isnan(mx(r)));
      CHECK(std::isnan(mn(r)));
    }
    CHECK(s(2) == inf);
    CHECK(mx(2) == inf);
    CHECK(mn(2) == 1);
    CHECK(am(0) == 8);  // the first NaN
    CHECK(am(1) == 4);
    CHECK(am(2) == 0);
  };
  c["softmax-nan"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{3}, k_ax{5});
    x.fill(0.5f);
    x(0, 2) = nan;
    x(1, 0) = inf;
    const auto p = nax::softmax<k_ax>(x);
    nax::tensor<float, k_ax> gamma(k_ax{5}), beta(k_ax{5});
    gamma.fill(1);
    beta.fill(0);
    const auto n = nax::layer_norm<k_ax>(x, gamma, beta, 1e-5f);
    for (std::size_t j = 0; j < 5; ++j) {
      CHECK(std::isnan(p(0, j)));  // the row of the NaN
      CHECK(std::isnan(p(1, j)));  // inf - inf
      CHECK(p(2, j) == doctest::Approx(0.2));
      CHECK(std::isnan(n(0, j)));
      CHECK(std::isnan(n(1, j)));
      CHECK(n(2, j) == 0);
    }
  };
  c["softmax-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{0});
    nax::tensor<float, k_ax> gamma(k_ax{0}), beta(k_ax{0});
    CHECK(nax::softmax<k_ax>(x).size() == 0);
    CHECK(nax::log_softmax<k_ax>(x).size() == 0);
    CHECK(nax::layer_norm<k_ax>(x, gamma, beta, 1e-5f).size() == 0);
  };
  c["layer-norm-gamma"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{4});
    nax::tensor<float, k_ax> gamma(k_ax{3}), beta(k_ax{4});
    (void)nax::layer_norm<k_ax>(x, gamma, beta, 1e-5f);
  };

  // Layout ops.
  c["take-range"] = [] {
    nax::tensor<float, k_ax, hidden> x(k_ax{5});
    const auto ids = nax::tensor<std::int64_t, batch>::from({0, 7}, batch{2});
    (void)nax::take<k_ax>(x, ids);
  };
  c["take-negative"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{5});
    const auto ids = nax::tensor<std::int32_t, batch>::from({0, -1}, batch{2});
    (void)nax::take_along<k_ax>(x, ids);
  };
  c["slice-range"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{5});
    (void)nax::slice<k_ax>(x, 2, 6);
  };
  c["split-extent"] = [] {
    nax::tensor<float, batch, model> x(batch{2}, model{10});
    (void)nax::split<model, heads, hd>(x);
  };
  c["concat-mismatch"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{3}), y(batch{5}, k_ax{3});
    (void)nax::concat<k_ax>(x, y);
  };
  c["layout-empty"] = [] {
    nax::tensor<float, batch, k_ax> x(batch{2}, k_ax{5});
    x.fill(1);
    CHECK(nax::eval(nax::slice<k_ax>(x, 2, 2)).size() == 0);
    nax::tensor<float, batch, k_ax> none(batch{2}, k_ax{0});
    const auto joined = nax::eval(nax::concat<k_ax>(x, none));
    CHECK(joined.extent<k_ax>() == 5);
  };
}

}  // namespace error_cases
