#pragma once
// nax::axis_name: the name of an axis at run time, interned, so that shapes and bindings copy it
// as one pointer and compare it with one comparison.

#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace nax {

/// An interned axis name; the empty name means "unnamed". Construction from text takes a lock
/// (done when shapes are built, not when they are compared or looked up); copies, equality and
/// hashing are a pointer's.
class axis_name {
 public:
  constexpr axis_name() noexcept = default;
  axis_name(std::string_view text) : text_(text.empty() ? nullptr : intern(text)) {}  // NOLINT
  axis_name(const char* text) : axis_name(std::string_view(text)) {}                  // NOLINT
  axis_name(const std::string& text) : axis_name(std::string_view(text)) {}           // NOLINT

  bool empty() const noexcept { return text_ == nullptr; }
  explicit operator bool() const noexcept { return text_ != nullptr; }
  std::string_view view() const noexcept {
    return text_ ? std::string_view(*text_) : std::string_view();
  }
  operator std::string_view() const noexcept { return view(); }  // NOLINT

  friend bool operator==(axis_name a, axis_name b) noexcept { return a.text_ == b.text_; }
  friend bool operator==(axis_name a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(axis_name a, const char* b) noexcept { return a.view() == b; }
  /// Alphabetical order (not the order of interning), so orders are the same in every run.
  friend bool operator<(axis_name a, axis_name b) noexcept { return a.view() < b.view(); }

  std::size_t hash() const noexcept { return std::hash<const void*>{}(text_); }

 private:
  static const std::string* intern(std::string_view text) {
    // Never destroyed: names must outlive every static object that holds one.
    static auto* table = new std::set<std::string, std::less<>>();
    static std::mutex lock;
    std::lock_guard guard(lock);
    auto it = table->find(text);
    if (it == table->end()) it = table->emplace(text).first;
    return &*it;
  }

  const std::string* text_ = nullptr;
};

}  // namespace nax

template <>
struct std::hash<nax::axis_name> {
  std::size_t operator()(nax::axis_name n) const noexcept { return n.hash(); }
};
