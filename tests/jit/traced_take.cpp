// take<A> and take_along<A> under nax::jit and nax::value_and_grad (jit/traced_take.hpp): the
// same results as the eager ops, int32 and int64 ids, the embedding's gradient (a scatter-add:
// repeated ids add up, rows never read get zeros) and take_along's (the incoming gradient at the
// label), the out-of-range error at run time.
#include <nax/jit/traced_take.hpp>
#include <nax/jit/value_and_grad.hpp>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include <doctest/doctest.h>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/reduce.hpp>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
using vocab = nax::axis<"vocab", 6>;
using model = nax::axis<"model", 3>;

template <class Tensor>
void fill(Tensor& t, double seed) {
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data()[i] = static_cast<typename Tensor::value_type>(std::sin(seed + 1.7 * double(i)));
}

}  // namespace

TEST_CASE_TEMPLATE("take under nax::jit: the eager op's rows; its gradient a scatter-add", I,
                   std::int32_t, std::int64_t) {
  const auto embed = [](auto e, auto ids) { return nax::take<vocab>(e, ids) * 2.0; };
  auto f = nax::jit(embed, nax::input<double, vocab, model>("e"),
                    nax::input<I, batch, seq>("ids"));
  nax::tensor<double, vocab, model> e;
  fill(e, 0.3);
  const auto ids = nax::tensor<I, batch, seq>::from({5, 0, 5, 2, 5, 1}, batch(2), seq(3));
  const nax::tensor<double, batch, seq, model> got = f(e, ids);
  const nax::tensor<double, batch, seq, model> want = nax::take<vocab>(e, ids) * 2.0;
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == want.data()[i]);

  // loss = sum tanh(take(e, ids)) * w: d/de[v, m] = sum over (b, s) with ids == v of
  // (1 - tanh(e[v, m])^2) * w[b, s, m].
  const auto loss_fn = [](auto e2, auto ids2, auto w) {
    return nax::sum<batch, seq, model>(nax::tanh(nax::take<vocab>(e2, ids2)) * w);
  };
  auto step = nax::value_and_grad(loss_fn, nax::input<double, vocab, model>("e"),
                                  nax::data<I, batch, seq>("ids"),
                                  nax::data<double, batch, seq, model>("w"));
  nax::tensor<double, batch, seq, model> w{batch(2), seq(3)};
  fill(w, 1.1);
  auto [loss, grads] = step(e, ids, w);
  static_assert(std::tuple_size_v<decltype(grads)> == 1);
  const auto& ge = std::get<0>(grads);
  double want_loss = 0;
  nax::tensor<double, vocab, model> want_g;
  want_g.fill(0.0);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t m = 0; m < 3; ++m) {
        const auto v = static_cast<std::size_t>(ids(b, s));
        const double t = std::tanh(e(v, m));
        want_loss += t * w(b, s, m);
        want_g(v, m) += (1 - t * t) * w(b, s, m);
      }
  CHECK(loss.data()[0] == doctest::Approx(want_loss).epsilon(1e-12));
  for (std::size_t v = 0; v < 6; ++v)
    for (std::size_t m = 0; m < 3; ++m) {
      CAPTURE(v);
      CHECK(ge(v, m) == doctest::Approx(want_g(v, m)).epsilon(1e-12));
    }
  CHECK(ge(3, 0) == 0.0);  // never read
  CHECK(ge(4, 2) == 0.0);

  // An id outside vocab: the run throws, naming it.
  const auto bad = nax::tensor<I, batch, seq>::from({0, 1, 2, 3, 4, 9}, batch(2), seq(3));
  CHECK_THROWS_WITH_AS(f(e, bad),
                       "nax::graph::take: index 9 at [batch=1, seq=2] is outside vocab's extent 6",
                       nax::shape_error);
}

TEST_CASE("take_along under nax::jit: the label's entry; its gradient at the label only") {
  const auto pick = [](auto x, auto labels) { return nax::take_along<vocab>(x, labels); };
  auto f = nax::jit(pick, nax::input<float, batch, seq, vocab>("x"),
                    nax::input<std::int64_t, seq, batch>("labels"));
  nax::tensor<float, batch, seq, vocab> x{batch(2), seq(3)};
  fill(x, 0.2);
  const auto labels =
      nax::tensor<std::int64_t, seq, batch>::from({5, 0, 1, 1, 2, 3}, seq(3), batch(2));
  const nax::tensor<float, batch, seq> got = f(x, labels);
  const auto want = nax::take_along<vocab>(x, labels);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s) CHECK(got(b, s) == want(b, s));

  // The cross-entropy's pick: loss = -sum take_along(log_softmax(x), labels); d/dx at the label
  // is softmax - 1, elsewhere softmax.
  const auto loss_fn = [](auto logits, auto ids) {
    return -nax::sum<batch, seq>(nax::take_along<vocab>(nax::log_softmax<vocab>(logits), ids));
  };
  auto step = nax::value_and_grad(loss_fn, nax::input<double, batch, seq, vocab>("x"),
                                  nax::data<std::int32_t, batch, seq>("labels"));
  nax::tensor<double, batch, seq, vocab> xd{batch(2), seq(3)};
  fill(xd, 0.9);
  const auto lab = nax::tensor<std::int32_t, batch, seq>::from({5, 0, 5, 2, 2, 1}, batch(2), seq(3));
  auto [loss, grads] = step(xd, lab);
  const auto& gx = std::get<0>(grads);
  double want_loss = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s) {
      double z = 0;
      for (std::size_t v = 0; v < 6; ++v) z += std::exp(xd(b, s, v));
      const auto l = static_cast<std::size_t>(lab(b, s));
      want_loss -= xd(b, s, l) - std::log(z);
      for (std::size_t v = 0; v < 6; ++v)
        CHECK(gx(b, s, v) ==
              doctest::Approx(std::exp(xd(b, s, v)) / z - (v == l ? 1.0 : 0.0)).epsilon(1e-12));
    }
  CHECK(loss.data()[0] == doctest::Approx(want_loss).epsilon(1e-12));
}
