// bench_bindings: the cost of the hot path of a specialization-cache hit: read the bindings of
// three inputs off their concrete shapes, merge them (with conflict checks), build the cache key
// and look it up, in nax and in the seed's straightforward design (namespace peer below).
//
//   inputs   a: f32[batch, seq, 512]   b: f32[batch, seq, 768]   c: f32[batch, 64, seq]
//   given    f32[32, 128, 512]         f32[32, 128, 768]         f32[32, 64, 128]
//   result   {batch: 32, seq: 128}
//
// Method: each case is calibrated to batches of ~30 ms, warmed up, then timed as K = 21 batches,
// nax's and the peer's batches alternating so both see the same machine; the table gives the
// median (and min) ns per call. Every call starts with a compiler barrier that makes its inputs
// opaque and ends by forcing its result to memory, so nothing is hoisted or dropped. A counting
// global operator new gives the heap allocations per call.

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nax/core/bindings.hpp>
#include <nax/core/extract_bindings.hpp>
#include <nax/core/shape.hpp>

#ifndef NAX_BENCH_COMPILER
#define NAX_BENCH_COMPILER "unknown (not built by bench/CMakeLists.txt)"
#endif
#ifndef NAX_BENCH_FLAGS
#define NAX_BENCH_FLAGS "unknown (not built by bench/CMakeLists.txt)"
#endif

// --- counting allocator ------------------------------------------------------------------------
// Every global operator new of this program goes through these two (the array and nothrow forms
// call them), so g_allocations counts heap allocations. Single-threaded: a plain counter.
// noinline: inlined into std containers, g++ 12 takes the free() in a replaced operator delete for
// a mismatch with the operator new that allocated the pointer (-Wmismatched-new-delete).

namespace {
std::uint64_t g_allocations = 0;
}

