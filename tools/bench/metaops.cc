// Metadata rates for tools/bench/run.sh: open+close and stat of existing files, one name
// component each (the process chdirs into the directory first), so the figure is the cost of
// one lookup plus the operation. A small C++ program rather than fio's filestat engine or
// Python, whose per-call overhead would be a large part of a native tmpfs figure.
// Usage: metaops create DIR N | metaops open|stat|createclose|read4k DIR N SECONDS (prints
// operations per second, and "calls N" on stderr). createclose creates and closes new files
// (N at most); read4k reads file "m0" 4 KiB at a time with O_DIRECT, so every read is a request
// (tools/bench/transport.sh, which compares the daemon's transports).
// metaops gallery DIR KIB: what a gallery app does to a camera folder: lists DIR, stats every
// name, and reads the first KIB KiB of every regular file (open, read, close); prints the
// seconds it took, and "calls N" (the files read) and "bytes N" on stderr.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int Fail(const char* what, const std::string& name) {
  std::fprintf(stderr, "metaops: %s %s: %s\n", what, name.c_str(), std::strerror(errno));
  return 1;
}

// The gallery walk (see the header): one pass, timed from the opendir to the last close.
int Gallery(const char* dir, long kib) {
  using Clock = std::chrono::steady_clock;
  std::vector<char> buf(static_cast<size_t>(kib) * 1024);
  const Clock::time_point start = Clock::now();
  DIR* d = opendir(dir);
  if (d == nullptr) return Fail("opendir", dir);
  long files = 0, bytes = 0;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return Fail("stat", e->d_name);
    if (!S_ISREG(st.st_mode)) continue;
    int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail("open", e->d_name);
    size_t got = 0;
    while (got < buf.size()) {
      ssize_t n = read(fd, buf.data() + got, buf.size() - got);
      if (n < 0) return Fail("read", e->d_name);
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
    ++files;
    bytes += static_cast<long>(got);
  }
  closedir(d);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%.6f\n", elapsed);
  std::fprintf(stderr, "calls %ld\nbytes %ld\n", files, bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: metaops create DIR N | metaops open|stat DIR N SECONDS\n");
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "gallery") {
    const long kib = std::strtol(argv[3], nullptr, 10);
    if (kib <= 0) return Fail("gallery KiB", argv[3]);
    return Gallery(argv[2], kib);
  }
  const long count = std::strtol(argv[3], nullptr, 10);
  if (count <= 0 || chdir(argv[2]) != 0) return Fail("chdir", argv[2]);
  std::vector<std::string> names;
  names.reserve(count);
  for (long i = 0; i < count; ++i) names.push_back("m" + std::to_string(i));

  if (mode == "create") {
    for (const std::string& name : names) {
      int fd = open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0) return Fail("create", name);
      close(fd);
    }
    return 0;
  }
  if (argc < 5 || (mode != "open" && mode != "stat" && mode != "createclose" && mode != "read4k")) {
    std::fprintf(stderr, "metaops: unknown mode %s\n", mode.c_str());
    return 2;
  }
  const double seconds = std::strtod(argv[4], nullptr);
  const bool do_open = mode == "open";
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  long ops = 0;
  if (mode == "createclose" || mode == "read4k") {
    int fd = -1;
    void* page = nullptr;
    if (mode == "read4k") {
      fd = open("m0", O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (fd < 0 || posix_memalign(&page, 4096, 4096) != 0) return Fail("open O_DIRECT", "m0");
    }
    Clock::time_point now = start;
    // The clock is read every 64 operations.
    while (now < end && ops < count) {
      for (int i = 0; i < 64 && ops < count; ++i, ++ops) {
        if (fd >= 0) {
          if (pread(fd, page, 4096, 0) < 0) return Fail("read", "m0");
          continue;
        }
        const std::string name = "c" + std::to_string(ops);
        int created = open(name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (created < 0) return Fail("create", name);
        close(created);
      }
      now = Clock::now();
    }
    if (fd >= 0) close(fd);
    std::free(page);
    const double elapsed = std::chrono::duration<double>(now - start).count();
    std::printf("%.0f\n", static_cast<double>(ops) / elapsed);
    std::fprintf(stderr, "calls %ld\n", ops);
    return 0;
  }
  Clock::time_point now = start;
  while (now < end) {
    // Check the clock once per pass over the files, not once per operation.
    for (const std::string& name : names) {
      if (do_open) {
        int fd = open(name.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return Fail("open", name);
        close(fd);
      } else {
        struct stat st;
        if (stat(name.c_str(), &st) != 0) return Fail("stat", name);
      }
    }
    ops += count;
    now = Clock::now();
  }
  const double elapsed = std::chrono::duration<double>(now - start).count();
  std::printf("%.0f\n", static_cast<double>(ops) / elapsed);
  // The calls made, for run.sh's FUSE requests per call.
  std::fprintf(stderr, "calls %ld\n", ops);
  return 0;
}
