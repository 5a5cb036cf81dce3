#pragma once
// nax::io_error: a file nax cannot read or write (missing, truncated, of another format, type or
// shape than asked). The message names the file and what is wrong with it.

#include <stdexcept>
#include <string>

#include <nax/core/isa.hpp>
#include <nax/core/shape_error.hpp>

namespace nax::NAX_ISA {

class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class... Parts>
[[noreturn]] void throw_io_error(const Parts&... parts) {
  throw io_error(message(parts...));
}

}  // namespace detail
}  // namespace nax
