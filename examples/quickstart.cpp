#include <iostream>
#include <nax/nax.hpp>

using batch = nax::axis<"batch">;              // dynamic
using seq = nax::axis<"seq", nax::upto(512)>;  // dynamic, at most 512
using hidden = nax::axis<"hidden", 768>;       // static

int main() {
  nax::extents<batch, seq, hidden> e(seq(128), batch(32));  // by name, any order
  nax::shape pattern = nax::shape_of<float, batch, seq, hidden>();
  nax::bindings b = nax::extract_bindings(pattern, nax::shape_of<float>(e));
  std::cout << pattern.to_string() << " binds " << b.to_string() << "\n";
  try {
    seq too_long(600);
  } catch (const nax::shape_error& err) {
    std::cout << err.what() << "\n";  // axis 'seq': extent 600 exceeds its bound 512
  }
}
