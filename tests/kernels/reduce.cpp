// The runtime reduction kernel against index loops in double, over every subset of axes.
#include <nax/kernels/reduce.hpp>

#include <doctest/doctest.h>

#include "support/sanitizers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace k = nax::kernels;

namespace {

constexpr nax::ops::reduce_kind all_kinds[] = {
    nax::ops::reduce_kind::sum, nax::ops::reduce_kind::mean, nax::ops::reduce_kind::max,
    nax::ops::reduce_kind::min};

template <class T>
std::vector<T> pattern(std::size_t n) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int v = int((i * 7919 + 13) % 101) - 50;
    x[i] = std::is_integral_v<T> ? T(v) : T(v) / T(16) + T(i % 7) / T(1024);
  }
  return x;
}

// The reference in double (integers: in int64, the mean truncated toward zero).
template <class T>
std::vector<double> reference(const std::vector<T>& x, const std::vector<std::size_t>& ext,
                              unsigned mask, nax::ops::reduce_kind kind) {
  const std::size_t rank = ext.size();
  std::size_t out_size = 1;
  for (std::size_t a = 0; a < rank; ++a)
    if (!(mask >> a & 1)) out_size *= ext[a];
  std::vector<double> acc(out_size, kind == nax::ops::reduce_kind::max   ? -1e300
                                    : kind == nax::ops::reduce_kind::min ? 1e300
                                                                         : 0.0);
  std::vector<std::size_t> counts(out_size, 0);
  std::vector<std::size_t> idx(rank, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::size_t rest = i;
    for (std::size_t a = rank; a-- > 0;) idx[a] = rest % ext[a], rest /= ext[a];
    std::size_t o = 0;
    for (std::size_t a = 0; a < rank; ++a)
      if (!(mask >> a & 1)) o = o * ext[a] + idx[a];
    const double v = double(x[i]);
    if (kind == nax::ops::reduce_kind::max)
      acc[o] = std::max(acc[o], v);
    else if (kind == nax::ops::reduce_kind::min)
      acc[o] = std::min(acc[o], v);
    else
      acc[o] += v;
    ++counts[o];
  }
  if (kind == nax::ops::reduce_kind::mean)
    for (std::size_t o = 0; o < out_size; ++o)
      acc[o] = std::is_integral_v<T> ? double(std::int64_t(acc[o]) / std::int64_t(counts[o]))
                                     : acc[o] / double(counts[o]);
  return acc;
}

template <class T>
double tolerance(nax::ops::reduce_kind kind, std::size_t count) {
  if (std::is_integral_v<T> || kind == nax::ops::reduce_kind::max ||
      kind == nax::ops::reduce_kind::min)
    return 0.0;
  const double sum = 4.0 * double(count) * (std::is_same_v<T, float> ? 1e-6 : 1e-13);
  return kind == nax::ops::reduce_kind::mean ? sum / double(count) : sum;
}

template <class T>
std::vector<T> run(const std::vector<T>& x, const std::vector<std::size_t>& ext, unsigned mask,
                   nax::ops::reduce_kind kind) {
  std::vector<std::size_t> axes;
  std::size_t out_size = 1;
  for (std::size_t a = 0; a < ext.size(); ++a) {
    if (mask >> a & 1)
      axes.push_back(a);
    else
      out_size *= ext[a];
  }
  const k::reduce_plan p = k::plan_reduce(nax::dtype_of<T>, kind, ext, axes);
  CHECK(p.out_size == out_size);
  std::vector<T> y(out_size + 1, T(77));  // one guard element past the end
  k::run_reduce(p, x.data(), y.data());
  CHECK(y.back() == T(77));
  y.pop_back();
  return y;
}

