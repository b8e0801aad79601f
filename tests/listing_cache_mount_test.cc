// Listings the kernel keeps under android.textproto, whose rules look at the caller, as real app
// uids: a directory every caller lists alike (it holds only directories the rules show to every
// app) is listed from the kernel's cache by every app after the first listing; a directory an app
// made is listed from the kernel's cache by that app when its listing depends on no file's
// content, whatever other apps list meanwhile; and apps whose listings differ get their own,
// across creates, removals, renames, content changes that flip an entry's visibility (through the
// mount and behind the daemon's back) and changes made to the lower tree behind the daemon's
// back; and the entries a listing sends with attributes (READDIRPLUS) give each app what a lookup
// of the name would. Each test runs on a mount only one user's apps reach
// (--mount_reached_by_one_user, where directories' attributes are cached too) and on the default
// mount, with the listed directory made by no app, by the notes app (whose listing of it depends on
// no content) and by the gallery (which holds READ_MEDIA_IMAGES, so its listing depends on what
// other apps' files hold). Needs root and /dev/fuse; skips, saying so, without them.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kTrip[] = "Download/trip";

struct Setup {
  bool one_user;
  uid_t creator;  // who made kTrip; 0: no app (the lower tree has no creator for it)
};

class ListingCacheMountTest : public MountTest, public testing::WithParamInterface<Setup> {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/android.textproto";
    o.control_socket = true;
    o.extra_flags.push_back(
        absl::StrCat("--mount_reached_by_one_user=", GetParam().one_user ? "true" : "false"));
    return o;
  }
  // kTrip, made by GetParam().creator.
  void MakeTrip() {
    uid_t creator = GetParam().creator;
    SCOPEDFS_ASSERT_OK(
        storage_.MkdirLower(kTrip, creator != 0 ? std::optional<uid_t>(creator) : std::nullopt));
  }
  int64_t Counter(const std::string& name) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? (*stats)[name] : -1;
  }
  // What `uid` lists in `dir`, sorted, joined by spaces; "error <errno>" when it cannot.
  std::string Listing(uid_t uid, const std::string& dir) {
    AppResult r = As(uid).List(dir);
    if (!r.ok()) return absl::StrCat("error ", ErrnoName(r.err));
    return absl::StrJoin(r.names, " ");
  }
  // Every app's listing of kTrip, each twice and in two orders (so each may meet a listing another
  // app's open left in the kernel), against what each must get.
  void ExpectListings(const std::string& step, const std::string& owner, const std::string& files,
                      const std::string& gallery, const std::string& music) {
    const std::vector<std::pair<uid_t, std::string>> want = {
        {kNotes, owner}, {kFiles, files}, {kGallery, gallery}, {kMusic, music}};
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < want.size(); ++i) {
        const auto& [uid, expected] = round == 0 ? want[i] : want[want.size() - 1 - i];
        EXPECT_EQ(Listing(uid, kTrip), expected) << step << ": uid " << uid << ", round " << round;
      }
    }
  }
};

INSTANTIATE_TEST_SUITE_P(ListingCache, ListingCacheMountTest,
                         testing::Values(Setup{true, 0}, Setup{false, 0}, Setup{true, kNotes},
                                         Setup{false, kNotes}, Setup{true, kGallery},
                                         Setup{false, kGallery}),
                         [](const testing::TestParamInfo<Setup>& info) {
                           const Setup& s = info.param;
                           return absl::StrCat(s.one_user ? "OneUser" : "Default",
                                               s.creator == kNotes     ? "MadeByNotes"
                                               : s.creator == kGallery ? "MadeByGallery"
                                                                       : "MadeByNoApp");
                         });

// A directory of directories: the second listing, by the same app or by another, sends no
// READDIR; the kernel lists it from the cache the first one filled.
TEST_P(ListingCacheMountTest, ADirectoryEveryAppListsAlikeIsListedFromTheKernelsCache) {
  MakeTrip();
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day1", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day2", kCamera));
  ASSERT_EQ(Listing(kNotes, kTrip), "day1 day2");
  int64_t readdirs = Counter("requests_readdir");
  int64_t shared = Counter("shared_listing_opens");
  EXPECT_EQ(Listing(kNotes, kTrip), "day1 day2");
  EXPECT_EQ(Listing(kMusic, kTrip), "day1 day2");
  EXPECT_EQ(Listing(kRoot, kTrip), "day1 day2");
  EXPECT_EQ(Counter("requests_readdir") - readdirs, 0)
      << "the kernel's cached listing was not used";
  EXPECT_EQ(Counter("shared_listing_opens") - shared, 3);
}

