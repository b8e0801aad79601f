// SELinux labelling through the mount: files and directories an app creates get the context that
// file_contexts assigns to their Android path (label_root + path), exactly as selabel_lookup says.
#include <sys/xattr.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

std::string LowerLabel(const ScopedStorage& storage, const std::string& rel) {
  char value[256];
  ssize_t n = lgetxattr(storage.Lower(rel).c_str(), "security.selinux", value, sizeof(value));
  if (n <= 0) return "";
  std::string label(value, static_cast<size_t>(n));
  while (!label.empty() && label.back() == '\0') label.pop_back();
  return label;
}

class SelinuxMountTest : public testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
    DaemonOptions options;
    options.extra_flags = {"--file_contexts=policy/testdata/file_contexts",
                           "--label_root=/data/media/0"};
    SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));
  }
  ScopedStorage storage_;
};

TEST_F(SelinuxMountTest, NewImageGetsItsFileTypeLabel) {
  ASSERT_TRUE(Succeeds(storage_.As(kCamera).Create("DCIM/Camera/IMG_1.jpg", JpegBytes())));
  EXPECT_EQ(LowerLabel(storage_, "DCIM/Camera/IMG_1.jpg"), "u:object_r:media_image_file:s0");
}

TEST_F(SelinuxMountTest, NewDirectoryGetsTheDirectoryOnlyLabel) {
  ASSERT_TRUE(Succeeds(storage_.As(kCamera).Mkdir("DCIM/Trips")));
  EXPECT_EQ(LowerLabel(storage_, "DCIM/Trips"), "u:object_r:media_album_dir:s0");
}

TEST_F(SelinuxMountTest, DownloadGetsItsOwnLabel) {
  ASSERT_TRUE(Succeeds(storage_.As(kNotes).Create("Download/report.pdf", PdfBytes())));
  EXPECT_EQ(LowerLabel(storage_, "Download/report.pdf"), "u:object_r:media_download_file:s0");
}

TEST_F(SelinuxMountTest, PrivateAppDataGetsTheAppDataLabel) {
  ASSERT_TRUE(Succeeds(storage_.As(kNotes).Mkdir("Android/data/com.example.notes")));
  ASSERT_TRUE(Succeeds(storage_.As(kNotes).Create("Android/data/com.example.notes/n.db", "x")));
  EXPECT_EQ(LowerLabel(storage_, "Android/data/com.example.notes/n.db"),
            "u:object_r:media_rw_app_data_file:s0");
}

TEST(SelinuxMountStartTest, MissingFileContextsFailsBeforeMounting) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  ScopedStorage storage;
  SCOPEDFS_ASSERT_OK(storage.Prepare());
  DaemonOptions options;
  options.extra_flags = {"--file_contexts=policy/testdata/no_such_file_contexts"};
  EXPECT_FALSE(storage.StartDaemon(options).ok());
  EXPECT_FALSE(storage.IsMounted());
  EXPECT_NE(storage.DaemonLog().find("--file_contexts"), std::string::npos) << storage.DaemonLog();
}

}  // namespace
}  // namespace scopedfs::tests
