#pragma once
// A path for a test's own directory under the system's temporary one, emptied first.

#include <unistd.h>

#include <filesystem>
#include <string>

inline std::string fresh_dir(const char* name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() /
      (std::string("nax-test-") + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d.string();
}