[[gnu::noinline]] void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t size, std::align_val_t align) {
  ++g_allocations;
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (std::max<std::size_t>(size, 1) + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

// --- the peer: the seed's design, in plain C++ -------------------------------------------------
// Shapes are a list of extents (-1 for dynamic) and a parallel list of names ("" for unnamed; a
// concrete shape may leave the list empty), bindings a std::map from name to extent, and the
// cache key the text "{batch:32,seq:128}". The checks are the same as nax's: dtype, rank, static
// extents, that the concrete shape is concrete, that names agree where both have one, and that
// an axis bound by two inputs (or twice in one) has one value (the seed's shapes have no bounds,
// so there is no bound check).

namespace peer {

enum class dtype { f32, f64, i32, i64 };

struct shape {
  dtype type = dtype::f32;
  std::vector<std::int64_t> dims;  // -1: dynamic
  std::vector<std::string> names;  // empty, or one per dimension ("" = unnamed)
};

using bindings = std::map<std::string, std::int64_t>;

struct input {
  std::string_view name;
  const shape& pattern;
  const shape& concrete;
};

class shape_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline const std::string& name_of(const shape& s, std::size_t i) {
  static const std::string unnamed;
  return s.names.empty() ? unnamed : s.names[i];
}

[[noreturn]] inline void fail(std::string_view input, const std::string& what) {
  throw shape_error("input '" + std::string(input) + "': " + what);
}

// Adds the bindings of one input to `out`, checking them against what is already there.
inline void extract_into(const input& in, bindings& out) {
  const shape& p = in.pattern;
  const shape& c = in.concrete;
  if (p.type != c.type) fail(in.name, "dtype mismatch");
  if (p.dims.size() != c.dims.size())
    fail(in.name, "rank mismatch: " + std::to_string(p.dims.size()) + " vs " +
                      std::to_string(c.dims.size()));
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    const std::int64_t want = p.dims[i], got = c.dims[i];
    if (got < 0) fail(in.name, "dimension " + std::to_string(i) + " of the shape given is dynamic");
    const std::string& name = name_of(p, i);
    const std::string& given_name = name_of(c, i);
    if (!name.empty() && !given_name.empty() && name != given_name)
      fail(in.name, "dimension " + std::to_string(i) + " is '" + name + "' in the pattern but '" +
                        given_name + "' in the shape given");
    if (want >= 0) {
      if (want != got)
        fail(in.name, "dimension " + std::to_string(i) + " mismatch: pattern has " +
                          std::to_string(want) + ", got " + std::to_string(got));
      continue;
    }
    if (name.empty()) continue;
    const auto [it, inserted] = out.try_emplace(name, got);
    if (!inserted && it->second != got)
      fail(in.name, "axis '" + name + "' has conflicting values: " + std::to_string(it->second) +
                        " vs " + std::to_string(got));
  }
}

// The bindings of all inputs merged into `out` (cleared first).
inline void extract_bindings(std::span<const input> inputs, bindings& out) {
  out.clear();
  for (const input& in : inputs) extract_into(in, out);
}

// The cache key "{batch:32,seq:128}", written into `key` (so a caller may reuse its buffer).
inline void key_into(const bindings& b, std::string& key) {
  key.clear();
  key.reserve(2 + b.size() * 24);
  key += '{';
  bool first = true;
  for (const auto& [name, value] : b) {
    if (!first) key += ',';
    first = false;
    key += name;
    key += ':';
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    key.append(digits, end);
  }
  key += '}';
}

inline std::string key(const bindings& b) {
  std::string k;
  key_into(b, k);
  return k;
}

}  // namespace peer

// --- measurement ---------------------------------------------------------------------------------

namespace {

// Makes the compiler assume any memory may have changed (so inputs are re-read every call).
inline void clobber_memory() { __asm__ __volatile__("" : : : "memory"); }
// Makes the compiler assume `p` escapes, i.e. anything reachable from it may be read or changed.
inline void escape(const void* p) { __asm__ __volatile__("" : : "g"(p) : "memory"); }
// Forces `value` to be computed and stored.
template <class T>
inline void do_not_optimize(const T& value) {
  __asm__ __volatile__("" : : "g"(&value) : "memory");
}

using clock_type = std::chrono::steady_clock;

template <class F>
double seconds_for(F& body, std::size_t calls) {
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < calls; ++i) body();
  const auto t1 = clock_type::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

constexpr int kRepetitions = 21;
constexpr double kBatchSeconds = 0.030;

// The number of calls that takes about kBatchSeconds (after a warm-up of a few batches).
template <class F>
std::size_t calibrate(F& body) {
  std::size_t calls = 64;
  double t = seconds_for(body, calls);
  while (t < kBatchSeconds / 4) {
    calls *= 2;
    t = seconds_for(body, calls);
  }
  calls = std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(calls) * kBatchSeconds / t));
  for (int i = 0; i < 3; ++i) seconds_for(body, calls);  // warm-up
  return calls;
}

template <class F>
double allocations_per_call(F& body) {
  constexpr std::size_t calls = 10000;
  const std::uint64_t before = g_allocations;
  seconds_for(body, calls);
  return static_cast<double>(g_allocations - before) / calls;
}

struct result {
  double median_ns = 0, min_ns = 0, allocations = 0;
  std::size_t calls = 0;
};

result summarize(std::vector<double> ns, std::size_t calls, double allocations) {
  std::sort(ns.begin(), ns.end());
  return {ns[ns.size() / 2], ns.front(), allocations, calls};
}

// Times nax's and the peer's body in alternating batches.
template <class A, class B>
std::pair<result, result> measure(A nax_body, B peer_body) {
  const std::size_t na = calibrate(nax_body), nb = calibrate(peer_body);
  std::vector<double> ta, tb;
  for (int k = 0; k < kRepetitions; ++k) {
    ta.push_back(seconds_for(nax_body, na) * 1e9 / static_cast<double>(na));
    tb.push_back(seconds_for(peer_body, nb) * 1e9 / static_cast<double>(nb));
  }
  return {summarize(ta, na, allocations_per_call(nax_body)),
          summarize(tb, nb, allocations_per_call(peer_body))};
}

