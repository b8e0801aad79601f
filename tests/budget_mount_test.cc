// Per-app budgets against fd exhaustion, with the daemon started as systemd would start it under a
// limit of 1,024 fds (soft and hard, so raising does not help): apps whose children each take a
// lock description, or many apps each holding handles, never take the fds another app's ls, cat
// and cp need. Each test prints the daemon's fd count and the third app's latencies.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr uint64_t kFdLimit = 1024;

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) r = fds[0], w = fds[1];
  }
  ~Pipe() { CloseBoth(); }
  void CloseWrite() {
    if (w >= 0) close(w);
    w = -1;
  }
  void CloseBoth() {
    if (r >= 0) close(r);
    CloseWrite();
    r = -1;
  }
};

bool ReadExactly(int fd, void* out, size_t n) {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

int CountFds(pid_t pid) {
  DIR* d = opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// What one attacking app got: how many of its requests were granted, refused with the errno the
// budget answers (ENOLCK for locks, EMFILE for opens), or failed otherwise.
struct Tally {
  int granted = 0;
  int refused = 0;
  int other = 0;
  int other_errno = 0;
};

// The third app's requests: ls (opendir + readdir), cat (open + read) and cp (open, read, create,
// write) of its own files, each timed; the first errno of each, and the latencies in µs.
struct Probe {
  int ls_err = 0, cat_err = 0, cp_err = 0;
  int64_t us[3][20] = {};
};

Probe RunProbe(const ScopedStorage& storage, uid_t uid) {
  Pipe out;
  pid_t pid = StartAs(
      uid,
      [&] {
        close(out.r);
        Probe p;
        char buf[65536];
        for (int i = 0; i < 20; ++i) {
          absl::Time t0 = absl::Now();
          DIR* d = opendir("Download");
          if (d == nullptr) {
            if (p.ls_err == 0) p.ls_err = errno;
          } else {
            while (readdir(d) != nullptr) {
            }
            closedir(d);
          }
          absl::Time t1 = absl::Now();
          int fd = open("Download/notes.txt", O_RDONLY);
          if (fd < 0) {
            if (p.cat_err == 0) p.cat_err = errno;
          } else {
            while (read(fd, buf, sizeof(buf)) > 0) {
            }
            close(fd);
          }
          absl::Time t2 = absl::Now();
          int from = open("Download/notes.txt", O_RDONLY);
          int to = open("Download/notes.copy", O_WRONLY | O_CREAT | O_TRUNC, 0644);
          if (from < 0 || to < 0) {
            if (p.cp_err == 0) p.cp_err = errno;
          } else {
            ssize_t n;
            while ((n = read(from, buf, sizeof(buf))) > 0) {
              if (write(to, buf, static_cast<size_t>(n)) != n && p.cp_err == 0) p.cp_err = errno;
            }
          }
          if (from >= 0) close(from);
          if (to >= 0) close(to);
          unlink("Download/notes.copy");
          absl::Time t3 = absl::Now();
          p.us[0][i] = absl::ToInt64Microseconds(t1 - t0);
          p.us[1][i] = absl::ToInt64Microseconds(t2 - t1);
          p.us[2][i] = absl::ToInt64Microseconds(t3 - t2);
        }
        (void)!write(out.w, &p, sizeof(p));
        return 0;
      },
      storage.mountpoint());
  out.CloseWrite();
  Probe p;
  p.ls_err = p.cat_err = p.cp_err = -1;
  bool got = ReadExactly(out.r, &p, sizeof(p));
  EXPECT_EQ(WaitChild(pid), 0);
  EXPECT_TRUE(got) << "the probing app died";
  return p;
}

std::string Latencies(const Probe& p) {
  std::string out;
  const char* names[] = {"ls", "cat", "cp"};
  for (int op = 0; op < 3; ++op) {
    std::vector<int64_t> v(p.us[op], p.us[op] + 20);
    std::sort(v.begin(), v.end());
    absl::StrAppend(&out, names[op], " median ", v[10], " µs max ", v[19], " µs; ");
  }
  return out;
}

class BudgetMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.fd_limit = kFdLimit;
    o.control_socket = true;  // queued lock waits (lock_waits)
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/notes.txt", Pattern(200000, 7), kNotes));
  }

  // An app process that opens its own file once and forks `children` processes, each a lock
  // owner of its own that locks one byte through the shared handle and holds it until `release`
  // closes. Sends a Tally (ENOLCK counted as refused) on `report`.
  pid_t StartLockAttacker(uid_t uid, const std::string& file, int children, const Pipe& report,
                          const Pipe& release) {
    return StartAs(
        uid,
        [&, file, children] {
          close(release.w);
          close(report.r);
          int fd = open(file.c_str(), O_RDWR | O_CREAT, 0644);
          if (fd < 0) return 1;
          Pipe results;
          for (int i = 0; i < children; ++i) {
            if (fork() == 0) {
              close(results.r);
              struct flock l = {};
              l.l_type = F_WRLCK;
              l.l_whence = SEEK_SET;
              l.l_start = i;
              l.l_len = 1;
              int rc = fcntl(fd, F_SETLK, &l);
              char c = rc == 0 ? 'L' : errno == ENOLCK ? 'N' : static_cast<char>(errno);
              (void)!write(results.w, &c, 1);
              (void)!read(release.r, &c, 1);  // until the test lets go
              _exit(0);
            }
          }
          results.CloseWrite();
          Tally t;
          for (int i = 0; i < children; ++i) {
            char c;
            if (!ReadExactly(results.r, &c, 1)) break;
            if (c == 'L') {
              ++t.granted;
            } else if (c == 'N') {
              ++t.refused;
            } else {
              ++t.other;
              t.other_errno = c;
            }
          }
          (void)!write(report.w, &t, sizeof(t));
          while (wait(nullptr) > 0) {
          }
          return 0;
        },
        storage_.mountpoint(), absl::Seconds(300));
  }
};

