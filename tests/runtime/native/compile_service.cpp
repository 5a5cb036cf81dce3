// The native tier's compiler service: a generated unit compiled, loaded and run with the
// interpreter's bits; kept on disk for the next process (here: the next service) and loaded from
// there; a corrupt entry rejected and rebuilt; a missing compiler or a failed compilation a
// failed kernel with one message, never an exception or a crash.
#include <nax/kernels/elementwise.hpp>
#include <nax/kernels/elementwise/native_source.hpp>
#include <nax/runtime/native/compile_service.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "fresh_dir.hpp"
#include "support/sanitizers.hpp"

namespace fs = std::filesystem;
namespace k = nax::kernels;
namespace native = nax::runtime::native;
using nax::dtype;

namespace {

std::string include_dir() {
  const char* d = std::getenv("NAX_NATIVE_INCLUDE");
  return d ? d : "";
}

// y = where(x < c, exp(x) * c, x - c) and x < c, over x (f32, in place) and c (splatted).
k::elementwise_program program() {
  k::elementwise_program p;
  p.inputs = {dtype::f32, dtype::f32};
  const auto x = k::elementwise_operand::input(0), c = k::elementwise_operand::input(1);
  const auto lt = p.append(nax::ops::id::less, {x, c});
  const auto e = p.append(nax::ops::id::mul, {p.append(nax::ops::id::exp, {x}), c});
  const auto y = p.append(nax::ops::id::where, {lt, e, p.append(nax::ops::id::sub, {x, c})});
  p.outputs = {y.index, lt.index};
  return p;
}

std::string source() {
  const k::native_input in[] = {k::native_input::contiguous, k::native_input::splat};
  return k::native_source(program(), in);
}

// Runs block function fn over n elements and the interpreter's plan of the same program: the
// same bits, outputs and the mask alike.
void check_against_interpreter(k::native::block_fn fn, std::size_t n) {
  std::vector<float> x(n), y(n), want(n);
  std::vector<std::uint8_t> m(n), want_m(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) * 0.37f - 2;
  const float c = 0.5f;
  const void* in[] = {x.data(), &c};
  void* out[] = {y.data(), m.data()};
  fn(n, in, out, 0);
  const std::size_t extents[] = {n};
  const std::ptrdiff_t strides[] = {1, 0};
  const k::elementwise_plan plan = k::plan_elementwise(program(), extents, strides);
  void* want_out[] = {want.data(), want_m.data()};
  k::run_elementwise(plan, in, want_out);
  CHECK(std::memcmp(y.data(), want.data(), n * sizeof(float)) == 0);
  CHECK(m == want_m);
}

}  // namespace

