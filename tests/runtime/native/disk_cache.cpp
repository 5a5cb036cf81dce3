// The native tier's disk cache: a private directory; entries checked against their records, and
// a truncated, corrupt or foreign entry (or one other users may write) removed with a message
// that says which check failed.
#include <nax/runtime/native/disk_cache.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "fresh_dir.hpp"

namespace fs = std::filesystem;
using nax::runtime::native::disk_cache;

namespace {

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// An entry stored as the service stores one: a file in the directory moved in under `key`.
std::string store(const disk_cache& c, const std::string& key, const std::string& bytes) {
  const std::string built = c.scratch_path(key, ".so");
  write(built, bytes);
  std::string error;
  const std::string path = c.store(key, built, error);
  REQUIRE(error.empty());
  return path;
}

}  // namespace

TEST_CASE("the cache directory is made private, and a shared one is refused") {
  const std::string dir = fresh_dir("private");
  {
    const disk_cache c(dir + "/nested/native");
    CHECK(c.problem().empty());
    struct stat st {};
    REQUIRE(::stat(c.dir().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
  }
  ::chmod((dir + "/nested/native").c_str(), 0755);
  const disk_cache shared(dir + "/nested/native");
  CHECK(shared.problem().find("is not private to its user (mode 0755, expected 0700)") !=
        std::string::npos);
  std::string why;
  CHECK(shared.find("0123", why).empty());  // never read
  fs::remove_all(dir);
}

TEST_CASE("an entry is found as stored, and a bad one is removed with the reason") {
  const std::string dir = fresh_dir("entries");
  const disk_cache c(dir);
  REQUIRE(c.problem().empty());
  std::string why;
  CHECK(c.find("absent", why).empty());
  CHECK(why.empty());  // a miss is no rejection

  const std::string bytes(4096, 'k');
  const std::string path = store(c, "good", bytes);
  CHECK(path == c.object_path("good"));
  CHECK(c.find("good", why) == path);
  CHECK(why.empty());

  SUBCASE("truncated") {
    fs::resize_file(path, 100);
    CHECK(c.find("good", why).empty());
    CHECK(why.find("does not match its record (truncated or corrupt)") != std::string::npos);
  }
  SUBCASE("corrupt") {
    write(path, std::string(4096, 'x'));
    CHECK(c.find("good", why).empty());
    CHECK(why.find("does not match its record") != std::string::npos);
  }
  SUBCASE("no record") {
    fs::remove(c.record_path("good"));
    CHECK(c.find("good", why).empty());
    CHECK(why.find("has no record of its content") != std::string::npos);
  }
  SUBCASE("writable by others") {
    ::chmod(path.c_str(), 0777);
    CHECK(c.find("good", why).empty());
    CHECK(why.find("is writable by other users") != std::string::npos);
  }
  SUBCASE("a link instead of a file") {
    const std::string elsewhere = dir + "/elsewhere";
    fs::rename(path, elsewhere);
    fs::create_symlink(elsewhere, path);
    CHECK(c.find("good", why).empty());
    CHECK(why.find("is not a regular file") != std::string::npos);
  }
  SUBCASE("written by another user") {
    if (::geteuid() != 0) {
      MESSAGE("not root: cannot give a file to another user here");
      return;
    }
    REQUIRE(::chown(path.c_str(), 12345, 12345) == 0);
    CHECK(c.find("good", why).empty());
    CHECK(why.find("belongs to another user (uid 12345)") != std::string::npos);
  }
  CHECK(why.find("; it is rebuilt") != std::string::npos);
  // Removed, so the next look is a plain miss, and a new store is found again.
  CHECK(!fs::exists(path));
  CHECK(c.find("good", why).empty());
  CHECK(why.empty());
  store(c, "good", bytes);
  CHECK(c.find("good", why) == path);
  fs::remove_all(dir);
}
