// Nothing on shared storage runs: a mount of ANDROID semantics is noexec, as vold mounts emulated
// storage, so an app can neither execve a program there nor map one executable, even one whose
// mode has execute bits. Under POSIX semantics the mount keeps exec, as the lower filesystem has.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kProgram[] = "/bin/true";

// execve(path) in a child of the app: err is execve's errno, value the program's exit status.
AppResult Exec(const App& app, const std::string& path) {
  return app.Run(absl::StrCat("execve ", path), [&] {
    AppResult r;
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return r.err = errno, r;
    pid_t pid = fork();
    if (pid < 0) return r.err = errno, r;
    if (pid == 0) {
      char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
      char* envp[] = {nullptr};
      execve(path.c_str(), argv, envp);
      int err = errno;
      if (write(report[1], &err, sizeof(err)) != sizeof(err)) _exit(126);
      _exit(127);
    }
    close(report[1]);
    int err = 0;
    if (read(report[0], &err, sizeof(err)) == sizeof(err)) r.err = err;
    close(report[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.value = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
  });
}

// mmap(PROT_READ | PROT_EXEC) of the file's first page, as a dynamic loader maps code.
AppResult MapExecutable(const App& app, const std::string& path) {
  return app.Run(absl::StrCat("mmap PROT_EXEC ", path), [&] {
    AppResult r;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return r.err = errno, r;
    void* code = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (code == MAP_FAILED) {
      r.err = errno;
    } else {
      munmap(code, 4096);
    }
    close(fd);
    return r;
  });
}

// Whether statvfs of the mount's root reports ST_NOEXEC, as the app sees it.
AppResult MountFlags(const App& app) {
  return app.Run("statvfs .", [] {
    AppResult r;
    struct statvfs sv;
    if (statvfs(".", &sv) != 0) return r.err = errno, r;
    r.value = (sv.f_flag & ST_NOEXEC) != 0 ? 1 : 0;
    return r;
  });
}

// --- ANDROID semantics: noexec ----------------------------------------------------------------

class AndroidNoexecTest : public MountTest {};

TEST_F(AndroidNoexecTest, TheMountIsNoexec) {
  AppResult flags = MountFlags(As(kNotes));
  ASSERT_TRUE(Succeeds(flags));
  EXPECT_EQ(flags.value, 1) << "statvfs shows no ST_NOEXEC";
}

// A program placed with execute bits (as adb push or MTP could), recorded as the app's own: the
// bits are there for the app to see, so only noexec keeps it from running.
TEST_F(AndroidNoexecTest, AnExecutableTheAppOwnsDoesNotRun) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/tool", ReadFileOrDie(kProgram), kNotes));
  ASSERT_EQ(chmod(storage_.Lower("Download/tool").c_str(), 0755), 0);
  AppResult st = As(kNotes).Stat("Download/tool");
  ASSERT_TRUE(Succeeds(st));
  ASSERT_NE(st.mode & 0111, 0u) << "the app must see execute bits for this test to mean anything";
  EXPECT_TRUE(FailsWith(Exec(As(kNotes), "Download/tool"), EACCES));
  EXPECT_TRUE(FailsWith(MapExecutable(As(kNotes), "Download/tool"), EPERM));
}

TEST_F(AndroidNoexecTest, AProgramTheAppCopiedInRunsNeitherByExecNorByMmap) {
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/true", ReadFileOrDie(kProgram))));
  (void)As(kNotes).Chmod("Download/true", 0755);  // Android semantics clamp it anyway
  EXPECT_TRUE(FailsWith(Exec(As(kNotes), "Download/true"), EACCES));
  EXPECT_TRUE(FailsWith(MapExecutable(As(kNotes), "Download/true"), EPERM));
}

// --- POSIX semantics: exec as on the lower filesystem -----------------------------------------

class PosixExecTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.policy = "policy/configs/permissive.textproto";
    return options;
  }
};

TEST_F(PosixExecTest, TheMountKeepsExec) {
  AppResult flags = MountFlags(As(kNotes));
  ASSERT_TRUE(Succeeds(flags));
  EXPECT_EQ(flags.value, 0) << "statvfs shows ST_NOEXEC";
}

TEST_F(PosixExecTest, AProgramTheAppCopiedInRuns) {
  ASSERT_EQ(chmod(storage_.Lower("Download").c_str(), 0777), 0);  // past the umask
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/true", ReadFileOrDie(kProgram))));
  ASSERT_TRUE(Succeeds(As(kNotes).Chmod("Download/true", 0755)));
  AppResult run = Exec(As(kNotes), "Download/true");
  ASSERT_TRUE(Succeeds(run));
  EXPECT_EQ(run.value, 0) << kProgram << " exited " << run.value;
  EXPECT_TRUE(Succeeds(MapExecutable(As(kNotes), "Download/true")));
}

}  // namespace
}  // namespace scopedfs::tests
