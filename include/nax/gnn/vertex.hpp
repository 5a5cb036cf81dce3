#pragma once
// The vertex-centric model: nax::gnn::zoom_in(g, program), the program written for one
// destination vertex v over values in scopes (node, source, edge, param), with elementwise ops
// and aggregations over v's in-edges, run as one destination-parallel pass over the graph.
// See docs/gnn.md.

#include <nax/gnn/vertex/aggregation.hpp>
#include <nax/gnn/vertex/gradient.hpp>
#include <nax/gnn/vertex/ops.hpp>
#include <nax/gnn/vertex/program.hpp>
#include <nax/gnn/vertex/scope.hpp>
