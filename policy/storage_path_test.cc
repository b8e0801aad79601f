// Tests for storage path validation (hostile paths are refused), area-pattern checks, layout
// compilation, and classification of paths into root / top-level directory / per-package area.
#include "policy/storage_path.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {
namespace {

constexpr int kAppData = 0;
constexpr int kAppObb = 1;

// The Android layout: standard top-level directories plus the two per-package areas.
Layout AndroidLayout() {
  Layout layout;
  for (const char* dir : {"DCIM", "Download", "Pictures", "Android"}) {
    layout.add_top_level_dir(dir);
  }
  Area* data = layout.add_area();
  data->set_name("app-data");
  data->set_pattern("Android/data/{package}");
  Area* obb = layout.add_area();
  obb->set_name("app-obb");
  obb->set_pattern("Android/obb/{package}");
  return layout;
}

// A layout with no top-level directories and one area of the given pattern.
Layout LayoutWithArea(const std::string& pattern) {
  Layout layout;
  Area* area = layout.add_area();
  area->set_name("area");
  area->set_pattern(pattern);
  return layout;
}

// Compiles the Android layout, failing the test if it does not compile.
StorageLayout CompiledAndroidLayout() {
  absl::StatusOr<StorageLayout> layout = StorageLayout::Compile(AndroidLayout());
  EXPECT_TRUE(layout.ok()) << layout.status();
  return layout.ok() ? *std::move(layout) : StorageLayout();
}

// Classifies `path` with the Android layout, failing the test if the path is refused. The
// returned views point into `path`, which the caller keeps alive.
PathInfo ClassifyOk(absl::string_view path) {
  StorageLayout layout = CompiledAndroidLayout();
  absl::StatusOr<PathInfo> info = layout.Classify(path);
  EXPECT_TRUE(info.ok()) << "\"" << path << "\": " << info.status();
  return info.ok() ? *info : PathInfo();
}

// --- ValidateStoragePath: accepted paths ---

TEST(ValidateStoragePathTest, AcceptsEmptyPathAsRoot) { EXPECT_TRUE(ValidateStoragePath("").ok()); }

TEST(ValidateStoragePathTest, AcceptsSingleSegment) {
  EXPECT_TRUE(ValidateStoragePath("DCIM").ok());
}

TEST(ValidateStoragePathTest, AcceptsNestedPath) {
  EXPECT_TRUE(ValidateStoragePath("DCIM/a.jpg").ok());
}

TEST(ValidateStoragePathTest, AcceptsSpacesInNames) {
  EXPECT_TRUE(ValidateStoragePath("My Photos/ a b .jpg").ok());
}

TEST(ValidateStoragePathTest, AcceptsNewlinesInNames) {
  EXPECT_TRUE(ValidateStoragePath("Download/line1\nline2").ok());
}

TEST(ValidateStoragePathTest, AcceptsInvalidUtf8Bytes) {
  EXPECT_TRUE(ValidateStoragePath("Download/\xff\xfe\xc3(").ok());
}

TEST(ValidateStoragePathTest, AcceptsSegmentOfExactlyNameMax) {
  std::string path = "Download/" + std::string(kMaxNameBytes, 'a');
  EXPECT_TRUE(ValidateStoragePath(path).ok());
}

TEST(ValidateStoragePathTest, AcceptsNamesThatOnlyStartWithDots) {
  EXPECT_TRUE(ValidateStoragePath(".nomedia/...").ok());
  EXPECT_TRUE(ValidateStoragePath("a/..b").ok());
}

TEST(ValidateStoragePathTest, AcceptsPathOfExactlyPathMax) {
  // Segments of 99 bytes plus a '/' each, padded to exactly kMaxPathBytes.
  std::string path;
  while (path.size() + 100 < kMaxPathBytes) path += std::string(99, 'x') + "/";
  path += std::string(kMaxPathBytes - path.size(), 'y');
  ASSERT_EQ(path.size(), kMaxPathBytes);
  EXPECT_TRUE(ValidateStoragePath(path).ok());
}

// --- ValidateStoragePath: refused paths ---

TEST(ValidateStoragePathTest, RefusesDotDotAlone) {
  EXPECT_EQ(ValidateStoragePath("..").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesTrailingDotDot) {
  EXPECT_EQ(ValidateStoragePath("a/..").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesLeadingDotDot) {
  EXPECT_EQ(ValidateStoragePath("../a").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesInnerDotDot) {
  EXPECT_EQ(ValidateStoragePath("a/../b").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesDotSegment) {
  EXPECT_EQ(ValidateStoragePath(".").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateStoragePath("a/./b").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesLeadingSlash) {
  EXPECT_EQ(ValidateStoragePath("/DCIM").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateStoragePath("/").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesTrailingSlash) {
  EXPECT_EQ(ValidateStoragePath("DCIM/").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesEmptySegment) {
  EXPECT_EQ(ValidateStoragePath("a//b").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesNulByte) {
  std::string path("DCIM/a\0b.jpg", 12);
  ASSERT_EQ(path.size(), 12u);
  EXPECT_EQ(ValidateStoragePath(absl::string_view(path.data(), path.size())).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesTrailingNulByte) {
  std::string path("DCIM", 4);
  path.push_back('\0');
  EXPECT_EQ(ValidateStoragePath(absl::string_view(path.data(), path.size())).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesSegmentLongerThanNameMax) {
  std::string path = "Download/" + std::string(kMaxNameBytes + 1, 'a');
  EXPECT_EQ(ValidateStoragePath(path).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateStoragePathTest, RefusesPathLongerThanPathMax) {
  // Every segment is short, so only the total length is wrong.
  std::string path;
  while (path.size() <= kMaxPathBytes) path += "abcdefgh/";
  path += "z";
  ASSERT_GT(path.size(), kMaxPathBytes);
  EXPECT_EQ(ValidateStoragePath(path).code(), absl::StatusCode::kInvalidArgument);
}

// --- ValidateAreaPattern ---

TEST(ValidateAreaPatternTest, AcceptsPackageAsLastSegment) {
  EXPECT_TRUE(StorageLayout::ValidateAreaPattern("Android/data/{package}").ok());
}

TEST(ValidateAreaPatternTest, AcceptsOnePrefixSegment) {
  EXPECT_TRUE(StorageLayout::ValidateAreaPattern("Apps/{package}").ok());
}

TEST(ValidateAreaPatternTest, RefusesEmptyPattern) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesPatternWithoutPlaceholder) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android/data").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesPlaceholderInTheMiddle) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android/{package}/files").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesPlaceholderTwice) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("{package}/{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesPlaceholderInsideLastSegment) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android/data/pkg-{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesBracesInPrefix) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android/{user}/{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateAreaPatternTest, RefusesInvalidPath) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("/Android/data/{package}").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android/../{package}").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("Android//{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

// A bare "{package}" would put every top-level directory in an area, contradicting the rule
// checker's invariant that area roots sit at least two segments deep.
TEST(ValidateAreaPatternTest, RefusesPlaceholderAtTopLevel) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

// Classify tracks only the first few segments of a path, so a deeper pattern could never match;
// it must be refused rather than silently ignored.
TEST(ValidateAreaPatternTest, RefusesPatternTooDeepToClassify) {
  EXPECT_EQ(StorageLayout::ValidateAreaPattern("a/b/c/d/e/f/g/h/{package}").code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Compile ---

TEST(StorageLayoutCompileTest, CompilesAndroidLayout) {
  absl::StatusOr<StorageLayout> layout = StorageLayout::Compile(AndroidLayout());
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->area_count(), 2u);
  EXPECT_EQ(layout->area_name(kAppData), "app-data");
  EXPECT_EQ(layout->area_name(kAppObb), "app-obb");
}

TEST(StorageLayoutCompileTest, CompilesEmptyLayout) {
  absl::StatusOr<StorageLayout> layout = StorageLayout::Compile(Layout());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->area_count(), 0u);
}

TEST(StorageLayoutCompileTest, RefusesPatternNotEndingInPackage) {
  EXPECT_EQ(StorageLayout::Compile(LayoutWithArea("Android/data")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StorageLayoutCompileTest, RefusesPackageInTheMiddle) {
  EXPECT_EQ(StorageLayout::Compile(LayoutWithArea("Android/{package}/files")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StorageLayoutCompileTest, RefusesEmptyPattern) {
  EXPECT_EQ(StorageLayout::Compile(LayoutWithArea("")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StorageLayoutCompileTest, RefusesPatternTooDeepToClassify) {
  EXPECT_EQ(StorageLayout::Compile(LayoutWithArea("a/b/c/d/e/f/g/h/{package}")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StorageLayoutCompileTest, RefusesTopLevelDirWithSlash) {
  Layout layout = AndroidLayout();
  layout.add_top_level_dir("Android/data");
  EXPECT_EQ(StorageLayout::Compile(layout).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StorageLayoutCompileTest, RefusesEmptyOrDotTopLevelDir) {
  for (const char* dir : {"", ".", ".."}) {
    Layout layout;
    layout.add_top_level_dir(dir);
    EXPECT_EQ(StorageLayout::Compile(layout).status().code(), absl::StatusCode::kInvalidArgument)
        << "\"" << dir << "\"";
  }
}

// --- Classify ---

TEST(ClassifyTest, RootHasRootDepthAndNoTopDir) {
  PathInfo info = ClassifyOk("");
  EXPECT_EQ(info.depth, DEPTH_ROOT);
  EXPECT_TRUE(info.top_dir.empty());
  EXPECT_TRUE(info.name.empty());
  EXPECT_FALSE(info.standard_top_dir);
  EXPECT_EQ(info.area, -1);
}

TEST(ClassifyTest, StandardTopLevelDirectory) {
  PathInfo info = ClassifyOk("DCIM");
  EXPECT_EQ(info.depth, DEPTH_TOP);
  EXPECT_EQ(info.top_dir, "DCIM");
  EXPECT_TRUE(info.standard_top_dir);
  EXPECT_EQ(info.name, "DCIM");
  EXPECT_EQ(info.area, -1);
}

TEST(ClassifyTest, StandardTopDirIsCaseInsensitive) {
  PathInfo info = ClassifyOk("dcim/x");
  EXPECT_EQ(info.depth, DEPTH_NESTED);
  EXPECT_EQ(info.top_dir, "dcim");
  EXPECT_TRUE(info.standard_top_dir);
}

TEST(ClassifyTest, CustomTopDirIsNotStandard) {
  PathInfo info = ClassifyOk("Custom/x");
  EXPECT_EQ(info.depth, DEPTH_NESTED);
  EXPECT_EQ(info.top_dir, "Custom");
  EXPECT_FALSE(info.standard_top_dir);
  EXPECT_EQ(info.area, -1);
}

TEST(ClassifyTest, TopLevelFileIsNotStandard) {
  PathInfo info = ClassifyOk("notes.txt");
  EXPECT_EQ(info.depth, DEPTH_TOP);
  EXPECT_FALSE(info.standard_top_dir);
  EXPECT_EQ(info.name, "notes.txt");
}

TEST(ClassifyTest, PrefixOfStandardTopDirIsNotStandard) {
  EXPECT_FALSE(ClassifyOk("DCIMx").standard_top_dir);
  EXPECT_FALSE(ClassifyOk("DCI").standard_top_dir);
}

TEST(ClassifyTest, PathKeepsTheWholeInput) {
  std::string path = "DCIM/Camera/a.jpg";
  PathInfo info = ClassifyOk(path);
  EXPECT_EQ(info.path, "DCIM/Camera/a.jpg");
  EXPECT_EQ(info.path.data(), path.data());
}

TEST(ClassifyTest, AreaRoot) {
  PathInfo info = ClassifyOk("Android/data/com.foo");
  EXPECT_EQ(info.area, kAppData);
  EXPECT_EQ(info.area_package, "com.foo");
  EXPECT_EQ(info.name, "com.foo");
  EXPECT_EQ(info.top_dir, "Android");
  EXPECT_TRUE(info.standard_top_dir);
}

TEST(ClassifyTest, InsideArea) {
  PathInfo info = ClassifyOk("Android/data/com.foo/files/a.txt");
  EXPECT_EQ(info.area, kAppData);
  EXPECT_EQ(info.area_package, "com.foo");
  EXPECT_EQ(info.name, "a.txt");
  EXPECT_EQ(info.depth, DEPTH_NESTED);
}

TEST(ClassifyTest, AreaParentIsInNoArea) {
  PathInfo info = ClassifyOk("Android/data");
  EXPECT_EQ(info.area, -1);
  EXPECT_TRUE(info.area_package.empty());
  EXPECT_EQ(info.name, "data");
}

TEST(ClassifyTest, AreaPrefixIsCaseInsensitive) {
  PathInfo info = ClassifyOk("ANDROID/DATA/com.foo");
  EXPECT_EQ(info.area, kAppData);
  EXPECT_EQ(info.area_package, "com.foo");
}

TEST(ClassifyTest, PackageSegmentKeepsItsCase) {
  EXPECT_EQ(ClassifyOk("Android/data/Com.Foo/x").area_package, "Com.Foo");
}

TEST(ClassifyTest, SecondArea) {
  PathInfo info = ClassifyOk("Android/obb/com.bar/x");
  EXPECT_EQ(info.area, kAppObb);
  EXPECT_EQ(info.area_package, "com.bar");
  EXPECT_EQ(info.name, "x");
}

TEST(ClassifyTest, SiblingOfAreaPrefixIsInNoArea) {
  EXPECT_EQ(ClassifyOk("Android/media/com.foo/x").area, -1);
  EXPECT_EQ(ClassifyOk("Download/data/com.foo").area, -1);
}

TEST(ClassifyTest, DeepPathInsideArea) {
  PathInfo info = ClassifyOk("Android/obb/com.bar/1/2/3/4/5/6/7/8/9/10/last");
  EXPECT_EQ(info.area, kAppObb);
  EXPECT_EQ(info.area_package, "com.bar");
  EXPECT_EQ(info.name, "last");
}

TEST(ClassifyTest, DeepestAcceptedPatternMatches) {
  const std::string pattern = "a/b/c/d/e/f/g/{package}";
  ASSERT_TRUE(StorageLayout::ValidateAreaPattern(pattern).ok());
  absl::StatusOr<StorageLayout> layout = StorageLayout::Compile(LayoutWithArea(pattern));
  ASSERT_TRUE(layout.ok()) << layout.status();
  absl::StatusOr<PathInfo> info = layout->Classify("a/b/c/d/e/f/g/com.foo/x");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->area, 0);
  EXPECT_EQ(info->area_package, "com.foo");
}

TEST(ClassifyTest, RefusesInvalidPath) {
  StorageLayout layout = CompiledAndroidLayout();
  EXPECT_EQ(layout.Classify("Android/data/../../etc").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(layout.Classify("/DCIM").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(IsStandardTopDirTest, MatchesIgnoringCase) {
  StorageLayout layout = CompiledAndroidLayout();
  EXPECT_TRUE(layout.IsStandardTopDir("download"));
  EXPECT_TRUE(layout.IsStandardTopDir("Download"));
  EXPECT_FALSE(layout.IsStandardTopDir("Downloads"));
  EXPECT_FALSE(layout.IsStandardTopDir(""));
}

// The standard top-level directories and area prefixes are matched as a casefolded ext4 lower
// matches names (folded_name.h), not by ASCII case alone.
TEST(StorageLayoutClassifyTest, FoldsNamesAsACasefoldedLowerDoes) {
  EXPECT_TRUE(ClassifyOk("Picture\u017F").standard_top_dir);
  EXPECT_EQ(ClassifyOk("Picture\u017F/a.jpg").top_dir, "Picture\u017F");
  EXPECT_TRUE(ClassifyOk("Picture\u017F/a.jpg").standard_top_dir);
  EXPECT_FALSE(ClassifyOk("Pictur\u017F").standard_top_dir);
  EXPECT_FALSE(ClassifyOk("Pi\u0441tures").standard_top_dir);  // a Cyrillic es: no fold
}

TEST(StorageLayoutCompileTest, RefusesNonAsciiLayoutNames) {
  Layout layout;
  layout.add_top_level_dir("Mu\u017Fic");
  EXPECT_FALSE(StorageLayout::Compile(layout).ok());
  EXPECT_FALSE(StorageLayout::Compile(LayoutWithArea("Andr\u00F6id/data/{package}")).ok());
}

// --- JudgeMove: the layout's move rules ---

// The device's layout with Android/media, whose move rules are checked below.
StorageLayout MoveLayout() {
  Layout layout = AndroidLayout();
  layout.mutable_area(kAppData)->set_separate_mount(true);
  layout.mutable_area(kAppObb)->set_separate_mount(true);
  Area* media = layout.add_area();
  media->set_name("app-media");
  media->set_pattern("Android/media/{package}");
  absl::StatusOr<StorageLayout> compiled = StorageLayout::Compile(layout);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *std::move(compiled) : StorageLayout();
}

LayoutMove Move(absl::string_view from, absl::string_view to) {
  StorageLayout layout = MoveLayout();
  absl::StatusOr<PathInfo> f = layout.Classify(from);
  absl::StatusOr<PathInfo> t = layout.Classify(to);
  EXPECT_TRUE(f.ok() && t.ok()) << from << " -> " << to;
  if (!f.ok() || !t.ok()) return LayoutMove::kRefused;
  return layout.JudgeMove(*f, *t);
}

TEST(JudgeMoveTest, OrdinaryMovesAreLeftToTheRules) {
  EXPECT_EQ(Move("Download/a.txt", "Documents/a.txt"), LayoutMove::kAllowed);
  EXPECT_EQ(Move("DCIM/Camera", "DCIM/Old"), LayoutMove::kAllowed);
  EXPECT_EQ(Move("Download/a.jpg", "Android/media/com.x/a.jpg"), LayoutMove::kAllowed);
  EXPECT_EQ(Move("Android/media/com.x/a.jpg", "Download/a.jpg"), LayoutMove::kAllowed);
  EXPECT_EQ(Move("Android/data/com.x/a", "Android/data/com.x/sub/b"), LayoutMove::kAllowed);
}

TEST(JudgeMoveTest, DefaultTopLevelDirectoriesStay) {
  EXPECT_EQ(Move("DCIM", "Download/DCIM"), LayoutMove::kRefused);
  EXPECT_EQ(Move("android", "Download/x"), LayoutMove::kRefused);
}

// A casefolded lower takes "Pictureſ" (long s) for Pictures: the layout's rules apply to it.
TEST(JudgeMoveTest, DefaultTopLevelDirectoriesStayUnderEveryFoldedSpelling) {
  EXPECT_EQ(Move("Picture\u017F", "Download/x"), LayoutMove::kRefused);
  EXPECT_EQ(Move("PICTURE\u017F", "Download/x"), LayoutMove::kRefused);
  // "Pictur\u017F" folds to "picturs": no default directory, left to the rules.
  EXPECT_EQ(Move("Pictur\u017F", "Download/x"), LayoutMove::kAllowed);
}

TEST(JudgeMoveTest, NothingMovesIntoTheRoot) {
  EXPECT_EQ(Move("Download/a.txt", "a.txt"), LayoutMove::kRefused);
  EXPECT_EQ(Move("Download/d", "NewTop"), LayoutMove::kRefused);
}

TEST(JudgeMoveTest, AreaHoldersAndAreaRootsNeverMove) {
  for (const char* held : {"Android/data", "Android/media", "Android/OBB", "Android/data/com.x",
                           "Android/media/com.x"}) {
    EXPECT_EQ(Move(held, "Download/moved"), LayoutMove::kRefused) << held;
    EXPECT_EQ(Move("Download/d", held), LayoutMove::kRefused) << held;
  }
}

TEST(JudgeMoveTest, UnderAndroidOnlyAnAreasInsideTakesEntries) {
  EXPECT_EQ(Move("Download/d", "Android/d"), LayoutMove::kRefused);
  EXPECT_EQ(Move("Download/d", "Android/other/d"), LayoutMove::kRefused);
}

TEST(JudgeMoveTest, SeparateMountAreasAreLeftOnlyWithinTheInstance) {
  EXPECT_EQ(Move("Download/a", "Android/data/com.x/a"), LayoutMove::kCrossesMount);
  EXPECT_EQ(Move("Android/data/com.x/a", "Download/a"), LayoutMove::kCrossesMount);
  EXPECT_EQ(Move("Android/data/com.x/a", "Android/data/com.y/a"), LayoutMove::kCrossesMount);
  EXPECT_EQ(Move("Android/obb/com.x/a", "Android/media/com.x/a"), LayoutMove::kCrossesMount);
}

TEST(JudgeMoveTest, ALayoutWithoutDirectoriesOrAreasHasNoMoveRules) {
  StorageLayout layout;
  absl::StatusOr<PathInfo> f = layout.Classify("a");
  absl::StatusOr<PathInfo> t = layout.Classify("b");
  ASSERT_TRUE(f.ok() && t.ok());
  EXPECT_FALSE(layout.has_move_rules());
  EXPECT_EQ(layout.JudgeMove(*f, *t), LayoutMove::kAllowed);
}

}  // namespace
}  // namespace scopedfs::policy