template <class T>
void check_all_subsets(const std::vector<std::size_t>& ext) {
  std::size_t n = 1;
  for (std::size_t e : ext) n *= e;
  const std::vector<T> x = pattern<T>(n);
  for (unsigned mask = 0; mask < (1u << ext.size()); ++mask) {
    for (nax::ops::reduce_kind kind : all_kinds) {
      CAPTURE(mask);
      CAPTURE(nax::ops::name(kind));
      const std::vector<T> got = run(x, ext, mask, kind);
      const std::vector<double> want = reference(x, ext, mask, kind);
      REQUIRE(got.size() == want.size());
      const std::size_t count = want.empty() ? 1 : n / want.size();
      for (std::size_t o = 0; o < want.size(); ++o) {
        CAPTURE(o);
        if (std::is_integral_v<T> || kind == nax::ops::reduce_kind::max ||
            kind == nax::ops::reduce_kind::min)
          CHECK(double(got[o]) == want[o]);
        else  // |x| < 4: a bound on the rounding relative to the sum of magnitudes
          CHECK(std::abs(double(got[o]) - want[o]) <= tolerance<T>(kind, count));
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("every subset of axes, ranks 1 to 4, odd extents", T, float, double,
                   std::int32_t, std::int64_t) {
  const std::vector<std::vector<std::size_t>> shapes = {
      {1},           {7},           {130},          {65},           {3, 7},
      {17, 65},      {130, 1},      {1, 130},       {65, 130},      {7, 17},
      {3, 7, 17},    {7, 1, 65},    {17, 3, 130},   {1, 65, 1},     {130, 7, 3},
      {3, 7, 1, 17}, {7, 3, 17, 3}, {1, 17, 7, 65}, {3, 1, 1, 130}, {17, 3, 7, 1}};
  for (const auto& ext : shapes) {
    CAPTURE(ext.size());
    CAPTURE(ext.back());
    check_all_subsets<T>(ext);
  }
}

TEST_CASE_TEMPLATE("large rows, columns and scalars; the thread count does not change the result",
                   T, float, double, std::int32_t) {
  // Rows past the threading grain, columns past the 16 KiB chunk, and one or few outputs of much
  // work (cut into parts).
  const std::vector<std::vector<std::size_t>> shapes = {
      {64, 4097}, {4097, 64}, {3, 70001}, {300001}, {2, 5000, 3}, {5000, 2, 33}, {130, 3, 2049}};
  for (const auto& ext : shapes) {
    std::size_t n = 1;
    for (std::size_t e : ext) n *= e;
    const std::vector<T> x = pattern<T>(n);
    for (unsigned mask = 1; mask < (1u << ext.size()); ++mask) {
      for (nax::ops::reduce_kind kind : all_kinds) {
        CAPTURE(ext.front());
        CAPTURE(mask);
        CAPTURE(nax::ops::name(kind));
        nax::set_num_threads(1);
        const std::vector<T> one = run(x, ext, mask, kind);
        nax::set_num_threads(2);
        const std::vector<T> two = run(x, ext, mask, kind);
        CHECK(one == two);
        // Under a sanitizer, 1 and 2 threads only (the plain builds add 3: uneven parts).
        if (!nax_test::sampled) {
          nax::set_num_threads(3);
          CHECK(one == run(x, ext, mask, kind));
        }
        const std::vector<double> want = reference(x, ext, mask, kind);
        const std::size_t count = n / want.size();
        for (std::size_t o = 0; o < want.size(); ++o) {
          const double tol = tolerance<T>(kind, count);
          if (std::abs(double(two[o]) - want[o]) > tol) {
            CHECK(double(two[o]) == doctest::Approx(want[o]));
            break;
          }
        }
      }
    }
  }
  nax::set_num_threads(2);
}

TEST_CASE_TEMPLATE(
    "an output's bits depend only on the elements it reduces, not on how many "
    "outputs there are",
    T, float, double) {
  // The first rows of the leading axis reduced alone give the bits of the same rows of the whole
  // (a block of rows of a pipelined chain, runtime/pipeline.hpp, or a fused reduction's chunk):
  // rows of much work are cut into parts by that work, whatever the count of outputs.
  for (const std::vector<std::size_t>& ext :
       std::vector<std::vector<std::size_t>>{{40, 70001}, {40, 3, 30000}, {20, 300, 7}}) {
    std::size_t n = 1;
    for (std::size_t e : ext) n *= e;
    const std::vector<T> x = pattern<T>(n);
    for (unsigned mask : {2u, 6u, 4u}) {
      if (mask >> ext.size()) continue;
      for (nax::ops::reduce_kind kind : all_kinds) {
        CAPTURE(ext[1]);
        CAPTURE(mask);
        CAPTURE(nax::ops::name(kind));
        const std::vector<T> whole = run(x, ext, mask, kind);
        for (std::size_t rows : {1u, 2u, 5u, 17u}) {
          std::vector<std::size_t> part = ext;
          part[0] = rows;
          const std::vector<T> x_part(x.begin(), x.begin() + std::ptrdiff_t(n / ext[0] * rows));
          const std::vector<T> got = run(x_part, part, mask, kind);
          CHECK(std::equal(got.begin(), got.end(), whole.begin()));
        }
      }
    }
  }
}

TEST_CASE("the plan: merged axes and the path taken") {
  const std::vector<std::size_t> ext = {4, 5, 6, 7};
  auto plan = [&](std::vector<std::size_t> axes) {
    return k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::sum, ext, axes);
  };
  const auto rows = plan({2, 3});
  CHECK(rows.path == k::reduce_path::rows);
  CHECK(rows.inner == 42);
  CHECK(rows.reduced.rank == 0);
  CHECK(rows.kept.rank == 1);
  CHECK(rows.kept.extent[0] == 20);
  const auto cols = plan({1, 0});
  CHECK(cols.path == k::reduce_path::columns);
  CHECK(cols.inner == 42);
  CHECK(cols.reduced.rank == 1);
  CHECK(cols.reduced.extent[0] == 20);
  CHECK(plan({}).path == k::reduce_path::copy);
  const auto all = plan({0, 1, 2, 3});
  CHECK(all.path == k::reduce_path::rows);
  CHECK(all.out_size == 1);
  CHECK(all.inner == 840);
  // Axes of extent 1 take no part: reducing them is a copy.
  const std::vector<std::size_t> ones = {3, 1, 5, 1};
  CHECK(k::plan_reduce(nax::dtype::f64, nax::ops::reduce_kind::max, ones,
                       std::vector<std::size_t>{1, 3})
            .path == k::reduce_path::copy);
}

TEST_CASE("empty axes: the sum is 0, the others have no value") {
  const std::vector<std::size_t> ext = {3, 0, 5};
  const std::vector<std::size_t> mid = {1};
  const auto p = k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::sum, ext, mid);
  CHECK(p.path == k::reduce_path::fill);
  std::vector<float> y(15, 5.0f);
  k::run_reduce(p, nullptr, y.data());
  for (float v : y) CHECK(v == 0.0f);
  // An empty output: nothing to do (the reduced axes are not empty).
  const std::vector<std::size_t> last = {2};
  CHECK(k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::max, ext, last).path ==
        k::reduce_path::empty);
  CHECK_THROWS_WITH_AS(k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::max, ext, mid),
                       "nax::kernels::reduce: max over an empty axis: there is no max of no "
                       "elements (extents [3, 0, 5], reduced axes [1])",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::plan_reduce(nax::dtype::i32, nax::ops::reduce_kind::min, ext, mid),
                       "nax::kernels::reduce: min over an empty axis: there is no min of no "
                       "elements (extents [3, 0, 5], reduced axes [1])",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::plan_reduce(nax::dtype::f64, nax::ops::reduce_kind::mean, ext, mid),
                       "nax::kernels::reduce: mean over an empty axis: there is no mean of no "
                       "elements (extents [3, 0, 5], reduced axes [1])",
                       nax::shape_error);
}

