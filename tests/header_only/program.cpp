// nax header-only: no nax::runtime, so this file compiles the graph layer, the runtime and every
// runtime kernel it reaches itself (NAX_RUNTIME_INLINE is `inline`, nax/core/linkage.hpp). The
// one program of the test suite built that way; every other links the compiled component.
#include <nax/nax.hpp>

#include <doctest/doctest.h>

#ifdef NAX_SEPARATE_RUNTIME
#error "tests/header_only/ is the header-only check: it must not link nax::runtime"
#endif

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 8>;

namespace header_only {
// second_unit.cpp: the same functions, as that translation unit sees them.
using add_parameter = nax::graph::value (nax::graph::builder::*)(std::string, nax::shape);
add_parameter parameter_in_second_unit();
int threads_in_second_unit();
}  // namespace header_only

TEST_CASE("header-only: a graph compiles and runs with the runtime compiled in this program") {
  nax::graph::builder b;
  auto x = b.parameter("x", nax::shape_of<float, batch, hidden>());
  auto ex = nax::graph::compile(b, {b.softmax(x * 2.0, "hidden") + x});
  nax::tensor<float, batch, hidden> t(batch(3));
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = 0.125f * float(i % 8);
  const nax::dyn_tensor in[] = {nax::to_dyn(t)};
  const nax::dyn_tensor got = ex.run(in)[0];
  REQUIRE(got.extent("batch") == 3);
  // Row 2, column 5: softmax over the row of 2 * x, plus x.
  double total = 0;
  for (int j = 0; j < 8; ++j) total += std::exp(2 * 0.125 * j);
  CHECK(got.data<float>()[2 * 8 + 5] ==
        doctest::Approx(std::exp(2 * 0.125 * 5) / total + 0.125 * 5).epsilon(1e-6));
  CHECK(ex.stats().misses == 1);
}

TEST_CASE("header-only: each runtime function is one function in every translation unit") {
  // An inline function has one address in the whole program; one defined `static` (or in an
  // unnamed namespace) in a header would have one per translation unit. (One defined without
  // `inline` fails this program's link: both units define it.)
  const header_only::add_parameter here = &nax::graph::builder::parameter;
  CHECK(here == header_only::parameter_in_second_unit());
  nax::set_num_threads(2);
  CHECK(header_only::threads_in_second_unit() == 2);  // the same pool
}
