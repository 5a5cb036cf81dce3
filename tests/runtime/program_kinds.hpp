#pragma once
// The kinds of a program's steps, in order ("fused_dense, elementwise, ..."), for tests that check
// what the fusion passes made.
#include <nax/graph/program.hpp>

#include <string>

inline std::string program_kinds(const nax::graph::program& p) {
  std::string r;
  for (const nax::graph::program_step& s : p.steps) {
    if (!r.empty()) r += ", ";
    r += s.fused ? nax::graph::name(s.fused->kind) : nax::graph::name(s.kind());
  }
  return r;
}
