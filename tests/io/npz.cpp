// .npz files: named sets of tensors round trip, in order; one read by name as a typed tensor; an
// archive with ZIP64 fields as np.savez writes them; every bad archive an io_error naming the
// file and what is wrong; and, where NumPy is installed, files NumPy wrote read by nax and the
// other way round. A struct of parameters (NAX_FIELDS) round trips by field path, and one that
// does not match the file is an io_error naming the tensor.
#include <nax/io/npz.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

namespace {

using in = nax::axis<"in", 2>;
using out = nax::axis<"out", 3>;
using batch = nax::axis<"batch">;

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nax_test_" + name)).string();
}

std::vector<std::byte> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> c{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

void write_all(const std::string& path, const std::vector<std::byte>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

void put(std::vector<std::byte>& o, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o.push_back(std::byte(v >> (8 * i) & 0xFF));
}

// One entry stored the way Python's zipfile stores it for np.savez (force_zip64): the sizes in
// both headers are all ones and the real ones are in ZIP64 extra fields.
std::vector<std::byte> zip64_archive(const std::string& name, const std::vector<std::byte>& data) {
  std::vector<std::byte> o;
  const std::uint32_t crc = nax::io::zip::crc32(data);
  put(o, 0x04034b50, 4), put(o, 45, 2), put(o, 0, 2), put(o, 0, 2), put(o, 0, 4), put(o, crc, 4);
  put(o, 0xFFFFFFFF, 4), put(o, 0xFFFFFFFF, 4), put(o, name.size(), 2), put(o, 20, 2);
  for (char c : name) o.push_back(std::byte(c));
  put(o, 1, 2), put(o, 16, 2), put(o, data.size(), 8), put(o, data.size(), 8);
  o.insert(o.end(), data.begin(), data.end());
  const std::size_t dir = o.size();
  put(o, 0x02014b50, 4), put(o, 45, 2), put(o, 45, 2), put(o, 0, 2), put(o, 0, 2), put(o, 0, 4);
  put(o, crc, 4), put(o, 0xFFFFFFFF, 4), put(o, 0xFFFFFFFF, 4), put(o, name.size(), 2);
  put(o, 20, 2), put(o, 0, 2), put(o, 0, 2), put(o, 0, 2), put(o, 0, 4), put(o, 0, 4);
  for (char c : name) o.push_back(std::byte(c));
  put(o, 1, 2), put(o, 16, 2), put(o, data.size(), 8), put(o, data.size(), 8);
  const std::size_t dir_size = o.size() - dir;
  put(o, 0x06054b50, 4), put(o, 0, 2), put(o, 0, 2), put(o, 1, 2), put(o, 1, 2);
  put(o, dir_size, 4), put(o, dir, 4), put(o, 0, 2);
  return o;
}

nax::tensor<float, in, out> weights() {
  nax::tensor<float, in, out> w;
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = 0.5f * float(i) - 1;
  return w;
}

bool have_numpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0;
}

}  // namespace

