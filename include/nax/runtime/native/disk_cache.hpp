#pragma once
// The native tier's cache on disk: compiled kernels kept across processes, so that a program's
// next start runs native at once. One directory, private to its user (mode 0700, owned by them:
// anything else is not used); per kernel `<key>.so` and its record `<key>.so.sum` (the object's
// size and content hash; the prelude's precompiled header likewise). An entry is loaded only if
// both files are regular files of this user, written by no one else, and the object's bytes match
// the record: a truncated, corrupt or foreign entry is removed with a message and rebuilt. Entries
// are written under temporary names and renamed into place, the record last, so a reader never sees
// half of one.
//
// The directory: NAX_NATIVE_CACHE, else $XDG_CACHE_HOME/nax/native, else $HOME/.cache/nax/native.

#include <string>

#include <nax/core/isa.hpp>
#include <nax/core/linkage.hpp>

namespace nax::NAX_ISA::runtime::native {

class disk_cache {
 public:
  /// Opens `dir`, creating it (mode 0700) if it does not exist. problem() says why it cannot be
  /// used, if it cannot.
  NAX_RUNTIME_INLINE explicit disk_cache(std::string dir);

  /// The directory from the environment (see the file comment); empty if none can be named.
  NAX_RUNTIME_INLINE static std::string default_dir();

  const std::string& dir() const noexcept { return dir_; }
  const std::string& problem() const noexcept { return problem_; }

  /// The path of the checked object cached under `key` (file `key + ext`), or empty: none, or an
  /// entry that failed a check (then removed, and `rejected` says why).
  NAX_RUNTIME_INLINE std::string find(const std::string& key, std::string& rejected,
                                      const char* ext = ".so") const;

  /// Moves the object `built` (a file in this directory) into the cache under `key`, with its
  /// record. The final path, or empty with `error` set.
  NAX_RUNTIME_INLINE std::string store(const std::string& key, const std::string& built,
                                       std::string& error, const char* ext = ".so") const;

  /// A path in the directory for a file of `key` that no other thread or process uses:
  /// `tmp-<key>-<process id>-<count><suffix>`.
  NAX_RUNTIME_INLINE std::string scratch_path(const std::string& key, const char* suffix) const;

  /// Whether `name` (a file name, no directory) is one scratch_path makes.
  NAX_RUNTIME_INLINE static bool is_scratch_name(const std::string& name);

  /// Removes the scratch files (is_scratch_name: no other file) of this user in the directory
  /// last modified more than `seconds` ago: what a process killed while it compiled left behind.
  /// The number removed.
  NAX_RUNTIME_INLINE std::size_t remove_stale_scratch(double seconds) const;

  /// The path of key's object, and of its record (whether or not they exist).
  std::string object_path(const std::string& key, const char* ext = ".so") const {
    return dir_ + "/" + key + ext;
  }
  std::string record_path(const std::string& key, const char* ext = ".so") const {
    return object_path(key, ext) + ".sum";
  }

 private:
  std::string dir_, problem_;
};

}  // namespace nax::runtime::native

#if NAX_RUNTIME_DEFINITIONS
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>

#include <nax/runtime/native/content_hash.hpp>

namespace nax::NAX_ISA::runtime::native {
namespace detail {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Why `path` may not be trusted, or empty: a regular file (not a link) of this user that no one
// else may write.
inline std::string untrusted(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (st.st_uid != ::geteuid())
    return path + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return path + " is writable by other users";
  return {};
}

inline std::string record_text(const std::string& object) {
  return "nax-native-kernel 1\n" + std::to_string(object.size()) + " " +
         content_hash().add(object).hex() + "\n";
}

}  // namespace detail

NAX_RUNTIME_INLINE disk_cache::disk_cache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) {
    problem_ = "no cache directory (set NAX_NATIVE_CACHE, XDG_CACHE_HOME or HOME)";
    return;
  }
  std::error_code ec;
  const std::filesystem::path p(dir_);
  if (!std::filesystem::exists(p, ec)) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
      problem_ = "cannot create the cache directory '" + dir_ + "'";
      return;
    }
  }
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    problem_ = "the cache directory '" + dir_ + "' is not a directory";
  } else if (st.st_uid != ::geteuid()) {
    problem_ = "the cache directory '" + dir_ + "' belongs to another user (uid " +
               std::to_string(st.st_uid) + ")";
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem_ = "the cache directory '" + dir_ + "' is not private to its user (mode " + mode +
               ", expected 0700)";
  }
}

