// The device image of tools/device_image/make_device_image.sh, served: the image is loop-mounted
// (mount -o loop), scopedfsd serves its media/0 with the image's own apps and packages.list, and
// the sample apps act on it as their real uids. The creators the builder recorded survived
// mke2fs/debugfs (the camera reads its photos raw, chat its own text file), and exiftool and
// ffprobe, reading what each app got, find location for the gallery and none for chat.
// Needs root, /dev/fuse and a loop device; skips, saying which is missing, without them.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kBuilder[] = "tools/device_image/make_device_image.sh";
constexpr uid_t kChat = 10062;  // the image's chat app: images + video, no ACCESS_MEDIA_LOCATION
constexpr char kPhoto[] = "DCIM/Camera/IMG_20240612_101500.jpg";  // camera's, with GPS
constexpr char kVideo[] = "Movies/Paris_trip.mov";                // gallery's, with location
constexpr char kChatText[] = "Download/packing_list.txt";         // chat's own, not media

// Empty if a loop device can be had, else why not.
std::string WhyNoLoopDevice() {
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) return absl::StrCat("needs loop devices: /dev/loop-control: ", strerror(errno));
  int free_device = ioctl(control, LOOP_CTL_GET_FREE);
  int err = errno;
  close(control);
  if (free_device < 0) return absl::StrCat("needs a free loop device: ", strerror(err));
  return "";
}