// The attack as reported: two apps, each forking children that lock bytes of one handle (one
// lower description per child), against a daemon at 1,024 fds. Each app stops at its budget
// with ENOLCK, and a third app's ls, cat and cp are answered.
TEST_F(BudgetMountTest, LockOwnersOfTwoAppsLeaveAThirdAppServed) {
  constexpr int kChildren = 520;  // more than the 512 descriptions an app could hold before
  Pipe report1, report2, release;
  pid_t a = StartLockAttacker(kSocial, "Download/a.txt", kChildren, report1, release);
  pid_t b = StartLockAttacker(kCamera, "Download/b.txt", kChildren, report2, release);
  report1.CloseWrite();
  report2.CloseWrite();
  Tally ta, tb;
  ASSERT_TRUE(ReadExactly(report1.r, &ta, sizeof(ta)));
  ASSERT_TRUE(ReadExactly(report2.r, &tb, sizeof(tb)));
  int fds = CountFds(storage_.daemon_pid());
  Probe p = RunProbe(storage_, kNotes);
  printf(
      "[ figures ] lock attack: app A locked %d, ENOLCK %d, other %d (errno %d); app B locked "
      "%d, ENOLCK %d, other %d; daemon fds %d of %llu; third app: %s\n",
      ta.granted, ta.refused, ta.other, ta.other_errno, tb.granted, tb.refused, tb.other, fds,
      static_cast<unsigned long long>(kFdLimit), Latencies(p).c_str());
  release.CloseBoth();
  EXPECT_EQ(WaitChild(a), 0);
  EXPECT_EQ(WaitChild(b), 0);

  EXPECT_EQ(p.ls_err, 0) << ErrnoName(p.ls_err);
  EXPECT_EQ(p.cat_err, 0) << ErrnoName(p.cat_err);
  EXPECT_EQ(p.cp_err, 0) << ErrnoName(p.cp_err);
  EXPECT_GT(ta.refused, 0) << "app A was never stopped";
  EXPECT_GT(tb.refused, 0) << "app B was never stopped";
  EXPECT_EQ(ta.other + tb.other, 0) << "refusals are ENOLCK, not " << ErrnoName(ta.other_errno);
  EXPECT_LT(fds, static_cast<int>(kFdLimit) - 100) << "the reserve for the daemon was taken";
}

