// Runtime softmax, log_softmax and layer_norm along every axis, against index loops in double.
#include <nax/kernels/rows.hpp>

#include <doctest/doctest.h>

#include "support/sanitizers.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace k = nax::kernels;

namespace {

template <class T>
std::vector<T> pattern(std::size_t n, std::size_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(int((i * 7919 + seed * 104729) % 211) - 105) / T(16);
  return x;
}

struct geometry {
  std::size_t outer = 1, n = 1, inner = 1;
  geometry(const std::vector<std::size_t>& ext, std::size_t axis) {
    for (std::size_t a = 0; a < ext.size(); ++a)
      (a < axis ? outer : a == axis ? n : inner) *= ext[a];
  }
  std::size_t at(std::size_t o, std::size_t k, std::size_t i) const {
    return (o * n + k) * inner + i;
  }
};

template <class T>
std::vector<double> softmax_reference(const std::vector<T>& x, const geometry& g, bool log) {
  std::vector<double> y(x.size());
  for (std::size_t o = 0; o < g.outer; ++o)
    for (std::size_t i = 0; i < g.inner; ++i) {
      double m = -1e300, s = 0;
      for (std::size_t k = 0; k < g.n; ++k) m = std::max(m, double(x[g.at(o, k, i)]));
      for (std::size_t k = 0; k < g.n; ++k) s += std::exp(double(x[g.at(o, k, i)]) - m);
      for (std::size_t k = 0; k < g.n; ++k) {
        const double d = double(x[g.at(o, k, i)]) - m;
        y[g.at(o, k, i)] = log ? d - std::log(s) : std::exp(d) / s;
      }
    }
  return y;
}

template <class T>
std::vector<double> layer_norm_reference(const std::vector<T>& x, const std::vector<T>& gamma,
                                         const std::vector<T>& beta, double eps,
                                         const geometry& g) {
  std::vector<double> y(x.size());
  for (std::size_t o = 0; o < g.outer; ++o)
    for (std::size_t i = 0; i < g.inner; ++i) {
      double mu = 0, var = 0;
      for (std::size_t k = 0; k < g.n; ++k) mu += double(x[g.at(o, k, i)]);
      mu /= double(g.n);
      for (std::size_t k = 0; k < g.n; ++k) {
        const double d = double(x[g.at(o, k, i)]) - mu;
        var += d * d;
      }
      var /= double(g.n);
      for (std::size_t k = 0; k < g.n; ++k)
        y[g.at(o, k, i)] =
            (double(x[g.at(o, k, i)]) - mu) / std::sqrt(var + eps) * double(gamma[k]) +
            double(beta[k]);
    }
  return y;
}

template <class T>
void check_close(const std::vector<T>& got, const std::vector<double>& want, double rel,
                 double abs) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::abs(double(got[i]) - want[i]) <= abs + rel * std::abs(want[i]))) {
      CAPTURE(i);
      CHECK(double(got[i]) == doctest::Approx(want[i]));
      ++bad;
    }
}

template <class T>
void check_shape(const std::vector<std::size_t>& ext, std::size_t axis) {
  CAPTURE(ext[0]);
  CAPTURE(ext[1]);
  CAPTURE(ext[2]);
  CAPTURE(axis);
  std::size_t size = 1;
  for (std::size_t e : ext) size *= e;
  const geometry g(ext, axis);
  const std::vector<T> x = pattern<T>(size, 1);
  const std::vector<T> gamma = pattern<T>(g.n, 2), beta = pattern<T>(g.n, 3);
  const k::rows_plan p = k::plan_rows(nax::dtype_of<T>, ext, axis);
  CHECK(p.outer == g.outer);
  CHECK(p.n == g.n);
  CHECK(p.inner == g.inner);
  const double rel = std::is_same_v<T, float> ? 2e-5 : 1e-12;

  std::vector<T> y(size + 1, T(77));  // one guard element past the end
  k::run_softmax(p, x.data(), y.data());
  CHECK(y.back() == T(77));
  y.pop_back();
  check_close(y, softmax_reference(x, g, false), rel, 0.0);

  y.assign(size + 1, T(77));
  k::run_log_softmax(p, x.data(), y.data());
  CHECK(y.back() == T(77));
  y.pop_back();
  check_close(y, softmax_reference(x, g, true), rel, 50 * rel);

  const double eps = 1e-5;
  y.assign(size + 1, T(77));
  k::run_layer_norm(p, x.data(), gamma.data(), beta.data(), eps, y.data());
  CHECK(y.back() == T(77));
  y.pop_back();
  check_close(y, layer_norm_reference(x, gamma, beta, eps, g), rel, 50 * rel);
}

}  // namespace

