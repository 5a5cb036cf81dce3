// Consumer of an installed nax: see ../run_consumer.cmake (CTest test nax.package.find_package).
#include <nax/nax.hpp>

#include <iostream>

using batch = nax::axis<"batch">;
using hidden = nax::axis<"hidden", 768>;

int main() {
  std::cout << nax::shape_of<float, batch, hidden>().to_string() << '\n';
  return 0;
}