// Not in the report: many apps, each staying under its own share, together. Every app opens its
// own file again and again; all of them together still leave the notes app its requests, and
// every refusal is EMFILE for the app that asked.
TEST_F(BudgetMountTest, ManyAppsUnderTheirSharesTogetherLeaveAThirdAppServed) {
  constexpr int kOpensPerApp = 200;  // under the 256 a 1,024-fd daemon allowed one app before
  const uid_t apps[] = {kSocial, kCamera, kMusic, kLegacy, kSuite, kGallery};
  std::vector<pid_t> pids;
  std::vector<std::unique_ptr<Pipe>> reports;
  Pipe release;
  for (uid_t uid : apps) {
    reports.push_back(std::make_unique<Pipe>());
    const Pipe& report = *reports.back();
    std::string file = absl::StrCat("Download/held", uid, ".txt");
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(file, "x", uid));
    pids.push_back(StartAs(
        uid,
        [&, file] {
          close(release.w);
          close(report.r);
          Tally t;
          for (int i = 0; i < kOpensPerApp; ++i) {
            if (open(file.c_str(), O_RDONLY) >= 0) {
              ++t.granted;
            } else if (errno == EMFILE) {
              ++t.refused;
            } else {
              ++t.other;
              t.other_errno = errno;
            }
          }
          (void)!write(report.w, &t, sizeof(t));
          char c;
          (void)!read(release.r, &c, 1);
          return 0;
        },
        storage_.mountpoint(), absl::Seconds(300)));
    reports.back()->CloseWrite();
  }
  int granted = 0, refused = 0, other = 0, other_errno = 0;
  for (auto& report : reports) {
    Tally t;
    ASSERT_TRUE(ReadExactly(report->r, &t, sizeof(t)));
    granted += t.granted;
    refused += t.refused;
    other += t.other;
    if (t.other) other_errno = t.other_errno;
  }
  int fds = CountFds(storage_.daemon_pid());
  Probe p = RunProbe(storage_, kNotes);
  printf(
      "[ figures ] six apps x %d opens: granted %d, EMFILE %d, other %d; daemon fds %d of "
      "%llu; third app: %s\n",
      kOpensPerApp, granted, refused, other, fds, static_cast<unsigned long long>(kFdLimit),
      Latencies(p).c_str());
  release.CloseBoth();
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);

  EXPECT_EQ(p.ls_err, 0) << ErrnoName(p.ls_err);
  EXPECT_EQ(p.cat_err, 0) << ErrnoName(p.cat_err);
  EXPECT_EQ(p.cp_err, 0) << ErrnoName(p.cp_err);
  EXPECT_EQ(other, 0) << "refusals are EMFILE, not " << ErrnoName(other_errno);
  EXPECT_GT(refused, 0) << "together the apps asked for more than the daemon has";
  EXPECT_LT(fds, static_cast<int>(kFdLimit) - 100) << "the reserve for the daemon was taken";
}

