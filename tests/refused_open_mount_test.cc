// A refused open leaves no trace in the lower tree: the daemon opens the lower file only once the
// policy has let the caller open it, so a refused app breaks no lease and wakes no watcher of the
// lower tree (inotify IN_OPEN). Needs root and /dev/fuse.
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class RefusedOpenTest : public MountTest {
 protected:
  // LISTING: another app's file is found (a stat succeeds), so its open reaches OPEN and is
  // refused there.
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/android.textproto";
    return o;
  }
};

// The opens of the lower file an inotify watch saw since the last call.
int OpensSeen(int inotify_fd) {
  int opens = 0;
  alignas(inotify_event) char buf[4096];
  for (ssize_t n; (n = read(inotify_fd, buf, sizeof(buf))) > 0;) {
    for (ssize_t at = 0; at < n;) {
      auto* ev = reinterpret_cast<inotify_event*>(buf + at);
      if (ev->mask & IN_OPEN) ++opens;
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return opens;
}

TEST_F(RefusedOpenTest, ARefusedReadOnlyOpenDoesNotOpenTheLowerFile) {
  constexpr char kFile[] = "Documents/notes.pdf";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFile, PdfBytes(), kNotes));
  // The name and its facts are known to the daemon before the watch starts.
  ASSERT_TRUE(Succeeds(As(kCamera).Stat(kFile)));
  int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, storage_.Lower(kFile).c_str(), IN_OPEN), 0);
  for (int flags : {O_RDONLY, O_RDONLY | O_NONBLOCK, O_WRONLY, O_RDWR}) {
    SCOPED_TRACE(flags);
    AppResult refused = As(kCamera).Open(kFile, flags);
    EXPECT_FALSE(refused.ok()) << refused;
    EXPECT_EQ(OpensSeen(watch), 0) << "a refused open opened the lower file";
  }
  // The watch sees the owner's open: the check above could fail.
  ASSERT_TRUE(Succeeds(As(kNotes).Open(kFile, O_RDONLY)));
  EXPECT_GE(OpensSeen(watch), 1);
  close(watch);
}

}  // namespace
}  // namespace scopedfs::tests