TEST_CASE("a named set of tensors round trips, in order; one read by name, typed") {
  const std::string path = temp("set.npz");
  const nax::tensor<float, in, out> w = weights();
  nax::tensor<double, batch> b{batch(4)};
  for (std::size_t i = 0; i < 4; ++i) b.data()[i] = double(i) * 1.5;
  nax::io::save_npz(path, {{"w", nax::io::to_dyn(w)}, {"b", nax::io::to_dyn(b)}});
  const std::vector<nax::io::named_tensor> all = nax::io::load_npz(path);
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "w");
  CHECK(all[1].name == "b");
  CHECK(all[0].value.shape() == nax::shape::make(nax::dtype::f32, {2, 3}));
  CHECK(std::memcmp(all[1].value.data(), b.data(), 4 * sizeof(double)) == 0);
  const auto w2 = nax::io::load_npz<float, in, out>(path, "w");
  CHECK(std::memcmp(w2.data(), w.data(), w.size() * sizeof(float)) == 0);
  const auto b2 = nax::io::load_npz<double, batch>(path, "b");
  CHECK(b2.extent<batch>() == 4);
  CHECK_THROWS_WITH_AS((nax::io::load_npz<float, in, out>(path, "w3")),
                       doctest::Contains("has no tensor 'w3' (it has: w, b)"), nax::io_error);
  CHECK_THROWS_WITH_AS((nax::io::load_npz<float, batch>(path, "b")),
                       doctest::Contains("holds f64 elements, not f32"), nax::io_error);
  CHECK_THROWS_WITH_AS(
      nax::io::save_npz(path, {{"w", nax::io::to_dyn(w)}, {"w", nax::io::to_dyn(w)}}),
      doctest::Contains("two tensors are named 'w'"), nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("ZIP64 fields, as np.savez writes them") {
  const std::string path = temp("zip64.npz"), one = temp("one.npy");
  nax::io::save_npy(one, weights());
  write_all(path, zip64_archive("w.npy", read_all(one)));
  const auto w = nax::io::load_npz<float, in, out>(path, "w");
  CHECK(std::memcmp(w.data(), weights().data(), 6 * sizeof(float)) == 0);
  std::remove(path.c_str());
  std::remove(one.c_str());
}

TEST_CASE("one tensor read by name decodes that entry only") {
  // np.savez may hold what nax does not read (a float16 step counter); the other entries load.
  const std::string path = temp("mixed.npz");
  std::vector<std::byte> half = nax::io::encode_npy(nax::io::to_dyn(weights()));
  for (std::size_t i = 0; i + 3 <= half.size(); ++i)
    if (half[i] == std::byte('<') && half[i + 1] == std::byte('f') &&
        half[i + 2] == std::byte('4')) {
      half[i + 2] = std::byte('2');
      break;
    }
  const std::vector<std::pair<std::string, std::vector<std::byte>>> entries = {
      {"step.npy", half}, {"w.npy", nax::io::encode_npy(nax::io::to_dyn(weights()))}};
  write_all(path, nax::io::zip::write(entries, path));
  const auto w = nax::io::load_npz<float, in, out>(path, "w");
  CHECK(std::memcmp(w.data(), weights().data(), 6 * sizeof(float)) == 0);
  std::string expected = "nax::io::load_npz: '";
  expected.append(path).append(":step.npy' holds elements of type '<f2'");
  CHECK_THROWS_WITH_AS(nax::io::load_npz(path), doctest::Contains(expected.c_str()), nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("what a ZIP without ZIP64 records cannot hold is an error before anything is written") {
  const std::string path = temp("limits.npz");
  std::remove(path.c_str());
  const std::vector<std::byte> tiny = nax::io::encode_npy(nax::io::to_dyn(weights()));
  std::vector<std::pair<std::string, std::vector<std::byte>>> many(0xFFFF, {"t.npy", tiny});
  CHECK_THROWS_WITH_AS(nax::io::zip::write(many, path),
                       doctest::Contains("65535 entries; nax writes archives below 4 GiB, of 65534 "
                                         "entries or fewer"),
                       nax::io_error);
  const std::vector<std::pair<std::string, std::vector<std::byte>>> long_name = {
      {std::string(70000, 'a'), tiny}};
  CHECK_THROWS_WITH_AS(nax::io::zip::write(long_name, path),
                       doctest::Contains("an entry's name has 70000 bytes; a ZIP name has at most "
                                         "65535"),
                       nax::io_error);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("bad archives: each an io_error naming the file and what is wrong") {
  const std::string path = temp("bad.npz");
  const nax::tensor<float, in, out> w = weights();
  nax::io::save_npz(path, {{"w", nax::io::to_dyn(w)}});
  const std::vector<std::byte> good = read_all(path);
  auto fails = [&](std::vector<std::byte> bytes, const std::string& what) {
    CAPTURE(what);
    write_all(path, bytes);
    CHECK_THROWS_WITH_AS(nax::io::load_npz(path), doctest::Contains(what.c_str()), nax::io_error);
    CHECK_THROWS_WITH_AS(nax::io::load_npz(path), doctest::Contains(path.c_str()), nax::io_error);
  };
  std::vector<std::byte> b = good;
  b[35 + 70] ^= std::byte(1);  // a byte of the entry's data (after its 30 + 5 byte header)
  fails(b, "entry 'w.npy' fails its CRC-32 check");
  b = good;
  b[8] = std::byte(8);  // the local header says deflated, and so does the central directory
  const std::size_t dir = good.size() - 22 - (46 + 5);
  b[dir + 10] = std::byte(8);
  fails(b, "is compressed (method 8, as np.savez_compressed writes)");
  fails(std::vector<std::byte>(good.begin(), good.begin() + 40), "no end of central directory");
  fails(std::vector<std::byte>(good.begin(), good.begin() + 10), "too short (10 bytes)");
  b = good;
  b[good.size() - 22 + 16] = std::byte(0xF0);  // the directory's offset points past the end
  fails(b, "the central directory runs past the end of the file");
  b = good;
  b[30 + 5 + 6] = std::byte(9);  // the .npy inside: format version 9
  const std::uint32_t crc =
      nax::io::zip::crc32(std::span(b).subspan(35, good.size() - 22 - 51 - 35));
  for (int i = 0; i < 4; ++i) b[14 + i] = b[dir + 16 + i] = std::byte(crc >> (8 * i) & 0xFF);
  std::string version = "nax::io::load_npz: '";
  fails(b, version.append(path).append(":w.npy' has .npy format version 9.0"));
  // A ZIP64 extra field whose length runs past the entry's extra fields.
  const std::string one = temp("one.npy");
  nax::io::save_npy(one, weights());
  b = zip64_archive("w.npy", read_all(one));
  std::remove(one.c_str());
  const std::size_t central = b.size() - 22 - (46 + 5 + 20);
  b[central + 46 + 5 + 2] = std::byte(200);  // the extra block's length: 200 bytes, not 16
  fails(b, "entry 'w.npy' has an extra field of 200 bytes that runs past its end");
  CHECK_THROWS_WITH_AS(nax::io::load_npz(temp("missing.npz")),
                       doctest::Contains("nax::io::load_npz: cannot open"), nax::io_error);
  std::remove(path.c_str());
}

TEST_CASE("entries that share bytes are an error, not one record decoded again per entry") {
  // (Found writing the fuzz target tests/fuzz/io.cpp: n directory entries pointing at one
  // record made n tensors of its bytes, n^2 / 46 bytes from a file of n.)
  const std::string path = temp("overlap.npz");
  nax::io::save_npz(path, {{"w", nax::io::to_dyn(weights())}});
  const std::vector<std::byte> good = read_all(path);
  // The archive again with its one directory entry (46 + 5 bytes) written 3 times.
  const std::size_t dir = good.size() - 22 - (46 + 5);
  std::vector<std::byte> b(good.begin(), good.begin() + std::ptrdiff_t(dir));
  for (int i = 0; i < 3; ++i)
    b.insert(b.end(), good.begin() + std::ptrdiff_t(dir), good.end() - 22);
  put(b, 0x06054b50, 4), put(b, 0, 2), put(b, 0, 2), put(b, 3, 2), put(b, 3, 2);
  put(b, 3 * (46 + 5), 4), put(b, dir, 4), put(b, 0, 2);
  write_all(path, b);
  CHECK_THROWS_WITH_AS(nax::io::load_npz(path),
                       doctest::Contains("is not a valid .npz (ZIP) file: entries 'w.npy' and "
                                         "'w.npy' overlap"),
                       nax::io_error);
  CHECK_THROWS_AS((nax::io::load_npz<float, in, out>(path, "w")), nax::io_error);
  // The same directory entry once reads.
  write_all(path, good);
  CHECK(nax::io::load_npz(path).size() == 1);
  std::remove(path.c_str());
}

TEST_CASE("NumPy reads what nax writes, and nax what NumPy writes (where NumPy is installed)") {
  if (!have_numpy()) {
    MESSAGE("NumPy is not installed for /usr/bin/python3: the cross-check is skipped");
    return;
  }
  const std::string ours = temp("ours.npz"), theirs = temp("theirs.npz");
  // A name beyond ASCII is flagged UTF-8 in the archive, so that Python reads it as written.
  nax::io::save_npz(ours,
                    {{"w", nax::io::to_dyn(weights())}, {"w\u00e9", nax::io::to_dyn(weights())}});
  const std::string check = "/usr/bin/python3 -c \"import numpy as np; d = np.load('" + ours +
                            "'); assert d.files == ['w', 'w\u00e9'], d.files; w = d['w']; "
                            "assert w.dtype == np.float32 and w.shape == (2, 3) "
                            "and w[1, 2] == 1.5, w; np.savez('" +
                            theirs +
                            "', a=np.arange(6, dtype=np.float64).reshape(3, 2), b=np.array([True, "
                            "False]))\"";
  REQUIRE(std::system(check.c_str()) == 0);
  const std::vector<nax::io::named_tensor> all = nax::io::load_npz(theirs);
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "a");
  CHECK(all[0].value.shape() == nax::shape::make(nax::dtype::f64, {3, 2}));
  CHECK(static_cast<const double*>(all[0].value.data())[5] == 5.0);
  CHECK(all[1].value.dtype() == nax::dtype::boolean);
  std::remove(ours.c_str());
  std::remove(theirs.c_str());
}

namespace {

using layer_axis = nax::axis<"layer_n">;

struct layer {
  nax::tensor<float, in, out> w;
  nax::tensor<double, layer_axis> scale;
  NAX_FIELDS(w, scale)
};
struct model {
  std::vector<layer> layers;
  std::array<nax::tensor<float, out>, 2> heads;
  NAX_FIELDS(layers, heads)
};

model make_model(std::size_t layers, double seed) {
  model m;
  m.layers.resize(layers);
  for (layer& l : m.layers) l.scale = nax::tensor<double, layer_axis>{layer_axis(3)};
  nax::for_each_field(m, [&](std::string_view, auto& t) {
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = std::sin(seed += 0.1);
  });
  return m;
}

}  // namespace

TEST_CASE("npz: a struct of parameters saves by field path and loads back bit for bit") {
  const std::string path = temp("fields.npz");
  const model m = make_model(2, 0);
  nax::save_npz(path, m);
  std::vector<std::string> names;
  for (const auto& e : nax::io::load_npz(path)) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"layers.0.w", "layers.0.scale", "layers.1.w",
                                          "layers.1.scale", "heads.0", "heads.1"});
  model back;
  back.layers.resize(2);
  nax::load_npz(path, back);
  std::size_t k = 0;
  std::vector<std::vector<std::byte>> bytes;
  nax::for_each_field(m, [&](std::string_view, const auto& t) {
    const auto* p = reinterpret_cast<const std::byte*>(t.data());
    bytes.emplace_back(p, p + t.size() * sizeof(*t.data()));
  });
  nax::for_each_field(back, [&](std::string_view at, const auto& t) {
    INFO(at);
    const auto* p = reinterpret_cast<const std::byte*>(t.data());
    CHECK(std::vector<std::byte>(p, p + t.size() * sizeof(*t.data())) == bytes[k++]);
  });
  CHECK(k == bytes.size());
  CHECK(back.layers[1].scale.extents().extent(0) == 3);  // a dynamic extent, from the file
  std::remove(path.c_str());
}

TEST_CASE("npz: a struct that does not match the file is an io_error naming the tensor, and "
          "keeps its values") {
  const std::string path = temp("fields_bad.npz");
  nax::save_npz(path, make_model(2, 0));
  model more = make_model(3, 5);
  const float before = more.layers[0].w.data()[0];
  CHECK_THROWS_WITH_AS(nax::load_npz(path, more),
                       ("nax::load_npz: '" + path +
                        "' has no tensor 'layers.2.w', which the struct has").c_str(),
                       nax::io_error);
  CHECK(more.layers[0].w.data()[0] == before);  // nothing was loaded
  model fewer = make_model(1, 5);
  CHECK_THROWS_WITH_AS(nax::load_npz(path, fewer),
                       ("nax::load_npz: '" + path +
                        "' has tensors the struct has not: 'layers.1.scale', 'layers.1.w'")
                           .c_str(),
                       nax::io_error);
  // An entry of another element type names the entry's path.
  nax::io::save_npz(path, {{"layers.0.w", nax::io::to_dyn(nax::tensor<double, in, out>{})},
                           {"layers.0.scale", nax::io::to_dyn(fewer.layers[0].scale)},
                           {"heads.0", nax::io::to_dyn(fewer.heads[0])},
                           {"heads.1", nax::io::to_dyn(fewer.heads[1])}});
  CHECK_THROWS_AS(nax::load_npz(path, fewer), nax::io_error);
  try {
    nax::load_npz(path, fewer);
  } catch (const nax::io_error& e) {
    CHECK(std::string(e.what()).find(path + ":layers.0.w") != std::string::npos);
  }
  // The struct's last tensor of other extents: the ones before it, which fit, are not loaded.
  const model saved = make_model(1, 7);
  nax::io::save_npz(path, {{"layers.0.w", nax::io::to_dyn(saved.layers[0].w)},
                           {"layers.0.scale", nax::io::to_dyn(saved.layers[0].scale)},
                           {"heads.0", nax::io::to_dyn(saved.heads[0])},
                           {"heads.1", nax::io::to_dyn(nax::tensor<float, in>{})}});
  const float kept = fewer.layers[0].w.data()[0];
  REQUIRE(saved.layers[0].w.data()[0] != kept);
  CHECK_THROWS_WITH_AS(nax::load_npz(path, fewer), doctest::Contains((path + ":heads.1").c_str()),
                       nax::io_error);
  CHECK(fewer.layers[0].w.data()[0] == kept);
  std::remove(path.c_str());
}
