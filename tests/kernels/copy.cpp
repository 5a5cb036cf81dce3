// The runtime copy kernel against an index loop: permutations, transposes, broadcasts, slices,
// concatenation, for element sizes 1, 4, 8 (and an odd one).
#include <nax/kernels/copy.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace k = nax::kernels;

namespace {

// Bytes that differ at every element and every byte of it.
std::vector<unsigned char> pattern(std::size_t bytes) {
  std::vector<unsigned char> x(bytes);
  for (std::size_t i = 0; i < bytes; ++i) x[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  return x;
}

// dst[index . dst_strides] = src[index . src_strides] for every index, element by element.
void reference(std::size_t eb, const std::vector<std::size_t>& ext,
               const std::vector<std::ptrdiff_t>& ss, const std::vector<std::ptrdiff_t>& ds,
               const unsigned char* src, unsigned char* dst) {
  std::size_t n = 1;
  for (std::size_t e : ext) n *= e;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    std::ptrdiff_t so = 0, d = 0;
    for (std::size_t a = ext.size(); a-- > 0;) {
      const auto idx = static_cast<std::ptrdiff_t>(rest % ext[a]);
      rest /= ext[a];
      so += idx * ss[a];
      d += idx * ds[a];
    }
    std::memcpy(dst + d * std::ptrdiff_t(eb), src + so * std::ptrdiff_t(eb), eb);
  }
}

// Runs plan_copy + run_copy and the reference on buffers of src_bytes / dst_bytes, the operands
// starting at src_offset / dst_offset elements, and compares the whole destination buffers
// (bytes the copy must not touch included).
k::copy_plan check_copy(std::size_t eb, const std::vector<std::size_t>& ext,
                        const std::vector<std::ptrdiff_t>& ss,
                        const std::vector<std::ptrdiff_t>& ds, std::size_t src_elements,
                        std::size_t dst_elements, std::size_t src_offset = 0,
                        std::size_t dst_offset = 0) {
  // 8-byte aligned buffers, so every element size up to 8 is aligned.
  std::vector<std::uint64_t> src_store((src_elements * eb + 7) / 8 + 1),
      got_store((dst_elements * eb + 7) / 8 + 1), want_store(got_store.size());
  auto* src = reinterpret_cast<unsigned char*>(src_store.data());
  const std::vector<unsigned char> bytes = pattern(src_elements * eb);
  std::memcpy(src, bytes.data(), bytes.size());
  auto* got = reinterpret_cast<unsigned char*>(got_store.data());
  auto* want = reinterpret_cast<unsigned char*>(want_store.data());
  std::memset(got, 0xEE, got_store.size() * 8);
  std::memset(want, 0xEE, want_store.size() * 8);
  const k::copy_plan p = k::plan_copy(eb, ext, ss, ds);
  k::run_copy(p, src + src_offset * eb, got + dst_offset * eb);
  reference(eb, ext, ss, ds, src + src_offset * eb, want + dst_offset * eb);
  CHECK(std::memcmp(got, want, got_store.size() * 8) == 0);
  return p;
}

std::size_t product(const std::vector<std::size_t>& ext) {
  std::size_t n = 1;
  for (std::size_t e : ext) n *= e;
  return n;
}

void check_permutations(const std::vector<std::size_t>& src_ext, std::size_t eb) {
  std::vector<std::size_t> perm(src_ext.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    CAPTURE(perm[0]);
    CAPTURE(perm[1]);
    CAPTURE(perm[2]);
    std::vector<std::size_t> ext(perm.size());
    for (std::size_t a = 0; a < perm.size(); ++a) ext[a] = src_ext[perm[a]];
    check_copy(eb, ext, k::permute_strides(src_ext, perm), k::dense_strides(ext), product(src_ext),
               product(src_ext));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

}  // namespace

TEST_CASE("every permutation of rank 3 and 4, element sizes 1, 2, 4, 8 and 12") {
  for (std::size_t eb : {1, 2, 4, 8, 12}) {
    CAPTURE(eb);
    check_permutations({3, 5, 7}, eb);
    check_permutations({17, 9, 33}, eb);
    check_permutations({2, 3, 5, 7}, eb);
    check_permutations({9, 1, 17, 10}, eb);
  }
}

TEST_CASE("2-D transposes, both ways round") {
  for (std::size_t eb : {1, 4, 8}) {
    for (auto rc : {std::pair<std::size_t, std::size_t>{1, 1},
                    {7, 13},
                    {64, 64},
                    {1000, 1001},
                    {3, 2000},
                    {17, 9}}) {
      const std::size_t r = rc.first, c = rc.second;
      CAPTURE(eb);
      CAPTURE(r);
      CAPTURE(c);
      const std::vector<std::size_t> src_ext = {r, c}, ext = {c, r};
      const std::vector<std::size_t> perm = {1, 0};
      const auto p = check_copy(eb, ext, k::permute_strides(src_ext, perm), k::dense_strides(ext),
                                r * c, r * c);
      if (r > 1 && c > 1) CHECK(p.path == k::copy_path::transpose);
      // The same copy planned from the destination's side: a strided write.
      const std::vector<std::ptrdiff_t> dense = {std::ptrdiff_t(c), 1},
                                        scattered = {1, std::ptrdiff_t(r)};
      check_copy(eb, src_ext, dense, scattered, r * c, r * c);
    }
  }
}

TEST_CASE("broadcast sources: stride 0, along the inner or an outer axis") {
  for (std::size_t eb : {1, 4, 8, 12}) {
    CAPTURE(eb);
    // [5, 7] from a [7] row, from a [5] column, and from one element.
    CHECK(check_copy(eb, {5, 7}, {0, 1}, {7, 1}, 7, 35).path == k::copy_path::contiguous);
    CHECK(check_copy(eb, {5, 7}, {1, 0}, {7, 1}, 5, 35).path == k::copy_path::fill);
    CHECK(check_copy(eb, {5, 7}, {0, 0}, {7, 1}, 1, 35).path == k::copy_path::fill);
    // [3, 4, 130] from [3, 1, 130] and from [1, 4, 1].
    check_copy(eb, {3, 4, 130}, {130, 0, 1}, {520, 130, 1}, 390, 1560);
    check_copy(eb, {3, 4, 130}, {0, 1, 0}, {520, 130, 1}, 4, 1560);
  }
}

TEST_CASE("slices and concatenation: offset pointers and strides of a larger buffer") {
  for (std::size_t eb : {1, 4, 8}) {
    CAPTURE(eb);
    // x[2:7, 3:15] of a [10, 20] tensor, and every other column of x[1:9, 0:20:2].
    check_copy(eb, {5, 12}, {20, 1}, {12, 1}, 200, 60, 2 * 20 + 3);
    check_copy(eb, {8, 10}, {20, 2}, {10, 1}, 200, 80, 20);
    // concat([4, 5], [4, 4]) along axis 1 into [4, 9]: two copies into one buffer.
    check_copy(eb, {4, 5}, {5, 1}, {9, 1}, 20, 36, 0, 0);
    check_copy(eb, {4, 4}, {4, 1}, {9, 1}, 16, 36, 0, 5);
    // A reshape of a contiguous tensor: one run.
    CHECK(check_copy(eb, {6, 35}, {35, 1}, {35, 1}, 210, 210).path == k::copy_path::contiguous);
  }
}

TEST_CASE("merging: contiguous axes collapse, extents of 1 vanish") {
  const std::vector<std::size_t> ext = {2, 3, 1, 4, 5};
  const auto dense = k::dense_strides(ext);
  const auto p = k::plan_copy(4, ext, dense, dense);
  CHECK(p.path == k::copy_path::contiguous);
  CHECK(p.outer.rank == 0);
  CHECK(p.inner == 120);
  // Transposing the last two of [2, 3, 4, 5]: the outer [2, 3] merge into one axis of 6.
  const std::vector<std::size_t> src_ext = {2, 3, 4, 5}, perm = {0, 1, 3, 2}, t_ext = {2, 3, 5, 4};
  const auto t = k::plan_copy(4, t_ext, k::permute_strides(src_ext, perm), k::dense_strides(t_ext));
  CHECK(t.path == k::copy_path::transpose);
  CHECK(t.outer.rank == 1);
  CHECK(t.outer.extent[0] == 6);
  CHECK(t.rows == 5);
  CHECK(t.inner == 4);
  // Empty: nothing to do.
  const std::vector<std::size_t> empty = {3, 0};
  CHECK(k::plan_copy(4, empty, k::dense_strides(empty), k::dense_strides(empty)).path ==
        k::copy_path::none);
}

TEST_CASE("large copies on several threads") {
  for (int threads : {1, 2, 3}) {
    nax::set_num_threads(threads);
    CAPTURE(threads);
    const std::vector<std::size_t> src_ext = {1000, 1001}, ext = {1001, 1000}, perm = {1, 0};
    check_copy(4, ext, k::permute_strides(src_ext, perm), k::dense_strides(ext), 1001000, 1001000);
    const std::vector<std::size_t> src3 = {7, 300, 513}, perm3 = {2, 0, 1}, ext3 = {513, 7, 300};
    check_copy(8, ext3, k::permute_strides(src3, perm3), k::dense_strides(ext3), 7 * 300 * 513,
               7 * 300 * 513);
    // One long run, cut into pieces; and a broadcast row.
    check_copy(4, {3000000}, {1}, {1}, 3000000, 3000000);
    check_copy(8, {2000, 513}, {0, 1}, {513, 1}, 513, 2000 * 513);
  }
  nax::set_num_threads(2);
}

TEST_CASE("errors name the extents and the strides") {
  const std::vector<std::size_t> ext = {3, 4};
  const std::vector<std::ptrdiff_t> two = {4, 1}, one = {1};
  CHECK_THROWS_WITH_AS(k::plan_copy(4, ext, one, two),
                       "nax::kernels::copy: extents [3, 4] have 2 axes but the strides have 1 "
                       "(source) and 2 (destination)",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::plan_copy(0, ext, two, two),
                       "nax::kernels::copy: the element size must be at least 1", nax::shape_error);
  CHECK_THROWS_WITH_AS(k::permute_strides(ext, std::vector<std::size_t>{1, 1}),
                       "nax::kernels::permute_strides: [1, 1] is not a permutation of the 2 "
                       "axes of extents [3, 4]",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(k::permute_strides(ext, std::vector<std::size_t>{0}),
                       "nax::kernels::permute_strides: [0] is not a permutation of the 2 axes of "
                       "extents [3, 4]",
                       nax::shape_error);
  const std::vector<std::size_t> deep(17, 2);
  std::vector<std::ptrdiff_t> scattered(17);
  for (std::size_t a = 0; a < 17; ++a) scattered[a] = std::ptrdiff_t(1) << (2 * a);
  CHECK_THROWS_WITH_AS(k::plan_copy(1, deep, scattered, k::dense_strides(deep)),
                       "nax::kernels::copy: more than 16 axes after merging contiguous ones, "
                       "extents [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]",
                       nax::shape_error);
}
