// The fixture of engine_benchmark (see engine_benchmark_fixture.h).
#include "policy/engine_benchmark_fixture.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/config.h"
#include "policy/counted_allocations.h"

namespace scopedfs::policy::bench {
namespace {

constexpr absl::string_view kPolicyRelPath = "policy/configs/android.textproto";
const char* const kPolicyEnvVar = "SCOPEDFS_BENCH_POLICY";
constexpr absl::string_view kWorkspace = "scopedfs";

constexpr int kAppCount = 200;
constexpr uint32_t kFirstUid = 10000;

const char* const kReadExternal = "android.permission.READ_EXTERNAL_STORAGE";
const char* const kImages = "android.permission.READ_MEDIA_IMAGES";
const char* const kVideo = "android.permission.READ_MEDIA_VIDEO";
const char* const kAudio = "android.permission.READ_MEDIA_AUDIO";
const char* const kLocation = "android.permission.ACCESS_MEDIA_LOCATION";
const char* const kManage = "android.permission.MANAGE_EXTERNAL_STORAGE";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *out = buffer.str();
  return true;
}

// Facts from real magic bytes, so they are what the daemon would compute.
media::ContentFacts Sniffed(absl::string_view name, absl::string_view head) {
  return media::FactsFromContent(
      name, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
}

}  // namespace

// Flag, then env var, then $RUNFILES_DIR, then <argv0>.runfiles, then the CWD (bazel run puts the
// CWD at the runfiles root; bazel-bin/... run from the workspace root finds the source file).
absl::StatusOr<std::pair<std::string, std::string>> LoadPolicyText(const std::string& flag_path,
                                                                   const char* argv0) {
  std::vector<std::string> candidates;
  if (!flag_path.empty()) {
    candidates.push_back(flag_path);
  } else if (const char* env = std::getenv(kPolicyEnvVar); env != nullptr && *env != '\0') {
    candidates.push_back(env);
  } else {
    if (const char* runfiles = std::getenv("RUNFILES_DIR"); runfiles != nullptr && *runfiles) {
      candidates.push_back(absl::StrCat(runfiles, "/", kWorkspace, "/", kPolicyRelPath));
    }
    if (argv0 != nullptr && *argv0 != '\0') {
      candidates.push_back(absl::StrCat(argv0, ".runfiles/", kWorkspace, "/", kPolicyRelPath));
    }
    candidates.push_back(std::string(kPolicyRelPath));
  }
  for (const std::string& candidate : candidates) {
    std::string text;
    if (ReadFile(candidate, &text)) return std::make_pair(candidate, std::move(text));
  }
  std::string tried;
  for (const std::string& candidate : candidates) absl::StrAppend(&tried, "\n  ", candidate);
  return absl::NotFoundError(absl::StrCat("cannot read the policy; tried:", tried,
                                          "\n(pass --policy=PATH or set ", kPolicyEnvVar, ")"));
}

// 200 apps with uids 10000..10199 and varied permission mixes. Two shared-uid pairs: app 101
// shares uid 10100 with app 100, app 151 shares 10150 with app 150 (so 10101 and 10151 are
// unregistered).
std::string MakeAppsText(std::vector<std::string>* packages, std::vector<uint32_t>* uids) {
  // Permission mixes seen on real devices, cycled over the apps.
  const std::vector<std::vector<const char*>> kMixes = {
      {},                            // camera-like: no read permission
      {kImages},                     // photo picker-ish
      {kImages, kVideo},             // social
      {kImages, kVideo, kLocation},  // gallery
      {kAudio},                      // music player
      {kReadExternal},               // legacy app
      {kManage},                     // file manager
      {kImages, kVideo, kAudio},     // media hub
      {kReadExternal, kLocation},    // legacy gallery
      {},                            // notes-like
      {kVideo},                      // video player
      {kManage, kLocation},          // backup app
  };
  std::string text;
  for (int i = 0; i < kAppCount; ++i) {
    std::string package = absl::StrFormat("com.bench.app%03d", i);
    uint32_t uid = kFirstUid + static_cast<uint32_t>(i);
    std::string shared_user;
    if (i == 100 || i == 101) {
      uid = kFirstUid + 100;
      shared_user = "com.bench.shared100";
    } else if (i == 150 || i == 151) {
      uid = kFirstUid + 150;
      shared_user = "com.bench.shared150";
    }
    absl::StrAppend(&text, "app { package: \"", package, "\" uid: ", uid, " target_sdk: 34");
    if (!shared_user.empty()) absl::StrAppend(&text, " shared_user: \"", shared_user, "\"");
    for (const char* permission : kMixes[static_cast<size_t>(i) % kMixes.size()]) {
      absl::StrAppend(&text, "\n      permission: \"", permission, "\"");
    }
    absl::StrAppend(&text, " }\n");
    packages->push_back(std::move(package));
    uids->push_back(uid);
  }
  return text;
}

void MakeFacts(std::vector<media::ContentFacts>* facts) {
  facts->resize(kFactsKinds);
  (*facts)[kJpeg] = Sniffed("a.jpg", absl::string_view("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00", 11));
  (*facts)[kPng] = Sniffed("a.png", absl::string_view("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", 16));
  (*facts)[kMp4] = Sniffed("a.mp4", absl::string_view("\x00\x00\x00\x18"
                                                      "ftypisom\x00\x00\x02\x00isomiso2",
                                                      24));
  (*facts)[kMp3] = Sniffed("a.mp3", absl::string_view("ID3\x04\x00\x00\x00\x00\x00\x00", 10));
  (*facts)[kPdf] = Sniffed("a.pdf", "%PDF-1.7\n%\xE2\xE3\xCF\xD3\n");
  (*facts)[kTxt] = Sniffed("a.txt", "shopping list\nmilk\n");
  (*facts)[kNameImage] = media::FactsFromName("a.jpg");
  (*facts)[kNameVideo] = media::FactsFromName("a.mp4");
  (*facts)[kNameAudio] = media::FactsFromName("a.mp3");
  (*facts)[kNameOther] = media::FactsFromName("a.pdf");
}

// A deterministic, realistic mix: mostly registered apps doing lookups and reads of shared media,
// with creates, writes, private-area access, other users, system uids and unregistered uids.
void MakeMix(Fixture* f) {
  std::mt19937 rng(20240611);
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto percent = [&rng]() { return std::uniform_int_distribution<int>(0, 99)(rng); };

  f->paths.reserve(kMixSize);  // views into it must stay valid
  f->mix.reserve(kMixSize);
  for (size_t n = 0; n < kMixSize; ++n) {
    Request r;
    r.storage_user_id = 0;

    // Who asks.
    size_t app = pick(kAppCount);
    int who = percent();
    if (who < 80) {
      r.uid = f->uids[app];
    } else if (who < 87) {
      const uint32_t kUnregistered[] = {10101, 10151, 10200, 10345, 10999, 19999};
      r.uid = kUnregistered[pick(6)];
    } else if (who < 92) {
      r.uid = 10 * kPerUserRange + f->uids[app];  // same app, user 10
    } else if (who < 97) {
      const uint32_t kPrivileged[] = {0, 1000, 1013, 1023, 2000};
      r.uid = kPrivileged[pick(5)];
    } else {
      r.uid = 1047;  // a system service the policy does not exempt (cameraserver)
    }

    // What for.
    int o = percent();
    Op op = o < 35   ? OP_LOOKUP
            : o < 65 ? OP_READ
            : o < 75 ? OP_WRITE
            : o < 85 ? OP_CREATE
            : o < 90 ? OP_MKDIR
            : o < 94 ? OP_DELETE
            : o < 97 ? OP_RENAME
            : o < 99 ? OP_SETATTR
                     : OP_RMDIR;
    r.op = op;
    bool creating = op == OP_CREATE || op == OP_MKDIR;
    bool dir_op = op == OP_MKDIR || op == OP_RMDIR;

    // Where, and what the file holds.
    const std::string& own = f->packages[app];
    const std::string& other = f->packages[pick(kAppCount)];
    std::string path;
    size_t facts = kTxt;
    bool directory = dir_op;
    bool leaf_is_file = true;
    switch (pick(16)) {
      case 0:
        path = "";
        directory = true;
        leaf_is_file = false;
        break;
      case 1: {
        const char* const kTop[] = {"DCIM",  "Pictures", "Download", "Documents",
                                    "Music", "Movies",   "Android",  "MyStuff"};
        path = kTop[pick(8)];
        directory = op != OP_CREATE;
        leaf_is_file = false;
        facts = kNameOther;
        break;
      }
      case 2:
      case 3:
        path = absl::StrFormat("DCIM/Camera/IMG_2024%04d_%06d.jpg", n % 1231, n);
        facts = kJpeg;
        break;
      case 4:
        path = absl::StrFormat("Pictures/Screenshots/Screenshot_%06d.png", n);
        facts = kPng;
        break;
      case 5:
        path = absl::StrFormat("DCIM/Camera/VID_%06d.mp4", n);
        facts = kMp4;
        break;
      case 6:
        path = absl::StrFormat("Movies/Trips/%04d/clip_%06d.mp4", n % 37, n);
        facts = kMp4;
        break;
      case 7:
        path = absl::StrFormat("Music/Artist %d/Album %d/%02d Track %d.mp3", n % 53, n % 11, n % 20,
                               n);
        facts = kMp3;
        break;
      case 8:
        path = absl::StrFormat("Download/invoice-%06d.pdf", n);
        facts = kPdf;
        break;
      case 9:
        path = absl::StrFormat("Documents/Reports/%d/report_%06d.pdf", 2000 + n % 25, n);
        facts = kPdf;
        break;
      case 10:
        path = absl::StrFormat("Android/data/%s/files/cache/blob_%06d.bin", own, n);
        facts = kTxt;
        break;
      case 11:
        path = absl::StrFormat("Android/data/%s/files/Pictures/thumb_%06d.jpg", other, n);
        facts = kJpeg;
        break;
      case 12:
        path = absl::StrFormat("Android/obb/%s/main.%d.%s.obb", pick(2) ? own : other, n, own);
        facts = kTxt;
        break;
      case 13:
        path = absl::StrFormat("Android/media/%s/Sent/IMG_%06d.jpg", pick(2) ? own : other, n);
        facts = kJpeg;
        break;
      case 14:  // deep path: 15 segments
        path = absl::StrFormat(
            "Documents/projects/p%d/src/main/java/com/example/app/ui/widgets/list/item/v%d/"
            "notes_%06d.pdf",
            n % 7, n % 3, n);
        facts = kPdf;
        break;
      case 15:
        path = absl::StrFormat("Download/Telegram/%06d.mp3", n);
        facts = kMp3;
        break;
    }
    if (dir_op && leaf_is_file) {
      // mkdir/rmdir name a directory: a new folder beside where the file would be.
      path = absl::StrFormat("%s/New folder %d", path.substr(0, path.rfind('/')), n);
    }
    r.node_type = directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
    if (directory) {
      r.content = nullptr;
    } else if (creating) {
      // Nothing written yet: the name decides the class.
      size_t by_name[kFactsKinds] = {kNameImage, kNameImage, kNameVideo, kNameAudio, kNameOther,
                                     kNameOther, kNameImage, kNameVideo, kNameAudio, kNameOther};
      r.content = &f->facts[by_name[facts]];
    } else if (percent() < 10) {
      r.content = nullptr;  // content not read yet
    } else {
      r.content = &f->facts[facts];
    }

    // Who created it.
    int own_roll = percent();
    if (own_roll < 30) {
      r.owner_uid = r.uid;
    } else if (own_roll < 70) {
      r.owner_uid = f->uids[pick(kAppCount)];
    }

    f->paths.push_back(std::move(path));
    r.path = f->paths.back();
    f->mix.push_back(r);
  }
}

size_t CountDistinct(const std::vector<Request>& mix) {
  std::set<std::tuple<uint32_t, int, std::string, int, const media::ContentFacts*, int64_t>> seen;
  for (const Request& r : mix) {
    seen.emplace(r.uid, r.op, std::string(r.path), r.node_type, r.content,
                 r.owner_uid.has_value() ? int64_t{*r.owner_uid} : int64_t{-1});
  }
  return seen.size();
}

void PrintMixSummary(const Fixture& f, const std::string& policy_path) {
  std::map<std::string, size_t> by_rule;
  std::map<std::string, size_t> by_outcome;
  size_t allocating = 0;
  for (const Request& r : f.mix) {
    uint64_t before = ThreadAllocations();
    Decision d = f.engine->Decide(r);
    if (ThreadAllocations() != before && allocating++ < 5) {
      std::fprintf(stderr, "allocates: uid %u op %d path \"%s\" -> %s\n", r.uid, r.op,
                   std::string(r.path).c_str(), std::string(d.rule_name).c_str());
    }
    ++by_rule[std::string(d.rule_name)];
    ++by_outcome[std::string(OutcomeName(d.outcome))];
  }
  std::fprintf(stderr, "policy: %s (%zu rules), apps: %zu app ids\n", policy_path.c_str(),
               f.engine->rules().size(), f.engine->apps().app_count());
  std::fprintf(stderr, "mix: %zu requests, %zu distinct, %zu distinct deciding rules\n",
               f.mix.size(), CountDistinct(f.mix), by_rule.size());
  std::fprintf(stderr, "mix requests whose Decide allocated: %zu\n", allocating);
  // Proves the counter is live: a refused path builds an error Status, which allocates.
  Request invalid = f.mix[0];
  invalid.path = "DCIM/../Android/data";
  uint64_t before = ThreadAllocations();
  Decision d = f.engine->Decide(invalid);
  std::fprintf(stderr, "counter self-check: invalid-path Decide (%s) made %llu allocations\n",
               std::string(d.rule_name).c_str(),
               static_cast<unsigned long long>(ThreadAllocations() - before));
  std::string outcomes;
  for (const auto& [name, count] : by_outcome) absl::StrAppend(&outcomes, " ", name, "=", count);
  std::fprintf(stderr, "outcomes:%s\n", outcomes.c_str());
  for (const auto& [name, count] : by_rule) {
    std::fprintf(stderr, "  %5zu  %s\n", count, name.c_str());
  }
}

}  // namespace scopedfs::policy::bench