// A directory holding a file is listed per app, except by the app that made it where its listing
// depends on no file's content (the notes app: its own file and a directory): that app's second
// listing is the kernel's, and so is its next one after another app listed the directory. The
// gallery's listing of a directory it made depends on the content of the notes app's file (an
// image would be shown to it), so it is listed per open too.
TEST_P(ListingCacheMountTest, ADirectoryWithAFileIsKeptOnlyForItsCreatorsContentFreeListing) {
  MakeTrip();
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day1", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/notes.pdf", PdfBytes(), kNotes));
  bool kept = GetParam().creator == kNotes;
  ASSERT_EQ(Listing(kNotes, kTrip), "day1 notes.pdf");
  ASSERT_EQ(Listing(kGallery, kTrip), "day1");
  int64_t keeps = Counter("kept_listing_keeps");
  auto readdirs_of = [this](uid_t uid, const std::string& want) {
    int64_t before = Counter("requests_readdir");
    EXPECT_EQ(Listing(uid, kTrip), want) << "uid " << uid;
    return Counter("requests_readdir") - before;
  };
  int64_t notes = readdirs_of(kNotes, "day1 notes.pdf");
  int64_t music = readdirs_of(kMusic, "day1");
  int64_t gallery = readdirs_of(kGallery, "day1");
  int64_t notes_again = readdirs_of(kNotes, "day1 notes.pdf");
  EXPECT_GE(music, 2) << "another app was served the creator's kept listing";
  EXPECT_GE(gallery, 2) << "a listing that depends on content was kept";
  if (kept) {
    EXPECT_EQ(notes, 0) << "the creator's listing was not kept";
    EXPECT_EQ(notes_again, 0) << "another app's listing emptied the creator's kept one";
    EXPECT_EQ(Counter("kept_listing_keeps") - keeps, 2);
  } else {
    EXPECT_GE(notes, 2);
    EXPECT_GE(notes_again, 2);
    EXPECT_EQ(Counter("kept_listing_keeps") - keeps, 0);
  }
}

// Apps whose listings of one directory differ each get their own, whatever the others listed
// before, while the directory turns from listed alike to listed per app and back: a file made
// and removed through the mount, one renamed in and a directory renamed out, a file whose content
// change makes it an image (so an app holding READ_MEDIA_IMAGES lists it from then on, with the
// directory unchanged), a directory and a file added behind the daemon's back.
TEST_P(ListingCacheMountTest, AppsWhoseListingsDifferAlwaysGetTheirOwn) {
  MakeTrip();
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day1", kNotes));
  ExpectListings("start", "day1", "day1", "day1", "day1");

  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/trip/plan.txt", "x")));
  ExpectListings("after a create", "day1 plan.txt", "day1 plan.txt", "day1", "day1");
  ASSERT_TRUE(Succeeds(As(kNotes).Unlink("Download/trip/plan.txt")));
  ExpectListings("after the unlink", "day1", "day1", "day1", "day1");

  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/list.txt", "x")));
  ASSERT_TRUE(Succeeds(As(kNotes).Rename("Download/list.txt", "Download/trip/list.txt")));
  ExpectListings("after a rename in", "day1 list.txt", "day1 list.txt", "day1", "day1");
  ASSERT_TRUE(Succeeds(As(kNotes).Rename("Download/trip/day1", "Download/day1")));
  ExpectListings("after a rename out", "list.txt", "list.txt", "", "");
  ASSERT_TRUE(Succeeds(As(kNotes).Unlink("Download/trip/list.txt")));
  ExpectListings("empty", "", "", "", "");

  // A PDF named .jpg is no image; once its owner writes a JPEG into it, it is one.
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/trip/shot.jpg", PdfBytes())));
  ExpectListings("a document", "shot.jpg", "shot.jpg", "", "");
  ASSERT_TRUE(
      Succeeds(As(kNotes).Write("Download/trip/shot.jpg", JpegBytes(), O_WRONLY | O_TRUNC)));
  ExpectListings("an image", "shot.jpg", "shot.jpg", "shot.jpg", "");
  ASSERT_TRUE(Succeeds(As(kNotes).Write("Download/trip/shot.jpg", PdfBytes(), O_WRONLY | O_TRUNC)));
  ExpectListings("a document again", "shot.jpg", "shot.jpg", "", "");
  // The same flips made behind the daemon's back, the directory unchanged: no kept listing may
  // outlive them.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/shot.jpg", JpegBytes(), kNotes));
  ExpectListings("an image in the lower tree", "shot.jpg", "shot.jpg", "shot.jpg", "");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/shot.jpg", PdfBytes(), kNotes));
  ExpectListings("a document in the lower tree", "shot.jpg", "shot.jpg", "", "");
  ASSERT_TRUE(Succeeds(As(kNotes).Unlink("Download/trip/shot.jpg")));
  ExpectListings("empty again", "", "", "", "");

  // Behind the daemon's back: the lower directory's version tells the daemon that what the
  // kernel holds is stale, also where the kernel caches the directory's attributes.
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day3", kCamera));
  ExpectListings("a directory added to the lower tree", "day3", "day3", "day3", "day3");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/lower.pdf", PdfBytes(), kNotes));
  ExpectListings("a file added to the lower tree", "day3 lower.pdf", "day3 lower.pdf", "day3",
                 "day3");
}

