#pragma once
// The cases of docs/errors.md's table (tests/docs/error_table.cpp checks them against it), in
// three files so that no one file is slow to compile: error_cases_typed.cpp (axes, typed
// tensors and ops), error_cases_graph.cpp (the builder, compile options, runs, dyn_tensor) and
// error_cases_other.cpp (nax::jit, files, threads, optimizers and the rest). Each adds its cases
// by the row's id; here, what they share.

#include <nax/io/safetensors.hpp>
#include <nax/nax.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

namespace error_cases {

namespace g = nax::graph;
using nax::dim;
using nax::dtype;
using nax::dyn_tensor;
using nax::shape;

using case_map = std::map<std::string, std::function<void()>>;

void add_typed_cases(case_map& c);
void add_graph_cases(case_map& c);
void add_other_cases(case_map& c);

// The axes the table's inputs are written with (docs/errors.md says so above the table).
using batch = nax::axis<"batch">;
using seq = nax::axis<"seq", nax::upto(512)>;
using hidden = nax::axis<"hidden", 4>;
using k_ax = nax::axis<"k">;
using a_ax = nax::axis<"a">;
using b_ax = nax::axis<"b">;
using model = nax::axis<"model">;
using heads = nax::axis<"heads", 3>;
using hd = nax::axis<"hd", 4>;

// The struct of parameters of the rows *-fields-*.
struct layer {
  nax::tensor<float, k_ax> w;
  NAX_FIELDS(w)
};
struct net {
  std::vector<layer> layers;
  NAX_FIELDS(layers)
};
inline net make_net(std::size_t layers, std::size_t k = 4) {
  net n;
  for (std::size_t i = 0; i < layers; ++i) {
    n.layers.push_back({nax::tensor<float, k_ax>(k_ax(k))});
    n.layers.back().w.fill(0);
  }
  return n;
}

inline const float nan = std::numeric_limits<float>::quiet_NaN();
inline const float inf = std::numeric_limits<float>::infinity();

// --- helpers for the cases --------------------------------------------------------------------

inline std::string temp_file(const char* name) {
  std::string file = "nax_errors_";
  file += std::to_string(::getpid());
  file += '_';
  file += name;
  return (std::filesystem::temp_directory_path() / file).string();
}

// The file a case writes and reads (`<file>` in the table's messages).
inline std::string current_file;

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

inline shape f32(std::initializer_list<dim> dims) { return shape::make(dtype::f32, dims); }

// A graph: y[batch, h] = sum over seq of a[batch, seq<=8, h] + c[batch, h] (h = 6).
struct run_graph {
  g::builder b;
  nax::executable ex;
  run_graph() : ex(make(b)) {}
  static nax::executable make(g::builder& b) {
    const dim h = dim::named("h", 6);
    auto a = b.parameter("a", f32({"batch", dim::bounded("seq", 8), h}));
    auto c = b.parameter("c", f32({"batch", h}));
    return g::compile(b, {g::sum(a, {"seq"}) + c});
  }
  static dyn_tensor t(std::initializer_list<std::pair<const char*, std::size_t>> dims,
                      dtype type = dtype::f32) {
    std::vector<dim> d;
    for (auto [n, e] : dims) d.push_back(dim::named(n, e));
    return dyn_tensor(shape(type, std::span<const dim>(d)));
  }
  static dyn_tensor a(std::size_t batch, std::size_t seq) {
    return t({{"batch", batch}, {"seq", seq}, {"h", 6}});
  }
  static dyn_tensor c(std::size_t batch) { return t({{"batch", batch}, {"h", 6}}); }
};

// A graph of one input and one result of its shape: y[batch, 4] = x * 2 + 1.
inline nax::executable elementwise_graph() {
  g::builder b;
  auto x = b.parameter("x", f32({"batch", 4}));
  return g::compile(b, {x * 2.0 + 1.0});
}

inline const auto dense = [](auto x, auto w) { return nax::relu(nax::dot<hidden>(x, w)); };

}  // namespace error_cases