// Not in the report: one app mixing open handles, lock owners and queued lock waits draws on one
// budget, so together they stop at the same share, and the other app is served. Each lock
// owner's answer is read before any waiter starts (a waiter meets every owner's lock, or its
// refusal), and each answer says whose it is. Every waiter's answer is read until all 150 are
// answered or counted queued by the daemon (lock_waits): none may stay queued.
TEST_F(BudgetMountTest, HandlesLocksAndWaitsOfOneAppShareOneBudget) {
  constexpr int kOwners = 150;
  constexpr int kWaiters = 150;
  Pipe report, release, waits;
  pid_t pid = StartAs(
      kSocial,
      [&] {
        close(release.w);
        close(report.r);
        close(waits.r);
        Tally t[2];  // handles, lock owners
        int fd = open("Download/mixed.txt", O_RDWR | O_CREAT, 0644);
        if (fd < 0) return 1;
        for (int i = 0; i < 100; ++i) {
          if (open("Download/mixed.txt", O_RDONLY) >= 0) {
            ++t[0].granted;
          } else {
            ++(errno == EMFILE ? t[0].refused : t[0].other);
          }
        }
        // Lock owners (children of this process, each an owner of its own), one byte each. An
        // answer is written once the lock is held or refused.
        Pipe owners;
        for (int i = 0; i < kOwners; ++i) {
          if (fork() == 0) {
            close(owners.r);
            close(waits.w);
            struct flock l = {};
            l.l_type = F_WRLCK;
            l.l_whence = SEEK_SET;
            l.l_start = i;
            l.l_len = 1;
            int rc = fcntl(fd, F_SETLK, &l);
            char c = rc == 0 ? 'L' : errno == ENOLCK ? 'N' : 'E';
            (void)!write(owners.w, &c, 1);
            (void)!read(release.r, &c, 1);
            _exit(0);
          }
        }
        owners.CloseWrite();
        for (int i = 0; i < kOwners; ++i) {
          char c;
          if (!ReadExactly(owners.r, &c, 1)) return 2;
          ++(c == 'L' ? t[1].granted : c == 'N' ? t[1].refused : t[1].other);
        }
        (void)!write(report.w, t, sizeof(t));
        // Then the waiters, blocked on the owners' bytes; their answers go to the test.
        for (int i = 0; i < kWaiters; ++i) {
          if (fork() == 0) {
            close(owners.r);
            struct flock l = {};
            l.l_type = F_WRLCK;
            l.l_whence = SEEK_SET;
            l.l_start = i % kOwners;
            l.l_len = 1;
            int rc = fcntl(fd, F_SETLKW, &l);
            char c = rc == 0 ? 'L' : errno == ENOLCK ? 'N' : 'E';
            (void)!write(waits.w, &c, 1);
            (void)!read(release.r, &c, 1);
            _exit(0);
          }
        }
        waits.CloseWrite();
        char c;
        (void)!read(release.r, &c, 1);
        while (wait(nullptr) > 0) {
        }
        return 0;
      },
      storage_.mountpoint(), absl::Seconds(300));
  report.CloseWrite();
  waits.CloseWrite();
  Tally t[3];  // handles, lock owners, waits
  ASSERT_TRUE(ReadExactly(report.r, t, 2 * sizeof(Tally)));
  // The waiters' answers, until every wait is answered or queued in the daemon: a granted wait
  // cannot answer while its owner holds on, and a queued one never does before the release.
  int answered = 0;
  int64_t queued = -1;
  ASSERT_EQ(fcntl(waits.r, F_SETFL, O_NONBLOCK), 0);
  for (absl::Time end = absl::Now() + absl::Seconds(15);;) {
    char c;
    while (read(waits.r, &c, 1) == 1) {
      ++answered;
      ++(c == 'L' ? t[2].granted : c == 'N' ? t[2].refused : t[2].other);
    }
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    ASSERT_TRUE(stats.ok()) << stats.status();
    queued = (*stats)["lock_waits"];
    if (answered + queued == kWaiters) break;
    ASSERT_LT(absl::Now(), end) << answered << " waits answered and " << queued
                                << " queued, not all " << kWaiters;
    usleep(10 * 1000);
  }
  int fds = CountFds(storage_.daemon_pid());
  Probe p = RunProbe(storage_, kNotes);
  printf(
      "[ figures ] one app: handles %d (+%d EMFILE), lock owners %d (+%d ENOLCK), answered "
      "waits %d ENOLCK, %lld queued; daemon fds %d; third app: %s\n",
      t[0].granted, t[0].refused, t[1].granted, t[1].refused, t[2].refused,
      static_cast<long long>(queued), fds, Latencies(p).c_str());
  release.CloseBoth();
  EXPECT_EQ(WaitChild(pid), 0);

  EXPECT_EQ(t[0].granted, 100);
  EXPECT_GT(t[1].refused, 0) << "lock owners past the app's budget (100 handles + owners)";
  EXPECT_EQ(t[1].granted + t[1].refused, kOwners);
  // Every wait beyond the budget is answered ENOLCK at once; none is queued.
  EXPECT_EQ(t[2].refused, kWaiters) << "waits beyond a full budget are refused";
  EXPECT_EQ(queued, 0) << "waits queued beyond a full budget";
  EXPECT_EQ(t[0].other + t[1].other + t[2].other, 0);
  EXPECT_EQ(p.ls_err, 0) << ErrnoName(p.ls_err);
  EXPECT_EQ(p.cat_err, 0) << ErrnoName(p.cat_err);
  EXPECT_EQ(p.cp_err, 0) << ErrnoName(p.cp_err);
}

