// docs/errors.md's cases: the graph builder, compile options, runs and dyn_tensor
// (error_cases.hpp).
#include "error_cases.hpp"

namespace error_cases {

void add_graph_cases(case_map& c) {
  // The graph builder.
  c["graph-dtype"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    auto y = b.parameter("y", shape::make(dtype::f64, {"batch", 4}));
    (void)(x + y);
  };
  c["graph-floating"] = [] {
    g::builder b;
    auto i = b.parameter("i", shape::make(dtype::i32, {"batch", 4}));
    (void)g::tanh(i);
  };
  c["graph-extent"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    auto y = b.parameter("y", f32({"batch", 5}));
    (void)(x * y);
  };
  c["graph-rank"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", "seq", 4}));
    (void)g::transpose(x, {0, 1});
  };
  c["graph-axis"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", "seq", 4}));
    (void)g::sum(x, {"hidden"});
  };
  c["graph-contract"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 512}));
    auto w = b.parameter("w", f32({256, 128}));
    (void)g::dot_general(x, w, {{1, 0}});
  };
  c["graph-dot-axis"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", nax::dim::named("k", 4)}));
    auto w = b.parameter("w", f32({nax::dim::named("k", 4), 8}));
    (void)g::dot(x, w, {"hidden"});
  };
  c["graph-dot-position"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", nax::dim::named("k", 4)}));
    auto w = b.parameter("w", f32({nax::dim::named("k", 4), 8}));
    (void)g::dot(x, w, {1});
  };
  c["graph-take-indices"] = [] {
    g::builder b;
    auto embed = b.parameter("embed", f32({"vocab", 4}));
    auto ids = b.parameter("ids", f32({"batch"}));
    (void)g::take(embed, "vocab", ids);
  };
  c["graph-cumsum-type"] = [] {
    g::builder b;
    auto m = b.parameter("m", shape::make(dtype::boolean, {"batch", 4}));
    (void)g::cumsum(m, "batch");
  };
  c["graph-parameter"] = [] {
    g::builder b;
    (void)b.parameter("x", f32({"batch", 4}));
    (void)b.parameter("x", f32({4}));
  };
  c["graph-concat-overflow"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({2, 4}));
    auto y = b.parameter("y", f32({2, std::numeric_limits<std::int64_t>::max()}));
    (void)g::concat({x, y}, 1);
  };
  c["graph-grad"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    (void)g::grad(g::sum(x, {1}), {x});
  };

  // Compile options.
  c["compile-max-specializations"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    (void)g::compile(b, {g::exp(x)}, {.max_specializations = 0});
  };
  c["compile-max-extents"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    g::compile_options o;
    o.max_extents_per_specialization = 0;
    (void)g::compile(b, {g::exp(x)}, o);
  };
  c["compile-bound-policy"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    g::compile_options o;
    o.bounded_axes = {{"batch", {g::size_policy::bound}}};
    (void)g::compile(b, {g::exp(x)}, o);
  };
  c["compile-overflow"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({4}));
    const std::size_t big = std::size_t{1} << 31;
    (void)g::compile(b, {g::broadcast(x, f32({big, big, 4}))});
  };

  // run.
  c["run-count"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 3)});
  };
  c["run-dtype"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 3), run_graph::t({{"batch", 2}, {"h", 6}}, dtype::f64)});
  };
  c["run-rank"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 3), run_graph::t({{"batch", 2}})});
  };
  c["run-take-range"] = [] {
    g::builder b;
    auto embed = b.parameter("embed", f32({"vocab", 4}));
    auto ids = b.parameter("ids", shape::make(dtype::i32, {"batch"}));
    auto ex = g::compile(b, {g::take(embed, "vocab", ids)});
    dyn_tensor e(shape::make(dtype::f32, {dim::named("vocab", 5), 4}));
    dyn_tensor t(shape::make(dtype::i32, {dim::named("batch", 2)}));
    t.data<std::int32_t>()[0] = 0;
    t.data<std::int32_t>()[1] = 7;
    (void)ex.run({e, t});
  };
  c["run-bound"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 9), run_graph::c(2)});
  };
  c["run-static"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 3), run_graph::t({{"batch", 2}, {"h", 7}})});
  };
  c["run-binding"] = [] {
    run_graph r;
    (void)r.ex.run({run_graph::a(2, 3), run_graph::c(3)});
  };
  c["run-output-shape"] = [] {
    run_graph r;
    const dyn_tensor in[] = {run_graph::a(2, 3), run_graph::c(2)};
    dyn_tensor out[] = {run_graph::c(3)};
    r.ex.run(in, out);
  };
  c["run-output-name"] = [] {
    run_graph r;
    const dyn_tensor in[] = {run_graph::a(2, 3), run_graph::c(2)};
    dyn_tensor out[] = {run_graph::t({{"rows", 2}, {"h", 6}})};
    r.ex.run(in, out);
  };
  c["run-output-unnamed"] = [] {
    run_graph r;
    dyn_tensor in[] = {run_graph::a(2, 3), run_graph::c(2)};
    for (dyn_tensor& t : in)
      for (std::size_t i = 0; i < t.shape().num_elements(); ++i)
        t.data<float>()[i] = static_cast<float>(i % 5);
    dyn_tensor out[] = {dyn_tensor(f32({2, 6}))};
    r.ex.run(in, out);
    const dyn_tensor want = r.ex.run(in)[0];
    for (std::size_t i = 0; i < 12; ++i) CHECK(out[0].data<float>()[i] == want.data<float>()[i]);
  };
  c["run-output-count"] = [] {
    run_graph r;
    const dyn_tensor in[] = {run_graph::a(2, 3), run_graph::c(2)};
    dyn_tensor out[] = {run_graph::c(2), run_graph::c(2)};
    r.ex.run(in, out);
  };
  c["run-alias-input"] = [] {
    auto ex = elementwise_graph();
    const dyn_tensor x(f32({dim::named("batch", 3), 4}));
    const dyn_tensor in[] = {x};
    dyn_tensor out[] = {x};  // a copy shares the buffer
    ex.run(in, out);
  };
  c["run-alias-outputs"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    auto ex = g::compile(b, {x * 2.0, x + 1.0});
    const dyn_tensor in[] = {dyn_tensor(f32({dim::named("batch", 3), 4}))};
    const dyn_tensor y(f32({dim::named("batch", 3), 4}));
    dyn_tensor out[] = {y, y};
    ex.run(in, out);
  };
  c["run-overflow"] = [] {
    g::builder b;
    auto x = b.parameter("x", f32({"batch", 4}));
    const std::size_t big = std::size_t{1} << 31;
    auto ex = g::compile(b, {g::broadcast(x, f32({big, big, "batch", 4}))});
    (void)ex.run({dyn_tensor(f32({dim::named("batch", 2), 4}))});
  };
  c["run-nan"] = [] {
    g::builder b;
    const dim k = dim::named("k", 5), h = dim::named("h", 3);
    auto x = b.parameter("x", f32({"batch", k}));
    auto w = b.parameter("w", f32({k, h}));
    auto y = g::relu(g::dot_general(x, w, {{"k", "k"}}));
    auto ex = g::compile(b, {y, g::reduce_max(x, {"k"}), g::softmax(x, "k"), g::exp(x) * 2.0});
    dyn_tensor xv(f32({dim::named("batch", 3), k})), wv(f32({k, h}));
    xv.fill(1.f);
    wv.fill(0.5f);
    xv.data<float>()[1 * 5 + 4] = nan;  // row 1
    xv.data<float>()[2 * 5 + 0] = inf;  // row 2
    const std::vector<dyn_tensor> out = ex.run({xv, wv});
    const float *dense = out[0].data<float>(), *mx = out[1].data<float>(),
                *sm = out[2].data<float>(), *ew = out[3].data<float>();
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK(dense[0 * 3 + j] == 2.5f);
      CHECK(std::isnan(dense[1 * 3 + j]));
      CHECK(dense[2 * 3 + j] == inf);
    }
    CHECK(mx[0] == 1);
    CHECK(std::isnan(mx[1]));
    CHECK(mx[2] == inf);
    for (std::size_t j = 0; j < 5; ++j) {
      CHECK(sm[j] == doctest::Approx(0.2));
      CHECK(std::isnan(sm[5 + j]));
    }
    CHECK(std::isnan(ew[5 + 4]));
    CHECK(ew[10] == inf);
    CHECK(ew[0] == doctest::Approx(2 * std::exp(1.0)));
  };
  c["run-empty"] = [] {
    g::builder b;
    const dim k = dim::named("k", 5);
    auto x = b.parameter("x", f32({"batch", k}));
    auto n = b.parameter("n", f32({"batch", "m"}));
    auto ex = g::compile(b, {g::tanh(x), g::sum(x, {"batch"}), g::sum(n, {"m"})});
    const std::vector<dyn_tensor> out =
        ex.run({dyn_tensor(f32({dim::named("batch", 0), k})),
                dyn_tensor(f32({dim::named("batch", 0), dim::named("m", 0)}))});
    CHECK(out[0].size() == 0);
    REQUIRE(out[1].size() == 5);
    for (std::size_t j = 0; j < 5; ++j) CHECK(out[1].data<float>()[j] == 0);
    CHECK(out[2].size() == 0);
    const std::vector<dyn_tensor> sums =
        ex.run({dyn_tensor(f32({dim::named("batch", 2), k})),
                dyn_tensor(f32({dim::named("batch", 2), dim::named("m", 0)}))});
    REQUIRE(sums[2].size() == 2);
    CHECK(sums[2].data<float>()[1] == 0);  // a sum over an empty axis is 0
  };
  c["pre-specialize"] = [] {
    run_graph r;
    r.ex.pre_specialize({nax::bindings{{"seq", 3}}});
  };

  // dyn_tensor.
  c["dyn-no-extent"] = [] { dyn_tensor x(f32({"batch", 3})); };
  c["dyn-overflow"] = [] {
    const std::size_t big = std::size_t{1} << 62;
    dyn_tensor x(f32({dim::named("a", big)}));
  };
  c["dyn-wrap-null"] = [] {
    (void)dyn_tensor::wrap(f32({dim::named("batch", 2), dim::named("hidden", 3)}), nullptr);
  };
  c["dyn-wrap-misaligned"] = [] {
    alignas(16) static std::byte bytes[16] = {};
    (void)dyn_tensor::wrap(shape::make(dtype::i32, {2}), bytes + 2);
  };
  c["dyn-dtype"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("hidden", 3)}));
    (void)x.data<double>();
  };
  c["dyn-extent-index"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("hidden", 3)}));
    (void)x.extent(2);
  };
  c["dyn-extent-name"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("hidden", 3)}));
    (void)x.extent("seq");
  };
  c["typed-view-rank"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("seq", 5)}));
    (void)nax::typed_view<float, batch>(x);
  };
  c["typed-view-axis"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("seq", 5)}));
    (void)nax::typed_view<float, seq, batch>(x);
  };
  c["typed-view-static"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("hidden", 5)}));
    (void)nax::typed_view<float, batch, hidden>(x);
  };
  c["typed-view-bound"] = [] {
    dyn_tensor x(f32({dim::named("batch", 2), dim::named("seq", 600)}));
    (void)nax::typed_view<float, batch, seq>(x);
  };
  c["to-dyn-strided"] = [] {
    nax::tensor<float, batch, hidden> t(batch{3});
    (void)nax::to_dyn(nax::permute<hidden, batch>(t));
  };
  c["dyn-empty"] = [] {
    dyn_tensor x(f32({dim::named("batch", 0), 4}));
    CHECK(x.empty());
    CHECK((x.data() == nullptr));
    CHECK(x.clone().empty());
    const dyn_tensor w = dyn_tensor::wrap(f32({dim::named("batch", 0), 4}), nullptr);
    CHECK(nax::typed_view<float, batch, hidden>(w).size() == 0);
  };
}

}  // namespace error_cases
