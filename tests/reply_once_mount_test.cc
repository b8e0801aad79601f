// One request, one reply, one audit decision: every request an op of the daemon serves is
// answered exactly once, through OpRequest, whose replies are counted per FUSE opcode beside the
// requests the transport read (`scopedfsctl stats`: opcodes) and the audit decisions made on the
// replies' way out. A handler that replied by itself (past OpRequest), twice, or not at all shows
// as a row whose counts differ, or as a reply defect.
//
// The workload reaches every opcode the daemon implements an op for, as root and as an app,
// under Android and POSIX semantics, without passthrough (so READ and WRITE reach the daemon);
// the test first checks that each opcode it needs did arrive, so it cannot pass on a workload
// that sent nothing.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

struct OpcodeRow {
  std::string name;
  int64_t requests = 0;
  int64_t replies = 0;
  int64_t audits = 0;
};

// The per-opcode rows of `scopedfsctl stats --json` ("opcodes": [{...}, ...]); proto3 JSON leaves
// out fields that are 0.
absl::StatusOr<std::map<std::string, OpcodeRow>> OpcodeRows(const ScopedStorage& storage,
                                                            int64_t* defects) {
  absl::StatusOr<std::string> json = storage.Ctl({"stats", "--json"});
  if (!json.ok()) return json.status();
  size_t at = json->find("\"opcodes\"");
  if (at == std::string::npos) return absl::InternalError(absl::StrCat("no opcodes in ", *json));
  std::map<std::string, OpcodeRow> rows;
  std::string rest = json->substr(at);
  std::regex object("\\{[^{}]*\\}");
  std::regex field("\"(\\w+)\"\\s*:\\s*(\"[^\"]*\"|[0-9.]+)");
  for (std::sregex_iterator it(rest.begin(), rest.end(), object), end; it != end; ++it) {
    std::string text = it->str();
    OpcodeRow row;
    for (std::sregex_iterator f(text.begin(), text.end(), field); f != end; ++f) {
      std::string key = (*f)[1];
      std::string value = (*f)[2];
      double number = 0;
      if (key == "name") row.name = value.substr(1, value.size() - 2);
      if (!absl::SimpleAtod(value, &number)) continue;
      if (key == "requests") row.requests = static_cast<int64_t>(number);
      if (key == "replies") row.replies = static_cast<int64_t>(number);
      if (key == "audits") row.audits = static_cast<int64_t>(number);
    }
    if (!row.name.empty()) rows[row.name] = row;
  }
  absl::StatusOr<DaemonStats> stats = storage.Stats();
  if (!stats.ok()) return stats.status();
  *defects = stats->count("reply_defects") ? stats->at("reply_defects") : 0;
  return rows;
}

// The opcodes the daemon has an op for (daemon/ops/filesystem.cc's table); libfuse answers the
// rest itself (INIT, DESTROY, INTERRUPT, and ENOSYS for what no op implements).
const std::set<std::string>& ServedOpcodes() {
  static const auto* served = new std::set<std::string>{
      "LOOKUP",   "FORGET",         "GETATTR",      "SETATTR",     "READLINK",    "SYMLINK",
      "MKNOD",    "MKDIR",          "UNLINK",       "RMDIR",       "RENAME",      "LINK",
      "OPEN",     "READ",           "WRITE",        "STATFS",      "RELEASE",     "FSYNC",
      "SETXATTR", "GETXATTR",       "LISTXATTR",    "REMOVEXATTR", "FLUSH",       "OPENDIR",
      "READDIR",  "RELEASEDIR",     "FSYNCDIR",     "GETLK",       "SETLK",       "SETLKW",
      "ACCESS",   "CREATE",         "BATCH_FORGET", "FALLOCATE",   "READDIRPLUS", "RENAME2",
      "LSEEK",    "COPY_FILE_RANGE"};
  return *served;
}

