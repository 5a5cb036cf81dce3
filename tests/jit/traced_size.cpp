// nax::size traced (jit/traced_ops.hpp): the same generic lambda gives the same bits eagerly
// and under nax::jit, where the value is the run's extent under every size policy, never the
// extent the specialization was made for.
#include "jit_helpers.hpp"

#include <cstdint>
#include <cstring>

using namespace jit_test;

namespace {

// The mean over the real positions of seq: the sum divided by the extent as a value.
const auto mean_over_seq = [](auto x) {
  return nax::eval(nax::sum<seq>(x) / nax::cast<float>(nax::size<seq>(x)));
};
const auto seq_size = [](auto x) { return nax::size<seq>(x); };

}  // namespace

TEST_CASE("nax::size under nax::jit: the run's extent under every size policy, eager's bits") {
  for (nax::graph::size_policy policy :
       {nax::graph::size_policy::exact, nax::graph::size_policy::buckets,
        nax::graph::size_policy::bound}) {
    nax::graph::compile_options o;
    o.bounded = {policy};
    auto mean = nax::jit(o, mean_over_seq, nax::input<float, seq, hidden>("x"));
    auto size = nax::jit(o, seq_size, nax::input<float, seq, hidden>("x"));
    for (std::size_t n : {1u, 3u, 17u, 64u}) {
      CAPTURE(n);
      const auto x = nax::uniform<float, seq, hidden>(nax::rng{2, n}, -1.0f, 1.0f, seq{n});
      CHECK(size(x).data()[0] == static_cast<std::int32_t>(n));
      const nax::tensor<float, hidden> got = mean(x), want = mean_over_seq(x);
      CHECK(std::memcmp(got.data(), want.data(), sizeof(float) * 24) == 0);
    }
  }
}
