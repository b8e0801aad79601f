// What "uncertain" does to each operation, on a real mount as real app uids. Content whose
// location cannot be vouched for (a metadata signature in content of no known structure, a
// TIFF-magic raw) is, for a caller owed a redacted copy: visible (stat), not readable (read,
// mmap: EACCES under the default uncertain_location DENY), not writable (open for write,
// truncate: EACCES); its owner reads and writes it raw. Under REDACT_ALL such a caller reads it,
// by read and by mmap alike, with the whole file filled. A recording whose ID3 tag holds XMP is
// not uncertain: its tag is filled and the audio served. Clean content of unknown format stays
// readable and writable as before.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kLat[] = "37,46.494N";

std::string Packet() {
  return absl::StrCat(
      "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/"
      "22-rdf-syntax-ns#'><rdf:Description xmlns:exif='http://ns.adobe.com/exif/1.0/' "
      "exif:GPSLatitude='",
      kLat, "'/></rdf:RDF></x:xmpmeta>");
}

std::string Le32(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}

// A TIFF under Olympus's magic whose IFD0 points at a GPS IFD holding GPSLatitudeRef 'N' and the
// latitude as text in an undefined-type entry: no signature marks it, only the structure.
std::string Orf() {
  std::string gps = absl::StrCat(std::string("\x01\x00", 2), std::string("\x01\x00\x02\x00", 4),
                                 Le32(2), std::string("N\0\0\0", 4), Le32(0));
  return absl::StrCat("IIRO", Le32(8), std::string("\x01\x00", 2),
                      std::string("\x25\x88\x04\x00", 4), Le32(1), Le32(26), Le32(0), gps, kLat);
}

// ID3v2.3 with a PRIV "XMP" frame, then MPEG audio frames.
std::string Id3(const std::string& frames) {
  uint32_t n = static_cast<uint32_t>(frames.size());
  std::string size = {static_cast<char>((n >> 21) & 0x7F), static_cast<char>((n >> 14) & 0x7F),
                      static_cast<char>((n >> 7) & 0x7F), static_cast<char>(n & 0x7F)};
  return absl::StrCat(std::string("ID3\x03\x00\x00", 6), size, frames);
}

std::string PrivXmpTag() {
  std::string data = absl::StrCat(std::string("XMP\0", 4), Packet());
  uint32_t n = static_cast<uint32_t>(data.size());
  std::string be = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                    static_cast<char>(n >> 8), static_cast<char>(n)};
  return Id3(absl::StrCat("PRIV", be, std::string(2, '\0'), data));
}

// MPEG audio frames (a frame header and filler): no tag, no signature.
std::string Audio() { return std::string("\xFF\xFB\x90\x64", 4) + std::string(4092, 'U'); }

constexpr char kSidecar[] = "Download/trip.xmp";    // unknown format, XMP in it: uncertain
constexpr char kRaw[] = "Download/photo.orf";       // TIFF under another magic: uncertain
constexpr char kClean[] = "Download/notes.txt";     // unknown format, clean
constexpr char kTagged[] = "Recordings/memo.mp3";   // XMP in the ID3 tag: the tag is filled
constexpr char kTailTag[] = "Recordings/late.mp3";  // XMP in a tag after the audio: uncertain

class UncertainLocationMountTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSidecar, Packet(), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kRaw, Orf(), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kClean, "buy milk\n", kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kTagged, PrivXmpTag() + Audio(), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kTailTag, Audio() + PrivXmpTag(), kCamera));
  }

  // Reads `path` as `uid` through a shared mapping.
  AppResult MapAs(uid_t uid, const std::string& path) {
    return As(uid).Run("mmap " + path, [path] {
      AppResult r;
      int fd = open(path.c_str(), O_RDONLY);
      struct stat st;
      if (fd < 0 || fstat(fd, &st) != 0) {
        r.err = errno;
        if (fd >= 0) close(fd);
        return r;
      }
      void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        r.err = errno;
      } else {
        r.data.assign(static_cast<const char*>(p), st.st_size);
        munmap(p, st.st_size);
      }
      close(fd);
      return r;
    });
  }
};