// Clock estimate: a dependent chain of register-register adds retires one add per cycle (0 when
// not on x86-64: the table then shows no cycles).
double estimate_ghz() {
#if defined(__x86_64__)
  constexpr std::size_t iterations = 400000, adds_per_iteration = 100;  // as in .rept below
  double best = 1e300;
  for (int rep = 0; rep < 7; ++rep) {
    std::uint64_t x = 0, step = 1;
    // `step` opaque: recent cores fold adds of immediates at rename, which breaks the chain.
    __asm__ __volatile__("" : "+r"(step));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < iterations; ++i)
      __asm__ __volatile__(".rept 100\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(step));
    const auto t1 = clock_type::now();
    do_not_optimize(x);
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return static_cast<double>(iterations * adds_per_iteration) / best / 1e9;
#else
  return 0;
#endif
}

std::string read_line_starting(const char* file, std::string_view prefix) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(prefix)) {
      auto colon = line.find(':');
      auto text = colon == std::string::npos ? line : line.substr(colon + 1);
      text.erase(0, text.find_first_not_of(" \t"));
      return text;
    }
  return "unknown";
}

int count_lines_starting(const char* file, std::string_view prefix) {
  std::ifstream in(file);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.starts_with(prefix);
  return n;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_bindings: %s\n", what.c_str());
  std::exit(1);
}

template <class Error, class F>
void expect_throw(F f, const char* what) {
  try {
    f();
  } catch (const Error&) {
    return;
  }
  die(std::string("expected an error: ") + what);
}

}  // namespace

