// docs/errors.md, checked. Every row of its table is a case here and every case is a row (by the
// row's id), so the two cannot drift. A row whose message is code is a bad input: its case must
// throw the row's exception type with exactly the row's message (`<file>` stands for the file
// the case uses). A row whose message is prose is a behaviour (NaN and inf propagated, empty
// axes), which its case checks.
#include <nax/io/safetensors.hpp>
#include <nax/nax.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

namespace {

// The axes the table's inputs are written with (docs/errors.md says so above the table).
using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 4>;
using k_ax = nax::axis<"k">;
using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using model = nax::axis<"model">;
using heads = nax::axis<"heads", 3>;
using hd = nax::axis<"hd", 4>;

// The struct of parameters of the rows *-fields-*.
struct layer {
  nax::tensor<float, k_ax> w;
  NAX_FIELDS(w)
};
struct net {
  std::vector<layer> layers;
  NAX_FIELDS(layers)
};
net make_net(std::size_t layers, std::size_t k = 4) {
  net n;
  for (std::size_t i = 0; i < layers; ++i) {
    n.layers.push_back({nax::tensor<float, k_ax>(k_ax(k))});
    n.layers.back().w.fill(0);
  }
  return n;
}

const float nan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();

// --- the table ------------------------------------------------------------------------------

struct row {
  std::size_t line = 0;
  std::string id, exception, message;
  bool error = false;  // the message is code: a bad input that throws it
};

// The cells of a Markdown table line (`|` inside a cell written `\|`), trimmed.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return out;
}

// `text` without its backticks if it is one code span, else empty.
std::string code(const std::string& text) {
  if (text.size() < 2 || text.front() != '`' || text.back() != '`') return "";
  const std::string inner = text.substr(1, text.size() - 2);
  return inner.find('`') == std::string::npos ? inner : "";
}

// The rows of the table in docs/errors.md: the lines after its header `| id | ...`.
std::vector<row> read_table() {
  const char* root = std::getenv("NAX_SOURCE_DIR");
  REQUIRE_MESSAGE(root != nullptr, "NAX_SOURCE_DIR (the repository's root) is not set");
  const std::string path = std::string(root) + "/docs/errors.md";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, path << " cannot be read");
  std::vector<row> rows;
  std::string line;
  bool in_table = false;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.rfind("| id |", 0) == 0) {
      REQUIRE_MESSAGE(!in_table, "docs/errors.md:" << n << ": a second table");
      in_table = true;
      std::getline(in, line);  // | --- | ...
      ++n;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|", 0) != 0) {
      if (!rows.empty()) break;  // the table's end
      continue;
    }
    const std::vector<std::string> c = cells(line);
    REQUIRE_MESSAGE(c.size() == 5,
                    "docs/errors.md:" << n << ": a row has 5 cells, not " << c.size());
    row r;
    r.line = n;
    r.id = code(c[0]);
    REQUIRE_MESSAGE(!r.id.empty(), "docs/errors.md:" << n << ": the id is not code");
    r.exception = code(c[3]).empty() ? c[3] : code(c[3]);  // `nax::shape_error`, or none
    r.message = code(c[4]);
    r.error = !r.message.empty();
    if (!r.error) r.message = c[4];
    rows.push_back(r);
  }
  return rows;
}

// --- helpers for the cases --------------------------------------------------------------------

std::string temp_file(const char* name) {
  std::string file = "nax_errors_";
  file += std::to_string(::getpid());
  file += '_';
  file += name;
  return (std::filesystem::temp_directory_path() / file).string();
}

// The file a case writes and reads (`<file>` in the table's messages).
std::string current_file;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

// A graph: y[batch, h] = sum over seq of a[batch, seq<=8, h] + c[batch, h] (h = 6).
struct run_graph {
  g::builder b;
  nax::executable ex;
  run_graph() : ex(make(b)) {}
  static nax::executable make(g::builder& b) {
    const dim h = dim::named("h", 6);
    auto a = b.parameter("a", f32({"batch", dim::bounded("seq", 8), h}));
    auto c = b.parameter("c", f32({"batch", h}));
    return g::compile(b, {g::sum(a, {"seq"}) + c});
  }
  static dyn_tensor t(std::initializer_list<std::pair<const char*, std::size_t>> dims,
                      dtype type = dtype::f32) {
    std::vector<dim> d;
    for (auto [n, e] : dims) d.push_back(dim::named(n, e));
    return dyn_tensor(shape(type, std::span<const dim>(d)));
  }
  static dyn_tensor a(std::size_t batch, std::size_t seq) {
    return t({{"batch", batch}, {"seq", seq}, {"h", 6}});
  }
  static dyn_tensor c(std::size_t batch) { return t({{"batch", batch}, {"h", 6}}); }
};

// A graph of one input and one result of its shape: y[batch, 4] = x * 2 + 1.
nax::executable elementwise_graph() {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", 4}));
  return g::compile(b, {x * 2.0 + 1.0});
}

const auto dense = [](auto x, auto w) { return nax::relu(nax::dot<hidden>(x, w)); };

// --- the cases ----------------------------------------------------------------------------------

