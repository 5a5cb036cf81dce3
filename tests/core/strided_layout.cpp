// strided_layout and coalesce_axes: a coalesced nest visits every participant's offsets in the
// same order as the original, and no two of its axes could merge further.
#include <nax/core/strided_layout.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <random>
#include <vector>

namespace {

using extents = std::vector<std::size_t>;
using strides = std::vector<std::ptrdiff_t>;
using layout = nax::strided_layout<6, 3>;

// Participant p's offsets, in row-major order of the nest's index space (a plain odometer).
std::vector<std::ptrdiff_t> offsets(const layout& l, std::size_t p) {
  std::vector<std::ptrdiff_t> out;
  const std::size_t n = l.size();
  std::vector<std::size_t> idx(l.rank(), 0);
  for (std::size_t f = 0; f < n; ++f) {
    std::size_t rest = f;
    std::ptrdiff_t off = 0;
    for (std::size_t a = l.rank(); a-- > 0;) {
      idx[a] = rest % l.extent(a);
      rest /= l.extent(a);
      off += static_cast<std::ptrdiff_t>(idx[a]) * l.stride(p, a);
    }
    out.push_back(off);
  }
  return out;
}

strides all_strides(const layout& l) {
  strides s;
  for (std::size_t p = 0; p < l.participants(); ++p)
    s.insert(s.end(), l.strides(p).begin(), l.strides(p).end());
  return s;
}

extents all_extents(const layout& l) { return {l.extents().begin(), l.extents().end()}; }

}  // namespace

TEST_CASE("dense participants merge into one axis") {
  // A [4, 5, 6] source and destination, both row-major.
  layout l(extents{4, 5, 6}, 2, strides{30, 6, 1, 30, 6, 1});
  l.coalesce();
  CHECK(all_extents(l) == extents{120});
  CHECK(all_strides(l) == strides{1, 1});
}

TEST_CASE("a broadcast participant keeps the axes it steps through differently") {
  // out[m, n] = x[m, n] + bias[n]: rows stay rows; x alone would merge.
  layout l(extents{8, 16}, 2, strides{16, 1, 0, 1});
  l.coalesce();
  CHECK(all_extents(l) == extents{8, 16});
  // A [m, 1] column and a scalar: the scalar merges everywhere, the column keeps rows apart.
  layout c(extents{2, 3, 5}, 2, strides{3, 1, 0, 0, 0, 0});
  c.coalesce();
  CHECK(all_extents(c) == extents{6, 5});
  CHECK(all_strides(c) == strides{1, 0, 0, 0});
  // A reduction's input and its output, reduced axes at stride 0: same roles merge.
  layout r(extents{2, 3, 4, 5}, 2, strides{60, 20, 5, 1, 3, 1, 0, 0});
  r.coalesce();
  CHECK(all_extents(r) == extents{6, 20});
  CHECK(all_strides(r) == strides{20, 1, 1, 0});
}

TEST_CASE("extent-1 axes go, wherever they are and whatever their strides") {
  layout l(extents{1, 3, 1, 8, 1}, 2, strides{99, 8, 7, 1, 5, 0, 8, -3, 1, 42});
  l.coalesce();
  CHECK(all_extents(l) == extents{24});
  CHECK(all_strides(l) == strides{1, 1});
}

TEST_CASE("one element, rank 0 and empty nests") {
  layout ones(extents{1, 1}, 2, strides{4, 1, 2, 1});
  ones.coalesce();
  CHECK(all_extents(ones) == extents{1});
  CHECK(all_strides(ones) == strides{0, 0});
  layout scalar(extents{}, 3, strides{});
  scalar.coalesce();
  CHECK(all_extents(scalar) == extents{1});
  CHECK(all_strides(scalar) == strides{0, 0, 0});
  layout empty(extents{3, 0, 4}, 1, strides{0, 4, 1});
  empty.coalesce();
  CHECK(empty.size() == 0);
}

TEST_CASE("transposed and strided participants") {
  // Source stored [n, m] read as [m, n]; destination row-major: nothing merges.
  layout t(extents{5, 7}, 2, strides{1, 5, 7, 1});
  t.coalesce();
  CHECK(all_extents(t) == extents{5, 7});
  // Every other element of a row, rows contiguous in both: the row axis and the column axis
  // chain (stride 14 == 2 * 7), and so do the destination's.
  layout s(extents{3, 7}, 2, strides{14, 2, 7, 1});
  s.coalesce();
  CHECK(all_extents(s) == extents{21});
  CHECK(all_strides(s) == strides{2, 1});
}

