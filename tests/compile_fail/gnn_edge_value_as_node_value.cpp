// A vertex program that returns a per-edge value (the source's row plus v's own) without
// aggregating it over v's in-edges.
// expect: gnn_per_edge_value_used_as_node_value_aggregate_it_first<
// expect: gnn::edge_scope>
// (the type is nax::isa_<instruction set>::...: docs/architecture.md, "Namespaces")
#include <nax/gnn/vertex.hpp>

#include <cstdint>

using feat = nax::axis<"feat", 4>;
int main() {
  const std::int32_t src[] = {0}, dst[] = {1};
  const auto g = nax::gnn::csr::from_edges(2, src, dst);
  const nax::tensor<float, nax::gnn::node, feat> h(nax::gnn::node{2});
  const auto out = nax::gnn::zoom_in(g, [&](const nax::gnn::vertex& v) {
#ifdef NAX_COMPILE_FAIL
    return v.src(h) + v.dst(h);
#else
    return nax::gnn::sum(v.src(h) + v.dst(h));
#endif
  });
  return out.extent<nax::gnn::node>() == 2 ? 0 : 1;
}
