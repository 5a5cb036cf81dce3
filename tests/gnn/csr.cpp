// nax::gnn::csr (gnn/csr.hpp): edges grouped by destination in their input order, the transpose
// on demand (and its own transpose, the graph again), degree statistics, and bad edge lists
// refused naming the edge.
#include <nax/gnn/csr.hpp>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

namespace gnn = nax::gnn;

TEST_CASE("edges grouped by destination, in input order; self-loops and multi-edges kept") {
  //          edge: 0  1  2  3  4  5
  const std::int32_t src[] = {0, 2, 1, 2, 3, 2};
  const std::int32_t dst[] = {1, 1, 1, 2, 1, 0};
  const gnn::csr g = gnn::csr::from_edges(4, src, dst);
  CHECK(g.num_nodes() == 4);
  CHECK(g.num_edges() == 6);
  CHECK(std::vector<std::int64_t>(g.offsets().begin(), g.offsets().end()) ==
        std::vector<std::int64_t>{0, 1, 5, 6, 6});
  CHECK(std::vector<std::int32_t>(g.sources().begin(), g.sources().end()) ==
        std::vector<std::int32_t>{2, 0, 2, 1, 3, 2});
  CHECK(std::vector<std::int32_t>(g.edge_ids().begin(), g.edge_ids().end()) ==
        std::vector<std::int32_t>{5, 0, 1, 2, 4, 3});
  CHECK(g.in_degree(1) == 4);
  CHECK(g.in_degree(3) == 0);
  CHECK(g.out_degree(2) == 3);
  const gnn::csr& t = g.transpose();
  CHECK(std::vector<std::int64_t>(t.offsets().begin(), t.offsets().end()) ==
        std::vector<std::int64_t>{0, 1, 2, 5, 6});
  CHECK(std::vector<std::int32_t>(t.sources().begin(), t.sources().end()) ==
        std::vector<std::int32_t>{1, 1, 1, 2, 0, 1});
  const gnn::csr& back = t.transpose();  // the graph again
  CHECK(std::vector<std::int32_t>(back.sources().begin(), back.sources().end()) ==
        std::vector<std::int32_t>(g.sources().begin(), g.sources().end()));
  const gnn::degree_stats s = g.degrees();
  CHECK(s.min_in == 0);
  CHECK(s.max_in == 4);
  CHECK(s.min_out == 1);
  CHECK(s.max_out == 3);
  CHECK(s.no_in_edges == 1);
  CHECK(s.no_out_edges == 0);
  CHECK(s.self_loops == 2);  // 1 -> 1 and 2 -> 2
  CHECK(s.mean == doctest::Approx(1.5));
}

TEST_CASE("empty graphs and isolated nodes") {
  const gnn::csr none = gnn::csr::from_edges(0, {}, {});
  CHECK(none.num_nodes() == 0);
  CHECK(none.offsets().size() == 1);
  CHECK(none.degrees().max_in == 0);
  const gnn::csr lonely = gnn::csr::from_edges(3, {}, {});
  CHECK(lonely.degrees().no_in_edges == 3);
  CHECK(lonely.transpose().num_edges() == 0);
  const gnn::csr made;  // a default graph: no nodes
  CHECK(made.transpose().num_nodes() == 0);
}

TEST_CASE("the transpose is made once, safely from several threads") {
  std::mt19937 rng(3);
  std::vector<std::int32_t> src(5000), dst(5000);
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<std::int32_t>(rng() % 300);
    dst[i] = static_cast<std::int32_t>(rng() % 300);
  }
  const gnn::csr g = gnn::csr::from_edges(300, src, dst);
  std::vector<const gnn::csr*> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < 4; ++k) threads.emplace_back([&, k] { seen[k] = &g.transpose(); });
  for (std::thread& t : threads) t.join();
  for (const gnn::csr* p : seen) CHECK(p == seen[0]);
  std::size_t out = 0;
  for (std::size_t v = 0; v < 300; ++v) out += g.out_degree(v);
  CHECK(out == 5000);
}

TEST_CASE("bad edge lists are refused naming the edge") {
  const std::int32_t ok[] = {0, 1, 2};
  const std::int32_t far[] = {0, 5, 1};
  const std::int32_t negative[] = {0, 1, -1};
  CHECK_THROWS_WITH_AS(gnn::csr::from_edges(3, ok, std::span<const std::int32_t>(ok, 2)),
                       "nax::gnn::csr::from_edges: 3 sources but 2 destinations", nax::shape_error);
  CHECK_THROWS_WITH_AS(gnn::csr::from_edges(3, far, ok),
                       "nax::gnn::csr::from_edges: edge 1: source 5 is not a node of a graph of "
                       "3 nodes",
                       nax::shape_error);
  CHECK_THROWS_WITH_AS(gnn::csr::from_edges(3, ok, negative),
                       "nax::gnn::csr::from_edges: edge 2: destination -1 is negative",
                       nax::shape_error);
}