std::map<std::string, std::function<void()>> make_cases() {
  std::map<std::string, std::function<void()>> c;

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
  c["graph-take-indices"] = [] {
    g::builder b;
    auto embed = b.parameter("embed", f32({"vocab", 4}));
    auto ids = b.parameter("ids", f32({"batch"}));
    (void)g::take(embed, "vocab", ids);
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

  // nax::jit.
  c["jit-binding"] = [] {
    auto add = nax::jit([](auto a, auto b) { return a + b; }, nax::input<float, batch, hidden>("a"),
                        nax::input<float, batch, hidden>("b"));
    nax::tensor<float, batch, hidden> a(batch{3}), b(batch{4});
    (void)add(a, b);
  };
  c["jit-options"] = [] {
    (void)nax::jit({.max_specializations = 0}, dense, nax::input<float, batch, hidden>("x"),
                   nax::input<float, hidden, k_ax>("w"));
  };
  c["jit-nan"] = [] {
    auto f = nax::jit(dense, nax::input<float, batch, hidden>("x"),
                      nax::input<float, hidden, k_ax>("w"));
    nax::tensor<float, batch, hidden> x(batch{2});
    nax::tensor<float, hidden, k_ax> w(k_ax{3});
    x.fill(1);
    w.fill(0.25f);
    x(1, 3) = nan;
    const nax::tensor<float, batch, k_ax> y = f(x, w);
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK(y(0, j) == 1);
      CHECK(std::isnan(y(1, j)));  // relu(NaN) is NaN
    }
  };
  c["jit-empty"] = [] {
    auto f = nax::jit(dense, nax::input<float, batch, hidden>("x"),
                      nax::input<float, hidden, k_ax>("w"));
    nax::tensor<float, batch, hidden> x(batch{0});
    nax::tensor<float, hidden, k_ax> w(k_ax{3});
    w.fill(1);
    CHECK(f(x, w).size() == 0);
    nax::tensor<float, hidden, k_ax> none(k_ax{0});
    nax::tensor<float, batch, hidden> x2(batch{2});
    x2.fill(1);
    CHECK(f(x2, none).size() == 0);
  };

  // Files.
  c["npy-missing"] = [] {
    current_file = temp_file("missing.npy");
    (void)nax::io::load_npy(current_file);
  };
  c["npy-magic"] = [] {
    current_file = temp_file("magic.npy");
    write_bytes(current_file, "PK\x03\x04 a zip file, not a .npy file");
    (void)nax::io::load_npy(current_file);
  };
  c["npy-truncated"] = [] {
    current_file = temp_file("truncated.npy");
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }";
    header += '\n';
    std::string file = "\x93NUMPY";
    file += '\x01';
    file += '\x00';
    file += static_cast<char>(header.size());
    file += '\x00';
    write_bytes(current_file, file + header);
    (void)nax::io::load_npy(current_file);
  };
  c["npy-dtype"] = [] {
    current_file = temp_file("dtype.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{2}));
    (void)nax::io::load_npy<double, batch, hidden>(current_file);
  };
  c["npy-rank"] = [] {
    current_file = temp_file("rank.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{2}));
    (void)nax::io::load_npy<float, batch>(current_file);
  };
  c["npy-extent"] = [] {
    current_file = temp_file("extent.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, k_ax>(batch{2}, k_ax{5}));
    (void)nax::io::load_npy<float, batch, hidden>(current_file);
  };
  c["npy-bound"] = [] {
    current_file = temp_file("bound.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{600}));
    (void)nax::io::load_npy<float, seq, hidden>(current_file);
  };
  c["npz-entry"] = [] {
    current_file = temp_file("entry.npz");
    nax::tensor<float, hidden> w;
    nax::io::save_npz(current_file, {{"w", nax::io::to_dyn(w)}, {"b", nax::io::to_dyn(w)}});
    (void)nax::io::load_npz<float, hidden>(current_file, "w3");
  };
  c["npz-duplicate"] = [] {
    current_file = temp_file("duplicate.npz");
    nax::tensor<float, hidden> w;
    nax::io::save_npz(current_file, {{"w", nax::io::to_dyn(w)}, {"w", nax::io::to_dyn(w)}});
  };
  c["npy-nan-empty"] = [] {
    current_file = temp_file("values.npy");
    nax::tensor<float, batch, hidden> x(batch{1});
    x.fill(nan);
    x(0, 1) = inf;
    nax::io::save_npy(current_file, x);
    const auto y = nax::io::load_npy<float, batch, hidden>(current_file);
    CHECK(std::isnan(y(0, 0)));
    CHECK(y(0, 1) == inf);
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{0}));
    CHECK(nax::io::load_npy<float, batch, hidden>(current_file).size() == 0);
  };

  // Threads, random numbers, optimizers, graphs of nodes.
  c["threads-count"] = [] { nax::set_num_threads(0); };
  c["random-range"] = [] { (void)nax::uniform<float, hidden>(1, 2.0, 1.0); };
  c["optim-shape"] = [] {
    nax::tensor<float, k_ax> w(k_ax{4}), grad(k_ax{5});
    w.fill(0);
    grad.fill(0);
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["dynamic-slice-size"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5});
    (void)nax::dynamic_slice<seq, 6>(x, 0);
  };
  c["dynamic-update-size"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5}), update(seq{6});
    (void)nax::dynamic_update_slice<seq>(x, update, 0);
  };
  c["set-size-bound"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5});
    (void)nax::set_dimension_size<seq, nax::axis<"n">>(x, 600);
  };
  c["optim-fields-shape"] = [] {
    net w = make_net(2), grad = make_net(2);
    grad.layers[1].w = nax::tensor<float, k_ax>(k_ax{5});
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["optim-fields-size"] = [] {
    net w = make_net(2);
    const net grad = make_net(1);
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["jit-fields-size"] = [] {
    auto f = nax::jit([](const auto& p) { return nax::sum<k_ax>(p.layers[0].w + p.layers[1].w); },
                      nax::input(make_net(2)));
    (void)f(make_net(3));
  };
  c["npz-fields-missing"] = [] {
    current_file = temp_file("fields_missing.npz");
    nax::save_npz(current_file, make_net(2));
    net more = make_net(3);
    nax::load_npz(current_file, more);
  };
  c["npz-fields-extra"] = [] {
    current_file = temp_file("fields_extra.npz");
    nax::save_npz(current_file, make_net(2));
    net fewer = make_net(1);
    nax::load_npz(current_file, fewer);
  };
  c["safetensors-entry"] = [] {
    current_file = temp_file("entry.safetensors");
    nax::tensor<float, hidden> w;
    nax::io::save_safetensors(current_file, {{"w", nax::io::to_dyn(w)}, {"b", nax::io::to_dyn(w)}});
    (void)nax::load_safetensors(current_file).get("wte");
  };
  c["safetensors-dtype"] = [] {
    current_file = temp_file("dtype.safetensors");
    std::string header = R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})";
    std::ofstream f(current_file, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 8; ++i) f.put(static_cast<char>(i == 0 ? header.size() : 0));
    f << header << std::string(4, '\0');
    f.close();
    (void)nax::load_safetensors(current_file);
  };
  c["safetensors-fields-missing"] = [] {
    current_file = temp_file("fields_missing.safetensors");
    nax::save_safetensors(current_file, make_net(2));
    net n = make_net(2);
    nax::load_safetensors(current_file, n, {.names = {{"layers.0.w", "h.0.w"}}, .ignore_extra = false});
  };
  c["safetensors-fields-extra"] = [] {
    current_file = temp_file("fields_extra.safetensors");
    nax::save_safetensors(current_file, make_net(2));
    net fewer = make_net(1);
    nax::load_safetensors(current_file, fewer);
  };
  c["csr-node"] = [] {
    const std::int32_t src[] = {0, 5}, dst[] = {1, 2};
    (void)nax::gnn::csr::from_edges(3, src, dst);
  };
  return c;
}

}  // namespace