// The creator recorded on a file of the image, or why there is none.
std::string OwnerOf(const std::string& path) {
  char value[64];
  ssize_t n = getxattr(path.c_str(), "trusted.scopedfs.owner", value, sizeof(value));
  if (n < 0) return absl::StrCat("(getxattr ", path, ": ", strerror(errno), ")");
  return std::string(value, n);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class DeviceImageMountTest : public testing::Test {
 protected:
  // The image is built once; each test mounts a copy of it, since tests write to it.
  static void SetUpTestSuite() {
    if (!WhyNotMountable().empty() || !WhyNoLoopDevice().empty()) return;
    device_ = testing::TempDir() + "/device";
    build_status_ = RunCommand({kBuilder, "--size=64M", device_}, &build_output_);
  }

  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    if (std::string why = WhyNoLoopDevice(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(build_status_, 0) << kBuilder << " failed:\n" << build_output_;
    SCOPEDFS_ASSERT_OK(storage_.Prepare());  // also enters a private mount namespace
    std::string out;
    std::string image = storage_.work_dir() + "/userdata.img";
    ASSERT_EQ(RunCommand({"cp", "--sparse=always", device_ + "/userdata.img", image}, &out), 0)
        << out;
    data_ = storage_.work_dir() + "/data";
    ASSERT_EQ(mkdir(data_.c_str(), 0755), 0) << strerror(errno);
    ASSERT_EQ(RunCommand({"mount", "-o", "loop", image, data_}, &out), 0) << out;
    loop_mounted_ = true;
    DaemonOptions options;
    options.source = data_ + "/media/0";
    options.apps = device_ + "/apps.textproto";
    options.extra_flags = {"--packages_list=" + data_ + "/system/packages.list"};
    SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));
  }

  void TearDown() override {
    if (HasFailure()) std::cerr << "scopedfsd log:\n" << storage_.DaemonLog();
    // The daemon first: it holds files of the image open.
    if (storage_.daemon_started()) {
      DaemonExit e = storage_.StopDaemon();
      EXPECT_TRUE(e.clean()) << e.ToString();
    }
    // A loop mount made with -o loop frees its device when unmounted (autoclear).
    if (loop_mounted_ && umount2(data_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "umount " << data_ << ": " << strerror(errno);
    }
    storage_.Teardown();
  }

  std::string Lower(const std::string& rel) const { return data_ + "/media/0/" + rel; }
  App As(uid_t uid) const { return storage_.As(uid); }
  std::string ReadImage(const std::string& rel) const { return ReadFileOrDie(Lower(rel)); }

  // What exiftool (for photos) or ffprobe (for videos) finds as location in `bytes`.
  std::string LocationIn(const std::string& bytes, const std::string& ext) {
    std::string copy = absl::StrCat(storage_.work_dir(), "/copy", ++copies_, ".", ext);
    if (ext == "jpg") return GpsExiftoolFinds(bytes, copy);
    WriteFile(copy, bytes);
    std::string out;
    RunCommand({"ffprobe", "-v", "error", "-show_entries", "format_tags=location", "-of",
                "default=nw=1:nk=1", copy},
               &out);
    return std::string(absl::StripAsciiWhitespace(out));
  }

  static inline std::string device_;
  static inline int build_status_ = -1;
  static inline std::string build_output_;
  ScopedStorage storage_;
  std::string data_;
  bool loop_mounted_ = false;
  int copies_ = 0;
};

TEST_F(DeviceImageMountTest, OwnersSurvivedTheImage) {
  // What the builder recorded is what the mounted image holds.
  EXPECT_EQ(OwnerOf(Lower(kPhoto)), "10065");
  // Without the xattr the camera, which holds no read permission, would not see its photo, and
  // chat would not see its own text file.
  std::string photo = ReadImage(kPhoto);
  AppResult camera = As(kCamera).Read(kPhoto);
  ASSERT_TRUE(Succeeds(camera));
  EXPECT_TRUE(SameBytes(camera.data, photo)) << "the owner reads raw";
  AppResult chat_text = As(kChat).Read(kChatText);
  ASSERT_TRUE(Succeeds(chat_text));
  EXPECT_EQ(chat_text.data, "passport\ncharger\n");
  EXPECT_TRUE(FailsWith(As(kGallery).Read(kChatText), ENOENT)) << "another app's document";
  EXPECT_TRUE(FailsWith(As(kMusic).Read(kPhoto), ENOENT)) << "music holds no image permission";
}

TEST_F(DeviceImageMountTest, GalleryGetsThePhotosLocationAndChatDoesNot) {
  std::string photo = ReadImage(kPhoto);
  ASSERT_EQ(LocationIn(photo, "jpg"), "37.8199 -122.4783") << "the image's photo has GPS";
  AppResult gallery = As(kGallery).Read(kPhoto);
  AppResult chat = As(kChat).Read(kPhoto);
  ASSERT_TRUE(Succeeds(gallery));
  ASSERT_TRUE(Succeeds(chat));
  EXPECT_TRUE(SameBytes(gallery.data, photo));
  EXPECT_EQ(LocationIn(gallery.data, "jpg"), "37.8199 -122.4783");
  EXPECT_EQ(chat.data.size(), photo.size()) << "redaction fills, it does not cut";
  EXPECT_NE(chat.data, photo);
  EXPECT_EQ(LocationIn(chat.data, "jpg"), "") << "exiftool finds GPS in chat's copy";
  // The file manager has all-files access but not ACCESS_MEDIA_LOCATION.
  AppResult files = As(kFiles).Read(kPhoto);
  ASSERT_TRUE(Succeeds(files));
  EXPECT_EQ(LocationIn(files.data, "jpg"), "");
}

TEST_F(DeviceImageMountTest, GalleryGetsTheVideosLocationAndChatDoesNot) {
  std::string video = ReadImage(kVideo);
  ASSERT_EQ(LocationIn(video, "mov"), "+48.8584+002.2945/");
  AppResult gallery = As(kGallery).Read(kVideo);
  AppResult chat = As(kChat).Read(kVideo);
  ASSERT_TRUE(Succeeds(gallery));
  ASSERT_TRUE(Succeeds(chat));
  EXPECT_EQ(LocationIn(gallery.data, "mov"), "+48.8584+002.2945/");
  EXPECT_EQ(chat.data.size(), video.size());
  EXPECT_EQ(LocationIn(chat.data, "mov"), "") << "ffprobe finds location in chat's copy";
}

TEST_F(DeviceImageMountTest, EachAppListsWhatItMaySee) {
  AppResult camera = As(kCamera).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(camera));
  EXPECT_EQ(absl::StrJoin(camera.names, " "),
            "IMG_20240612_101500.jpg IMG_20240613_183000.jpg IMG_20240614_090000.jpg "
            "VID_20240612_101700.mp4");
  AppResult music = As(kMusic).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(music));
  EXPECT_TRUE(music.names.empty()) << absl::StrJoin(music.names, " ");
  AppResult chat_data = As(kChat).List("Android/data");
  ASSERT_TRUE(Succeeds(chat_data));
  EXPECT_EQ(absl::StrJoin(chat_data.names, " "), "com.example.chat");
  AppResult chat_download = As(kChat).List("Download");
  ASSERT_TRUE(Succeeds(chat_download));
  EXPECT_EQ(absl::StrJoin(chat_download.names, " "), "boarding_pass.pdf packing_list.txt");
}

TEST_F(DeviceImageMountTest, NewFilesAreRecordedInTheImage) {
  ASSERT_TRUE(Succeeds(As(kChat).Create("Download/ticket.pdf", PdfBytes())));
  EXPECT_EQ(OwnerOf(Lower("Download/ticket.pdf")), absl::StrCat(kChat));
  EXPECT_TRUE(FailsWith(As(kGallery).Read("Download/ticket.pdf"), ENOENT));
}

}  // namespace
}  // namespace scopedfs::tests