// Exits with the number of the step that failed unexpectedly (a step whose answer depends on the
// semantics only has to answer).
int RootWorkload() {
  int step = 0;
  auto check = [&step](bool ok) {
    ++step;
    if (!ok) std::fprintf(stderr, "step %d failed: %s\n", step, strerror(errno));
    return ok;
  };
  if (!check(mkdir("Download/r", 0755) == 0)) return step;
  int fd = open("Download/r/a.txt", O_CREAT | O_EXCL | O_RDWR, 0644);
  if (!check(fd >= 0)) return step;
  if (!check(write(fd, "hello world\n", 12) == 12)) return step;
  if (!check(fsync(fd) == 0)) return step;
  char buf[64];
  if (!check(pread(fd, buf, sizeof(buf), 0) == 12)) return step;
  if (!check(fallocate(fd, 0, 0, 8192) == 0)) return step;
  if (!check(lseek(fd, 0, SEEK_DATA) == 0)) return step;
  int reader = open("Download/r/a.txt", O_RDONLY);  // an OPEN, not a CREATE
  if (!check(reader >= 0)) return step;
  close(reader);
  struct flock lock = {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_len = 1;
  (void)fcntl(fd, F_GETLK, &lock);
  lock.l_type = F_WRLCK;
  (void)fcntl(fd, F_SETLK, &lock);
  (void)fcntl(fd, F_SETLKW, &lock);
  lock.l_type = F_UNLCK;
  (void)fcntl(fd, F_SETLK, &lock);
  (void)flock(fd, LOCK_EX | LOCK_NB);
  (void)flock(fd, LOCK_UN);
  int to = open("Download/r/b.txt", O_CREAT | O_EXCL | O_RDWR, 0644);
  if (!check(to >= 0)) return step;
  loff_t in_off = 0;
  (void)syscall(SYS_copy_file_range, fd, &in_off, to, nullptr, 12, 0);
  if (!check(ftruncate(to, 3) == 0)) return step;
  if (!check(fchmod(to, 0600) == 0)) return step;
  close(to);
  close(fd);
  struct stat st;
  if (!check(stat("Download/r/a.txt", &st) == 0)) return step;
  (void)access("Download/r/a.txt", R_OK | W_OK);
  struct statvfs sv;
  if (!check(statvfs(".", &sv) == 0)) return step;
  (void)setxattr("Download/r/a.txt", "user.k", "v", 1, 0);
  (void)getxattr("Download/r/a.txt", "user.k", buf, sizeof(buf));
  (void)getxattr("Download/r/a.txt", "user.k", nullptr, 0);
  (void)listxattr("Download/r/a.txt", buf, sizeof(buf));
  (void)removexattr("Download/r/a.txt", "user.k");
  if (!check(rename("Download/r/b.txt", "Download/r/c.txt") == 0)) return step;
  (void)syscall(SYS_renameat2, AT_FDCWD, "Download/r/c.txt", AT_FDCWD, "Download/r/d.txt",
                RENAME_NOREPLACE);
  (void)link("Download/r/a.txt", "Download/r/hard.txt");
  (void)symlink("a.txt", "Download/r/sym");
  (void)readlink("Download/r/sym", buf, sizeof(buf));
  (void)mknod("Download/r/fifo", S_IFIFO | 0644, 0);
  // A listing of several pages: the kernel asks for the first with READDIRPLUS and, where it
  // decides by itself (readdirplus auto), for the next ones with READDIR.
  if (!check(mkdir("Download/many", 0755) == 0)) return step;
  for (int i = 0; i < 300; ++i) {
    std::string name = absl::StrCat("Download/many/entry-with-a-rather-long-name-", i);
    int f = open(name.c_str(), O_CREAT | O_WRONLY, 0644);
    if (!check(f >= 0)) return step;
    close(f);
  }
  DIR* dir = opendir("Download/many");
  if (!check(dir != nullptr)) return step;
  int entries = 0;
  while (readdir(dir) != nullptr) ++entries;
  (void)fsync(dirfd(dir));
  closedir(dir);
  if (!check(entries == 302)) return step;
  (void)unlink("Download/r/hard.txt");
  (void)unlink("Download/r/sym");
  (void)unlink("Download/r/fifo");
  if (!check(unlink("Download/r/a.txt") == 0)) return step;
  (void)unlink("Download/r/c.txt");
  (void)unlink("Download/r/d.txt");
  if (!check(rmdir("Download/r") == 0)) return step;
  return 0;
}

// An app's requests, refusals among them: each refusal is audited on its reply's way out.
int AppWorkload() {
  struct stat st;
  if (stat("Android/data/com.example.gallery", &st) == 0) return 1;  // another app's: hidden
  // Under POSIX semantics the lower's modes decide too (Download is root's 0755 there).
  int fd = open("Download/n.txt", O_CREAT | O_EXCL | O_RDWR, 0644);
  if (fd >= 0) {
    if (write(fd, "note", 4) != 4) return 3;
    close(fd);
    if (unlink("Download/n.txt") != 0) return 5;
  }
  if (open("DCIM/Camera/IMG_1.jpg", O_RDONLY) >= 0) return 4;  // no image permission
  return 0;
}

class ReplyOnceTest : public MountTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool posix() const { return GetParam(); }
  DaemonOptions Options() const override {
    DaemonOptions options;
    if (posix()) options.policy = AndroidRulesUnderPosixSemantics();
    options.passthrough = false;
    options.control_socket = true;
    return options;
  }
};

