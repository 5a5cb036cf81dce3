// .npy files: every dtype and rank round trip, as dyn_tensors and as typed tensors (dynamic and
// bounded axes from the file); the header NumPy writes, byte for byte; every bad file an io_error
// naming it and what is wrong.
#include <nax/io/npy.hpp>

#include <nax/typed/layout.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace {

using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(8)>;
using h = nax::axis<"h", 3>;

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nax_test_" + name)).string();
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A .npy file of version 1.0 with header text `dict` (padded as NumPy pads it) and `data`.
std::string npy_with(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";  // (appends only: g++ 12 -O3 warns, falsely, on a + b + c)
  out += major;
  out += '\0';
  out += char(header.size() & 0xFF);
  out += char(header.size() >> 8);
  out.append(header);
  out.append(data);
  return out;
}

template <class T>
nax::dyn_tensor filled(nax::shape s) {
  nax::dyn_tensor t(std::move(s));
  for (std::size_t i = 0; i < t.size(); ++i) static_cast<T*>(t.data())[i] = T(i * 3 % 7);
  return t;
}

}  // namespace

TEST_CASE("every dtype and rank round trips through a file") {
  const std::string path = temp("round.npy");
  auto check = [&](const nax::dyn_tensor& t) {
    CAPTURE(t.shape().to_string());
    nax::io::save_npy(path, t);
    const nax::dyn_tensor back = nax::io::load_npy(path);
    CHECK(back.shape() == t.shape());
    // memcmp's pointers must not be null even for zero bytes (an empty tensor holds none).
    CHECK((t.bytes() == 0 || std::memcmp(back.data(), t.data(), t.bytes()) == 0));
    // The data starts 64-byte aligned, as NumPy writes it.
    CHECK((bytes_of(path).size() - t.bytes()) % 64 == 0);
  };
  check(filled<float>(nax::shape::make(nax::dtype::f32, {2, 3})));
  check(filled<double>(nax::shape::make(nax::dtype::f64, {5})));
  check(filled<std::int32_t>(nax::shape::make(nax::dtype::i32, {2, 1, 4})));
  check(filled<std::int64_t>(nax::shape::make(nax::dtype::i64, {})));
  check(filled<std::uint8_t>(nax::shape::make(nax::dtype::u8, {7})));
  check(filled<bool>(nax::shape::make(nax::dtype::boolean, {2, 2})));
  check(filled<float>(nax::shape::make(nax::dtype::f32, {0, 3})));
  std::remove(path.c_str());
}

