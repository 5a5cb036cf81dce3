// Parameters as structs: NAX_FIELDS lists fields in order with their paths (nested structs,
// std::vector, std::array), the struct stays an aggregate, mirrors keep the fields and sizes,
// walks in step check vector sizes by path; the optimizers step a whole struct as they step each
// tensor alone, and check every extent (naming the path) before writing anything.
#include <nax/typed/fields.hpp>
#include <nax/typed/optim.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

namespace {

using model = nax::axis<"model", 3>;
using proj = nax::axis<"proj", 2>;
using n_ax = nax::axis<"n">;

struct attention {
  nax::tensor<float, model, proj> wq, wk;
  nax::tensor<float, proj, model> wo;
  NAX_FIELDS(wq, wk, wo)
};

struct block {
  attention attn;
  nax::tensor<double, n_ax> scale;
  NAX_FIELDS(attn, scale)
};

struct net {
  nax::tensor<float, model> bias;
  std::vector<block> layers;
  std::array<nax::tensor<float, proj>, 2> pair;
  int not_a_field = 7;  // fields NAX_FIELDS does not list are left alone
  NAX_FIELDS(bias, layers, pair)
};

template <class T, class... A>
void fill(nax::tensor<T, A...>& t, double seed) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = T(std::sin(seed + 0.37 * double(i)));
}

net make_net(std::size_t layers, std::size_t n, double seed) {
  net p;
  p.layers.resize(layers);
  for (std::size_t l = 0; l < layers; ++l) p.layers[l].scale = nax::tensor<double, n_ax>{n_ax(n)};
  double s = seed;
  nax::for_each_field(p, [&](std::string_view, auto& t) { fill(t, s += 1); });
  return p;
}

template <class T, class... A>
bool same_bits(const nax::tensor<T, A...>& a, const nax::tensor<T, A...>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every tensor of a and b (same-shaped structs) has the same bits.
template <class P>
void check_same(const P& a, const P& b) {
  std::string path;
  nax::detail::walk_fields(path, "test", [](std::string_view at, const auto& x, const auto& y) {
    INFO(at);
    CHECK(same_bits(x, y));
  }, a, b);
}

}  // namespace

TEST_CASE("NAX_FIELDS: paths in field order through structs, vectors and arrays") {
  static_assert(std::is_aggregate_v<net> && std::is_aggregate_v<attention>);
  static_assert(net::nax_field_count() == 3 && attention::nax_field_count() == 3);  // listed ones
  net p = make_net(2, 5, 0);
  std::vector<std::string> paths;
  std::vector<std::size_t> sizes;
  nax::for_each_field(p, [&](std::string_view path, const auto& t) {
    paths.emplace_back(path);
    sizes.push_back(t.size());
  });
  const std::vector<std::string> want{
      "bias",          "layers.0.attn.wq", "layers.0.attn.wk", "layers.0.attn.wo",
      "layers.0.scale", "layers.1.attn.wq", "layers.1.attn.wk", "layers.1.attn.wo",
      "layers.1.scale", "pair.0",           "pair.1"};
  CHECK(paths == want);
  CHECK(sizes == std::vector<std::size_t>{3, 6, 6, 6, 5, 6, 6, 6, 5, 2, 2});
  CHECK(nax::field_count(p) == 11);
  CHECK(nax::field_count(net{}) == 3);  // no layers
  CHECK(p.not_a_field == 7);

  // The walk gives references: writing through them changes the struct.
  nax::for_each_field(p, [](std::string_view, auto& t) { t.data()[0] = 42; });
  CHECK(p.layers[1].attn.wo.data()[0] == 42.0f);
  CHECK(p.layers[0].scale.data()[0] == 42.0);
}

namespace {
struct path_map {
  template <class T, class... A>
  using leaf = std::string;
};
}  // namespace

TEST_CASE("NAX_FIELDS: a mirror keeps the fields, their names and the vectors' sizes") {
  const net p = make_net(3, 2, 1);
  using mirror = nax::mapped_t<net, path_map>;
  static_assert(std::is_same_v<decltype(std::declval<mirror>().layers[0].attn.wq), std::string>);
  static_assert(std::is_same_v<decltype(std::declval<mirror>().pair), std::array<std::string, 2>>);
  const mirror m = nax::map_fields<path_map>(
      p, [](std::string_view path, const auto& t) { return std::string(path) + "#" + std::to_string(t.size()); });
  CHECK(m.layers.size() == 3);
  CHECK(m.bias == "bias#3");
  CHECK(m.layers[2].attn.wk == "layers.2.attn.wk#6");
  CHECK(m.layers[1].scale == "layers.1.scale#2");
  CHECK(m.pair[1] == "pair.1#2");
  // A mirror is a field struct too, with the same paths.
  std::vector<std::string> seen;
  nax::for_each_field(m, [&](std::string_view path, const std::string& s) {
    CHECK(s.starts_with(std::string(path) + "#"));
    seen.emplace_back(path);
  });
  CHECK(seen.size() == nax::field_count(p));
}

TEST_CASE("optimizers step a struct as they step each tensor") {
  const net grads = make_net(2, 5, 10);
  for (int which = 0; which < 3; ++which) {
    net a = make_net(2, 5, 0), b = a;
    auto run = [&](const auto& opt) {
      auto sa = opt.init(a);
      for (int step = 0; step < 3; ++step) opt.step(a, grads, sa);
      CHECK(sa.layers[1].attn.wq.steps == 3);
      // b, one tensor at a time
      std::string path;
      nax::detail::walk_fields(path, "test", [&](std::string_view, auto& w, const auto& g) {
        auto s = opt.init(w);
        for (int step = 0; step < 3; ++step) opt.step(w, g, s);
      }, b, grads);
    };
    if (which == 0) run(nax::optim::sgd{.lr = 0.1, .momentum = 0.9});
    if (which == 1) run(nax::optim::adam{.lr = 0.01});
    if (which == 2) run(nax::optim::adamw{.lr = 0.01, .weight_decay = 0.1});
    check_same(a, b);
  }
}

TEST_CASE("optimizers on a struct: a mismatch names the path and writes nothing") {
  net p = make_net(2, 5, 0);
  const net before = p;
  nax::optim::adamw opt{};
  auto st = opt.init(p);

  net wrong = make_net(2, 5, 3);
  wrong.layers[1].scale = nax::tensor<double, n_ax>{n_ax(4)};
  CHECK_THROWS_WITH_AS(opt.step(p, wrong, st),
                       "nax::optim::adamw: 'layers.1.scale': axis 'n' is 5 in the parameter but "
                       "4 in its gradient",
                       nax::shape_error);
  net shorter = make_net(1, 5, 3);
  CHECK_THROWS_WITH_AS(opt.step(p, shorter, st),
                       "nax::optim::adamw: 'layers' has 1 elements where 2 were expected",
                       nax::shape_error);
  check_same(p, before);
  CHECK(st.layers[0].attn.wq.steps == 0);
}
