// take and take_along by a named axis (typed/take.hpp), against plain loops: int32 and int64
// indices, repeated indices, indices with several axes, an axis in the middle of the data, empty
// index tensors, expressions, and the out-of-range message (index, position, extent).
#include <nax/typed/take.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

#include <nax/typed/elementwise.hpp>
#include <nax/typed/layout.hpp>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq">;
using vocab = nax::axis<"vocab">;
using model = nax::axis<"model", 3>;
using head = nax::axis<"head">;

template <class T, class... A, class... E>
nax::tensor<T, A...> counting(E... e) {
  nax::tensor<T, A...> t(e...);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(i) * T(0.5) - T(1);
  return t;
}

}  // namespace

TEST_CASE_TEMPLATE("take gathers rows of an embedding, repeated indices included", I, std::int32_t,
                   std::int64_t) {
  const auto emb = counting<float, vocab, model>(vocab(5));
  const auto ids = nax::tensor<I, batch, seq>::from({4, 0, 4, 2, 2, 1}, batch(2), seq(3));
  const auto e = nax::take<vocab>(emb, ids);
  static_assert(std::is_same_v<decltype(e), const nax::tensor<float, batch, seq, model>>);
  REQUIRE(e.template extent<batch>() == 2);
  REQUIRE(e.template extent<seq>() == 3);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t m = 0; m < 3; ++m)
        CHECK(e(b, s, m) == emb(static_cast<std::size_t>(ids(b, s)), m));
}

TEST_CASE("take along an axis in the middle: the indices' axes take its place") {
  const auto x = counting<double, head, vocab, model>(head(2), vocab(4));
  const auto ids = nax::tensor<std::int64_t, seq>::from({3, 1, 3}, seq(3));
  const auto y = nax::take<vocab>(x, ids);
  static_assert(std::is_same_v<decltype(y), const nax::tensor<double, head, seq, model>>);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t m = 0; m < 3; ++m)
        CHECK(y(h, s, m) == x(h, static_cast<std::size_t>(ids(s)), m));
  // Of an expression, by an expression of indices.
  const auto z = nax::take<vocab>(x * 2.0, ids + std::int64_t(0));
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t m = 0; m < 3; ++m) CHECK(z(h, s, m) == 2.0 * y(h, s, m));
  // A rank-0 index drops the axis.
  const nax::tensor<std::int32_t> two = nax::tensor<std::int32_t>::from({2});
  const auto row = nax::take<vocab>(x, two);
  static_assert(std::is_same_v<decltype(row), const nax::tensor<double, head, model>>);
  CHECK(row(1, 2) == x(1, 2, 2));
}

TEST_CASE("take with no indices, and from an empty axis with none") {
  const auto emb = counting<float, vocab, model>(vocab(5));
  const nax::tensor<std::int32_t, batch, seq> none(batch(2), seq(0));
  const auto e = nax::take<vocab>(emb, none);
  CHECK(e.size() == 0);
  CHECK(e.extent<batch>() == 2);
  const nax::tensor<float, vocab, model> empty(vocab(0));
  CHECK(nax::take<vocab>(empty, none).size() == 0);
}

TEST_CASE("take: an index outside the axis is an error naming it, its position and the extent") {
  const auto emb = counting<float, vocab, model>(vocab(5));
  const auto ids = nax::tensor<std::int64_t, batch, seq>::from({0, 1, 2, 3, 4, 7}, batch(2), seq(3));
  CHECK_THROWS_WITH_AS(nax::take<vocab>(emb, ids),
                       "nax::take<vocab>: index 7 at [batch=1, seq=2] is outside vocab's extent 5",
                       nax::shape_error);
  // Negative indices do not wrap.
  const auto neg = nax::tensor<std::int32_t, seq>::from({0, -1}, seq(2));
  CHECK_THROWS_WITH_AS(nax::take<vocab>(emb, neg),
                       "nax::take<vocab>: index -1 at [seq=1] is outside vocab's extent 5",
                       nax::shape_error);
  const nax::tensor<float, vocab, model> empty(vocab(0));
  CHECK_THROWS_WITH_AS(nax::take<vocab>(empty, nax::tensor<std::int32_t>::from({0})),
                       "nax::take<vocab>: index 0 at [] is outside vocab's extent 0",
                       nax::shape_error);
}

TEST_CASE_TEMPLATE("take_along picks the label's entry of each row", I, std::int32_t,
                   std::int64_t) {
  const auto logp = counting<float, batch, seq, vocab>(batch(2), seq(3), vocab(4));
  const auto labels = nax::tensor<I, batch, seq>::from({3, 0, 1, 1, 2, 3}, batch(2), seq(3));
  const auto p = nax::take_along<vocab>(logp, labels);
  static_assert(std::is_same_v<decltype(p), const nax::tensor<float, batch, seq>>);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(p(b, s) == logp(b, s, static_cast<std::size_t>(labels(b, s))));
}

TEST_CASE("take_along along an axis that is not last, against a loop; errors") {
  const auto x = counting<double, batch, vocab, seq>(batch(2), vocab(4), seq(3));
  const auto ix = nax::tensor<std::int64_t, seq, batch>::from({0, 3, 1, 2, 3, 3}, seq(3), batch(2));
  const auto y = nax::take_along<vocab>(x, ix);
  static_assert(std::is_same_v<decltype(y), const nax::tensor<double, batch, seq>>);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(y(b, s) == x(b, static_cast<std::size_t>(ix(s, b)), s));
  const auto bad = nax::tensor<std::int32_t, batch, seq>::from({0, 1, 2, 3, 4, 0}, batch(2), seq(3));
  CHECK_THROWS_WITH_AS(nax::take_along<vocab>(x, bad),
                       "nax::take_along<vocab>: index 4 at [batch=1, seq=1] is outside vocab's "
                       "extent 4",
                       nax::shape_error);
  const nax::tensor<std::int32_t, batch, seq> wrong(batch(2), seq(2));
  CHECK_THROWS_AS(nax::take_along<vocab>(x, wrong), nax::shape_error);
  const nax::tensor<std::int32_t, batch, seq> none(batch(0), seq(3));
  CHECK(nax::take_along<vocab>(nax::tensor<double, batch, vocab, seq>(batch(0), vocab(4), seq(3)),
                               none)
            .size() == 0);
}
