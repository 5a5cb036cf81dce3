// A second translation unit of the header-only program (program.cpp): it includes all of nax
// header-only too, so that a function a header defines without `inline` is defined twice and the
// link fails, and it hands program.cpp what it sees of nax to compare.
#include <nax/nax.hpp>

namespace header_only {
using add_parameter = nax::graph::value (nax::graph::builder::*)(std::string, nax::shape);
add_parameter parameter_in_second_unit() { return &nax::graph::builder::parameter; }
int threads_in_second_unit() { return nax::num_threads(); }
}  // namespace header_only
