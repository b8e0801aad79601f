// Tests for the SELinux adapter. Domain resolution runs against a fake ProcessContextSource (this
// machine has no SELinux at runtime); the kernel source is only checked for consistency with
// selinuxfs. FileLabeler runs real libselinux over policy/testdata/file_contexts.
#include "policy/selinux_context.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace scopedfs::policy {
namespace {

constexpr char kTestFileContexts[] = "policy/testdata/file_contexts";

// Answers from a fixed pid -> context table; any other pid is a process that has gone away.
class FakeContextSource : public ProcessContextSource {
 public:
  FakeContextSource(bool enabled, std::map<pid_t, std::string> contexts)
      : enabled_(enabled), contexts_(std::move(contexts)) {}

  bool Enabled() const override { return enabled_; }

  absl::StatusOr<std::string> PidContext(pid_t pid) const override {
    ++pid_context_calls_;
    auto it = contexts_.find(pid);
    if (it == contexts_.end()) return absl::NotFoundError("no such process");
    return it->second;
  }

  int pid_context_calls() const { return pid_context_calls_; }

 private:
  bool enabled_;
  std::map<pid_t, std::string> contexts_;
  mutable int pid_context_calls_ = 0;
};

// Writes `content` to a file in the test's temporary directory and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(DomainOfContextTest, TakesTypeBeforeCategories) {
  EXPECT_EQ(DomainOfContext("u:r:untrusted_app:s0:c61,c256"), "untrusted_app");
}

TEST(DomainOfContextTest, TakesTypeBeforePlainLevel) {
  EXPECT_EQ(DomainOfContext("u:r:platform_app:s0"), "platform_app");
}

TEST(DomainOfContextTest, AcceptsContextWithoutLevel) {
  EXPECT_EQ(DomainOfContext("u:r:platform_app"), "platform_app");
}

TEST(DomainOfContextTest, IgnoresColonsInMlsRange) {
  EXPECT_EQ(DomainOfContext("system_u:system_r:init_t:s0-s0:c0.c1023"), "init_t");
}

TEST(DomainOfContextTest, FewerThanThreeFieldsIsEmpty) {
  EXPECT_EQ(DomainOfContext(""), "");
  EXPECT_EQ(DomainOfContext("unconfined"), "");
  EXPECT_EQ(DomainOfContext("u:r"), "");
}

TEST(DomainOfContextTest, EmptyTypeIsEmpty) {
  EXPECT_EQ(DomainOfContext("u:r:"), "");
  EXPECT_EQ(DomainOfContext("u:r::s0"), "");
}

TEST(DomainOfContextTest, ReturnsViewIntoInput) {
  const std::string context = "u:r:untrusted_app:s0";
  absl::string_view domain = DomainOfContext(context);
  EXPECT_EQ(domain.data(), context.data() + 4);
}

TEST(CallerDomainResolverTest, EnabledTakesKernelDomainOverConfigured) {
  FakeContextSource source(true, {{1234, "u:r:untrusted_app:s0:c61,c256,c512,c768"}});
  CallerDomainResolver resolver(&source);
  absl::StatusOr<std::string> domain = resolver.Resolve(1234, "platform_app");
  ASSERT_TRUE(domain.ok()) << domain.status();
  EXPECT_EQ(*domain, "untrusted_app");
}

TEST(CallerDomainResolverTest, EnabledPidContextErrorFailsClosed) {
  FakeContextSource source(true, {{1234, "u:r:untrusted_app:s0"}});
  CallerDomainResolver resolver(&source);
  absl::StatusOr<std::string> domain = resolver.Resolve(999, "untrusted_app");
  EXPECT_EQ(domain.status().code(), absl::StatusCode::kNotFound);
}

TEST(CallerDomainResolverTest, EnabledContextWithoutTypeFailsClosed) {
  FakeContextSource source(true, {{1234, "unconfined"}});
  CallerDomainResolver resolver(&source);
  absl::StatusOr<std::string> domain = resolver.Resolve(1234, "untrusted_app");
  EXPECT_EQ(domain.status().code(), absl::StatusCode::kInternal);
}