TEST_P(ReplyOnceTest, EveryRequestGetsOneReplyAndOneAuditDecision) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_1.jpg", JpegBytes(), kCamera));
  ASSERT_EQ(RunAs(kRoot, RootWorkload, storage_.mountpoint()), 0) << storage_.DaemonLog();
  ASSERT_EQ(RunAs(kNotes, AppWorkload, storage_.mountpoint()), 0) << storage_.DaemonLog();
  // The kernel forgets what it dropped: FORGET or BATCH_FORGET.
  FILE* drop = fopen("/proc/sys/vm/drop_caches", "w");
  ASSERT_NE(drop, nullptr) << "cannot write /proc/sys/vm/drop_caches: " << strerror(errno);
  fputs("2\n", drop);
  fclose(drop);

  // RELEASE and FORGET are sent without waiting for their answer: the counts settle once the
  // daemon has served them, and the FORGETs drop_caches queued are counted once the daemon has
  // read them (over io_uring they stay on /dev/fuse, read by the session's reader, not the ring's
  // threads), which can be after every count already agrees: the wait is for both. Bounded: a
  // request that never gets its reply, or a FORGET that never comes, fails the test.
  auto forgot = [](std::map<std::string, OpcodeRow>& rows) {
    return (rows.count("FORGET") && rows["FORGET"].requests > 0) ||
           (rows.count("BATCH_FORGET") && rows["BATCH_FORGET"].requests > 0);
  };
  std::map<std::string, OpcodeRow> rows;
  int64_t defects = -1;
  std::vector<std::string> unsettled;
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  do {
    absl::StatusOr<std::map<std::string, OpcodeRow>> got = OpcodeRows(storage_, &defects);
    ASSERT_TRUE(got.ok()) << got.status();
    rows = *got;
    unsettled.clear();
    for (const auto& [name, row] : rows) {
      if (ServedOpcodes().count(name) &&
          (row.replies != row.requests || row.audits != row.requests)) {
        unsettled.push_back(name);
      }
    }
    if (unsettled.empty() && forgot(rows)) break;
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < deadline);

  // The workload reached what it is meant to reach (else the comparison below says nothing).
  std::vector<std::string> needed = {
      "LOOKUP", "GETATTR", "SETATTR",     "MKDIR",      "CREATE",    "OPEN",
      "READ",   "WRITE",   "FLUSH",       "RELEASE",    "FSYNC",     "FALLOCATE",
      "LSEEK",  "STATFS",  "SETXATTR",    "GETXATTR",   "LISTXATTR", "REMOVEXATTR",
      "RENAME", "RENAME2", "LINK",        "SYMLINK",    "MKNOD",     "UNLINK",
      "RMDIR",  "OPENDIR", "READDIRPLUS", "RELEASEDIR", "FSYNCDIR",  "COPY_FILE_RANGE",
      "GETLK",  "SETLK"};
  // POSIX semantics: the kernel checks permissions itself (default_permissions) and sends no
  // ACCESS; the symlink it reads exists only there.
  needed.push_back(posix() ? "READLINK" : "ACCESS");
  for (const std::string& name : needed) {
    EXPECT_TRUE(rows.count(name) && rows[name].requests > 0) << name << " never reached the daemon";
  }
  EXPECT_TRUE(forgot(rows)) << "no FORGET in 20 s after drop_caches";

  EXPECT_EQ(defects, 0) << storage_.DaemonLog();
  for (const auto& [name, row] : rows) {
    if (!ServedOpcodes().count(name)) continue;
    EXPECT_EQ(row.replies, row.requests) << name << ": replies differ from requests";
    EXPECT_EQ(row.audits, row.requests) << name << ": audit decisions differ from requests";
  }
  EXPECT_TRUE(unsettled.empty()) << "unsettled after 20 s: " << unsettled.size() << " opcodes";
}

INSTANTIATE_TEST_SUITE_P(Semantics, ReplyOnceTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Posix") : std::string("Android");
                         });

}  // namespace
}  // namespace scopedfs::tests