// A reload makes a new policy snapshot, and a listing is kept for one snapshot only: the app that
// made the directory gets a fresh listing first (a fill), which is then kept again. The directory
// is held open meanwhile, so the kernel keeps its inode (and the daemon its node) across the
// reload, as it does for an app whose working directory it is.
TEST_P(ListingCacheMountTest, AReloadEndsEveryKeptListing) {
  MakeTrip();
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/notes.pdf", PdfBytes(), kNotes));
  int held = open(absl::StrCat(storage_.mountpoint(), "/", kTrip).c_str(),
                  O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0) << strerror(errno);
  absl::Cleanup close_held = [held] { close(held); };
  ASSERT_EQ(Listing(kNotes, kTrip), "notes.pdf");
  ASSERT_EQ(Listing(kNotes, kTrip), "notes.pdf");
  int64_t fills = Counter("kept_listing_fills");
  int64_t keeps = Counter("kept_listing_keeps");
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", "--policy=policy/configs/android.textproto",
                    "--apps=policy/configs/apps.textproto"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(Listing(kNotes, kTrip), "notes.pdf");
  EXPECT_EQ(Listing(kNotes, kTrip), "notes.pdf");
  bool kept = GetParam().creator == kNotes;
  EXPECT_EQ(Counter("kept_listing_fills") - fills, kept ? 1 : 0);
  EXPECT_EQ(Counter("kept_listing_keeps") - keeps, kept ? 1 : 0);
}

// READDIRPLUS looks each entry up from the object its listing just opened and judged
// (listing_entries_from_listing counts them); each app then finds, through the names it listed
// (the kernel's dentries where it caches them), the type and size the lower tree has and the view
// it is owed: the social app (no ACCESS_MEDIA_LOCATION) reads the camera's photo redacted, the
// gallery reads it raw, and neither lists the notes app's document.
TEST_P(ListingCacheMountTest, AListingsEntriesGiveWhatALookupWould) {
  MakeTrip();
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip/day1", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/photo.jpg", photo, kCamera));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip/notes.pdf", PdfBytes(), kNotes));
  for (uid_t uid : {kSocial, kGallery}) {
    int64_t from_listing = Counter("listing_entries_from_listing");
    // One process: the listing, then a stat of each listed name and a read of the photo.
    AppResult r = As(uid).Run("list, stat, read", [] {
      AppResult out;
      DIR* d = opendir(kTrip);
      if (d == nullptr) {
        out.err = errno;
        return out;
      }
      while (dirent* ent = readdir(d)) {
        std::string name = ent->d_name;
        if (name != "." && name != "..") out.names.push_back(name);
      }
      closedir(d);
      std::sort(out.names.begin(), out.names.end());
      for (const std::string& name : out.names) {
        struct stat st;
        if (stat(absl::StrCat(kTrip, "/", name).c_str(), &st) != 0) {
          out.err = errno;
          return out;
        }
        absl::StrAppend(&out.data, " ", name, S_ISDIR(st.st_mode) ? ":dir" : ":file:",
                        S_ISDIR(st.st_mode) ? 0 : st.st_size);
      }
      int fd = open(absl::StrCat(kTrip, "/photo.jpg").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        out.err = errno;
        return out;
      }
      out.data += "\n";  // the photo's bytes follow
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) out.data.append(buf, static_cast<size_t>(n));
      if (n < 0) out.err = errno;
      close(fd);
      return out;
    });
    ASSERT_TRUE(Succeeds(r)) << "uid " << uid;
    EXPECT_EQ(absl::StrJoin(r.names, " "), "day1 photo.jpg") << "uid " << uid;
    size_t end = r.data.find('\n');
    ASSERT_NE(end, std::string::npos);
    std::string seen = r.data.substr(0, end);
    r.data.erase(0, end + 1);
    EXPECT_EQ(seen, absl::StrCat(" day1:dir0 photo.jpg:file:", photo.size())) << "uid " << uid;
    EXPECT_EQ(Counter("listing_entries_from_listing") - from_listing, 2) << "uid " << uid;
    if (uid == kGallery) {
      EXPECT_TRUE(SameBytes(r.data, photo)) << "the gallery was not given the raw view";
    } else {
      EXPECT_EQ(r.data.size(), photo.size());
      EXPECT_NE(r.data, photo) << "the social app was given the raw view of a GPS-tagged photo";
    }
  }
}

}  // namespace
}  // namespace scopedfs::tests
