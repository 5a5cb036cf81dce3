// Fuzz target: edge lists (nax/gnn). nax has no edge-list file format: a graph's edges come to
// it as two int32 lists, `nax::gnn::csr::from_edges(n, src, dst)`, the one place untrusted
// edges enter. Lists of any length, with negative, out-of-range, repeated and self-loop edges
// and destinations of more than split_degree in-edges, must either make the graph a plain
// reference makes (checked entry by entry: offsets, sources, edge ids, the transpose, degree
// statistics) or throw nax::shape_error. On the graphs made, aggregate_sum and aggregate_mean
// are checked against the same sums done in edge order here (bit for bit: the order is
// documented, hubs' parts included), and gcn against a double reference.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <nax/core/axis.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/exec/thread_pool.hpp>
#include <nax/gnn/aggregate.hpp>
#include <nax/gnn/csr.hpp>
#include <nax/typed/tensor.hpp>

#include "bytes.hpp"

namespace {

using fuzz::fail;
using nax::gnn::node;
using feat = nax::axis<"feat">;

// The in-edges of each node of `key`, in input order (edge ids).
std::vector<std::vector<std::size_t>> group(std::size_t n, const std::vector<std::int32_t>& key) {
  std::vector<std::vector<std::size_t>> by(n);
  for (std::size_t i = 0; i < key.size(); ++i) by[static_cast<std::size_t>(key[i])].push_back(i);
  return by;
}

void check_grouped(const nax::gnn::csr& g, std::size_t n, const std::vector<std::int32_t>& key,
                   const std::vector<std::int32_t>& other, const char* which) {
  const auto by = group(n, key);
  if (g.num_nodes() != n || g.num_edges() != key.size() || g.offsets().size() != n + 1 ||
      g.offsets()[0] != 0)
    fail(which, ": sizes");
  for (std::size_t v = 0; v < n; ++v) {
    const auto begin = static_cast<std::size_t>(g.offsets()[v]);
    if (g.in_degree(v) != by[v].size()) fail(which, ": degree of ", v);
    for (std::size_t j = 0; j < by[v].size(); ++j) {
      const std::size_t e = by[v][j];
      if (g.edge_ids()[begin + j] != static_cast<std::int32_t>(e) ||
          g.sources()[begin + j] != other[e])
        fail(which, ": edge ", j, " of node ", v);
    }
  }
}

template <class T>
void check_aggregates(const nax::gnn::csr& g, std::size_t n, std::size_t f,
                      const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& dst,
                      fuzz::bytes& in) {
  nax::tensor<T, node, feat> h{node{n}, feat{f}};
  for (std::size_t i = 0; i < h.size(); ++i)
    h.data()[i] = static_cast<T>((static_cast<int>(in.byte()) - 128) / 8.0);
  const auto sum = nax::gnn::aggregate_sum(g, h);
  const auto mean = nax::gnn::aggregate_mean(g, h);
  const auto gcn = nax::gnn::gcn(g, h);
  const auto by = group(n, dst);
  std::vector<std::size_t> out_degree(n, 0);
  for (std::int32_t s : src) ++out_degree[static_cast<std::size_t>(s)];
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t k = by[v].size();
    for (std::size_t i = 0; i < f; ++i) {
      // In edge order; a destination of more than split_degree in-edges in parts, added in order.
      T total = 0, part = 0;
      double want_gcn = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const auto u = static_cast<std::size_t>(src[by[v][j]]);
        part = part + h.data()[u * f + i];
        if ((j + 1) % nax::gnn::split_degree == 0 || j + 1 == k) {
          total = j < nax::gnn::split_degree ? part : total + part;
          part = 0;
        }
        want_gcn += static_cast<double>(h.data()[u * f + i]) /
                    std::sqrt(static_cast<double>(std::max<std::size_t>(1, out_degree[u])) *
                              static_cast<double>(std::max<std::size_t>(1, k)));
      }
      const T want_mean = k > 1 ? total * (T(1) / static_cast<T>(k)) : total;
      const std::size_t at = v * f + i;
      if (!(sum.data()[at] == total) && !(std::isnan(total) && std::isnan(sum.data()[at])))
        fail("aggregate_sum at node ", v, " feature ", i, ": ", sum.data()[at], " vs ", total);
      if (!(mean.data()[at] == want_mean))
        fail("aggregate_mean at node ", v, " feature ", i, ": ", mean.data()[at], " vs ",
             want_mean);
      const double tolerance = (sizeof(T) == 4 ? 1e-5 : 1e-12) * (1 + static_cast<double>(k)) * 16;
      if (std::abs(static_cast<double>(gcn.data()[at]) - want_gcn) > tolerance)
        fail("gcn at node ", v, " feature ", i, ": ", gcn.data()[at], " vs ", want_gcn);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::bytes in(data, size);
  const std::uint8_t mode = in.byte();
  std::size_t n = in.range(0, 64);
  if (mode % 16 == 1) n = in.range(0, 4096);
  if (mode % 16 == 2) n = in.word(8);  // perhaps more than int32 holds (never allocated then)
  // Edges as runs: (source, destination, repeats), each end perhaps outside [0, n).
  std::vector<std::int32_t> src, dst;
  auto end_point = [&]() -> std::int32_t {
    const std::uint8_t how = in.byte();
    if (how < 224)
      return static_cast<std::int32_t>(
          in.range(0, n == 0 ? 0 : std::min<std::size_t>(n - 1, 1u << 30)));
    if (how < 240) return static_cast<std::int32_t>(in.word(4));  // anything
    return static_cast<std::int32_t>(n) - static_cast<std::int32_t>(how % 4);
  };
  const std::size_t runs = in.range(0, 40);
  for (std::size_t r = 0; r < runs && src.size() < 12000; ++r) {
    const std::int32_t s = end_point(), d = end_point();
    const std::size_t repeat = in.byte() < 250 ? 1 : in.range(1, 5000);
    for (std::size_t k = 0; k < repeat; ++k) {
      src.push_back(s);
      dst.push_back(d);
    }
  }
  if (mode % 32 == 3 && !src.empty()) src.pop_back();  // lists of two lengths
  bool valid =
      src.size() == dst.size() && n <= std::size_t(std::numeric_limits<std::int32_t>::max());
  for (std::size_t i = 0; valid && i < src.size(); ++i)
    valid = src[i] >= 0 && dst[i] >= 0 && static_cast<std::size_t>(src[i]) < n &&
            static_cast<std::size_t>(dst[i]) < n;
  // (A valid graph of many nodes would allocate for each: only few are made.)
  if (valid && n > 100000) return 0;
  nax::gnn::csr g;
  try {
    g = nax::gnn::csr::from_edges(n, src, dst);
  } catch (const nax::shape_error&) {
    if (valid) fail("from_edges refused a valid graph");
    return 0;
  }
  if (!valid) fail("from_edges accepted an invalid graph");
  check_grouped(g, n, dst, src, "csr");
  check_grouped(g.transpose(), n, src, dst, "transpose");
  // Degree statistics.
  const nax::gnn::degree_stats s = g.degrees();
  if (n > 0) {
    const auto by_in = group(n, dst), by_out = group(n, src);
    std::size_t min_in = src.size(), max_in = 0, min_out = src.size(), max_out = 0, no_in = 0,
                no_out = 0, loops = 0;
    for (std::size_t v = 0; v < n; ++v) {
      min_in = std::min(min_in, by_in[v].size());
      max_in = std::max(max_in, by_in[v].size());
      min_out = std::min(min_out, by_out[v].size());
      max_out = std::max(max_out, by_out[v].size());
      no_in += by_in[v].empty();
      no_out += by_out[v].empty();
    }
    for (std::size_t i = 0; i < src.size(); ++i) loops += src[i] == dst[i];
    if (s.min_in != min_in || s.max_in != max_in || s.min_out != min_out || s.max_out != max_out ||
        s.no_in_edges != no_in || s.no_out_edges != no_out || s.self_loops != loops ||
        s.mean != static_cast<double>(src.size()) / static_cast<double>(n))
      fail("degrees()");
    std::vector<std::size_t> hubs;
    for (std::size_t v = 0; v < n; ++v)
      if (by_in[v].size() > nax::gnn::split_degree) hubs.push_back(v);
    if (g.split_nodes() != hubs) fail("split_nodes()");
  }
  // Aggregations over the graph, on 1 or 2 threads.
  if (n * 80 * 8 <= (1u << 22)) {
    const int threads = static_cast<int>(in.range(1, 2));
    if (nax::num_threads() != threads) nax::set_num_threads(threads);
    const std::size_t f = in.range(0, 70);
    if (in.flag())
      check_aggregates<float>(g, n, f, src, dst, in);
    else
      check_aggregates<double>(g, n, f, src, dst, in);
  }
  return 0;
}
