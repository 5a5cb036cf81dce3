#pragma once
// nax::core_detail::small_vector: a vector of trivially copyable values that keeps its first N
// elements inline, so the shapes and bindings of the hot path never allocate.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>

namespace nax::core_detail {

template <class T, std::size_t N>
class small_vector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);
  static_assert(N > 0);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  small_vector() noexcept = default;
  small_vector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  // Copies and moves take all N inline elements at once (always initialized; a heap buffer's
  // past size_ are not, so only from inline): a copy of fixed size is a few vector moves, where
  // std::copy of size_ elements is a call to memmove (g++ 12), which was 6% of a runtime
  // specialization (a shape copied per value); and the storage is not value-initialized first.
  small_vector(const small_vector& other) : inline_(other.inline_) {
    if (other.is_inline())
      size_ = other.size_;
    else
      assign(other.begin(), other.end());
  }
  small_vector(small_vector&& other) noexcept : inline_(other.inline_) { steal(other); }
  small_vector& operator=(const small_vector& other) {
    if (this == &other) return *this;
    if (other.is_inline()) {
      release();
      inline_ = other.inline_;
      size_ = other.size_;
    } else {
      assign(other.begin(), other.end());
    }
    return *this;
  }
  small_vector& operator=(small_vector&& other) noexcept {
    if (this != &other) {
      release();
      if (other.is_inline()) inline_ = other.inline_;
      steal(other);
    }
    return *this;
  }
  ~small_vector() { release(); }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return capacity_; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  friend bool operator==(const small_vector& a, const small_vector& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

  void clear() noexcept { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  void resize(std::size_t n) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data_[i] = T{};
    size_ = n;
  }
  void push_back(const T& value) {
    if (size_ == capacity_) {
      const T copy = value;  // value may live in this vector
      grow(next_capacity());
      data_[size_++] = copy;
    } else {
      data_[size_++] = value;
    }
  }
  /// Inserts before position `at` (0..size()).
  void insert(std::size_t at, const T& value) {
    const T copy = value;
    if (size_ == capacity_) grow(next_capacity());
    std::memmove(static_cast<void*>(data_ + at + 1), data_ + at, (size_ - at) * sizeof(T));
    data_[at] = copy;
    ++size_;
  }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(last - first);
    clear();
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }

 private:
  // Never below 2 * N: g++ 12 cannot see that capacity_ >= N > 0 and, at -O3, warns
  // (-Warray-bounds) about a zero-sized growth that cannot happen.
  std::size_t next_capacity() const noexcept { return std::max(2 * capacity_, 2 * N); }
  bool is_inline() const noexcept { return data_ == inline_.items; }
  void grow(std::size_t n) {
    T* bigger = std::allocator<T>{}.allocate(n);
    std::copy(data_, data_ + size_, bigger);
    release();
    data_ = bigger;
    capacity_ = n;
  }
  void release() noexcept {
    if (!is_inline()) std::allocator<T>{}.deallocate(data_, capacity_);
    data_ = inline_.items;
    capacity_ = N;
  }
  // Takes other's elements: its heap buffer, or (inline) its size, the elements already copied.
  void steal(small_vector& other) noexcept {
    if (!other.is_inline()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_.items;
      other.capacity_ = N;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  struct storage {
    T items[N]{};
  };
  storage inline_;
  T* data_ = inline_.items;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace nax::core_detail