TEST_CASE("the header is the one NumPy writes") {
  const std::string path = temp("header.npy");
  nax::io::save_npy(path, filled<float>(nax::shape::make(nax::dtype::f32, {2, 3})));
  const std::vector<char> b = bytes_of(path);
  const std::string want =
      npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "");
  REQUIRE(b.size() == want.size() + 24);
  CHECK(std::string(b.begin(), b.begin() + std::ptrdiff_t(want.size())) == want);
  nax::io::save_npy(path, filled<double>(nax::shape::make(nax::dtype::f64, {4})));
  const std::vector<char> one = bytes_of(path);
  CHECK(std::string(one.begin(), one.end()).find("'shape': (4,), }") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("typed tensors: axes from the type, dynamic and bounded extents from the file") {
  const std::string path = temp("typed.npy");
  nax::tensor<float, batch, seq, h> x{batch(2), seq(5)};
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = float(i) / 4;
  nax::io::save_npy(path, x);
  const auto y = nax::io::load_npy<float, batch, seq, h>(path);
  CHECK(y.extent<batch>() == 2);
  CHECK(y.extent<seq>() == 5);
  CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  // A permuted view is written in its own axis order, dense.
  nax::io::save_npy(path, nax::permute<h, batch, seq>(x));
  const auto p = nax::io::load_npy<float, h, batch, seq>(path);
  CHECK(p(2, 1, 4) == x(1, 4, 2));
  // What the type does not allow, by name.
  nax::io::save_npy(path, x);
  CHECK_THROWS_WITH_AS((nax::io::load_npy<double, batch, seq, h>(path)),
                       doctest::Contains("holds f32 elements, not f64"), nax::io_error);
  CHECK_THROWS_WITH_AS((nax::io::load_npy<float, batch, h>(path)),
                       doctest::Contains("holds a tensor of rank 3 (f32[2, 5, 3]), not 2"),
                       nax::io_error);
  CHECK_THROWS_WITH_AS((nax::io::load_npy<float, batch, h, seq>(path)),
                       doctest::Contains("has 5 along axis 1 ('h' is 3)"), nax::io_error);
  nax::tensor<float, batch, h> wide{batch(9)};
  nax::io::save_npy(path, wide);
  CHECK_THROWS_WITH_AS((nax::io::load_npy<float, seq, h>(path)),
                       doctest::Contains("has 9 along axis 0, past the bound 8 of 'seq'"),
                       nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("a scalar reads as a typed tensor of no axes") {
  // (Found by the fuzz target tests/fuzz/io.cpp, built with g++: load_npy<T>() of no axes did
  // not compile with -Wall -Werror, an unused variable in as_typed.)
  const std::string path = temp("scalar.npy");
  nax::tensor<double> s;
  s.data()[0] = 2.5;
  nax::io::save_npy(path, s);
  CHECK(nax::io::load_npy<double>(path).data()[0] == 2.5);
  CHECK_THROWS_WITH_AS(nax::io::load_npy<float>(path),
                       doctest::Contains("holds f64 elements, not f32"), nax::io_error);
  nax::io::save_npy(path, nax::tensor<double, h>{});
  CHECK_THROWS_WITH_AS(nax::io::load_npy<double>(path),
                       doctest::Contains("holds a tensor of rank 1 (f64[3]), not 0"),
                       nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("a bool written as any nonzero byte reads as true") {
  const std::string path = temp("bools.npy");
  write_bytes(path, npy_with("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                             std::string("\x00\x02\xff", 3)));
  const nax::dyn_tensor t = nax::io::load_npy(path);
  const auto* b = static_cast<const unsigned char*>(t.data());
  CHECK(b[0] == 0);
  CHECK(b[1] == 1);
  CHECK(b[2] == 1);
  std::remove(path.c_str());
}

TEST_CASE("bad files: each an io_error naming the file and what is wrong") {
  const std::string path = temp("bad.npy");
  auto fails = [&](const std::string& bytes, const std::string& what) {
    CAPTURE(what);
    write_bytes(path, bytes);
    CHECK_THROWS_WITH_AS(nax::io::load_npy(path), doctest::Contains(what.c_str()), nax::io_error);
    CHECK_THROWS_WITH_AS(nax::io::load_npy(path), doctest::Contains(path.c_str()), nax::io_error);
  };
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  fails("PK\x03\x04 not npy at all", "is not a .npy file (no \\x93NUMPY magic string)");
  fails("", "is not a .npy file");
  fails(npy_with(ok, std::string(8, '\0'), 4), "has .npy format version 4.0; nax reads 1.0 to 3.0");
  fails(npy_with(ok, std::string(7, '\0')),
        "is truncated: its header says 2 elements (8 bytes), it holds 7 bytes");
  fails(npy_with("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')),
        "is big-endian ('>f4')");
  fails(
      npy_with("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')),
      "holds elements of type '<c8'");
  fails(
      npy_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0')),
      "is in Fortran order");
  fails(npy_with("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')),
        "has a header that does not parse");
  fails(
      npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", std::string(8, '\0')),
      "has a shape that does not parse");
  fails(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "is truncated in its header");
  CHECK_THROWS_WITH_AS(nax::io::load_npy(temp("missing.npy")),
                       doctest::Contains("nax::io::load_npy: cannot open"), nax::io_error);
  std::remove(path.c_str());
}