TEST(CallerDomainResolverTest, DisabledReturnsConfiguredDomainWithoutAskingKernel) {
  FakeContextSource source(false, {{1234, "u:r:untrusted_app:s0"}});
  CallerDomainResolver resolver(&source);
  absl::StatusOr<std::string> domain = resolver.Resolve(1234, "platform_app");
  ASSERT_TRUE(domain.ok()) << domain.status();
  EXPECT_EQ(*domain, "platform_app");
  EXPECT_EQ(source.pid_context_calls(), 0);
}

TEST(CallerDomainResolverTest, DisabledWithEmptyConfiguredDomainIsEmpty) {
  FakeContextSource source(false, {});
  CallerDomainResolver resolver(&source);
  absl::StatusOr<std::string> domain = resolver.Resolve(1234, "");
  ASSERT_TRUE(domain.ok()) << domain.status();
  EXPECT_EQ(*domain, "");
}

TEST(KernelContextSourceTest, EnabledAgreesWithSelinuxfs) {
  std::unique_ptr<ProcessContextSource> source = NewKernelContextSource();
  EXPECT_EQ(source->Enabled(), access("/sys/fs/selinux/enforce", F_OK) == 0);
}

TEST(KernelContextSourceTest, MissingProcessIsNotFound) {
  // Above PID_MAX_LIMIT (2^22), so no process can have it.
  std::unique_ptr<ProcessContextSource> source = NewKernelContextSource();
  EXPECT_EQ(source->PidContext(std::numeric_limits<pid_t>::max()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(KernelContextSourceTest, NonPositivePidIsInvalidArgument) {
  // getpidcon(0) would describe the daemon itself.
  std::unique_ptr<ProcessContextSource> source = NewKernelContextSource();
  EXPECT_EQ(source->PidContext(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->PidContext(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KernelContextSourceTest, OwnContextHasDomainWhenEnabled) {
  std::unique_ptr<ProcessContextSource> source = NewKernelContextSource();
  if (!source->Enabled()) GTEST_SKIP() << "SELinux is not enabled on this machine";
  absl::StatusOr<std::string> context = source->PidContext(getpid());
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_NE(DomainOfContext(*context), "");
}

class FileLabelerTest : public testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FileLabeler>> labeler = FileLabeler::Open(kTestFileContexts);
    ASSERT_TRUE(labeler.ok()) << labeler.status();
    labeler_ = std::move(*labeler);
  }

  // The context, or the status code's name so a mismatch shows what came back instead.
  std::string LabelOf(const std::string& path, mode_t mode) {
    absl::StatusOr<std::string> context = labeler_->Lookup(path, mode);
    if (!context.ok()) return absl::StatusCodeToString(context.status().code());
    return *context;
  }

  std::unique_ptr<FileLabeler> labeler_;
};

TEST_F(FileLabelerTest, LabelsFileUnderMedia) {
  EXPECT_EQ(LabelOf("/data/media/0/Music/a.mp3", S_IFREG), "u:object_r:media_rw_data_file:s0");
}

TEST_F(FileLabelerTest, LaterRegexEntryWins) {
  EXPECT_EQ(LabelOf("/data/media/0/Android/data/com.foo/f", S_IFREG),
            "u:object_r:media_rw_app_data_file:s0");
}

TEST_F(FileLabelerTest, LaterEntryWinsOverMoreSpecificEarlierOne) {
  EXPECT_EQ(LabelOf("/data/media/0/Android/data/com.example.old/f", S_IFREG),
            "u:object_r:media_rw_app_data_file:s0");
}

TEST_F(FileLabelerTest, LiteralEntryBeatsLaterRegexEntry) {
  EXPECT_EQ(LabelOf("/data/media/0/Download/pinned", S_IFREG), "u:object_r:pinned_file:s0");
  EXPECT_EQ(LabelOf("/data/media/0/Download/other", S_IFREG), "u:object_r:media_download_file:s0");
}

TEST_F(FileLabelerTest, FileOnlyEntryLabelsRegularFiles) {
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/a.jpg", S_IFREG), "u:object_r:media_image_file:s0");
}

TEST_F(FileLabelerTest, FileOnlyEntrySkipsOtherTypes) {
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/a.jpg", S_IFLNK), "u:object_r:media_rw_data_file:s0");
}

TEST_F(FileLabelerTest, DirectoryOnlyEntryLabelsDirectories) {
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/Camera", S_IFDIR), "u:object_r:media_album_dir:s0");
}

TEST_F(FileLabelerTest, DirectoryOnlyEntrySkipsRegularFiles) {
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/Camera", S_IFREG), "u:object_r:media_rw_data_file:s0");
}

TEST_F(FileLabelerTest, ModeZeroMatchesEntriesOfEveryType) {
  // Both typed DCIM entries match a.jpg; with no type the later one, the -d entry, wins.
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/a.jpg", 0), "u:object_r:media_album_dir:s0");
}

TEST_F(FileLabelerTest, PermissionBitsDoNotAffectLookup) {
  EXPECT_EQ(LabelOf("/data/media/0/DCIM/a.jpg", S_IFREG | 0644), "u:object_r:media_image_file:s0");
}

TEST_F(FileLabelerTest, PathWithoutEntryIsNotFound) {
  EXPECT_EQ(labeler_->Lookup("/data/misc/x", S_IFREG).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FileLabelerTest, EntriesAreAnchoredAtBothEnds) {
  // "/data/media(/.*)?" would match inside these if libselinux did not anchor it.
  EXPECT_EQ(labeler_->Lookup("/data/media_rw/x", S_IFREG).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(labeler_->Lookup("/mnt/data/media/x", S_IFREG).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(FileLabelerTest, NoneEntryIsNotFound) {
  EXPECT_EQ(labeler_->Lookup("/data/media/0/.nolabel/x", S_IFREG).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(FileLabelerTest, RelativePathIsInvalidArgument) {
  EXPECT_EQ(labeler_->Lookup("data/media/0/x", S_IFREG).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FileLabelerTest, PathWithNulIsInvalidArgument) {
  constexpr char kPath[] = "/data/media/0/DCIM/a.jpg\0.png";
  EXPECT_EQ(labeler_->Lookup(std::string(kPath, sizeof(kPath) - 1), S_IFREG).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FileLabelerOpenTest, MissingFileIsNotFound) {
  EXPECT_EQ(FileLabeler::Open("policy/testdata/no_such_file_contexts").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(FileLabelerOpenTest, DirectoryIsInvalidArgument) {
  EXPECT_EQ(FileLabeler::Open(testing::TempDir()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FileLabelerOpenTest, UnknownFileTypeIsInvalidArgument) {
  std::string path =
      WriteTempFile("bad_type_file_contexts", "/data/media(/.*)?  -q  u:object_r:x:s0\n");
  EXPECT_EQ(FileLabeler::Open(path).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FileLabelerOpenTest, LineWithoutContextIsInvalidArgument) {
  std::string path = WriteTempFile("no_context_file_contexts",
                                   "/data/media(/.*)?  u:object_r:x:s0\n/data/media/0\n");
  EXPECT_EQ(FileLabeler::Open(path).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FileLabelerOpenTest, InvalidRegexFailsLookupRatherThanReadingAsNoLabel) {
  // Regexes compile on first use, so Open accepts the file; the failure must not be NotFound.
  std::string path = WriteTempFile("bad_regex_file_contexts",
                                   "/data(/.*)?  u:object_r:a:s0\n/data/[bad  u:object_r:b:s0\n");
  absl::StatusOr<std::unique_ptr<FileLabeler>> labeler = FileLabeler::Open(path);
  ASSERT_TRUE(labeler.ok()) << labeler.status();
  EXPECT_EQ((*labeler)->Lookup("/data/x", S_IFREG).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace scopedfs::policy
