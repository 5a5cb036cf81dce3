// Stopping the native tier's compile service (stop(), its destructor, the process's exit) is
// prompt and clean: the compiler is killed with its whole process group (the driver and what it
// started), no compiler starts after the stop, nothing is said, and no temporary file stays in
// the cache directory; stale temporary files that another process left there are removed, and
// only those. The compiler here is a script that stands in for g++: it records its start, writes
// part of its output and waits on a child of its own, as the driver waits on cc1plus.
#include <nax/kernels/elementwise/native_source.hpp>
#include <nax/runtime/native/compile_service.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "fresh_dir.hpp"

namespace fs = std::filesystem;
namespace k = nax::kernels;
namespace native = nax::runtime::native;
using nax::dtype;
using std::chrono::steady_clock;

namespace {

std::string include_dir() {
  const char* d = std::getenv("NAX_NATIVE_INCLUDE");
  return d ? d : "";
}

std::string unit(int variant) {
  k::elementwise_program p;
  p.inputs = {dtype::f32};
  const auto x = k::elementwise_operand::input(0);
  p.outputs = {p.append(nax::ops::id::exp, {x}).index};
  const k::native_input in[] = {k::native_input::contiguous};
  return k::native_source(p, in) + "// variant " + std::to_string(variant) + "\n";
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// The processes of group `group` that still run (a zombie runs nothing: it waits for a reaper).
int running_in_group(pid_t group) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    char state = 0;
    long parent = 0, pgrp = 0;
    rest >> state >> parent >> pgrp;
    if (pgrp == group && state != 'Z' && state != 'X') ++n;
  }
  return n;
}

void make_old(const std::string& path) {
  std::ofstream(path) << "left behind\n";
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(path, two_hours_ago);
}

}  // namespace

TEST_CASE("a scratch file name is recognized; no other name is") {
  CHECK(native::disk_cache::is_scratch_name("tmp-0123abcdef-4242-0.so"));
  CHECK(native::disk_cache::is_scratch_name("tmp-prelude-9f8e7d-17-3.hpp.gch"));
  CHECK(native::disk_cache::is_scratch_name("tmp-abc-1-22.sum.tmp"));
  CHECK(native::disk_cache::is_scratch_name("tmp-abc-1-2.cpp"));
  CHECK(!native::disk_cache::is_scratch_name("tmp-abc-1-2.txt"));
  CHECK(!native::disk_cache::is_scratch_name("tmp-abc.so"));
  CHECK(!native::disk_cache::is_scratch_name("tmp--1-2.so"));
  CHECK(!native::disk_cache::is_scratch_name("tmp-ABC-1-2.so"));
  CHECK(!native::disk_cache::is_scratch_name("tmp-abc-x-2.so"));
  CHECK(!native::disk_cache::is_scratch_name("abc-1-2.so"));
  CHECK(!native::disk_cache::is_scratch_name("0123abcdef.so"));
}

