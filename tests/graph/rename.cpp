// graph rename: an axis under another name, no data moved; a renamed dynamic axis is bound as its
// source, so self-attention's scores over [seq, kseq] specialize per seq alone.
#include <nax/graph/ops.hpp>
#include <nax/runtime/compile.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::shape;

TEST_CASE("rename keeps the extent: static, dynamic or bounded") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", dim::bounded("seq", 16), 8}));
  CHECK(g::rename(x, "seq", "kseq").shape().to_string() == "f32[batch, kseq<=16, 8]");
  const g::value h = g::rename(x, 2, "h");  // a static axis: its name changes, its extent stays
  CHECK(h.shape()[2].name() == "h");
  CHECK(h.shape()[2].extent() == 8);
  CHECK(g::rename(x, "batch", "b").shape().to_string() == "f32[b, seq<=16, 8]");
  CHECK(g::rename(x, "seq", "seq").id() == x.id());  // nothing to do: x itself
  CHECK(b.axis_aliases().size() == 2);               // kseq and b, not h (static)
  CHECK(b.axis_aliases()[0] == g::axis_alias{"kseq", "seq"});
  // A renamed alias is bound as the first source.
  auto k = g::rename(x, "seq", "kseq");
  CHECK(g::rename(k, "kseq", "k2").shape().to_string() == "f32[batch, k2<=16, 8]");
  CHECK(b.axis_aliases().back() == g::axis_alias{"k2", "seq"});
}

TEST_CASE("rename errors name the operand, the axis and the new name") {
  g::builder b;
  auto x = b.parameter("x", shape::make(dtype::f32, {"batch", "seq", dim()}));
  auto y = b.parameter("y", shape::make(dtype::f32, {"time"}));
  CHECK_THROWS_WITH_AS(g::rename(x, "hidden", "h"),
                       "nax::graph::rename: operand 0 (f32[batch, seq, ?]) has no axis 'hidden'",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::rename(x, "seq", "batch"),
                       "nax::graph::rename(f32[batch, seq, ?], axis 'seq' -> 'batch'): the operand "
                       "already has an axis 'batch' (0)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(g::rename(x, 2, "h"),
                       "nax::graph::rename(f32[batch, seq, ?], axis 2 -> 'h'): the axis is dynamic "
                       "and unnamed: a renamed dynamic axis is bound by its source's name",
                       nax::shape_error);
  g::rename(x, "seq", "k");
  CHECK_THROWS_WITH_AS(g::rename(y, "time", "k"),
                       "nax::graph::rename: 'k' already names axis 'seq' renamed; it cannot also "
                       "be 'time'",
                       nax::shape_error);
  g::builder c;
  auto p = c.parameter("p", shape::make(dtype::f32, {"seq"}));
  auto q = c.parameter("q", shape::make(dtype::f32, {"kseq"}));
  auto r = g::rename(p, "seq", "kseq");
  CHECK_THROWS_WITH_AS(g::compile(c, {r + q}),
                       "nax::graph::compile: axis 'kseq' is both an input's axis and axis 'seq' "
                       "renamed",
                       nax::shape_error);
}

TEST_CASE("attention scores over [seq, kseq] from one input bind by seq alone") {
  g::builder b;
  const dim d = dim::named("d", 4);
  auto x = b.parameter("x", shape::make(dtype::f32, {"seq", d}));
  auto k = g::rename(x, "seq", "kseq");
  auto scores = g::softmax(g::dot_general(x, k, {{"d", "d"}}), "kseq");
  REQUIRE(scores.shape().to_string() == "f32[seq, kseq]");
  auto ex = g::compile(b, {scores});
  CHECK(ex.program().dynamic_axes.size() == 1);
  CHECK(ex.program().axis_aliases.size() == 1);

  for (std::size_t n : {3u, 5u, 3u}) {
    CAPTURE(n);
    nax::dyn_tensor in(shape::make(dtype::f32, {dim::named("seq", n), d}));
    float* v = in.data<float>();
    for (std::size_t i = 0; i < in.size(); ++i) v[i] = 0.1f * static_cast<float>(i % 7) - 0.2f;
    const std::vector<nax::dyn_tensor> out = ex.run(std::span<const nax::dyn_tensor>(&in, 1));
    REQUIRE(out[0].shape().rank() == 2);
    CHECK(out[0].shape()[0] == dim::named("seq", n));
    CHECK(out[0].shape()[1] == dim::named("kseq", n));
    const float* s = out[0].data<float>();
    for (std::size_t i = 0; i < n; ++i) {
      // The reference: scores of row i against every row, then softmax, in double.
      std::vector<double> e(n);
      double total = 0;
      double top = -INFINITY;
      for (std::size_t j = 0; j < n; ++j) {
        double dotv = 0;
        for (std::size_t c = 0; c < 4; ++c) dotv += double(v[i * 4 + c]) * double(v[j * 4 + c]);
        e[j] = dotv;
        top = std::max(top, dotv);
      }
      for (double& z : e) total += (z = std::exp(z - top));
      for (std::size_t j = 0; j < n; ++j) CHECK(s[i * n + j] == doctest::Approx(e[j] / total));
    }
  }
  const nax::specialization_stats st = ex.stats();
  CHECK(st.misses == 2);  // {seq: 3} and {seq: 5}: kseq is not a separate key
  CHECK(st.hits == 1);
}
