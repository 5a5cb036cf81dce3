// The optimizers against plain loops of PyTorch's formulas in double, over several steps, a
// parameter long enough for threads and a partial vector; the same bits on 1 and 2 threads; a
// gradient of other extents is an error naming the axis.
#include <nax/typed/optim.hpp>

#include <nax/exec/thread_pool.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include "support/threads.hpp"

namespace {

using n_ax = nax::axis<"n">;

template <class T>
nax::tensor<T, n_ax> pattern(std::size_t n, double seed) {
  nax::tensor<T, n_ax> t{n_ax(n)};
  for (std::size_t i = 0; i < n; ++i) t.data()[i] = T(std::sin(seed + 0.37 * double(i)));
  return t;
}

struct reference_state {
  std::vector<double> a, b;  // velocity, or the two moments
  std::size_t steps = 0;
};

void reference_sgd(std::vector<double>& w, const std::vector<double>& g, reference_state& s,
                   const nax::optim::sgd& o) {
  if (s.a.empty()) s.a.assign(w.size(), 0);
  for (std::size_t i = 0; i < w.size(); ++i) {
    double d = g[i] + o.weight_decay * w[i];
    if (o.momentum != 0) {
      s.a[i] = s.steps == 0 ? d : o.momentum * s.a[i] + (1 - o.dampening) * d;
      d = o.nesterov ? d + o.momentum * s.a[i] : s.a[i];
    }
    w[i] -= o.lr * d;
  }
  ++s.steps;
}

template <bool Decoupled>
void reference_adam(std::vector<double>& w, const std::vector<double>& g, reference_state& s,
                    const nax::optim::adam_family<Decoupled>& o) {
  if (s.a.empty()) s.a.assign(w.size(), 0), s.b.assign(w.size(), 0);
  ++s.steps;
  const double b1 = 1 - std::pow(o.beta1, double(s.steps)),
               b2 = 1 - std::pow(o.beta2, double(s.steps));
  for (std::size_t i = 0; i < w.size(); ++i) {
    double gi = g[i];
    if (Decoupled)
      w[i] *= 1 - o.lr * o.weight_decay;
    else
      gi += o.weight_decay * w[i];
    s.a[i] = o.beta1 * s.a[i] + (1 - o.beta1) * gi;
    s.b[i] = o.beta2 * s.b[i] + (1 - o.beta2) * gi * gi;
    w[i] -= o.lr / b1 * s.a[i] / (std::sqrt(s.b[i]) / std::sqrt(b2) + o.eps);
  }
}

// Runs `steps` steps of optimizer o on w (gradients: a pattern per step) with nax and with the
// reference; returns the worst relative difference.
template <class T, class Opt, class Ref>
double run(const Opt& o, Ref reference, std::size_t n, int steps, nax::tensor<T, n_ax>* out) {
  nax::tensor<T, n_ax> w = pattern<T>(n, 0.5);
  auto state = o.init(w);
  std::vector<double> rw(w.data(), w.data() + n);
  reference_state rs;
  for (int k = 0; k < steps; ++k) {
    const nax::tensor<T, n_ax> g = pattern<T>(n, 1.0 + k);
    const std::vector<double> rg(g.data(), g.data() + n);
    o.step(w, g, state);
    reference(rw, rg, rs, o);
  }
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::abs(double(w.data()[i]) - rw[i]) / (1 + std::abs(rw[i])));
  if (out) *out = w;
  return worst;
}

using keep_threads = nax_test::threads_guard;

}  // namespace

TEST_CASE_TEMPLATE("sgd, adam and adamw follow PyTorch's formulas", T, float, double) {
  keep_threads keep;
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  const std::size_t n = 100003;  // threads, and a partial vector at the end
  const nax::optim::sgd plain{.lr = 0.1};
  const nax::optim::sgd momentum{
      .lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01};
  const nax::optim::sgd nesterov{.lr = 0.05, .momentum = 0.9, .nesterov = true};
  const nax::optim::adam adam{.lr = 0.01, .weight_decay = 0.1};
  const nax::optim::adamw adamw{.lr = 0.01};
  CHECK(adamw.weight_decay == 0.01);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    nax::set_num_threads(threads);
    CHECK(run<T>(plain, reference_sgd, n, 3, nullptr) <= tol);
    CHECK(run<T>(momentum, reference_sgd, n, 4, nullptr) <= tol);
    CHECK(run<T>(nesterov, reference_sgd, n, 4, nullptr) <= tol);
    CHECK(run<T>(adam, reference_adam<false>, n, 5, nullptr) <= tol);
    CHECK(run<T>(adamw, reference_adam<true>, n, 5, nullptr) <= tol);
  }
  nax::tensor<T, n_ax> one{n_ax(n)}, two{n_ax(n)};
  nax::set_num_threads(1);
  run<T>(adamw, reference_adam<true>, n, 3, &one);
  nax::set_num_threads(2);
  run<T>(adamw, reference_adam<true>, n, 3, &two);
  CHECK(std::memcmp(one.data(), two.data(), n * sizeof(T)) == 0);
}

TEST_CASE("a gradient of other extents than its parameter is an error naming the axis") {
  nax::tensor<float, n_ax> w{n_ax(4)}, g{n_ax(5)};
  const nax::optim::adamw opt{};
  auto s = opt.init(w);
  CHECK_THROWS_WITH_AS(opt.step(w, g, s),
                       "nax::optim::adamw: axis 'n' is 4 in the parameter but 5 in its gradient",
                       nax::shape_error);
  CHECK(s.steps == 0);
}

TEST_CASE("a state made for another parameter is an error, before anything is written") {
  nax::tensor<float, n_ax> w4{n_ax(4)}, w8{n_ax(8)}, g8{n_ax(8)};
  const nax::optim::adamw adamw{};
  auto s4 = adamw.init(w4);
  CHECK_THROWS_WITH_AS(adamw.step(w8, g8, s4),
                       "nax::optim::adamw: axis 'n' is 8 in the parameter but 4 in its state's "
                       "first moment",
                       nax::shape_error);
  CHECK(s4.steps == 0);
  const nax::optim::sgd sgd{.momentum = 0.9};
  auto v4 = sgd.init(w4);
  CHECK_THROWS_WITH_AS(sgd.step(w8, g8, v4),
                       "nax::optim::sgd: axis 'n' is 8 in the parameter but 4 in its state's "
                       "velocity",
                       nax::shape_error);
  CHECK(v4.steps == 0);
}

TEST_CASE("Nesterov momentum without momentum, or with dampening, is an error (as in PyTorch)") {
  nax::tensor<float, n_ax> w{n_ax(4)}, g{n_ax(4)};
  const nax::optim::sgd none{.momentum = 0, .nesterov = true};
  auto s = none.init(w);
  CHECK_THROWS_WITH_AS(none.step(w, g, s),
                       "nax::optim::sgd: Nesterov momentum needs a momentum above 0 and no "
                       "dampening (momentum 0, dampening 0)",
                       std::invalid_argument);
  const nax::optim::sgd damped{.momentum = 0.9, .dampening = 0.1, .nesterov = true};
  CHECK_THROWS_WITH_AS(damped.step(w, g, s), doctest::Contains("(momentum 0.9, dampening 0.1)"),
                       std::invalid_argument);
  CHECK(s.steps == 0);
}
