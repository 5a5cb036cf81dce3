#pragma once
// A dynamic axis made by renaming another (graph::builder::rename): bound to the same value as
// its source, which is an axis of the graph's inputs. Queries over `seq` and keys over `kseq`
// are one axis of the binding, `seq`.

#include <nax/core/axis_name.hpp>
#include <nax/core/isa.hpp>

namespace nax::NAX_ISA::graph {

struct axis_alias {
  axis_name alias;   // the new name, e.g. kseq
  axis_name source;  // the input axis it is bound as, e.g. seq
  friend bool operator==(const axis_alias&, const axis_alias&) = default;
};

}  // namespace nax::graph