TEST_CASE("stop: the compiler's process group is killed, none starts after, no file stays") {
  const std::string bin = fresh_dir("stop-bin"), dir = fresh_dir("stop-cache");
  fs::create_directories(bin);
  const std::string log = bin + "/starts", compiler = bin + "/slow-c++";
  {
    std::ofstream s(compiler);
    s << "#!/bin/sh\n"
         "echo $$ >> '" << log << "'\n"
         "out=\n"
         "prev=\n"
         "for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; done\n"
         "echo partial > \"$out\"\n"
         "sleep 60 &\n"  // (a child of the driver, as cc1plus is g++'s)
         "wait\n";
  }
  fs::permissions(compiler, fs::perms::owner_all);
  // The cache directory, with what killed processes left: stale scratch files (removed), a
  // fresh one (another process may be writing it: kept), and files of other names (kept).
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  make_old(dir + "/tmp-0123abcd-99999-0.so");
  make_old(dir + "/tmp-prelude-4567ef-99999-1.hpp.gch");
  std::ofstream(dir + "/tmp-0123abcd-99999-2.cpp") << "fresh\n";
  make_old(dir + "/tmp-notes.txt");
  make_old(dir + "/keep.so");

  const native::toolchain t = native::make_toolchain(compiler, include_dir(), "");
  REQUIRE(t.problem.empty());
  native::compile_service s(t, dir, true);
  const auto first = s.request(unit(1));
  const auto second = s.request(unit(2));  // queued behind the first
  const auto deadline = steady_clock::now() + std::chrono::seconds(20);
  while (lines(log).empty() && steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(lines(log).size() == 1);  // the prelude's compilation, which does not end by itself
  const pid_t group = static_cast<pid_t>(std::stol(lines(log)[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // (its child started)
  CHECK(::kill(-group, 0) == 0);
  CHECK(running_in_group(group) >= 1);

  CHECK(!fs::exists(dir + "/tmp-0123abcd-99999-0.so"));
  CHECK(!fs::exists(dir + "/tmp-prelude-4567ef-99999-1.hpp.gch"));
  CHECK(fs::exists(dir + "/tmp-0123abcd-99999-2.cpp"));
  CHECK(fs::exists(dir + "/tmp-notes.txt"));
  CHECK(fs::exists(dir + "/keep.so"));
  fs::remove(dir + "/tmp-0123abcd-99999-2.cpp");
  fs::remove(dir + "/tmp-notes.txt");

  const auto start = steady_clock::now();
  s.stop();
  const double took = std::chrono::duration<double>(steady_clock::now() - start).count();
  CHECK(took < 1.0);  // (prompt: the compiler is not waited for)
  // The whole group is gone (the driver and its child), within a generous bound.
  const auto gone_by = steady_clock::now() + std::chrono::seconds(2);
  while (running_in_group(group) > 0 && steady_clock::now() < gone_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(running_in_group(group) == 0);
  CHECK(first->state.load() == native::kernel_state::failed);
  CHECK(second->state.load() == native::kernel_state::failed);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(lines(log).size() == 1);  // no compiler started after the stop
  CHECK(s.messages().empty());     // a stop is not a failure: nothing said
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("tmp-")) left.push_back(e.path().string());
  CAPTURE(left.size());
  for (const std::string& f : left) MESSAGE("left behind: ", f);
  CHECK(left.empty());
  // Later requests fail at once, and start nothing.
  const auto later = s.request(unit(3));
  CHECK(later->state.load() == native::kernel_state::failed);
  CHECK(lines(log).size() == 1);
  fs::remove_all(dir);
  fs::remove_all(bin);
}

TEST_CASE("destroying a service (as exit does) while it compiles is prompt and leaves nothing") {
  const std::string bin = fresh_dir("destroy-bin"), dir = fresh_dir("destroy-cache");
  fs::create_directories(bin);
  const std::string log = bin + "/starts", compiler = bin + "/slow-c++";
  {
    std::ofstream s(compiler);
    s << "#!/bin/sh\necho $$ >> '" << log << "'\nsleep 60 &\nwait\n";
  }
  fs::permissions(compiler, fs::perms::owner_all);
  const native::toolchain t = native::make_toolchain(compiler, include_dir(), "");
  REQUIRE(t.problem.empty());
  pid_t group = 0;
  double took = 0;
  {
    auto s = std::make_unique<native::compile_service>(t, dir, true);
    const auto kern = s->request(unit(4));
    const auto deadline = steady_clock::now() + std::chrono::seconds(20);
    while (lines(log).empty() && steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(lines(log).size() == 1);
    group = static_cast<pid_t>(std::stol(lines(log)[0]));
    const auto start = steady_clock::now();
    s.reset();
    took = std::chrono::duration<double>(steady_clock::now() - start).count();
    CHECK(kern->state.load() == native::kernel_state::failed);
  }
  CHECK(took < 1.0);
  const auto gone_by = steady_clock::now() + std::chrono::seconds(2);
  while (running_in_group(group) > 0 && steady_clock::now() < gone_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(running_in_group(group) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(lines(log).size() == 1);
  for (const auto& e : fs::directory_iterator(dir))
    CHECK_MESSAGE(!e.path().filename().string().starts_with("tmp-"), e.path().string());
  fs::remove_all(dir);
  fs::remove_all(bin);
}