NAX_RUNTIME_INLINE std::string disk_cache::default_dir() {
  if (const char* d = std::getenv("NAX_NATIVE_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nax/native";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/nax/native";
  return {};
}

NAX_RUNTIME_INLINE std::string disk_cache::find(const std::string& key, std::string& rejected,
                                                const char* ext) const {
  rejected.clear();
  if (!problem_.empty()) return {};
  const std::string object = object_path(key, ext), record = record_path(key, ext);
  struct stat so {
  }, sum{};
  const bool has_object = ::lstat(object.c_str(), &so) == 0;
  const bool has_record = ::lstat(record.c_str(), &sum) == 0;
  if (!has_object && !has_record) return {};
  std::string why;
  if (!has_object) why = "its object is missing";
  if (why.empty() && !has_record) why = "it has no record of its content";
  if (why.empty()) why = detail::untrusted(object, so);
  if (why.empty()) why = detail::untrusted(record, sum);
  if (why.empty()) {
    const std::string bytes = detail::read_file(object);
    if (detail::read_file(record) != detail::record_text(bytes))
      why = bytes.size() != static_cast<std::size_t>(so.st_size) || bytes.empty()
                ? "its object cannot be read"
                : "its object's content does not match its record (truncated or corrupt)";
  }
  if (why.empty()) return object;
  rejected = "nax native: cache entry " + object + " rejected: " + why + "; it is rebuilt";
  ::unlink(object.c_str());
  ::unlink(record.c_str());
  return {};
}

NAX_RUNTIME_INLINE std::string disk_cache::store(const std::string& key, const std::string& built,
                                                 std::string& error, const char* ext) const {
  const std::string bytes = detail::read_file(built);
  if (bytes.empty()) {
    error = "the compiled object " + built + " is empty";
    return {};
  }
  const std::string record_tmp = scratch_path(key, ".sum.tmp");
  {
    std::ofstream out(record_tmp, std::ios::binary | std::ios::trunc);
    out << detail::record_text(bytes);
    if (!out.flush()) {
      error = "cannot write " + record_tmp;
      return {};
    }
  }
  ::chmod(built.c_str(), 0700);
  ::chmod(record_tmp.c_str(), 0600);
  const std::string object = object_path(key, ext);
  if (::rename(built.c_str(), object.c_str()) != 0 ||
      ::rename(record_tmp.c_str(), record_path(key, ext).c_str()) != 0) {
    error = "cannot move the compiled object into " + object;
    ::unlink(record_tmp.c_str());
    return {};
  }
  return object;
}

NAX_RUNTIME_INLINE std::string disk_cache::scratch_path(const std::string& key,
                                                        const char* suffix) const {
  static std::atomic<unsigned> counter{0};
  std::ostringstream s;
  s << dir_ << "/tmp-" << key << "-" << ::getpid() << "-" << counter.fetch_add(1) << suffix;
  return s.str();
}

NAX_RUNTIME_INLINE bool disk_cache::is_scratch_name(const std::string& name) {
  // tmp-<key: [0-9a-z-]+>-<digits>-<digits><one of the suffixes the native tier uses>
  std::string_view n(name);
  if (!n.starts_with("tmp-")) return false;
  n.remove_prefix(4);
  bool suffixed = false;
  for (std::string_view suffix : {".sum.tmp", ".hpp.gch", ".cpp", ".so", ".log", ".hpp", ".pch"})
    if (n.ends_with(suffix)) {
      n.remove_suffix(suffix.size());
      suffixed = true;
      break;
    }
  if (!suffixed) return false;
  for (int number = 0; number < 2; ++number) {  // the count, then the process id
    const std::size_t dash = n.rfind('-');
    if (dash == std::string_view::npos || dash + 1 == n.size()) return false;
    for (char c : n.substr(dash + 1))
      if (c < '0' || c > '9') return false;
    n = n.substr(0, dash);
  }
  if (n.empty()) return false;
  for (char c : n)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) return false;
  return true;
}

NAX_RUNTIME_INLINE std::size_t disk_cache::remove_stale_scratch(double seconds) const {
  if (!problem_.empty()) return 0;
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return 0;
  const std::time_t now = std::time(nullptr);
  std::size_t removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!is_scratch_name(name)) continue;
    const std::string path = dir_ + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    if (static_cast<double>(now - st.st_mtime) > seconds && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace nax::runtime::native
#endif  // NAX_RUNTIME_DEFINITIONS