TEST_CASE_TEMPLATE("softmax and layer_norm along every axis of rank-3 tensors", T, float, double) {
  const std::vector<std::vector<std::size_t>> shapes = {
      {3, 7, 17}, {1, 1, 1}, {5, 1, 33}, {17, 65, 3}, {2, 9, 130}, {7, 3, 1}, {1, 130, 65}};
  for (const auto& ext : shapes)
    for (std::size_t axis = 0; axis < 3; ++axis) check_shape<T>(ext, axis);
}

TEST_CASE_TEMPLATE("long axes: past the cached-row threshold, contiguous and strided", T, float,
                   double) {
  check_shape<T>({3, 2, 10007}, 2);
  check_shape<T>({2, 10007, 9}, 1);
  check_shape<T>({10007, 3, 5}, 0);
  check_shape<T>({1, 8001, 1}, 1);
}

TEST_CASE_TEMPLATE("the thread count does not change the result", T, float, double) {
  for (const std::vector<std::size_t>& ext :
       {std::vector<std::size_t>{64, 513, 65}, std::vector<std::size_t>{3, 10007, 33},
        std::vector<std::size_t>{1, 2, 40000}}) {
    std::size_t size = 1;
    for (std::size_t e : ext) size *= e;
    const std::vector<T> x = pattern<T>(size, 4);
    for (std::size_t axis = 0; axis < 3; ++axis) {
      CAPTURE(axis);
      std::vector<T> runs[3];
      // Under a sanitizer: 1 and 2 threads (3 splits the rows unevenly too; the plain builds).
      const int most = int(nax_test::sweep(3, 2));
      for (int threads = 1; threads <= most; ++threads) {
        nax::set_num_threads(threads);
        const k::rows_plan p = k::plan_rows(nax::dtype_of<T>, ext, axis);
        const std::vector<T> gamma = pattern<T>(p.n, 5), beta = pattern<T>(p.n, 6);
        std::vector<T> s(size), l(size);
        k::run_softmax(p, x.data(), s.data());
        k::run_layer_norm(p, x.data(), gamma.data(), beta.data(), 1e-5, l.data());
        runs[threads - 1] = s;
        runs[threads - 1].insert(runs[threads - 1].end(), l.begin(), l.end());
      }
      CHECK(runs[0] == runs[1]);
      if (most == 3) CHECK(runs[0] == runs[2]);
    }
  }
  nax::set_num_threads(2);
}

TEST_CASE_TEMPLATE("streamed output rows: the bits of cached stores, at every alignment", T, float,
                   double) {
  // Row lengths around a vector, misaligned output rows (offset by 1..3 elements), and a row
  // past the cached-row threshold; a streamed plan must write exactly what a cached one writes.
  for (const std::size_t n : {1, 3, 8, 13, 64, 100, 1024, 10007}) {
    for (std::size_t offset = 0; offset < 4; ++offset) {
      CAPTURE(n);
      CAPTURE(offset);
      const std::vector<std::size_t> ext = {5, n};
      const std::vector<T> x = pattern<T>(5 * n, 8);
      const std::vector<T> gamma = pattern<T>(n, 9), beta = pattern<T>(n, 10);
      k::rows_plan p = k::plan_rows(nax::dtype_of<T>, ext, 1);
      std::vector<T> outs[2][2];
      for (int stream = 0; stream < 2; ++stream) {
        p.stream = stream == 1;
        std::vector<T> s(5 * n + offset + 1, T(77)), l = s;
        k::run_softmax(p, x.data(), s.data() + offset);
        k::run_layer_norm(p, x.data(), gamma.data(), beta.data(), 1e-5, l.data() + offset);
        CHECK(s.back() == T(77));
        CHECK(l.back() == T(77));
        CHECK(s[0] == (offset ? T(77) : s[0]));
        outs[stream][0] = s;
        outs[stream][1] = l;
      }
      CHECK(outs[0][0] == outs[1][0]);
      CHECK(outs[0][1] == outs[1][1]);
    }
  }
}

