// .safetensors files: a file written by an independent writer (tests/io/safetensors_writer.py,
// Python's standard library alone) read by nax, every dtype nax has, a scalar and an empty
// tensor, zero-copy where aligned; a file nax wrote checked by that reader; structs by field
// path with a name map; every bad file an io_error naming the file and what is wrong.
#include <nax/io/safetensors.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace {

using rows = nax::axis<"rows">;
using model = nax::axis<"model", 4>;
using out = nax::axis<"out", 3>;
using n_ax = nax::axis<"n">;

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nax_test_" + name)).string();
}

// The writer script, run by /usr/bin/python3 (or python3 on the PATH).
int run_writer(const std::string& mode, const std::string& path) {
  const char* source = std::getenv("NAX_SOURCE_DIR");
  REQUIRE_MESSAGE(source, "NAX_SOURCE_DIR is not set (ctest sets it)");
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string command = python + " " + source + "/tests/io/safetensors_writer.py " + mode +
                              " " + path + " > /dev/null";
  return std::system(command.c_str());
}

// The writer's values (see expected() in the script).
double float_value(std::size_t i) { return 0.5 * double(i) - 3.25; }
std::int64_t int_value(std::size_t i, std::int64_t scale) {
  return (std::int64_t(i) * 37 - 100) * scale;
}

struct layer {
  nax::tensor<double, model, out> w;
  NAX_FIELDS(w)
};
struct net {
  nax::tensor<float, rows, model> embed;
  std::vector<layer> layers;
  nax::tensor<std::int32_t, n_ax> ids;
  NAX_FIELDS(embed, layers, ids)
};

struct renamed {
  nax::tensor<float, rows, model> wte;
  NAX_FIELDS(wte);  // (a semicolon after NAX_FIELDS is allowed)
};
struct wrong {
  nax::tensor<float, model, out> w;  // the file's layers.0.w is F64
  NAX_FIELDS(w)
};