TEST_F(UncertainLocationMountTest, UncertainContentIsVisibleButNeitherReadNorWritten) {
  // The files app holds all-files access and no ACCESS_MEDIA_LOCATION: it is owed redacted copies.
  for (const char* path : {kSidecar, kRaw}) {
    SCOPED_TRACE(path);
    EXPECT_TRUE(Succeeds(As(kFiles).Stat(path)));
    EXPECT_TRUE(FailsWith(As(kFiles).Read(path), EACCES));
    EXPECT_TRUE(FailsWith(MapAs(kFiles, path), EACCES));
    EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_WRONLY), EACCES));
    EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_RDWR), EACCES));
    EXPECT_TRUE(FailsWith(As(kFiles).Truncate(path, 0), EACCES));
    // The owner reads its file as it is.
    AppResult own = As(kCamera).Read(path);
    ASSERT_TRUE(Succeeds(own));
    EXPECT_NE(own.data.find(kLat), std::string::npos);
  }
  // The recording with its tag after the audio, to the music app.
  EXPECT_TRUE(Succeeds(As(kMusic).Stat(kTailTag)));
  EXPECT_TRUE(FailsWith(As(kMusic).Read(kTailTag), EACCES));
}

TEST_F(UncertainLocationMountTest, RecordingTagWithXmpIsFilledAndTheAudioServed) {
  std::string tag = PrivXmpTag();
  for (bool mapped : {false, true}) {
    SCOPED_TRACE(mapped ? "mmap" : "read");
    AppResult r = mapped ? MapAs(kMusic, kTagged) : As(kMusic).Read(kTagged);
    ASSERT_TRUE(Succeeds(r));
    ASSERT_EQ(r.data.size(), tag.size() + Audio().size());
    EXPECT_EQ(r.data.find(kLat), std::string::npos) << "location leaked";
    EXPECT_EQ(r.data.substr(0, 10), tag.substr(0, 10));  // the tag header stays
    EXPECT_EQ(r.data.substr(10, tag.size() - 10), std::string(tag.size() - 10, '\0'));
    EXPECT_TRUE(SameBytes(r.data.substr(tag.size()), Audio()));
  }
  // The files app may not write it (a write could break the tag, then read it raw).
  EXPECT_TRUE(FailsWith(As(kFiles).Open(kTagged, O_WRONLY), EACCES));
}

TEST_F(UncertainLocationMountTest, CleanContentOfUnknownFormatIsServedAndWritable) {
  AppResult r = As(kFiles).Read(kClean);
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.data, "buy milk\n");
  EXPECT_TRUE(Succeeds(As(kFiles).Write(kClean, "buy bread\n")));
  absl::StatusOr<std::string> lower = storage_.ReadLower(kClean);
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, "buy bread\n");
}

// The same content under uncertain_location: REDACT_ALL: readable, every byte filled, by read and
// by mmap alike; still not writable.
class UncertainRedactAllMountTest : public UncertainLocationMountTest {
 protected:
  DaemonOptions Options() const override {
    std::string policy = ReadFileOrDie("policy/configs/android.textproto");
    policy += "\nuncertain_location: UNCERTAIN_LOCATION_REDACT_ALL\n";
    std::string path = ::testing::TempDir() + "/uncertain_redact_all.textproto";
    std::ofstream(path) << policy;
    DaemonOptions o;
    o.policy = path;
    return o;
  }
};

TEST_F(UncertainRedactAllMountTest, UncertainContentIsFilledWhole) {
  for (const char* path : {kSidecar, kRaw}) {
    SCOPED_TRACE(path);
    size_t size = std::string(path) == kSidecar ? Packet().size() : Orf().size();
    for (bool mapped : {false, true}) {
      AppResult r = mapped ? MapAs(kFiles, path) : As(kFiles).Read(path);
      ASSERT_TRUE(Succeeds(r)) << (mapped ? "mmap" : "read");
      EXPECT_EQ(r.data, std::string(size, '\0')) << (mapped ? "mmap" : "read");
    }
    EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_RDWR), EACCES));
  }
}

}  // namespace
}  // namespace scopedfs::tests