TEST_CASE_TEMPLATE("along a middle axis, the bits of the same rows along the last", T, float,
                   double) {
  // Each row goes through the same row body whatever its stride: a block of columns, a partial
  // one, and rows past the cached-row threshold.
  for (const std::size_t n : {3, 37, 9000}) {
    for (const std::size_t inner : {1, 5, 19}) {
      CAPTURE(n);
      CAPTURE(inner);
      const std::vector<std::size_t> ext = {2, n, inner}, last = {2, inner, n};
      const std::vector<T> x = pattern<T>(2 * n * inner, 8);
      std::vector<T> xt(x.size());
      for (std::size_t o = 0; o < 2; ++o)
        for (std::size_t k = 0; k < n; ++k)
          for (std::size_t i = 0; i < inner; ++i)
            xt[(o * inner + i) * n + k] = x[(o * n + k) * inner + i];
      const std::vector<T> gamma = pattern<T>(n, 2), beta = pattern<T>(n, 3);
      const k::rows_plan p = k::plan_rows(nax::dtype_of<T>, ext, 1),
                         pt = k::plan_rows(nax::dtype_of<T>, last, 2);
      std::vector<T> y(x.size()), yt(x.size());
      auto same_rows = [&] {
        for (std::size_t o = 0; o < 2; ++o)
          for (std::size_t k = 0; k < n; ++k)
            for (std::size_t i = 0; i < inner; ++i) {
              const T a = y[(o * n + k) * inner + i], b = yt[(o * inner + i) * n + k];
              if (std::memcmp(&a, &b, sizeof(T)) != 0) return false;
            }
        return true;
      };
      k::run_softmax(p, x.data(), y.data());
      k::run_softmax(pt, xt.data(), yt.data());
      CHECK(same_rows());
      k::run_log_softmax(p, x.data(), y.data());
      k::run_log_softmax(pt, xt.data(), yt.data());
      CHECK(same_rows());
      k::run_layer_norm(p, x.data(), gamma.data(), beta.data(), 1e-5, y.data());
      k::run_layer_norm(pt, xt.data(), gamma.data(), beta.data(), 1e-5, yt.data());
      CHECK(same_rows());
    }
  }
}

TEST_CASE("softmax, log_softmax and layer_norm in place: the bits of out of place") {
  const std::vector<std::size_t> ext = {5, 33, 7};
  const std::vector<float> gamma = pattern<float>(33, 2), beta = pattern<float>(33, 3);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    const geometry g(ext, axis);
    const k::rows_plan p = k::plan_rows(nax::dtype::f32, ext, axis);
    const std::vector<float> x = pattern<float>(5 * 33 * 7, 7);
    std::vector<float> out(x.size()), in_place = x;
    k::run_softmax(p, x.data(), out.data());
    k::run_softmax(p, in_place.data(), in_place.data());
    CHECK(out == in_place);
    check_close(in_place, softmax_reference(x, g, false), 2e-5, 0.0);
    in_place = x;
    k::run_log_softmax(p, x.data(), out.data());
    k::run_log_softmax(p, in_place.data(), in_place.data());
    CHECK(out == in_place);
    if (axis == 1) {
      in_place = x;
      k::run_layer_norm(p, x.data(), gamma.data(), beta.data(), 1e-5, out.data());
      k::run_layer_norm(p, in_place.data(), gamma.data(), beta.data(), 1e-5, in_place.data());
      CHECK(out == in_place);
    }
  }
}

TEST_CASE_TEMPLATE("softmax rows written one row behind have the bits of rows written at once", T,
                   float, double) {
  // Out of place, softmax's rows go through a row_stream (deferred_row_kernel); in place the
  // output overlaps the input, so each row is written as it is computed.
  for (const std::size_t n : {5, 16, 100, 1024}) {
    CAPTURE(n);
    const std::vector<std::size_t> ext = {37, n};
    const k::rows_plan p = k::plan_rows(nax::dtype_of<T>, ext, 1);
    const std::vector<T> x = pattern<T>(37 * n, 5);
    std::vector<T> deferred(x.size() + 1, T(77)), in_place = x;
    k::run_softmax(p, x.data(), deferred.data());
    k::run_softmax(p, in_place.data(), in_place.data());
    CHECK(std::memcmp(deferred.data(), in_place.data(), x.size() * sizeof(T)) == 0);
    CHECK(deferred.back() == T(77));
  }
}

TEST_CASE("empty tensors do nothing; errors name the dtype and the axis") {
  const std::vector<std::size_t> empty = {3, 0, 5};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const auto p = k::plan_rows(nax::dtype::f32, empty, axis);
    CHECK(p.items == 0);
    k::run_softmax(p, nullptr, nullptr);
    k::run_layer_norm(p, nullptr, nullptr, nullptr, 1e-5, nullptr);
  }
  const std::vector<std::size_t> ext = {3, 4};
  CHECK_THROWS_WITH_AS(
      k::plan_rows(nax::dtype::i32, ext, 1),
      "nax::kernels::rows: softmax and layer_norm need f32 or f64 elements, got i32",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(k::plan_rows(nax::dtype::f32, ext, 2),
                       "nax::kernels::rows: axis 2 is out of range for extents [3, 4]",
                       nax::shape_error);
}