TEST_CASE("random nests: the same offsets in the same order, and nothing left to merge") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> rank_of(0, 6), extent_of(0, 4), coin(0, 3);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto r = static_cast<std::size_t>(rank_of(rng));
    const std::size_t k = 1 + static_cast<std::size_t>(coin(rng)) % 3;
    extents ext(r);
    for (std::size_t& e : ext) e = 1 + static_cast<std::size_t>(extent_of(rng));
    // Each participant: dense over a random subset of the axes (0 elsewhere), sometimes
    // permuted by swapping two axes' strides.
    strides st;
    for (std::size_t p = 0; p < k; ++p) {
      strides s(r, 0);
      std::ptrdiff_t step = 1;
      for (std::size_t a = r; a-- > 0;)
        if (coin(rng) != 0) {
          s[a] = step;
          step *= static_cast<std::ptrdiff_t>(ext[a]);
        }
      if (r >= 2 && coin(rng) == 0) std::swap(s[0], s[r - 1]);
      st.insert(st.end(), s.begin(), s.end());
    }
    const layout before(ext, k, st);
    layout after = before;
    after.coalesce();
    CAPTURE(trial);
    REQUIRE(after.rank() >= 1);
    CHECK(after.size() == before.size());
    for (std::size_t p = 0; p < k; ++p) CHECK(offsets(after, p) == offsets(before, p));
    if (after.size() > 1)
      for (std::size_t a = 0; a < after.rank(); ++a) {
        CHECK(after.extent(a) != 1);
        if (a + 1 == after.rank()) continue;
        bool every = true;
        for (std::size_t p = 0; p < k; ++p)
          every = every &&
                  after.stride(p, a) ==
                      after.stride(p, a + 1) * static_cast<std::ptrdiff_t>(after.extent(a + 1));
        CHECK_FALSE(every);  // maximal: these two would have merged
      }
  }
}

TEST_CASE("coalesce_axes works on fixed arrays, in place, at compile time") {
  constexpr auto merged = [] {
    std::array<std::size_t, 3> ext{2, 1, 4};
    std::array<std::ptrdiff_t, 3> a{4, 4, 1}, b{0, 0, 1};
    const std::size_t r = nax::coalesce_axes(ext, 3, [&](auto&& f) {
      f(a);
      f(b);
    });
    return std::array<std::ptrdiff_t, 5>{static_cast<std::ptrdiff_t>(r),
                                         static_cast<std::ptrdiff_t>(ext[0]),
                                         static_cast<std::ptrdiff_t>(ext[1]), b[0], b[1]};
  }();
  static_assert(merged[0] == 2);  // b broadcasts along axis 0 only: 2 and 4 stay apart
  static_assert(merged[1] == 2 && merged[2] == 4);
  static_assert(merged[3] == 0 && merged[4] == 1);
}

TEST_CASE("keep_inner: the innermost axis stays, even of extent 1") {
  // A column sum's loop [rows, 1]: the inner (kept) axis stays, so the loop keeps its roles.
  std::array<std::size_t, 2> ext{100, 1};
  std::array<std::ptrdiff_t, 2> in{1, 1}, out{0, 1};
  auto both = [&](auto&& f) {
    f(in);
    f(out);
  };
  CHECK(nax::coalesce_axes(ext, 2, both, /*keep_inner=*/true) == 2);
  CHECK(ext == std::array<std::size_t, 2>{100, 1});
  CHECK(out == std::array<std::ptrdiff_t, 2>{0, 1});
  // It still merges with its neighbours like any axis.
  std::array<std::size_t, 3> e3{1, 6, 1};
  std::array<std::ptrdiff_t, 3> dense{6, 1, 1};
  CHECK(nax::coalesce_axes(
            e3, 3, [&](auto&& f) { f(dense); }, true) == 1);
  CHECK(e3[0] == 6);
  CHECK(dense[0] == 1);
  // Without it, the extent-1 axis goes.
  std::array<std::size_t, 2> plain{100, 1};
  std::array<std::ptrdiff_t, 2> in2{1, 1}, out2{0, 1};
  CHECK(nax::coalesce_axes(plain, 2, [&](auto&& f) {
          f(in2);
          f(out2);
        }) == 1);
  CHECK(plain[0] == 100);
}
