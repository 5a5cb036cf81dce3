// An aggregation over v's in-edges of v's own value (the same on every in-edge).
// expect: gnn_aggregation_of_a_per_node_value<
// expect: gnn::node_scope>
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
    return nax::gnn::sum(v.dst(h));
#else
    return nax::gnn::sum(v.src(h));
#endif
  });
  return out.extent<nax::gnn::node>() == 2 ? 0 : 1;
}