TEST_CASE("docs/errors.md: every row has its case, every case its row") {
  const std::vector<row> rows = read_table();
  const auto cases = make_cases();
  std::set<std::string> ids;
  for (const row& r : rows) {
    CAPTURE(r.line);
    CHECK_MESSAGE(ids.insert(r.id).second, "id '" << r.id << "' is in two rows");
    CHECK_MESSAGE(cases.count(r.id) == 1, "row '" << r.id << "' has no case in this test");
  }
  for (const auto& entry : cases)  // (not a structured binding: clang 14 cannot capture one)
    CHECK_MESSAGE(ids.count(entry.first) == 1,
                  "case '" << entry.first << "' has no row in docs/errors.md");
  CHECK(rows.size() == cases.size());
  MESSAGE(rows.size(), " rows checked");
}

TEST_CASE("docs/errors.md: each bad input gives its row's exception and exact message") {
  const auto cases = make_cases();
  const int threads = nax::num_threads();
  for (const row& r : read_table()) {
    if (!cases.count(r.id)) continue;  // (reported by the test case above)
    INFO("docs/errors.md:", r.line, ": ", r.id);
    current_file.clear();
    if (!r.error) {  // a behaviour: the case checks it, and throws nothing
      CHECK(r.exception == "none");
      CHECK_NOTHROW(cases.at(r.id)());
    } else {
      std::string what, type;
      bool threw = false;
      try {
        cases.at(r.id)();
      } catch (const nax::io_error& e) {
        threw = true;
        type = "nax::io_error";
        what = e.what();
      } catch (const nax::shape_error& e) {
        threw = true;
        type = "nax::shape_error";
        what = e.what();
      } catch (const std::invalid_argument& e) {
        threw = true;
        type = "std::invalid_argument";
        what = e.what();
      } catch (const std::exception& e) {
        threw = true;
        type = "another std::exception";
        what = e.what();
      }
      CHECK_MESSAGE(threw, "the bad input threw nothing");
      CHECK(type == r.exception);
      std::string want = r.message;
      if (const auto at = want.find("<file>"); at != std::string::npos)
        want.replace(at, 6, current_file);
      CHECK(what == want);
    }
    if (!current_file.empty()) std::remove(current_file.c_str());
  }
  nax::set_num_threads(threads);
}
