// The flagship example: named axes checked by the compiler, runtime shapes checked by name.
#include <nax/nax.hpp>

#include <iostream>

using batch = nax::axis<"batch">;                // dynamic
using seq = nax::axis<"seq", nax::upto(512)>;    // dynamic, at most 512
using hidden = nax::axis<"hidden", 768>;         // static

int main() {
  // Compile time: extents by name, in any order; only dynamic extents are stored.
  nax::extents<batch, seq, hidden> e(seq(128), batch(32));
  std::cout << "extents " << e.to_string() << ", " << e.size() << " elements, "
            << sizeof(e) << " bytes of extents\n";

  // The same axes as a runtime pattern, and the bindings a concrete input gives.
  nax::shape pattern = nax::shape_of<float, batch, seq, hidden>();
  nax::shape input = nax::shape_of<float>(e);
  nax::bindings b = nax::extract_bindings(pattern, input);
  std::cout << pattern.to_string() << " given " << input.to_string() << " binds "
            << b.to_string() << "\n";

  // Errors speak in axis names.
  try {
    auto other = nax::shape::make(nax::dtype::f32, {64, 128, 768});
    nax::extract_bindings({{"x", pattern, input}, {"y", pattern, other}});
  } catch (const nax::shape_error& err) {
    std::cout << "error: " << err.what() << "\n";
  }
  try {
    seq too_long(600);
  } catch (const nax::shape_error& err) {
    std::cout << "error: " << err.what() << "\n";
  }
}
