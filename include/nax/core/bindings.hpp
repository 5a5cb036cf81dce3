#pragma once
// nax::bindings: the extents of named dynamic axes, `{batch: 32, seq: 128}`, and the key a
// specialization cache looks them up by.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nax/core/axis_name.hpp>
#include <nax/core/shape_error.hpp>
#include <nax/core/small_vector.hpp>

namespace nax {

class binding_key;

/// One binding: an axis name and its extent.
struct binding {
  axis_name name;
  std::size_t value = 0;
  friend bool operator==(const binding&, const binding&) noexcept = default;
};

/// Axis name -> extent, kept in alphabetical order of the names (so printing, iteration and
/// equality do not depend on the order bindings were made). Up to 4 bindings live inline.
class bindings {
 public:
  using entry = binding;

  /// One `{name, extent}` of an initializer list; a negative extent or an empty name throws.
  struct init {
    template <std::integral Int>
    init(axis_name n, Int v) : name(n), value(checked(n, v)) {}
    axis_name name;
    std::size_t value;

   private:
    template <class Int>
    static std::size_t checked(axis_name n, Int v) {
      if constexpr (std::is_signed_v<Int>)
        if (v < 0) core_detail::throw_shape_error("axis '", n.view(), "' bound to negative extent ", v);
      return static_cast<std::size_t>(v);
    }
  };

  bindings() noexcept = default;
  /// `nax::bindings{{"batch", 32}, {"seq", 128}}`; the same name twice with two values throws.
  bindings(std::initializer_list<init> values) {
    for (const init& v : values) bind(v.name, v.value);
  }

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  const entry* begin() const noexcept { return entries_.begin(); }
  const entry* end() const noexcept { return entries_.end(); }
  void clear() noexcept { entries_.clear(); }

  /// The extent bound to `name`, if any.
  std::optional<std::size_t> find(axis_name name) const noexcept {
    for (const entry& e : entries_)
      if (e.name == name) return e.value;
    return std::nullopt;
  }
  std::optional<std::size_t> find(std::string_view name) const noexcept {
    for (const entry& e : entries_)
      if (e.name.view() == name) return e.value;
    return std::nullopt;
  }
  std::optional<std::size_t> find(const char* name) const noexcept {
    return find(std::string_view(name));
  }
  bool contains(std::string_view name) const noexcept { return find(name).has_value(); }

  /// The extent bound to `name`; nax::shape_error naming it if it is not bound.
  std::size_t at(std::string_view name) const {
    if (auto v = find(name)) return *v;
    core_detail::throw_shape_error("axis '", name, "' is not bound in ", to_string());
  }

  /// Binds `name` to `value`. Binding a bound name again to another value throws
  /// "axis 'batch' has conflicting values: 32 vs 64"; to the same value it does nothing.
  void bind(axis_name name, std::size_t value) {
    if (name.empty()) core_detail::throw_shape_error("cannot bind an unnamed axis (extent ", value, ")");
    std::size_t at = 0;
    for (; at < entries_.size(); ++at) {
      entry& e = entries_[at];
      if (e.name == name) {
        if (e.value != value)
          core_detail::throw_shape_error("axis '", name.view(), "' has conflicting values: ", e.value,
                                    " vs ", value);
        return;
      }
      if (name < e.name) break;
    }
    entries_.insert(at, entry{name, value});
  }

  /// Binds `name` to `value`, replacing any earlier value.
  void set(axis_name name, std::size_t value) {
    for (entry& e : entries_)
      if (e.name == name) {
        e.value = value;
        return;
      }
    bind(name, value);
  }

  /// `{batch: 32, seq: 128}` (`{}` when empty).
  std::string to_string() const {
    std::string out = "{";
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (i) out += ", ";
      out += entries_[i].name.view();
      out += ": ";
      out += std::to_string(entries_[i].value);
    }
    return out += '}';
  }

  /// A hash of names and values (equal bindings hash equal within one process).
  std::size_t hash() const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ entries_.size();
    for (const entry& e : entries_) {
      h = mix(h ^ e.name.hash());
      h = mix(h ^ e.value);
    }
    return static_cast<std::size_t>(h);
  }

  /// The cache key of these bindings: the full bindings plus their hash, compared in full.
  binding_key key() const;

  friend bool operator==(const bindings& a, const bindings& b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(a.entries_[i] == b.entries_[i])) return false;
    return true;
  }

 private:
  static std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }

  core_detail::small_vector<entry, 4> entries_;
};

/// What a specialization cache is keyed by: the complete bindings with their hash computed once.
/// Equality compares the hash first and then every name and value, so two bindings never share
/// a key (a hash collision costs one comparison, never a wrong specialization). Building a key
/// from up to 4 bindings does not allocate.
class binding_key {
 public:
  binding_key() : hash_(nax::bindings{}.hash()) {}
  explicit binding_key(const bindings& b) : bindings_(b), hash_(b.hash()) {}

  std::size_t hash() const noexcept { return hash_; }
  const nax::bindings& bindings() const noexcept { return bindings_; }
  std::string to_string() const { return bindings_.to_string(); }

  friend bool operator==(const binding_key& a, const binding_key& b) noexcept {
    return a.hash_ == b.hash_ && a.bindings_ == b.bindings_;
  }

 private:
  nax::bindings bindings_;
  std::size_t hash_;
};

inline binding_key bindings::key() const { return binding_key(*this); }

}  // namespace nax

template <>
struct std::hash<nax::bindings> {
  std::size_t operator()(const nax::bindings& b) const noexcept { return b.hash(); }
};
template <>
struct std::hash<nax::binding_key> {
  std::size_t operator()(const nax::binding_key& k) const noexcept { return k.hash(); }
};