// Under POSIX semantics a write open clears set-id bits (passthrough writes never reach the
// daemon to do it at the first write), but an open the app's handle budget refuses changes
// nothing: an app (uid 10123; system uids have no budget) holds handles until EMFILE, then opens
// its set-uid, set-gid file for writing.
TEST(BudgetPosixMountTest, WriteOpenRefusedByTheBudgetKeepsSetIdBits) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  constexpr uid_t kUser = 10123;
  constexpr mode_t kSetId = S_ISUID | S_ISGID | 0775;
  ScopedStorage storage;
  SCOPEDFS_ASSERT_OK(storage.Prepare());
  for (const char* name : {"plain", "setid"}) {
    std::string path = storage.Lower(name);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    close(fd);
    ASSERT_EQ(chown(path.c_str(), kUser, kUser), 0);
  }
  ASSERT_EQ(chmod(storage.Lower("setid").c_str(), kSetId), 0);
  DaemonOptions options;
  options.policy = "policy/configs/permissive.textproto";
  options.fd_limit = 256;
  SCOPEDFS_ASSERT_OK(storage.StartDaemon(options));
  int result = RunAs(
      kUser,
      [] {
        std::vector<int> held;
        for (int i = 0; i < 1000; ++i) {
          int fd = open("plain", O_RDONLY | O_CLOEXEC);
          if (fd < 0) {
            if (errno != EMFILE || held.empty()) return 2;
            break;
          }
          held.push_back(fd);
        }
        if (held.size() > 64) return 3;  // more than the app's share (a quarter of 128)
        if (open("setid", O_WRONLY | O_CLOEXEC) >= 0) return 4;
        if (errno != EMFILE) return 5;
        return 0;
      },
      storage.mountpoint());
  EXPECT_EQ(result, 0) << "2: the first open failed, 3: no budget, 4: the write open was not "
                          "refused, 5: it was refused with another errno";
  struct stat st;
  ASSERT_EQ(stat(storage.Lower("setid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, kSetId) << "a refused write open changed the mode";
  // With handles to spare, the same open clears them, as a write natively would.
  EXPECT_EQ(RunAs(
                kUser,
                [] {
                  int fd = open("setid", O_WRONLY | O_CLOEXEC);
                  return fd >= 0 ? (close(fd), 0) : 1;
                },
                storage.mountpoint()),
            0);
  ASSERT_EQ(stat(storage.Lower("setid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  DaemonExit exit = storage.StopDaemon();
  EXPECT_TRUE(exit.clean()) << exit.ToString();
  if (::testing::Test::HasFailure()) std::cerr << "--- scopedfsd log ---\n" << storage.DaemonLog();
}

}  // namespace
}  // namespace scopedfs::tests
