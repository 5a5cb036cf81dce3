// The VJPs of transpose, reshape, rename, split, merge, broadcast, slice (steps and offsets) and
// concat; against central differences in double.
#include "../grad_check.hpp"

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("transpose, reshape, rename, split, merge and broadcast") {
  g::builder b;
  const dim six = dim::named("m", 6), h = dim::named("h", 2);
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("seq"), six}));
  const g::value v = b.parameter("v", shape::make(dtype::f64, {h}));
  const g::value split = g::split(x, "m", dim::named("heads", 2), dim::named("hd", 3));
  const g::value t = g::transpose(split, {1, 0, 2});              // [heads, seq, hd]
  const g::value keys = g::rename(x, "seq", "kseq");              // a dynamic axis renamed
  const g::value scores = g::dot_general(x, keys, {{"m", "m"}});  // [seq, kseq]
  const g::value merged = g::merge(t, "heads", "hd", "mm");       // [seq, mm] (a transpose)
  const g::value flat = g::reshape(x, {dim("seq"), dim::named("a", 3), dim::named("b", 2)});
  const g::value wide =
      g::broadcast(v, shape::make(dtype::f64, {dim("seq"), dim::named("k", 3), h}));
  const g::value loss = g::sum(g::tanh(t) * t, {0, 1, 2}) + g::sum(scores * scores, {0, 1}) +
                        g::sum(g::sigmoid(merged) * merged, {0, 1}) +
                        g::sum(flat * flat, {0, 1, 2}) + g::sum(wide * g::sigmoid(wide), {0, 1, 2});
  std::mt19937 rng(7);
  grad_check::check(b, loss, {x, v}, grad_check::inputs(b, {{"seq", 3}}, rng));
}

TEST_CASE("slices with offsets and steps, and concat") {
  g::builder b;
  const g::value x = b.parameter("x", shape::make(dtype::f64, {dim("batch"), dim::named("n", 9)}));
  const g::value y = b.parameter("y", shape::make(dtype::f64, {dim("batch"), dim::named("n", 2)}));
  const g::value a = g::slice(x, "n", 2, 7);      // 5 entries
  const g::value s2 = g::slice(x, "n", 1, 9, 2);  // 1, 3, 5, 7
  const g::value s3 = g::slice(x, "n", 0, 8, 3);  // 0, 3, 6: the last step runs past the end
  const g::value c = g::concat({g::tanh(s2), y, s3 * s3}, "n");
  const g::value loss = g::sum(a * a, {0, 1}) + g::sum(c * g::exp(c), {0, 1});
  std::mt19937 rng(8);
  grad_check::check(b, loss, {x, y}, grad_check::inputs(b, {{"batch", 2}}, rng));
}
