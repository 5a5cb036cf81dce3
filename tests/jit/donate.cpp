// nax::donate: a result that updates a donated argument in place takes its memory (the whole
// tensor is not copied), with the results of a call without donation; an argument whose memory
// another argument shares, or that the function also reads elsewhere, is not taken.
#include "jit_helpers.hpp"

#include <cstdint>
#include <tuple>

using namespace jit_test;

namespace {

using pos = nax::axis<"pos", nax::upto(12)>;  // (a KV cache's axis: bounded)
using one = nax::axis<"pos", 1>;
using model = nax::axis<"model", 5>;

using cache_t = nax::tensor<float, pos, model>;

cache_t numbered_cache() {
  cache_t c{pos(12)};
  for (std::size_t i = 0; i < c.size(); ++i) c.data()[i] = float(i);
  return c;
}

nax::tensor<std::int32_t> index(std::int32_t i) {
  nax::tensor<std::int32_t> t;
  t.data()[0] = i;
  return t;
}

// The row written at `at`, and the updated cache's sum over positions (read after the update).
const auto write_row = [](auto cache, auto row, auto at) {
  auto c = nax::eval(nax::dynamic_update_slice<pos>(cache, row, at));
  return std::tuple(nax::sum<pos>(c), c);
};

auto jit_write_row() {
  return nax::jit(write_row, nax::input<float, pos, model>("cache"),
                  nax::input<float, one, model>("row"), nax::input<std::int32_t>("at"));
}

struct two_caches {
  cache_t k, v;
  NAX_FIELDS(k, v)
};

}  // namespace

TEST_CASE("nax::donate: the updated cache is the donated tensor's memory, the same values") {
  auto f = jit_write_row();
  CHECK(f.executable().in_place_input(1) == 0u);  // result 1 updates input 0
  CHECK_FALSE(f.executable().in_place_input(0));
  nax::tensor<float, one, model> row;
  row.fill(-1.0f);
  cache_t plain = numbered_cache();
  cache_t donated = numbered_cache();
  for (std::int32_t at : {0, 7, 11}) {
    CAPTURE(at);
    const auto [want_sum, want] = f(plain, row, index(at));
    const float* before = donated.data();
    auto [sum, updated] = f(nax::donate(donated), row, index(at));
    CHECK(updated.data() == before);   // written in place
    CHECK(donated.data() == nullptr);  // the memory moved to the result
    check_close(updated, want, 0);
    check_close(sum, want_sum, 0);
    donated = std::move(updated);
    plain = want;
  }
}

TEST_CASE("nax::donate of a struct: each tensor updated in place goes to its result") {
  two_caches c{numbered_cache(), numbered_cache()};
  auto f = nax::jit(
      [](const auto& caches, auto row, auto at) {
        return std::tuple(nax::dynamic_update_slice<pos>(caches.k, row, at),
                          nax::dynamic_update_slice<pos>(caches.v, row * 2.0f, at));
      },
      nax::input(c), nax::input<float, one, model>("row"), nax::input<std::int32_t>("at"));
  nax::tensor<float, one, model> row;
  row.fill(3.0f);
  const float* k_before = c.k.data();
  const float* v_before = c.v.data();
  auto [k, v] = f(nax::donate(c), row, index(6));
  CHECK(k.data() == k_before);
  CHECK(v.data() == v_before);
  CHECK(k(6, 2) == 3.0f);
  CHECK(v(6, 2) == 6.0f);
  CHECK(v(7, 2) == numbered_cache()(7, 2));
}

TEST_CASE("nax::donate: not taken when another argument shares the memory or it is read again") {
  auto f = jit_write_row();
  nax::tensor<float, one, model> row;
  row.fill(-1.0f);
  cache_t c = numbered_cache();
  const cache_t original = numbered_cache();
  // The row is a view of the donated cache: the update would overwrite what it reads.
  const nax::tensor_view<const float, one, model> view(c.data() + 2 * 5, {});  // position 2
  const auto [sum, updated] = f(nax::donate(c), view, index(5));
  CHECK(c.data() != nullptr);  // not taken
  CHECK(updated.data() != c.data());
  const nax::tensor_view<const float, one, model> original_row(original.data() + 2 * 5, {});
  const auto [want_sum, want] = f(original, original_row, index(5));
  check_close(updated, want, 0);
  check_close(sum, want_sum, 0);

  // The function reads the cache besides updating it: no result may take its memory.
  auto g = nax::jit(
      [](auto cache, auto row, auto at) {
        return std::tuple(nax::sum<pos>(cache), nax::dynamic_update_slice<pos>(cache, row, at));
      },
      nax::input<float, pos, model>("cache"), nax::input<float, one, model>("row"),
      nax::input<std::int32_t>("at"));
  CHECK_FALSE(g.executable().in_place_input(1));
  cache_t d = numbered_cache();
  const auto [before_sum, written] = g(nax::donate(d), row, index(3));
  CHECK(d.data() != nullptr);
  check_close(d, original, 0);  // unchanged
  check_close(before_sum, nax::eval(nax::sum<pos>(original.view())), 0);
  CHECK(written(3, 0) == -1.0f);
  CHECK(written(4, 0) == original(4, 0));
}

TEST_CASE("executable::run: an output may be its in-place input's own tensor, no other") {
  auto f = jit_write_row();
  nax::executable& ex = f.executable();
  cache_t c = numbered_cache();
  nax::tensor<float, one, model> row;
  row.fill(2.0f);
  nax::tensor<std::int32_t> at = index(4);
  nax::tensor<float, model> sum;
  const nax::dyn_tensor cache_dyn = nax::to_dyn(c);
  const nax::dyn_tensor in[] = {cache_dyn, nax::to_dyn(row), nax::to_dyn(at)};
  nax::dyn_tensor out[] = {nax::to_dyn(sum), cache_dyn};
  ex.run(in, out);
  CHECK(c(4, 1) == 2.0f);
  CHECK(c(5, 1) == numbered_cache()(5, 1));
  CHECK(sum(0) == doctest::Approx(float(0 + 5 * 66) - 20.0f + 2.0f));  // (sum of column 0)
  // The sum written over the cache: an output sharing an input's memory otherwise.
  const nax::tensor_view<float, model> over_cache(c.data(), {});
  cache_t fresh = numbered_cache();
  nax::dyn_tensor bad[] = {nax::to_dyn(over_cache), nax::to_dyn(fresh)};
  CHECK_THROWS_WITH_AS(ex.run(in, bad),
                       doctest::Contains("output 0 shares memory with input 'cache'"),
                       nax::shape_error);
}