TEST_CASE("a unit is compiled, run with the interpreter's bits, and loaded from disk later") {
  const std::string dir = fresh_dir("service");
  const native::toolchain t = native::make_toolchain("", include_dir(), "");
  REQUIRE(t.problem.empty());
  {
    native::compile_service s(t, dir, true);
    const auto kern = s.request(source());
    CHECK(s.request(source()) == kern);  // one kernel per source
    s.wait(*kern);
    CAPTURE(kern->failure);
    REQUIRE(kern->state.load() == native::kernel_state::ready);
    CHECK(!kern->from_disk);
    for (std::size_t n : {1u, 15u, 16u, 17u, 1000u}) check_against_interpreter(kern->fn.load(), n);
    CHECK(s.counts().compiled == 1);
    CHECK(s.messages().empty());
  }
  {  // The next process finds it.
    native::compile_service s(t, dir, true);
    const auto kern = s.request(source());
    s.wait(*kern);
    REQUIRE(kern->state.load() == native::kernel_state::ready);
    CHECK(kern->from_disk);
    check_against_interpreter(kern->fn.load(), 77);
    CHECK(s.counts().loaded_from_disk == 1);
    CHECK(s.counts().compiled == 0);
  }
  // A corrupt entry: rejected with a message, rebuilt, and right.
  const native::disk_cache c(dir);
  std::string so;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".so") so = e.path().string();
  REQUIRE(!so.empty());
  {  // (A new file in its place: this process still maps the old one, which must stay whole.)
    const std::string half = so + ".half";
    fs::copy_file(so, half);
    fs::resize_file(half, fs::file_size(half) / 2);
    fs::rename(half, so);
  }
  {
    native::compile_service s(t, dir, true);
    const auto kern = s.request(source());
    s.wait(*kern);
    REQUIRE(kern->state.load() == native::kernel_state::ready);
    CHECK(!kern->from_disk);
    check_against_interpreter(kern->fn.load(), 33);
    CHECK(s.counts().rejected_entries == 1);
    REQUIRE(s.messages().size() == 1);
    CHECK(s.messages()[0].find("rejected: its object's content does not match its record") !=
          std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("no compiler: every kernel fails at once, with one message") {
  const native::toolchain t = native::make_toolchain("/nonexistent/c++", include_dir(), "");
  CHECK(t.problem == "the compiler '/nonexistent/c++' is not an executable file");
  native::compile_service s(t, "", true);
  const auto a = s.request(source());
  std::string other = source();
  other += "// another\n";
  const auto b = s.request(other);
  CHECK(a->state.load() == native::kernel_state::failed);
  CHECK(b->state.load() == native::kernel_state::failed);
  CHECK((a->fn.load() == nullptr));
  REQUIRE(s.messages().size() == 1);
  CHECK(s.messages()[0] ==
        "nax native: the compiler '/nonexistent/c++' is not an executable file; the interpreter "
        "runs every group");
}

TEST_CASE("a failed compilation: the kernel fails, and the message keeps the unit") {
  const std::string dir = fresh_dir("failing");
  const native::toolchain t =
      native::make_toolchain("", include_dir(), "-include /nonexistent/nax-missing.hpp");
  REQUIRE(t.problem.empty());
  native::compile_service s(t, dir, true);
  const auto kern = s.request(source());
  s.wait(*kern);
  CHECK(kern->state.load() == native::kernel_state::failed);
  CHECK(kern->failure.find("nax-missing.hpp") != std::string::npos);
  bool said = false;
  for (const std::string& m : s.messages())
    if (m.find("compiling a fused group failed") != std::string::npos) {
      said = true;
      const std::size_t at = m.find("The unit: ");
      REQUIRE(at != std::string::npos);
      CHECK(fs::exists(fs::path(m.c_str() + at + 10)));
    }
  CHECK(said);
  CHECK(s.counts().failed == 1);
  fs::remove_all(dir);
}

TEST_CASE("a private temporary directory stands in for an unusable cache") {
  const std::string dir = fresh_dir("shared");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  native::compile_service s(native::make_toolchain("", include_dir(), ""), dir, true);
  REQUIRE(s.messages().size() == 1);
  CHECK(s.messages()[0].find("is not private to its user") != std::string::npos);
  CHECK(s.cache_dir() != dir);
  const auto kern = s.request(source());
  s.wait(*kern);
  CHECK(kern->state.load() == native::kernel_state::ready);
  fs::remove_all(dir);
}

// ThreadSanitizer ends a child that starts a thread after a fork of a multithreaded process.
TEST_CASE(
    "a forked child compiles on a worker of its own, and gets what its parent's was building" *
    doctest::skip(nax_test::under_tsan)) {
  native::compile_service& s = native::compile_service::process();
  REQUIRE(s.problem().empty());
  // Keys no earlier run left in the cache (a comment after the unit).
  std::string tag = "\n// fork test ";
  tag += std::to_string(::getpid());
  tag += ' ';
  const auto first = s.request(source() + tag + "1\n");
  s.wait(*first);  // the parent's worker exists from here on
  REQUIRE(first->state.load() == native::kernel_state::ready);
  const auto in_flight = s.request(source() + tag + "2\n");  // being built at the fork, likely
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // (no doctest here: the exit code says it)
    const auto own = s.request(source() + tag + "3\n");
    s.wait(*in_flight);
    s.wait(*own);
    const bool ready = in_flight->state.load() == native::kernel_state::ready &&
                       own->state.load() == native::kernel_state::ready;
    ::_exit(ready ? 0 : 1);
  }
  // Before the fix, the child waited for ever for a worker that did not exist in it.
  int status = 0;
  pid_t done = 0;
  for (int tenth = 0; tenth < 1800 && (done = ::waitpid(child, &status, WNOHANG)) == 0; ++tenth)
    ::usleep(100000);
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL("the forked child still waits for its kernels after 180 s");
  }
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  s.wait(*in_flight);
  CHECK(in_flight->state.load() == native::kernel_state::ready);
}
