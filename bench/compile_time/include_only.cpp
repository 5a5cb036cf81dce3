// Compile-time probe: the umbrella header alone.
#include <nax/nax.hpp>

int main() { return 0; }
