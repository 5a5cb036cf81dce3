#pragma once
// An executable's view of the native tier: its policy (compile_options::native, NAX_NATIVE), the
// kernels its steps asked for, and the waiting and counting over them. The kernels themselves are
// the process's (compile_service.hpp): two executables with the same group share one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>
#include <nax/graph/compile_options.hpp>
#include <nax/runtime/native/compile_service.hpp>

namespace nax::NAX_ISA::runtime::native {

/// How many of an executable's native kernels are in each state.
struct tier_counts {
  std::size_t ready = 0, pending = 0, failed = 0;
};

class tier {
 public:
  /// The tier of options o (automatic resolved from NAX_NATIVE) over `service` (nullptr: the
  /// process's, made on the first request).
  NAX_RUNTIME_INLINE explicit tier(graph::native_options o, compile_service* service = nullptr);

  graph::native_policy policy() const noexcept { return policy_; }
  bool enabled() const noexcept { return policy_ != graph::native_policy::off; }
  /// Runs of a step before it asks for its kernel (0 under eager)...
  std::size_t after_runs() const noexcept { return after_runs_; }
  /// ... and the nanoseconds they must have spent in the interpreter (0 under eager).
  std::uint64_t after_nanoseconds() const noexcept { return after_ns_; }

  /// The kernel of `source` (kept alive by the tier); under eager, ready or failed on return.
  NAX_RUNTIME_INLINE const native_kernel* request(std::string source);
  /// Waits for every kernel asked for so far.
  NAX_RUNTIME_INLINE void wait() const;
  NAX_RUNTIME_INLINE tier_counts counts() const;

 private:
  graph::native_policy policy_;
  std::size_t after_runs_;
  std::uint64_t after_ns_;
  NAX_RUNTIME_INLINE compile_service& service();

  compile_service* service_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<native_kernel>> kernels_;  // distinct
};

/// NAX_NATIVE's policy: "off", "background" or "eager" (anything else, or unset: background).
NAX_RUNTIME_INLINE graph::native_policy environment_policy();

/// The interpreted time before a group is compiled when native_options::after_seconds is left
/// negative (docs/native.md, "When a group is compiled", for the measurements behind it).
inline constexpr double default_after_seconds = 3.0;

/// NAX_NATIVE_AFTER_MS in seconds if it is set to a number (>= 0), else default_after_seconds.
NAX_RUNTIME_INLINE double environment_after_seconds();

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace nax::NAX_ISA::runtime::native {

NAX_RUNTIME_INLINE graph::native_policy environment_policy() {
  const char* v = std::getenv("NAX_NATIVE");
  const std::string_view s = v ? v : "";
  if (s == "off" || s == "0") return graph::native_policy::off;
  if (s == "eager") return graph::native_policy::eager;
  return graph::native_policy::background;
}

NAX_RUNTIME_INLINE double environment_after_seconds() {
  if (const char* v = std::getenv("NAX_NATIVE_AFTER_MS"); v && *v) {
    char* end = nullptr;
    const double ms = std::strtod(v, &end);
    if (end != v && *end == '\0' && ms >= 0) return ms / 1000;
  }
  return default_after_seconds;
}

NAX_RUNTIME_INLINE tier::tier(graph::native_options o, compile_service* service)
    : policy_(o.policy == graph::native_policy::automatic ? environment_policy() : o.policy),
      after_runs_(policy_ == graph::native_policy::eager ? 0 : o.after_runs),
      after_ns_(0),
      service_(service) {
  if (policy_ == graph::native_policy::eager || after_runs_ == 0) return;  // (0 runs: at once)
  const double seconds = o.after_seconds < 0 ? environment_after_seconds() : o.after_seconds;
  after_ns_ = static_cast<std::uint64_t>(std::min(seconds, 1e9) * 1e9);
}

NAX_RUNTIME_INLINE compile_service& tier::service() {
  std::lock_guard lock(mutex_);
  if (!service_) service_ = &compile_service::process();
  return *service_;
}

NAX_RUNTIME_INLINE const native_kernel* tier::request(std::string source) {
  compile_service& s = service();
  std::shared_ptr<native_kernel> k = s.request(std::move(source));
  {
    std::lock_guard lock(mutex_);
    if (std::find(kernels_.begin(), kernels_.end(), k) == kernels_.end()) kernels_.push_back(k);
  }
  if (policy_ == graph::native_policy::eager) s.wait(*k);
  return k.get();
}

NAX_RUNTIME_INLINE void tier::wait() const {
  std::vector<std::shared_ptr<native_kernel>> ks;
  compile_service* s = nullptr;
  {
    std::lock_guard lock(mutex_);
    ks = kernels_;
    s = service_;
  }
  for (const auto& k : ks) s->wait(*k);
}

NAX_RUNTIME_INLINE tier_counts tier::counts() const {
  std::lock_guard lock(mutex_);
  tier_counts c;
  for (const auto& k : kernels_) switch (k->state.load()) {
      case kernel_state::ready: ++c.ready; break;
      case kernel_state::failed: ++c.failed; break;
      case kernel_state::queued: ++c.pending; break;
    }
  return c;
}

}  // namespace nax::runtime::native
#endif  // NAX_RUNTIME_DEFINITIONS
