#pragma once
// The run-time memory of one specialization: arenas of the planned size, each with the table of
// value addresses its intermediates and constants resolve to. A run leases one; concurrent runs
// lease different ones; a finished run returns its arena for the next, so a run on a warm
// specialization allocates nothing.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace nax::runtime {

struct arena {
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte, aligned_delete> memory;
  std::vector<void*> values;  // inputs and outputs are filled per run, the rest once
};

class arena_pool {
 public:
  /// `layout(a)` sets up a new arena's fixed addresses (called once per arena, under no lock).
  template <class Layout>
  arena_pool(std::size_t bytes, std::size_t num_values, Layout layout)
      : bytes_(bytes), num_values_(num_values), layout_(std::move(layout)) {}

  class lease {
   public:
    lease(arena_pool& pool, std::unique_ptr<arena> a) : pool_(&pool), arena_(std::move(a)) {}
    lease(lease&&) = default;
    lease& operator=(lease&&) = delete;
    ~lease() {
      if (arena_) pool_->give_back(std::move(arena_));
    }
    arena& operator*() const { return *arena_; }
    arena* operator->() const { return arena_.get(); }

   private:
    arena_pool* pool_;
    std::unique_ptr<arena> arena_;
  };

  lease acquire() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<arena> a = std::move(free_.back());
        free_.pop_back();
        return lease(*this, std::move(a));
      }
      ++created_;
    }
    auto a = std::make_unique<arena>();
    if (bytes_)
      a->memory.reset(static_cast<std::byte*>(::operator new (bytes_, std::align_val_t{64})));
    a->values.assign(num_values_, nullptr);
    layout_(*a);
    return lease(*this, std::move(a));
  }

  std::size_t bytes() const noexcept { return bytes_; }
  /// Arenas made so far: the most runs this specialization has had at the same time.
  std::size_t arenas() const {
    std::lock_guard lock(mutex_);
    return created_;
  }

 private:
  void give_back(std::unique_ptr<arena> a) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(a));
  }

  std::size_t bytes_, num_values_;
  std::function<void(arena&)> layout_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<arena>> free_;
  std::size_t created_ = 0;
};

}  // namespace nax::runtime