TEST_CASE("errors name the dtype, the axis and the extents") {
  const std::vector<std::size_t> ext = {3, 4};
  CHECK_THROWS_WITH_AS(
      k::plan_reduce(nax::dtype::u8, nax::ops::reduce_kind::sum, ext, std::vector<std::size_t>{0}),
      "nax::kernels::reduce: sum of u8 elements is not supported (f32, f64, i32 or i64)",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(
      k::plan_reduce(nax::dtype::boolean, nax::ops::reduce_kind::max, ext,
                     std::vector<std::size_t>{0}),
      "nax::kernels::reduce: max of bool elements is not supported (f32, f64, i32 or i64)",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(
      k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::sum, ext, std::vector<std::size_t>{2}),
      "nax::kernels::reduce: axis 2 is out of range for 2 axes (extents [3, 4], reduced axes [2])",
      nax::shape_error);
  CHECK_THROWS_WITH_AS(
      k::plan_reduce(nax::dtype::f32, nax::ops::reduce_kind::sum, ext,
                     std::vector<std::size_t>{1, 0, 1}),
      "nax::kernels::reduce: axis 1 is reduced twice (extents [3, 4], reduced axes [1, 0, 1])",
      nax::shape_error);
}

TEST_CASE("the mean of integers truncates toward zero; reduced axes in any order") {
  const std::vector<std::int32_t> x = {-7, 0, 1, 5, 2, 2};
  const std::vector<std::size_t> ext = {2, 3};
  std::vector<std::int32_t> y(2);
  k::run_reduce(k::plan_reduce(nax::dtype::i32, nax::ops::reduce_kind::mean, ext,
                               std::vector<std::size_t>{1}),
                x.data(), y.data());
  CHECK(y == std::vector<std::int32_t>{-2, 3});
  std::vector<std::int32_t> s(1);
  k::run_reduce(k::plan_reduce(nax::dtype::i32, nax::ops::reduce_kind::sum, ext,
                               std::vector<std::size_t>{1, 0}),
                x.data(), s.data());
  CHECK(s[0] == 3);
}
