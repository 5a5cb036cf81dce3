#pragma once
// An rvalue tensor read by an expression: moved into the node, which keeps it alive
// (`nax::eval(x * 3) + 1`).

#include <cstddef>
#include <memory>
#include <utility>

#include <nax/core/isa.hpp>
#include <nax/typed/expression/base.hpp>
#include <nax/typed/expression/lanes.hpp>

namespace nax::NAX_ISA::detail {

template <class Tensor>
class owned_leaf : public expression_base {
 public:
  using value_type = typename Tensor::value_type;
  using axes_type = typename Tensor::axes_type;
  using lane_type = lane_of_value<value_type>;
  explicit owned_leaf(Tensor&& t) : tensor_(std::make_shared<const Tensor>(std::move(t))) {}
  template <class A>
  std::size_t extent() const {
    return tensor_->template extent<A>();
  }
  template <class D>
  auto cursor() const {
    return tensor_->view().template cursor<D>();
  }
  const Tensor& tensor() const { return *tensor_; }

 private:
  std::shared_ptr<const Tensor> tensor_;
};

}  // namespace nax::detail