void write_bytes(const std::string& path, const std::string& header, std::size_t data_bytes,
                 std::uint64_t declared = UINT64_MAX) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  const std::uint64_t n = declared == UINT64_MAX ? header.size() : declared;
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xff));
  f << header << std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("safetensors: a file from an independent writer, every dtype, read zero-copy") {
  const std::string path = temp("python.safetensors");
  REQUIRE(run_writer("write", path) == 0);
  const auto file = nax::load_safetensors(path);
  CHECK(file.metadata().at("writer") == "python");
  std::vector<std::string> names;
  for (const auto& e : file.entries()) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"embed", "layers.0.w", "layers.1.w", "ids", "big",
                                          "bytes", "mask", "scalar", "empty"});

  const auto embed = file.load<float, rows, model>("embed");
  CHECK(embed.extents().extent(0) == 5);
  for (std::size_t i = 0; i < embed.size(); ++i) CHECK(embed.data()[i] == float(float_value(i)));
  const auto w = file.load<double, model, out>("layers.1.w");
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(w.data()[i] == float_value(i));
  const auto ids = file.load<std::int32_t, n_ax>("ids");
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(ids.data()[i] == int_value(i, 1));
  const auto big = file.load<std::int64_t, n_ax, rows>("big");
  for (std::size_t i = 0; i < big.size(); ++i) CHECK(big.data()[i] == int_value(i, 1'000'000'007));
  const auto bytes = file.load<std::uint8_t, n_ax>("bytes");
  for (std::size_t i = 0; i < bytes.size(); ++i) CHECK(bytes.data()[i] == (7 * i) % 256);
  const auto mask = file.load<bool, n_ax, rows>("mask");
  for (std::size_t i = 0; i < mask.size(); ++i) CHECK(mask.data()[i] == (i % 3 == 0));
  CHECK(file.load<float>("scalar").data()[0] == float(float_value(0)));
  CHECK(file.load<float, n_ax, model>("empty").size() == 0);

  // get() shares the mapping: no copy for aligned data (the writer pads the header to 8 bytes),
  // and the tensor outlives the file object.
  nax::dyn_tensor e;
  {
    const auto again = nax::load_safetensors(path);
    e = again.get("layers.0.w");
    CHECK(e.shape().to_string() == "f64[4, 3]");
  }
  CHECK(e.data<double>()[5] == float_value(5));
  CHECK_THROWS_WITH_AS(file.get("wte"),
                       ("nax::load_safetensors: '" + path +
                        "' has no tensor 'wte' (it has: embed, layers.0.w, layers.1.w, ids, big, "
                        "bytes, mask, scalar, empty)")
                           .c_str(),
                       nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("safetensors: what nax writes, the independent reader reads") {
  const std::string path = temp("nax.safetensors");
  std::vector<nax::io::named_tensor> all;
  auto add = [&](const std::string& name, nax::dtype t, std::vector<nax::dim> dims) {
    nax::dyn_tensor v(nax::shape::make(t, std::span<const nax::dim>(dims)));
    for (std::size_t i = 0; i < v.size(); ++i) switch (t) {
        case nax::dtype::f32: v.data<float>()[i] = float(float_value(i)); break;
        case nax::dtype::f64: v.data<double>()[i] = float_value(i); break;
        case nax::dtype::i32: v.data<std::int32_t>()[i] = std::int32_t(int_value(i, 1)); break;
        case nax::dtype::i64: v.data<std::int64_t>()[i] = int_value(i, 1'000'000'007); break;
        case nax::dtype::u8: v.data<std::uint8_t>()[i] = std::uint8_t((7 * i) % 256); break;
        case nax::dtype::boolean: v.data<bool>()[i] = i % 3 == 0; break;
      }
    all.push_back({name, v});
  };
  add("embed", nax::dtype::f32, {5, 4});
  add("layers.0.w", nax::dtype::f64, {4, 3});
  add("layers.1.w", nax::dtype::f64, {4, 3});
  add("ids", nax::dtype::i32, {6});
  add("big", nax::dtype::i64, {2, 2});
  add("bytes", nax::dtype::u8, {3});
  add("mask", nax::dtype::boolean, {2, 3});
  add("scalar", nax::dtype::f32, {});
  add("empty", nax::dtype::f32, {0, 4});
  nax::io::save_safetensors(path, all, {{"writer", "nax"}});
  CHECK(run_writer("check", path) == 0);
  CHECK_THROWS_WITH_AS(nax::io::save_safetensors(path, {all[0], all[0]}),
                       ("nax::save_safetensors: '" + path + "': two tensors are named 'embed'")
                           .c_str(),
                       nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("safetensors: a struct by field path, a name map, and what does not fit") {
  const std::string path = temp("python_struct.safetensors");
  REQUIRE(run_writer("write", path) == 0);
  net p;
  p.layers.resize(2);
  // The file has more tensors than the struct: an error unless allowed.
  CHECK_THROWS_WITH_AS(nax::load_safetensors(path, p),
                       ("nax::load_safetensors: '" + path +
                        "' has tensors the struct has not: 'big', 'bytes', 'mask', 'scalar', "
                        "'empty' (safetensors_names::ignore_extra allows them)")
                           .c_str(),
                       nax::io_error);
  CHECK(p.embed.size() == 0);  // nothing loaded
  nax::load_safetensors(path, p, {.names = {}, .ignore_extra = true});
  CHECK(p.embed.extents().extent(0) == 5);
  CHECK(p.layers[1].w.data()[2] == float_value(2));
  CHECK(p.ids.data()[1] == int_value(1, 1));

  // A checkpoint's own names.
  renamed r;
  nax::load_safetensors(path, r, {.names = {{"wte", "embed"}}, .ignore_extra = true});
  CHECK(r.wte.data()[3] == float(float_value(3)));
  CHECK_THROWS_WITH_AS(
      nax::load_safetensors(path, r, {.names = {{"wte", "transformer.wte.weight"}}}),
      ("nax::load_safetensors: '" + path +
       "' has no tensor 'transformer.wte.weight' (field 'wte'), which the struct has")
          .c_str(),
      nax::io_error);
  // Another element type or extent names the tensor.
  wrong bad;
  const float before = bad.w.data()[0];
  CHECK_THROWS_WITH_AS(
      nax::load_safetensors(path, bad, {.names = {{"w", "layers.0.w"}}, .ignore_extra = true}),
      ("nax::io::load_safetensors: '" + path + ":layers.0.w' holds f64 elements, not f32").c_str(),
      nax::io_error);
  CHECK(bad.w.data()[0] == before);

  // Round trip of a struct through nax's writer, bit for bit.
  const std::string back_path = temp("struct_back.safetensors");
  nax::save_safetensors(back_path, p);
  net back;
  back.layers.resize(2);
  nax::load_safetensors(back_path, back);
  CHECK(std::memcmp(back.embed.data(), p.embed.data(), p.embed.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(back.layers[0].w.data(), p.layers[0].w.data(), 12 * sizeof(double)) == 0);
  CHECK(std::memcmp(back.ids.data(), p.ids.data(), 6 * sizeof(std::int32_t)) == 0);
  std::remove(path.c_str());
  std::remove(back_path.c_str());
}

TEST_CASE("safetensors: a bad file is an io_error naming it and what is wrong") {
  const std::string path = temp("bad.safetensors");
  auto message = [&](const std::string& what) {
    return "nax::load_safetensors: '" + path + "' " + what;
  };
  auto fails_with = [&](const std::string& what) {
    CHECK_THROWS_WITH_AS(nax::load_safetensors(path), message(what).c_str(), nax::io_error);
  };
  { std::ofstream(path, std::ios::binary) << "abc"; }
  fails_with("is 3 bytes long: too short for the header's length (8 bytes)");
  write_bytes(path, "{}", 0, 1000);
  fails_with("declares a header of 1000 bytes, but the file has 2 after the length");
  write_bytes(path, "{\"a\": ", 0);
  fails_with("has a header that is not JSON");
  write_bytes(path, "[1, 2]", 0);
  fails_with("has a header that is not a JSON object");
  write_bytes(path, R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})", 4);
  fails_with("tensor 'a': dtype \"BF16\" is not one nax reads (F32, F64, I32, I64, U8, BOOL)");
  write_bytes(path, R"({"a": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}})", 8);
  fails_with("tensor 'a': shape [2,-1] holds a non-integer");
  write_bytes(path, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8);
  fails_with("tensor 'a': data_offsets [0, 16] are not within the 8 bytes of data");
  write_bytes(path, R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8);
  fails_with("tensor 'a': holds 8 bytes, but F32 [3] is 12");
  write_bytes(path,
              R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
              R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
              12);
  fails_with("tensors 'a' and 'b' overlap");
  write_bytes(path, R"({"a": {"dtype": "F32", "shape": [2]}})", 8);
  fails_with("tensor 'a': needs \"dtype\", \"shape\" and \"data_offsets\"");
  write_bytes(path,
              R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], )"
              R"("data_offsets": [0, 8]}})",
              8);
  fails_with("tensor 'a': shape [4294967296,4294967296,4294967296] is too large");
  CHECK_THROWS_WITH_AS(nax::load_safetensors(temp("does_not_exist.safetensors")),
                       ("nax::load_safetensors: cannot open '" +
                        temp("does_not_exist.safetensors") + "'")
                           .c_str(),
                       nax::io_error);
  std::remove(path.c_str());
}
