#include <nax/core/axis_list.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using seq256 = nax::axis<"seq", nax::upto(256)>;
using seq_static = nax::axis<"seq", 128>;
using seq_dynamic = nax::axis<"seq">;
using hidden = nax::axis<"hidden", 768>;
using hidden_dynamic = nax::axis<"hidden">;
using out = nax::axis<"out", 3072>;
using nax::axes;

template <class A, class B>
inline constexpr bool same = std::is_same_v<A, B>;

TEST_CASE("contains and index_of go by name, not by extent") {
  using L = axes<batch, seq, hidden>;
  static_assert(nax::axes_contains_v<L, hidden>);
  static_assert(nax::axes_contains_v<L, hidden_dynamic>);
  static_assert(!nax::axes_contains_v<L, out>);
  static_assert(nax::axes_contains<L, batch>::value);
  static_assert(!nax::axes_contains_v<axes<>, batch>);
  static_assert(nax::axes_index_of_v<L, batch> == 0);
  static_assert(nax::axes_index_of_v<L, seq_dynamic> == 1);
  static_assert(nax::axes_index_of_v<L, hidden> == 2);
  static_assert(same<nax::axes_get<L, hidden_dynamic>, hidden>);
  CHECK(nax::axes_names<L>[1] == "seq");
  CHECK(nax::axes_names<axes<>>.empty());
}

TEST_CASE("unify_axes keeps the tighter constraint") {
  static_assert(same<nax::unify_axes<hidden, hidden>, hidden>);
  static_assert(same<nax::unify_axes<hidden, hidden_dynamic>, hidden>);
  static_assert(same<nax::unify_axes<hidden_dynamic, hidden>, hidden>);
  static_assert(same<nax::unify_axes<seq, seq_static>, seq_static>);
  static_assert(same<nax::unify_axes<seq_static, seq>, seq_static>);
  static_assert(same<nax::unify_axes<seq, seq256>, seq256>);
  static_assert(same<nax::unify_axes<seq256, seq>, seq256>);
  static_assert(same<nax::unify_axes<seq_dynamic, seq>, seq>);
  static_assert(same<nax::unify_axes<seq, seq_dynamic>, seq>);
  static_assert(same<nax::unify_axes<batch, batch>, batch>);
  CHECK(true);
}

TEST_CASE("union: left axes in order, then right-only axes in right order") {
  static_assert(
      same<nax::axes_union<axes<batch, hidden>, axes<out, batch>>, axes<batch, hidden, out>>);
  static_assert(
      same<nax::axes_union<axes<hidden>, axes<seq, batch, hidden>>, axes<hidden, seq, batch>>);
  static_assert(same<nax::axes_union<axes<>, axes<seq, batch>>, axes<seq, batch>>);
  static_assert(same<nax::axes_union<axes<seq, batch>, axes<>>, axes<seq, batch>>);
  // Shared axes are unified in place: the left's dynamic hidden takes the right's 768.
  static_assert(
      same<nax::axes_union<axes<batch, hidden_dynamic>, axes<hidden>>, axes<batch, hidden>>);
  static_assert(same<nax::axes_union<axes<seq, batch>, axes<seq256>>, axes<seq256, batch>>);
  CHECK(true);
}

TEST_CASE("difference and intersection keep the left order") {
  static_assert(
      same<nax::axes_difference<axes<batch, seq, hidden>, axes<seq>>, axes<batch, hidden>>);
  static_assert(
      same<nax::axes_difference<axes<batch, seq, hidden>, axes<hidden, batch>>, axes<seq>>);
  static_assert(same<nax::axes_difference<axes<batch>, axes<out>>, axes<batch>>);
  static_assert(same<nax::axes_difference<axes<batch>, axes<batch>>, axes<>>);
  static_assert(
      same<nax::axes_intersection<axes<batch, seq, hidden_dynamic>, axes<hidden, out, batch>>,
           axes<batch, hidden>>);
  CHECK(true);
}

TEST_CASE("same_set is a permutation check by name") {
  static_assert(nax::axes_same_set_v<axes<batch, seq, hidden>, axes<hidden, batch, seq>>);
  static_assert(nax::axes_same_set_v<axes<>, axes<>>);
  static_assert(nax::axes_same_set<axes<hidden>, axes<hidden_dynamic>>::value);
  static_assert(!nax::axes_same_set_v<axes<batch, seq>, axes<batch>>);
  static_assert(!nax::axes_same_set_v<axes<batch>, axes<batch, seq>>);
  static_assert(!nax::axes_same_set_v<axes<batch, seq>, axes<batch, out>>);
  CHECK(true);
}

TEST_CASE("check_unique_axes accepts lists without repeated names") {
  static_assert(nax::check_unique_axes<axes<batch, seq, hidden>>);
  static_assert(nax::check_unique_axes<axes<>>);
  CHECK(true);
}
