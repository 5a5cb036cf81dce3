// Reading a row at the row kernels' width (load_as, load_tail_as): a reader's own vectors, a
// leaf's one wide load and an expression's vectors joined give every element in its lane; the
// writer stores wide vectors whole and in part; a row_prefetch asks for each line once.
#include <nax/kernels/reduce.hpp>
#include <nax/kernels/row_io.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

namespace d = nax::detail;

namespace {

// A reader with the narrow vectors only, as an expression's row_reader: load_as joins two.
template <class T>
struct narrow_reader {
  const T* p;
  nax::simd::vec<T> load(std::size_t i) const { return nax::simd::vec<T>::load_unaligned(p + i); }
  nax::simd::vec<T> load_tail(std::size_t i, std::size_t n) const {
    return d::load_partial<T>(p + i, 1, n);
  }
};

// The lanes of v below n hold row[i + lane].
template <class W, class T>
bool holds(const W& v, const std::vector<T>& row, std::size_t i, std::size_t n) {
  alignas(64) T lanes[W::size];
  v.store_aligned(lanes);
  for (std::size_t j = 0; j < n; ++j)
    if (lanes[j] != row[i + j]) return false;
  return true;
}

}  // namespace

TEST_CASE_TEMPLATE("load_as and load_tail_as give each element in its lane", T, float, double) {
  using W = nax::simd::row_vec<T>;
  constexpr std::size_t w = W::size;
  std::vector<T> row(3 * w + 5);
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = T(i) * T(0.25) - T(3);
  const nax::kernels::detail::pointer_reader<T> leaf{row.data()};
  const narrow_reader<T> expression{row.data()};
  for (std::size_t i = 0; i + w <= row.size(); ++i) {
    CAPTURE(i);
    CHECK(holds(d::load_as<W>(leaf, i), row, i, w));
    CHECK(holds(d::load_as<W>(expression, i), row, i, w));
  }
  // Every tail length, from a full narrow vector's worth and less and more.
  for (std::size_t n = 1; n < w; ++n) {
    CAPTURE(n);
    const std::size_t i = row.size() - n;
    CHECK(holds(d::load_tail_as<W>(leaf, i, n), row, i, n));
    CHECK(holds(d::load_tail_as<W>(expression, i, n), row, i, n));
  }
}

TEST_CASE_TEMPLATE("a row_writer stores a row kernel's vectors whole and in part", T, float,
                   double) {
  using W = nax::simd::row_vec<T>;
  constexpr std::size_t w = W::size;
  alignas(64) T lanes[w];
  for (std::size_t j = 0; j < w; ++j) lanes[j] = T(j + 1);
  const W v = W::load_aligned(lanes);
  std::vector<T> out(2 * w + 1, T(-1));
  const d::row_writer<T, true> contiguous{out.data(), 1};
  contiguous.store(1, v);
  for (std::size_t j = 0; j < w; ++j) CHECK(out[1 + j] == T(j + 1));
  CHECK(out[0] == T(-1));
  CHECK(out[w + 1] == T(-1));
  std::vector<T> strided(2 * w, T(-1));
  const d::row_writer<T, false> every_other{strided.data(), 2};
  every_other.store_tail(0, 3, v);
  CHECK(strided[0] == T(1));
  CHECK(strided[1] == T(-1));
  CHECK(strided[2] == T(2));
  CHECK(strided[4] == T(3));
  CHECK(strided[6] == T(-1));
}

TEST_CASE("a row_prefetch walks each range a line at a time, then stops") {
  alignas(64) static const char next[4096] = {};
  d::row_prefetch fetch;
  CHECK(!fetch.step());
  fetch.later(next, 1000);       // 16 lines (the last one partly)
  fetch.later(next + 1024, 64);  // 1 line
  fetch.later(next + 2048, 0);   // none
  int lines = 0;
  while (fetch.step()) ++lines;
  CHECK(lines == 17);
  // Five ranges: the fifth is fetched at once, the first four a line at a time.
  for (int k = 0; k < 5; ++k) fetch.later(next + 128 * k, 128);
  lines = 0;
  while (fetch.step()) ++lines;
  CHECK(lines == 8);
  fetch.later(next, 4096);
  CHECK(fetch.step());
  fetch.rest();  // the other 63 lines, now
  CHECK(!fetch.step());
}
