// A struct of parameters as one input of nax::jit and nax::value_and_grad: the same loss and the
// same gradient bits as the tensors passed one by one; the gradient is a struct of the
// parameters' type (a tuple when tensors are differentiated beside it); integer tensors get no
// gradient; a struct whose vector has another size than the one traced is an error naming the
// path; a few AdamW steps on the struct lower the loss.
#include <nax/jit/value_and_grad.hpp>
#include <nax/typed/optim.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

namespace {

using batch = nax::axis<"batch">;
using in = nax::axis<"in", 3>;
using hid = nax::axis<"hid", 4>;
using out = nax::axis<"out", 2>;

struct dense {
  nax::tensor<float, in, hid> w;
  nax::tensor<float, hid> b;
  NAX_FIELDS(w, b)
};

struct mlp {
  std::vector<dense> hidden;  // each reads x
  nax::tensor<float, hid, out> head;
  nax::tensor<std::int32_t, out> ids;  // not differentiated
  NAX_FIELDS(hidden, head, ids)
};

template <class T, class... A>
void fill(nax::tensor<T, A...>& t, double seed) {
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = T(std::sin(seed + 1.7 * double(i)));
}

mlp make_mlp(std::size_t layers) {
  mlp p;
  p.hidden.resize(layers);
  double s = 0;
  nax::for_each_field(p, [&](std::string_view, auto& t) { fill(t, s += 0.3); });
  return p;
}

template <class T, class... A>
bool same_bits(const nax::tensor<T, A...>& a, const nax::tensor<T, A...>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The loss over two hidden layers, given as a struct (p.hidden[k].w, ...).
const auto struct_loss = [](const auto& p, auto x, auto y) {
  auto h = nax::tanh(nax::dot<in>(x, p.hidden[0].w) + p.hidden[0].b) *
           nax::sigmoid(nax::dot<in>(x, p.hidden[1].w) + p.hidden[1].b);
  auto e = nax::dot<hid>(h, p.head) - y;
  return nax::mean<batch>(nax::sum<out>(e * e));
};

// The same loss over the tensors one by one.
const auto tensor_loss = [](auto x, auto y, auto w0, auto b0, auto w1, auto b1, auto head) {
  auto h = nax::tanh(nax::dot<in>(x, w0) + b0) * nax::sigmoid(nax::dot<in>(x, w1) + b1);
  auto e = nax::dot<hid>(h, head) - y;
  return nax::mean<batch>(nax::sum<out>(e * e));
};

}  // namespace

TEST_CASE("value_and_grad of a struct: the gradients of the tensors one by one, as a struct") {
  const mlp p = make_mlp(2);
  nax::tensor<float, batch, in> x{batch(5)};
  nax::tensor<float, batch, out> y{batch(5)};
  fill(x, 0.1);
  fill(y, 0.7);

  auto by_struct = nax::value_and_grad(struct_loss, nax::input(p), nax::data<float, batch, in>("x"),
                                       nax::data<float, batch, out>("y"));
  auto by_tensor = nax::value_and_grad(
      tensor_loss, nax::data<float, batch, in>("x"), nax::data<float, batch, out>("y"),
      nax::input<float, in, hid>("w0"), nax::input<float, hid>("b0"),
      nax::input<float, in, hid>("w1"), nax::input<float, hid>("b1"),
      nax::input<float, hid, out>("head"));

  auto [loss, grads] = by_struct(p, x, y);
  static_assert(std::is_same_v<decltype(grads), mlp>);
  auto [loss_t, grads_t] = by_tensor(x, y, p.hidden[0].w, p.hidden[0].b, p.hidden[1].w,
                                     p.hidden[1].b, p.head);
  CHECK(same_bits(loss, loss_t));
  REQUIRE(grads.hidden.size() == 2);
  CHECK(same_bits(grads.hidden[0].w, std::get<0>(grads_t)));
  CHECK(same_bits(grads.hidden[0].b, std::get<1>(grads_t)));
  CHECK(same_bits(grads.hidden[1].w, std::get<2>(grads_t)));
  CHECK(same_bits(grads.hidden[1].b, std::get<3>(grads_t)));
  CHECK(same_bits(grads.head, std::get<4>(grads_t)));
  CHECK(grads.ids.size() == 2);  // (static extents; integers get no gradient: left as made)

  // nax::jit takes the struct too; a name prefixes the paths.
  auto forward = nax::jit(struct_loss, nax::input(p, "model"), nax::input<float, batch, in>("x"),
                          nax::input<float, batch, out>("y"));
  CHECK(same_bits(forward(p, x, y), loss));
  CHECK(forward.executable().to_dot().find("model.hidden.1.w") != std::string::npos);
}

TEST_CASE("value_and_grad: a struct and a tensor differentiated side by side give a tuple") {
  const mlp p = make_mlp(2);
  nax::tensor<float, batch, in> x{batch(3)};
  nax::tensor<float, batch, out> y{batch(3)};
  fill(x, 0.2);
  fill(y, 0.4);
  auto step = nax::value_and_grad(
      [](auto x, const auto& p, auto y) { return struct_loss(p, x, y); },
      nax::input<float, batch, in>("x"), nax::input(p), nax::data<float, batch, out>("y"));
  auto [loss, grads] = step(x, p, y);
  static_assert(std::is_same_v<decltype(grads),
                               std::tuple<nax::tensor<float, batch, in>, mlp>>);
  auto by_struct = nax::value_and_grad(struct_loss, nax::input(p), nax::data<float, batch, in>("x"),
                                       nax::data<float, batch, out>("y"));
  auto [loss2, grads2] = by_struct(p, x, y);
  CHECK(same_bits(loss, loss2));
  CHECK(same_bits(std::get<1>(grads).head, grads2.head));
  CHECK(std::get<0>(grads).extents().extent(0) == 3);
}

TEST_CASE("a struct input: a vector of another size than traced is an error naming the path") {
  const mlp p = make_mlp(2);
  auto forward = nax::jit(struct_loss, nax::input(p), nax::input<float, batch, in>("x"),
                          nax::input<float, batch, out>("y"));
  nax::tensor<float, batch, in> x{batch(2)};
  nax::tensor<float, batch, out> y{batch(2)};
  CHECK_THROWS_WITH_AS(forward(make_mlp(3), x, y),
                       "nax::jit: argument 0 has the tensor 'hidden.2.w' where the struct traced "
                       "had 'head' (a std::vector of another size?)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(forward(make_mlp(1), x, y),
                       "nax::jit: argument 0 has the tensor 'head' where the struct traced had "
                       "'hidden.1.w' (a std::vector of another size?)",
                       nax::shape_error);
}

TEST_CASE("AdamW on a struct lowers the loss") {
  mlp p = make_mlp(2);
  nax::tensor<float, batch, in> x{batch(8)};
  nax::tensor<float, batch, out> y{batch(8)};
  fill(x, 0.3);
  fill(y, 0.9);
  auto step = nax::value_and_grad(struct_loss, nax::input(p), nax::data<float, batch, in>("x"),
                                  nax::data<float, batch, out>("y"));
  nax::optim::adamw opt{.lr = 0.05};
  auto st = opt.init(p);
  float first = 0, last = 0;
  for (int i = 0; i < 30; ++i) {
    auto [loss, grads] = step(p, x, y);
    (i == 0 ? first : last) = loss.data()[0];
    opt.step(p, grads, st);
  }
  CHECK(last < 0.5f * first);
}