int main() {
  // --- inputs ---------------------------------------------------------------------------------
  using nax::dtype;
  const nax::shape pa = nax::shape::make(dtype::f32, {"batch", "seq", 512});
  const nax::shape pb = nax::shape::make(dtype::f32, {"batch", "seq", 768});
  const nax::shape pc = nax::shape::make(dtype::f32, {"batch", 64, "seq"});
  const nax::shape ca = nax::shape::make(dtype::f32, {32, 128, 512});
  const nax::shape cb = nax::shape::make(dtype::f32, {32, 128, 768});
  const nax::shape cc = nax::shape::make(dtype::f32, {32, 64, 128});
  const std::array<nax::binding_source, 3> sources{{{"a", pa, ca}, {"b", pb, cb}, {"c", pc, cc}}};

  const peer::shape qa{peer::dtype::f32, {-1, -1, 512}, {"batch", "seq", ""}};
  const peer::shape qb{peer::dtype::f32, {-1, -1, 768}, {"batch", "seq", ""}};
  const peer::shape qc{peer::dtype::f32, {-1, 64, -1}, {"batch", "", "seq"}};
  const peer::shape da{peer::dtype::f32, {32, 128, 512}, {}};
  const peer::shape db{peer::dtype::f32, {32, 128, 768}, {}};
  const peer::shape dc{peer::dtype::f32, {32, 64, 128}, {}};
  const std::array<peer::input, 3> peer_sources{{{"a", qa, da}, {"b", qb, db}, {"c", qc, dc}}};

  // The caches hold 16 specializations (batch 1..64 x seq 64..512); the lookups hit.
  std::unordered_map<nax::binding_key, int> nax_cache;
  std::unordered_map<std::string, int> peer_cache;
  for (std::size_t batch : {1, 8, 32, 64})
    for (std::size_t seq : {64, 128, 256, 512}) {
      const int id = static_cast<int>(nax_cache.size());
      nax_cache.emplace(nax::bindings{{"batch", batch}, {"seq", seq}}.key(), id);
      peer::bindings b{{"batch", static_cast<std::int64_t>(batch)},
                       {"seq", static_cast<std::int64_t>(seq)}};
      peer_cache.emplace(peer::key(b), id);
    }

  // --- both compute the same thing -------------------------------------------------------------
  nax::bindings out;
  nax::extract_bindings(sources, out);
  peer::bindings peer_out;
  peer::extract_bindings(peer_sources, peer_out);
  std::string peer_key_buffer;
  if (out.to_string() != "{batch: 32, seq: 128}") die("nax bindings are " + out.to_string());
  if (peer::key(peer_out) != "{batch:32,seq:128}") die("peer key is " + peer::key(peer_out));
  if (nax_cache.at(out.key()) != peer_cache.at(peer::key(peer_out))) die("the caches disagree");
  {  // and both reject a conflict and a static mismatch
    const nax::shape bad_c = nax::shape::make(dtype::f32, {64, 64, 128});
    const nax::shape bad_b = nax::shape::make(dtype::f32, {32, 128, 512});
    const std::array<nax::binding_source, 3> conflict{
        {{"a", pa, ca}, {"b", pb, cb}, {"c", pc, bad_c}}};
    const std::array<nax::binding_source, 3> mismatch{
        {{"a", pa, ca}, {"b", pb, bad_b}, {"c", pc, cc}}};
    nax::bindings scratch;
    expect_throw<nax::shape_error>([&] { nax::extract_bindings(conflict, scratch); },
                                   "nax conflict");
    expect_throw<nax::shape_error>([&] { nax::extract_bindings(mismatch, scratch); },
                                   "nax mismatch");
    const peer::shape bad_dc{peer::dtype::f32, {64, 64, 128}, {}};
    const peer::shape bad_db{peer::dtype::f32, {32, 128, 512}, {}};
    const std::array<peer::input, 3> peer_conflict{
        {{"a", qa, da}, {"b", qb, db}, {"c", qc, bad_dc}}};
    const std::array<peer::input, 3> peer_mismatch{
        {{"a", qa, da}, {"b", qb, bad_db}, {"c", qc, dc}}};
    peer::bindings peer_scratch;
    expect_throw<peer::shape_error>([&] { peer::extract_bindings(peer_conflict, peer_scratch); },
                                    "peer conflict");
    expect_throw<peer::shape_error>([&] { peer::extract_bindings(peer_mismatch, peer_scratch); },
                                    "peer mismatch");
  }

  // Everything the bodies read is reachable from escaped pointers, so after clobber_memory()
  // the compiler must assume it changed.
  escape(&sources);
  escape(&peer_sources);
  escape(&out);
  escape(&peer_out);
  escape(&nax_cache);
  escape(&peer_cache);
  const nax::binding_key nax_key = out.key();
  const std::string peer_key = peer::key(peer_out);
  escape(&nax_key);
  escape(&peer_key);

  // --- header ----------------------------------------------------------------------------------
  const double ghz = estimate_ghz();
  std::printf(
      "bench_bindings: extract + merge bindings of 3 rank-3 inputs with 2 named dynamic axes,\n"
      "build the cache key, look it up\n\n");
  std::printf("cpu:        %s (%d logical CPUs in /proc/cpuinfo; allowed: %s)\n",
              read_line_starting("/proc/cpuinfo", "model name").c_str(),
              count_lines_starting("/proc/cpuinfo", "processor"),
              read_line_starting("/proc/self/status", "Cpus_allowed_list").c_str());
  std::printf("clock:      %.2f GHz (estimated from a chain of dependent adds)\n", ghz);
  std::printf("compiler:   %s\n", NAX_BENCH_COMPILER);
  std::string flags = NAX_BENCH_FLAGS;
  flags.erase(0, flags.find_first_not_of(' '));  // CMake leaves a space for empty CMAKE_CXX_FLAGS
  std::printf("flags:      %s (__cplusplus %ld)\n", flags.c_str(), static_cast<long>(__cplusplus));
#if !defined(__OPTIMIZE__) || !defined(NDEBUG)
  std::printf("WARNING:    not an optimized NDEBUG build; these numbers do not mean much\n");
#endif
  std::printf("load avg:   %s (before)\n", load_average().c_str());
  std::printf(
      "method:     median (min) of %d batches of ~%.0f ms each, nax and peer alternating\n\n",
      kRepetitions, kBatchSeconds * 1e3);

  // --- cases -----------------------------------------------------------------------------------
  auto nax_extract = [&] {
    clobber_memory();
    nax::extract_bindings(sources, out);
    do_not_optimize(out);
  };
  auto peer_extract = [&] {
    clobber_memory();
    peer::extract_bindings(peer_sources, peer_out);
    do_not_optimize(peer_out);
  };
  auto nax_make_key = [&] {
    clobber_memory();
    const nax::binding_key k = out.key();
    do_not_optimize(k);
  };
  auto peer_make_key = [&] {
    clobber_memory();
    const std::string k = peer::key(peer_out);
    do_not_optimize(k);
  };
  auto nax_lookup = [&] {
    clobber_memory();
    const int id = nax_cache.find(nax_key)->second;
    do_not_optimize(id);
  };
  auto peer_lookup = [&] {
    clobber_memory();
    const int id = peer_cache.find(peer_key)->second;
    do_not_optimize(id);
  };
  auto nax_extract_key = [&] {
    clobber_memory();
    nax::extract_bindings(sources, out);
    const nax::binding_key k = out.key();
    do_not_optimize(k);
  };
  auto peer_extract_key = [&] {
    clobber_memory();
    peer::extract_bindings(peer_sources, peer_out);
    const std::string k = peer::key(peer_out);
    do_not_optimize(k);
  };
  auto nax_hit = [&] {
    clobber_memory();
    nax::extract_bindings(sources, out);
    const auto it = nax_cache.find(out.key());
    if (it == nax_cache.end()) die("nax: cache miss");
    do_not_optimize(it->second);
  };
  auto peer_hit = [&] {
    clobber_memory();
    peer::extract_bindings(peer_sources, peer_out);
    const auto it = peer_cache.find(peer::key(peer_out));
    if (it == peer_cache.end()) die("peer: cache miss");
    do_not_optimize(it->second);
  };
  // A sensitivity check on the peer: its key written into a reused std::string buffer (no
  // allocation for the key), the most a caller of that design could save without changing it.
  auto peer_hit_reused_key = [&] {
    clobber_memory();
    peer::extract_bindings(peer_sources, peer_out);
    peer::key_into(peer_out, peer_key_buffer);
    const auto it = peer_cache.find(peer_key_buffer);
    if (it == peer_cache.end()) die("peer: cache miss");
    do_not_optimize(it->second);
  };

  struct row {
    const char* name;
    std::pair<result, result> r;
  };
  const row rows[] = {
      {"extract+merge", measure(nax_extract, peer_extract)},
      {"key", measure(nax_make_key, peer_make_key)},
      {"lookup (key given, hit)", measure(nax_lookup, peer_lookup)},
      {"extract+merge+key", measure(nax_extract_key, peer_extract_key)},
      {"extract+merge+key+lookup (hit)", measure(nax_hit, peer_hit)},
      {"same, peer key in a reused string", measure(nax_hit, peer_hit_reused_key)},
  };

  // --- table -----------------------------------------------------------------------------------
  std::printf(
      "| case | nax ns/call | peer ns/call | peer/nax | nax cycles | peer cycles | nax allocs | "
      "peer allocs |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const row& r : rows) {
    const result& a = r.r.first;
    const result& b = r.r.second;
    char cycles[64] = "- | -";
    if (ghz > 0)
      std::snprintf(cycles, sizeof cycles, "%.0f | %.0f", a.median_ns * ghz, b.median_ns * ghz);
    std::printf("| %s | %.1f (%.1f) | %.1f (%.1f) | %.1fx | %s | %.2f | %.2f |\n", r.name,
                a.median_ns, a.min_ns, b.median_ns, b.min_ns, b.median_ns / a.median_ns, cycles,
                a.allocations, b.allocations);
  }
  std::printf(
      "\nns/call: median (min) over %d batches; cycles = median ns x %.2f GHz; allocs = heap\n"
      "allocations per call (global operator new). Batch sizes (nax/peer calls):",
      kRepetitions, ghz);
  for (const row& r : rows) std::printf(" %zu/%zu", r.r.first.calls, r.r.second.calls);
  std::printf("\nload avg:   %s (after)\n", load_average().c_str());
  return 0;
}
