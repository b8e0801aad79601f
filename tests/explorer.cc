// The exploring tester (explorer.h): the model of the lower tree, the oracle (the policy engine
// linked in), the generator of steps, the run of one sequence with its checks, and shrinking.
// Predictions are deliberately partial: a step whose outcome the oracle cannot tell for sure
// (a rename across areas, a write through a redacted view) may succeed or fail, and the model
// follows what happened; the lower-tree comparison after it proves that what happened is exactly
// what the call answered. Changes made behind the daemon's back make their names "loose" (the
// kernel may cache names and attributes for a while) until a reload or restart drops every cache.
#include "tests/explorer.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "policy/config.h"
#include "policy/engine.h"
#include "tests/app_worker.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::explore {
namespace {

using policy::Decision;
using policy::Engine;

constexpr char kOwnerXattr[] = "trusted.scopedfs.owner";
constexpr uid_t kApps[] = {kGallery, kSocial, kFiles, kCamera, kNotes, kRoot};
constexpr const char* kArena[] = {"Download", "Documents", "DCIM", "Pictures"};
constexpr int kSlots = 3;
// The grant a reload toggles: the camera app (no permissions) gains and loses READ_MEDIA_IMAGES.
constexpr char kCameraEntry[] = "app { package: \"com.example.camera\" uid: 10065 target_sdk: 34 }";
constexpr char kCameraGranted[] =
    "app { package: \"com.example.camera\" uid: 10065 target_sdk: 34\n"
    "      permission: \"android.permission.READ_MEDIA_IMAGES\" }";

// --- Steps as text ----------------------------------------------------------------------------

const std::vector<std::pair<StepKind, const char*>>& KindNames() {
  static const auto* names =
      new std::vector<std::pair<StepKind, const char*>>{{StepKind::kCreate, "create"},
                                                        {StepKind::kModify, "modify"},
                                                        {StepKind::kUnlink, "unlink"},
                                                        {StepKind::kMkdir, "mkdir"},
                                                        {StepKind::kRmdir, "rmdir"},
                                                        {StepKind::kRename, "rename"},
                                                        {StepKind::kHold, "hold"},
                                                        {StepKind::kClose, "close"},
                                                        {StepKind::kStat, "stat"},
                                                        {StepKind::kLowerCreate, "lower-create"},
                                                        {StepKind::kLowerUnlink, "lower-unlink"},
                                                        {StepKind::kLowerRename, "lower-rename"},
                                                        {StepKind::kLowerAppend, "lower-append"},
                                                        {StepKind::kReload, "reload"},
                                                        {StepKind::kRestart, "restart"},
                                                        {StepKind::kLowerCorrupt, "lower-corrupt"}};
  return *names;
}

// --- Content ----------------------------------------------------------------------------------

bool IsJpegName(absl::string_view path) { return absl::EndsWithIgnoreCase(path, ".jpg"); }

// Plain text: letters and newlines, never a media magic.
std::string TextBytes(size_t size, uint32_t seed) {
  std::string s(size, '\n');
  for (size_t i = 0; i < size; ++i) {
    if ((i + seed) % 41 != 40) s[i] = static_cast<char>('a' + (i * 7 + seed) % 26);
  }
  return s;
}

std::string ContentFor(absl::string_view path, size_t size, uint32_t seed) {
  if (IsJpegName(path)) {
    std::string jpeg = JpegBytes(std::max<size_t>(size, 128));
    // Vary the tail so files of one size differ; the JFIF header stays.
    std::string tail = TextBytes(jpeg.size() - 64, seed);
    return jpeg.replace(64, tail.size(), tail);
  }
  return TextBytes(size, seed);
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}
std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string Join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : absl::StrCat(dir, "/", name);
}
bool IsUnder(const std::string& path, const std::string& dir) {
  return path == dir || absl::StartsWith(path, dir + "/");
}

// --- The model --------------------------------------------------------------------------------

struct Entry {
  static Entry Dir(std::optional<uid_t> owner = std::nullopt) {
    Entry e;
    e.dir = true;
    e.owner = owner;
    return e;
  }
  bool dir = false;
  std::string content;
  std::optional<uid_t> owner;
  bool operator==(const Entry& o) const {
    return dir == o.dir && content == o.content && owner == o.owner;
  }
};

struct Held {
  std::string path;  // lower spelling at open
  int flags = 0;
};

class Model {
 public:
  std::map<std::string, Entry> tree;  // lower paths; "" is the root
  std::set<std::string> loose;        // changed behind the daemon's back: caches may lag
  std::map<uid_t, std::map<int, Held>> held;

  const Entry* Find(const std::string& path) const {
    auto it = tree.find(path);
    return it == tree.end() ? nullptr : &it->second;
  }
  std::vector<std::string> Children(const std::string& dir) const {
    std::vector<std::string> out;
    std::string prefix = dir.empty() ? "" : dir + "/";
    for (auto it = tree.lower_bound(prefix); it != tree.end(); ++it) {
      if (!absl::StartsWith(it->first, prefix)) break;
      if (it->first.size() == prefix.size()) continue;
      if (it->first.find('/', prefix.size()) == std::string::npos) {
        out.push_back(it->first.substr(prefix.size()));
      }
    }
    return out;
  }
  // The child of `dir` that `name` reaches under Android's case-insensitive names: the exact
  // name, else the first case variant in byte order.
  std::optional<std::string> FindCi(const std::string& dir, const std::string& name) const {
    if (tree.count(Join(dir, name))) return name;
    std::optional<std::string> best;
    for (const std::string& child : Children(dir)) {
      if (absl::EqualsIgnoreCase(child, name) && (!best || child < *best)) best = child;
    }
    return best;
  }
  // The lower spelling of an app's path, or nullopt if some component does not exist.
  std::optional<std::string> Resolve(const std::string& path) const {
    std::string at;
    for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      std::optional<std::string> child = FindCi(at, std::string(part));
      if (!child) return std::nullopt;
      at = Join(at, *child);
    }
    return at;
  }
  // In any spelling: the kernel may hold a name behind the daemon's back under another case.
  bool IsLoose(const std::string& path) const {
    std::string p = absl::AsciiStrToLower(path);
    for (const std::string& l : loose) {
      std::string low = absl::AsciiStrToLower(l);
      if (IsUnder(p, low) || IsUnder(low, p)) return true;
    }
    return false;
  }
  // Moves (or, with `exchange`, swaps) the subtree at `from` to `to`.
  void Move(const std::string& from, const std::string& to, bool exchange) {
    std::map<std::string, Entry> a, b, rest;
    for (auto& [p, e] : tree) {
      if (IsUnder(p, from)) {
        a[to + p.substr(from.size())] = e;
      } else if (IsUnder(p, to)) {
        if (exchange) b[from + p.substr(to.size())] = e;
      } else {
        rest[p] = e;
      }
    }
    rest.insert(a.begin(), a.end());
    rest.insert(b.begin(), b.end());
    tree = std::move(rest);
  }
  void Erase(const std::string& path) {
    for (auto it = tree.begin(); it != tree.end();) {
      it = IsUnder(it->first, path) ? tree.erase(it) : std::next(it);
    }
  }
  void MarkLoose(const std::string& path) {
    loose.insert(path);
    loose.insert(Dirname(path));
  }
};

// --- The oracle -------------------------------------------------------------------------------

class Oracle {
 public:
  absl::Status Load(const std::string& policy_path, const std::string& apps_path) {
    absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig({policy_path, apps_path, ""});
    if (!config.ok()) return config.status();
    absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
    if (!engine.ok()) return engine.status();
    engine_ = std::move(*engine);
    return absl::OkStatus();
  }

  // What the daemon knows of the entry's content: the format it sniffs and the location scan.
  static media::ContentFacts FactsOf(const std::string& path, const Entry& e) {
    if (e.dir) return media::ContentFacts();
    const auto* bytes = reinterpret_cast<const uint8_t*>(e.content.data());
    media::MediaFormat format = media::SniffFormat(
        absl::MakeConstSpan(bytes, std::min(e.content.size(), media::kSniffBytes)));
    media::MemorySource source(absl::MakeConstSpan(bytes, e.content.size()));
    media::LocationScan scan = media::ScanLocation(format, source);
    return media::FactsOfContent(Basename(path), format, &scan);
  }

  Decision Decide(uid_t uid, Op op, const std::string& path, const Entry* e,
                  std::optional<media::ContentFacts> facts = std::nullopt) const {
    policy::Request r;
    r.uid = uid;
    r.op = op;
    r.path = path;
    r.node_type = e != nullptr && e->dir ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
    media::ContentFacts f = facts ? *facts : (e ? FactsOf(path, *e) : media::ContentFacts());
    r.content = &f;
    if (e != nullptr) r.owner_uid = e->owner;
    return engine_->Decide(r);
  }

  policy::LookupDecisions Lookup(uid_t uid, const std::string& path, const Entry& e) const {
    policy::Request r;
    r.uid = uid;
    r.path = path;
    r.node_type = e.dir ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
    media::ContentFacts f = FactsOf(path, e);
    r.content = &f;
    r.owner_uid = e.owner;
    return engine_->DecideLookup(r, nullptr);
  }

  // Whether the app finds every component of `path` (a walk to it succeeds).
  bool Reaches(const Model& m, uid_t uid, const std::string& path) const {
    std::string at;
    for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      at = Join(at, std::string(part));
      const Entry* e = m.Find(at);
      if (e == nullptr || !Lookup(uid, at, *e).found) return false;
    }
    return true;
  }

 private:
  std::unique_ptr<const Engine> engine_;
};

using policy::ErrnoOf;

// Errors no step may ever see.
bool AlwaysWrong(int err) {
  return err == ESTALE || err == EIO || err == ENOTCONN || err == ECONNABORTED ||
         err == WorkerResult::kWorkerGone;
}

std::string ErrName(int err) {
  if (err == WorkerResult::kWorkerGone) return "worker gone (died or hung)";
  return ErrnoName(err);
}

enum class Expect { kSucceed, kFail, kEither };

// --- One run ----------------------------------------------------------------------------------

class Run {
 public:
  Run(const Config& config, uint64_t seed) : config_(config), rng_(seed) {}
  ~Run() { Teardown(); }

  absl::Status Setup();
  // Runs one step; an empty string if every check passed, else what went wrong.
  std::string Do(const Step& step);
  Step Generate();
  // The last lines of the daemon's log, for a failure's report.
  std::string LogTail(size_t lines) const {
    std::vector<std::string> all = absl::StrSplit(storage_.DaemonLog(), '\n');
    size_t from = all.size() > lines ? all.size() - lines : 0;
    return absl::StrJoin(all.begin() + from, all.end(), "\n");
  }

 private:
  absl::Status StartDaemon();
  absl::Status StartWorkers();
  void StopWorkers() { workers_.clear(); }
  void Teardown();
  AppWorker* WorkerOf(uid_t uid) {
    auto it = workers_.find(uid);
    return it == workers_.end() ? nullptr : it->second.get();
  }
  WorkerResult Call(uid_t uid, const WorkerCommand& c) {
    AppWorker* w = WorkerOf(uid);
    if (w == nullptr) {
      WorkerResult r;
      r.err = WorkerResult::kWorkerGone;
      return r;
    }
    return w->Call(c)[0];
  }
  std::string Judge(Expect expect, const WorkerResult& r);
  std::string DoStep(const Step& step);
  std::string CheckLower();
  // The lower tree at `rel` (a file, or a directory and everything below it) as the model
  // records it; empty when nothing is there.
  std::map<std::string, Entry> ReadLower(const std::string& rel);
  void ResyncLoose();
  std::string CheckViews();
  std::string LowerPath(const std::string& rel) const { return storage_.Lower(rel); }
  std::string Respell(const std::string& path);
  std::string PickDir();
  std::string PickFile();
  std::string PickAny();
  std::string NewFileName(const std::string& dir);
  uid_t PickApp() { return kApps[rng_() % (sizeof(kApps) / sizeof(kApps[0]))]; }
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng_() % n); }

  Config config_;
  std::mt19937_64 rng_;
  ScopedStorage storage_;
  std::string apps_path_;
  std::string policy_path_;
  bool granted_ = false;
  Model model_;
  Oracle oracle_;
  std::map<uid_t, std::unique_ptr<AppWorker>> workers_;
  std::set<std::string> ghosts_;  // names that existed once: each app must find them gone
  bool loose_step_ = false;       // the step under way names a loose name (Judge)

 public:
  std::map<std::string, int64_t> counts;
};

absl::Status Run::Setup() {
  if (std::string why = WhyNotMountable(); !why.empty()) return absl::UnavailableError(why);
  // ext4 hands a freed inode number to the next new file at once (tmpfs does not).
  if (absl::Status s = storage_.Prepare(config_.lower); !s.ok()) return s;
  if (absl::Status s = storage_.CreateDefaultLayout(); !s.ok()) return s;
  policy_path_ = absl::StrCat("policy/configs/", config_.policy, ".textproto");
  apps_path_ = storage_.work_dir() + "/apps.textproto";
  {
    std::ofstream out(apps_path_);
    out << ReadFileOrDie("policy/configs/apps.textproto");
  }
  if (config_.skew_oracle) {
    // The oracle believes the camera app holds READ_MEDIA_IMAGES, which the daemon's file denies.
    std::string skewed = storage_.work_dir() + "/apps-skewed.textproto";
    std::ofstream out(skewed);
    out << absl::StrReplaceAll(ReadFileOrDie("policy/configs/apps.textproto"),
                               {{kCameraEntry, kCameraGranted}});
    out.close();
    if (absl::Status s = oracle_.Load(policy_path_, skewed); !s.ok()) return s;
  } else if (absl::Status s = oracle_.Load(policy_path_, apps_path_); !s.ok()) {
    return s;
  }
  // The model starts as the lower tree is: the default layout, no owners.
  model_.tree[""] = Entry::Dir();
  for (const std::string& dir : DefaultTopLevelDirs()) model_.tree[dir] = Entry::Dir();
  for (const char* dir : {"Android/data", "Android/obb", "Android/media", "DCIM/Camera"}) {
    model_.tree[dir] = Entry::Dir();
  }
  if (absl::Status s = StartDaemon(); !s.ok()) return s;
  return StartWorkers();
}

absl::Status Run::StartDaemon() {
  DaemonOptions o;
  o.policy = policy_path_;
  o.apps = apps_path_;
  o.control_socket = true;
  o.extra_flags = {"--watch_config=false"};
  if (!config_.transport.empty()) o.extra_flags.push_back("--transport=" + config_.transport);
  return storage_.StartDaemon(o);
}

absl::Status Run::StartWorkers() {
  for (uid_t uid : kApps) {
    absl::StatusOr<std::unique_ptr<AppWorker>> w = AppWorker::Start(uid, storage_.mountpoint());
    if (!w.ok()) return w.status();
    workers_[uid] = std::move(*w);
  }
  return absl::OkStatus();
}

void Run::Teardown() {
  StopWorkers();
  storage_.StopDaemon();
  storage_.Teardown();
}

std::string Run::Respell(const std::string& path) {
  std::string out = path;
  if (Below(3) != 0) return out;  // two steps in three use the lower spelling
  for (char& c : out) {
    if (absl::ascii_isalpha(c) && Below(3) == 0) {
      c = absl::ascii_isupper(c) ? absl::ascii_tolower(c) : absl::ascii_toupper(c);
    }
  }
  return out;
}

std::string Run::PickDir() {
  std::vector<std::string> dirs;
  for (const auto& [p, e] : model_.tree) {
    if (!e.dir) continue;
    for (const char* top : kArena) {
      if (IsUnder(p, top) && std::count(p.begin(), p.end(), '/') < 3) dirs.push_back(p);
    }
  }
  return dirs[Below(dirs.size())];
}

std::string Run::PickFile() {
  std::vector<std::string> files;
  for (const auto& [p, e] : model_.tree) {
    if (!e.dir) files.push_back(p);
  }
  if (files.empty() || Below(8) == 0) return NewFileName(PickDir());
  return files[Below(files.size())];
}

std::string Run::PickAny() {
  std::vector<std::string> all;
  for (const auto& [p, e] : model_.tree) {
    for (const char* top : kArena) {
      if (IsUnder(p, top) && p != top) all.push_back(p);
    }
  }
  if (all.empty()) return NewFileName(PickDir());
  return all[Below(all.size())];
}

std::string Run::NewFileName(const std::string& dir) {
  static constexpr const char* kBases[] = {"a", "b", "E1", "e1"};
  bool media_dir = absl::StartsWith(dir, "DCIM") || absl::StartsWith(dir, "Pictures");
  // One name in ten has the other area's extension: creates the policy refuses.
  bool jpeg = media_dir != (Below(10) == 0);
  return Join(dir, absl::StrCat(kBases[Below(4)], jpeg ? ".jpg" : ".txt"));
}

Step Run::Generate() {
  Step s;
  s.uid = PickApp();
  s.seed = Below(1000);
  uint32_t r = Below(100);
  if (r < 18) {
    s.kind = StepKind::kCreate;
    s.path = Respell(Below(4) == 0 ? PickFile() : NewFileName(PickDir()));
    s.flags = O_WRONLY | O_CREAT | (Below(3) == 0 ? O_TRUNC : O_EXCL);
    s.length = Below(3) == 0 ? 0 : 1 + Below(9000);
  } else if (r < 34) {
    s.kind = StepKind::kModify;
    std::string path = PickFile();
    s.path = Respell(path);
    s.flags = Below(4);
    const Entry* e = model_.Find(path);
    int64_t size = e != nullptr ? static_cast<int64_t>(e->content.size()) : 0;
    int64_t floor = IsJpegName(path) ? 64 : 0;  // the JFIF header stays, so the type does
    if (s.flags == kMmapWrite) {
      if (size <= floor + 1) s.flags = kPwrite;
    }
    s.length = 1 + Below(6000);
    if (s.flags == kTruncate) s.length = floor + Below(9000);
    if (s.flags == kMmapWrite) {
      s.offset = floor + Below(size - floor - 1);
      s.length = 1 + Below(size - s.offset);
    } else {
      s.offset = floor + Below(size + 4096);
    }
  } else if (r < 42) {
    s.kind = StepKind::kUnlink;
    s.path = Respell(PickFile());
  } else if (r < 52) {
    s.kind = StepKind::kRename;
    std::string from = Below(5) == 0 ? PickAny() : PickFile();
    s.path = Respell(from);
    std::string to = Below(3) == 0 ? PickAny() : NewFileName(Below(2) ? Dirname(from) : PickDir());
    s.path2 = Respell(to);
    uint32_t f = Below(4);
    s.flags = f == 0 ? RENAME_NOREPLACE : f == 1 ? RENAME_EXCHANGE : 0;
  } else if (r < 57) {
    s.kind = StepKind::kMkdir;
    static constexpr const char* kDirs[] = {"sub", "Sub2", "x"};
    s.path = Respell(Join(PickDir(), kDirs[Below(3)]));
  } else if (r < 61) {
    s.kind = StepKind::kRmdir;
    s.path = Respell(PickDir());
  } else if (r < 70) {
    s.kind = StepKind::kHold;
    s.path = Respell(PickFile());
    uint32_t f = Below(3);
    s.flags = f == 0 ? O_PATH : f == 1 ? O_RDONLY : O_RDWR;
    s.slot = static_cast<int32_t>(Below(kSlots));
  } else if (r < 76) {
    s.kind = StepKind::kClose;
    s.slot = static_cast<int32_t>(Below(kSlots));
    auto it = model_.held.find(s.uid);
    if (it == model_.held.end() || it->second.empty()) {
      for (auto& [uid, slots] : model_.held) {
        if (!slots.empty()) {
          s.uid = uid;
          s.slot = slots.begin()->first;
        }
      }
    } else {
      s.slot = it->second.begin()->first;
    }
  } else if (r < 88) {
    s.kind = StepKind::kStat;
    s.path = Respell(Below(2) ? PickFile() : PickAny());
    s.flags = Below(3);
  } else if (r < 96) {
    static constexpr StepKind kLower[] = {StepKind::kLowerCreate, StepKind::kLowerUnlink,
                                          StepKind::kLowerRename, StepKind::kLowerAppend};
    s.kind = kLower[Below(4)];
    s.uid = Below(2) ? kApps[Below(5)] : 0;  // the creator recorded, or none
    s.path = s.kind == StepKind::kLowerCreate ? NewFileName(PickDir()) : PickFile();
    s.path2 = NewFileName(PickDir());
    s.length = 1 + Below(5000);
  } else if (r < 98) {
    s.kind = StepKind::kReload;
    s.uid = 0;
  } else {
    s.kind = StepKind::kRestart;
    s.uid = 0;
    s.flags = Below(2);
  }
  return s;
}

std::string Run::Judge(Expect expect, const WorkerResult& r) {
  // A step on a name changed behind the daemon's back, in whatever spelling the app used and
  // whether or not the model still has it: the kernel may still hold that name (cached by design).
  if (loose_step_) expect = Expect::kEither;
  ++counts[expect == Expect::kSucceed ? "predicted success"
           : expect == Expect::kFail  ? "predicted failure"
                                      : "unpredicted"];
  ++counts[r.err == 0 ? "calls succeeded" : "calls failed"];
  if (AlwaysWrong(r.err)) return absl::StrCat("answered ", ErrName(r.err));
  if (expect == Expect::kSucceed && r.err != 0) {
    return absl::StrCat("failed ", ErrName(r.err), " where the model expects success");
  }
  if (expect == Expect::kFail && r.err == 0) return "succeeded where the model expects a failure";
  return "";
}

std::string Run::Do(const Step& step) {
  std::string err = DoStep(step);
  if (!err.empty()) return absl::StrCat(StepToString(step), ": ", err);
  if (loose_step_) ResyncLoose();
  if (std::string e = CheckLower(); !e.empty())
    return absl::StrCat("after ", StepToString(step), ": ", e);
  if (std::string e = CheckViews(); !e.empty())
    return absl::StrCat("after ", StepToString(step), ": ", e);
  return "";
}

std::string Run::DoStep(const Step& step) {
  const uid_t uid = step.uid;
  loose_step_ = (!step.path.empty() && model_.IsLoose(step.path)) ||
                (!step.path2.empty() && model_.IsLoose(step.path2));
  switch (step.kind) {
    case StepKind::kCreate: {
      std::string data = ContentFor(step.path, step.length, step.seed);
      std::optional<std::string> parent = model_.Resolve(Dirname(step.path));
      Expect expect = Expect::kEither;
      std::optional<std::string> target;
      bool creates = false;
      if (!parent || !model_.Find(*parent)->dir) {
        expect = Expect::kFail;
      } else {
        std::optional<std::string> existing = model_.FindCi(*parent, Basename(step.path));
        if (existing) {
          target = Join(*parent, *existing);
          const Entry* e = model_.Find(*target);
          if ((step.flags & O_EXCL) || e->dir) {
            expect = Expect::kFail;
          } else if (oracle_.Reaches(model_, uid, *target) &&
                     oracle_.Decide(uid, OP_WRITE, *target, e).outcome == OUTCOME_ALLOW &&
                     oracle_.Decide(uid, OP_READ, *target, e).outcome == OUTCOME_ALLOW) {
            expect = Expect::kSucceed;
          } else if (!oracle_.Decide(uid, OP_WRITE, *target, e).Permits()) {
            expect = Expect::kFail;
          }
        } else {
          target = Join(*parent, Basename(step.path));
          creates = true;
          Decision d = oracle_.Decide(uid, OP_CREATE, *target, nullptr,
                                      media::FactsFromName(Basename(step.path)));
          if (!oracle_.Reaches(model_, uid, *parent) || !d.Permits()) {
            expect = Expect::kFail;
          } else if (d.outcome == OUTCOME_ALLOW) {
            expect = Expect::kSucceed;
          }
        }
      }
      if (target && model_.IsLoose(*target)) expect = Expect::kEither;
      if (parent && model_.IsLoose(*parent)) expect = Expect::kEither;
      WorkerCommand c = Command(WorkerOp::kCreate, step.path, "", step.flags);
      c.data = data;
      WorkerResult r = Call(uid, c);
      if (std::string e = Judge(expect, r); !e.empty()) return e;
      if (r.err == 0 && target) {
        Entry& e = model_.tree[*target];
        e.content = data;
        if (creates) e.owner = uid;
        ghosts_.erase(*target);
      }
      return "";
    }
    case StepKind::kModify: {
      std::optional<std::string> target = model_.Resolve(step.path);
      const Entry* e = target ? model_.Find(*target) : nullptr;
      Expect expect = Expect::kEither;
      if (e == nullptr || e->dir) {
        expect = Expect::kFail;
      } else if (!oracle_.Decide(uid, OP_WRITE, *target, e).Permits()) {
        expect = Expect::kFail;
      } else if (oracle_.Reaches(model_, uid, *target) &&
                 oracle_.Decide(uid, OP_WRITE, *target, e).outcome == OUTCOME_ALLOW &&
                 oracle_.Decide(uid, OP_READ, *target, e).outcome == OUTCOME_ALLOW) {
        expect = Expect::kSucceed;
      }
      if (step.flags == kMmapWrite && e != nullptr && !e->dir &&
          step.offset + step.length > static_cast<int64_t>(e->content.size())) {
        expect = Expect::kEither;  // past the end faults; the generator stays inside
      }
      if (target && model_.IsLoose(*target)) expect = Expect::kEither;
      std::string data = TextBytes(step.length, step.seed);
      WorkerCommand c = Command(WorkerOp::kModify, step.path, "", step.flags);
      c.offset = step.offset;
      c.length = step.length;
      if (step.flags == kPwrite || step.flags == kMmapWrite) c.data = data;
      if (step.flags == kMmapWrite && e != nullptr &&
          step.offset + step.length > static_cast<int64_t>(e->content.size())) {
        return "";  // not generated; a replay against another state skips it
      }
      WorkerResult r = Call(uid, c);
      if (std::string err = Judge(expect, r); !err.empty()) return err;
      if (r.err == 0 && target) {
        std::string& content = model_.tree[*target].content;
        switch (step.flags) {
          case kPwrite:
          case kMmapWrite:
            if (content.size() < static_cast<size_t>(step.offset))
              content.resize(step.offset, '\0');
            content.replace(step.offset, std::min(data.size(), content.size() - step.offset), data);
            break;
          case kTruncate:
            content.resize(step.length, '\0');
            break;
          case kFallocate:
            if (content.size() < static_cast<size_t>(step.offset + step.length)) {
              content.resize(step.offset + step.length, '\0');
            }
            break;
        }
      }
      return "";
    }
    case StepKind::kUnlink:
    case StepKind::kRmdir: {
      bool dir = step.kind == StepKind::kRmdir;
      std::optional<std::string> target = model_.Resolve(step.path);
      const Entry* e = target ? model_.Find(*target) : nullptr;
      Expect expect = Expect::kEither;
      if (e == nullptr || e->dir != dir || target->empty() ||
          (dir && !model_.Children(*target).empty())) {
        expect = Expect::kFail;
      } else {
        Decision d = oracle_.Decide(uid, dir ? OP_RMDIR : OP_DELETE, *target, e);
        if (!d.Permits()) {
          expect = Expect::kFail;
        } else if (d.outcome == OUTCOME_ALLOW && oracle_.Reaches(model_, uid, *target) &&
                   std::find(std::begin(kArena), std::end(kArena), *target) == std::end(kArena)) {
          expect = Expect::kSucceed;
        }
      }
      if (target && model_.IsLoose(*target)) expect = Expect::kEither;
      WorkerResult r = Call(uid, Command(dir ? WorkerOp::kRmdir : WorkerOp::kUnlink, step.path));
      if (std::string err = Judge(expect, r); !err.empty()) return err;
      if (r.err == 0 && target) {
        model_.Erase(*target);
        ghosts_.insert(*target);
      }
      return "";
    }
    case StepKind::kMkdir: {
      std::optional<std::string> parent = model_.Resolve(Dirname(step.path));
      Expect expect = Expect::kEither;
      std::optional<std::string> target;
      if (!parent || !model_.Find(*parent)->dir || model_.FindCi(*parent, Basename(step.path))) {
        expect = Expect::kFail;
      } else {
        target = Join(*parent, Basename(step.path));
        Entry probe = Entry::Dir();
        Decision d = oracle_.Decide(uid, OP_MKDIR, *target, &probe);
        if (!d.Permits() || !oracle_.Reaches(model_, uid, *parent)) {
          expect = Expect::kFail;
        } else if (d.outcome == OUTCOME_ALLOW) {
          expect = Expect::kSucceed;
        }
        if (model_.IsLoose(*target)) expect = Expect::kEither;
      }
      WorkerResult r = Call(uid, Command(WorkerOp::kMkdir, step.path));
      if (std::string err = Judge(expect, r); !err.empty()) return err;
      if (r.err == 0 && target) {
        model_.tree[*target] = Entry::Dir(uid);
        ghosts_.erase(*target);
      }
      return "";
    }
    case StepKind::kRename: {
      std::optional<std::string> src = model_.Resolve(step.path);
      std::optional<std::string> dparent = model_.Resolve(Dirname(step.path2));
      Expect expect = Expect::kEither;
      std::optional<std::string> dst;
      bool dst_exists = false;
      if (!src || src->empty() || !dparent || !model_.Find(*dparent)->dir) {
        expect = Expect::kFail;
      } else {
        std::optional<std::string> existing = model_.FindCi(*dparent, Basename(step.path2));
        dst_exists = existing.has_value();
        dst = Join(*dparent, existing ? *existing : Basename(step.path2));
        const Entry* s = model_.Find(*src);
        const Entry* d = model_.Find(*dst);
        if (*dst == *src) {
          expect = Expect::kEither;
        } else if (IsUnder(*dst, *src) || IsUnder(*src, *dst)) {
          expect = Expect::kFail;
        } else if ((step.flags & RENAME_NOREPLACE) && dst_exists) {
          expect = Expect::kFail;
        } else if ((step.flags & RENAME_EXCHANGE) && !dst_exists) {
          expect = Expect::kFail;
        } else if (step.flags == 0 && d != nullptr &&
                   (s->dir != d->dir || (d->dir && !model_.Children(*dst).empty()))) {
          expect = Expect::kFail;
        } else if (std::find(std::begin(kArena), std::end(kArena), *src) != std::end(kArena) ||
                   std::find(std::begin(kArena), std::end(kArena), *dst) != std::end(kArena)) {
          expect = Expect::kEither;
        } else if (!s->dir && !dst_exists && step.flags != RENAME_EXCHANGE && s->owner == uid &&
                   Dirname(*src) == Dirname(*dst) && IsJpegName(*src) == IsJpegName(*dst) &&
                   oracle_.Reaches(model_, uid, *src) &&
                   oracle_.Decide(uid, OP_RENAME, *src, s).outcome == OUTCOME_ALLOW &&
                   oracle_.Decide(uid, OP_CREATE, *dst, nullptr,
                                  media::FactsFromName(Basename(*dst)))
                           .outcome == OUTCOME_ALLOW) {
          expect = Expect::kSucceed;
        } else if (!oracle_.Reaches(model_, uid, *src)) {
          expect = Expect::kFail;
        }
        if (model_.IsLoose(*src) || model_.IsLoose(*dst)) expect = Expect::kEither;
      }
      WorkerResult r = Call(uid, Command(WorkerOp::kRename, step.path, step.path2, step.flags));
      if (std::string err = Judge(expect, r); !err.empty()) return err;
      if (r.err == 0 && src && dst && *src != *dst) {
        bool exchange = step.flags & RENAME_EXCHANGE;
        if (!exchange && dst_exists) model_.Erase(*dst);
        model_.Move(*src, *dst, exchange);
        if (!exchange) ghosts_.insert(*src);
        ghosts_.erase(*dst);
        if (model_.IsLoose(*src) || model_.IsLoose(*dst)) {
          model_.MarkLoose(*src);
          model_.MarkLoose(*dst);
        }
      }
      return "";
    }
    case StepKind::kHold: {
      if (model_.held[uid].count(step.slot)) return "";  // replayed out of its state: skip
      std::optional<std::string> target = model_.Resolve(step.path);
      const Entry* e = target ? model_.Find(*target) : nullptr;
      Expect expect = Expect::kEither;
      if (e == nullptr) {
        expect = Expect::kFail;
      } else if (oracle_.Reaches(model_, uid, *target) && !model_.IsLoose(*target)) {
        Decision read = oracle_.Decide(uid, OP_READ, *target, e);
        Decision write = oracle_.Decide(uid, OP_WRITE, *target, e);
        if (step.flags == O_PATH || (step.flags == O_RDONLY && read.Permits()) ||
            (step.flags == O_RDWR && read.outcome == OUTCOME_ALLOW &&
             write.outcome == OUTCOME_ALLOW)) {
          expect = Expect::kSucceed;
        }
      }
      if (target && model_.IsLoose(*target)) expect = Expect::kEither;
      WorkerResult r = Call(uid, Command(WorkerOp::kHold, step.path, "", step.flags, step.slot));
      if (std::string err = Judge(expect, r); !err.empty()) return err;
      if (r.err == 0)
        model_.held[uid][step.slot] =
            Held{target.value_or(step.path), static_cast<int>(step.flags)};
      return "";
    }
    case StepKind::kClose: {
      if (!model_.held[uid].count(step.slot)) return "";  // nothing held there: skip
      WorkerResult r = Call(uid, Command(WorkerOp::kClose, "", "", 0, step.slot));
      model_.held[uid].erase(step.slot);
      return Judge(Expect::kSucceed, r);
    }
    case StepKind::kStat: {
      std::optional<std::string> target = model_.Resolve(step.path);
      WorkerResult r = Call(uid, Command(WorkerOp::kStat, step.path, "", step.flags));
      if (AlwaysWrong(r.err)) return absl::StrCat("answered ", ErrName(r.err));
      if (!target || model_.IsLoose(*target) || step.flags == kStatxDontSync) return "";
      const Entry* e = model_.Find(*target);
      bool found = oracle_.Reaches(model_, uid, *target);
      if (found != (r.err == 0)) {
        return absl::StrCat("answered ", ErrName(r.err), ", the model says ",
                            found ? "found" : "not found");
      }
      if (found && !e->dir && r.size != static_cast<int64_t>(e->content.size())) {
        return absl::StrCat("size ", r.size, ", the model has ", e->content.size());
      }
      return "";
    }
    case StepKind::kLowerCreate:
    case StepKind::kLowerAppend: {
      std::optional<std::string> parent = model_.Resolve(Dirname(step.path));
      if (!parent || parent != Dirname(step.path) || !model_.Find(*parent)->dir) return "";
      const Entry* e = model_.Find(step.path);
      if (e != nullptr && e->dir) return "";
      bool create = step.kind == StepKind::kLowerCreate || e == nullptr;
      std::string data = ContentFor(step.path, step.length, step.seed);
      if (!create) data = TextBytes(step.length, step.seed);
      int fd =
          open(LowerPath(step.path).c_str(),
               O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (create ? O_TRUNC : O_APPEND), 0644);
      if (fd < 0) return absl::StrCat("lower open: ", ErrName(errno));
      bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
      close(fd);
      if (!ok) return "lower write failed";
      Entry& m = model_.tree[step.path];
      if (create) {
        m.content = data;
        if (e == nullptr) {
          m.owner.reset();
          if (step.uid != 0) {
            std::string v = absl::StrCat(step.uid);
            lsetxattr(LowerPath(step.path).c_str(), kOwnerXattr, v.data(), v.size(), 0);
            m.owner = step.uid;
          }
        }
      } else {
        m.content += data;
      }
      model_.MarkLoose(step.path);
      ghosts_.erase(step.path);
      return "";
    }
    case StepKind::kLowerUnlink: {
      const Entry* e = model_.Find(step.path);
      if (e == nullptr || e->dir) return "";
      if (unlink(LowerPath(step.path).c_str()) != 0)
        return absl::StrCat("lower unlink: ", ErrName(errno));
      model_.Erase(step.path);
      model_.MarkLoose(step.path);
      return "";
    }
    case StepKind::kLowerRename: {
      const Entry* e = model_.Find(step.path);
      const Entry* to_parent = model_.Find(Dirname(step.path2));
      const Entry* to = model_.Find(step.path2);
      if (e == nullptr || e->dir || to_parent == nullptr || !to_parent->dir ||
          (to != nullptr && to->dir) || step.path == step.path2) {
        return "";
      }
      if (rename(LowerPath(step.path).c_str(), LowerPath(step.path2).c_str()) != 0) {
        return absl::StrCat("lower rename: ", ErrName(errno));
      }
      model_.Erase(step.path2);
      model_.Move(step.path, step.path2, false);
      model_.MarkLoose(step.path);
      model_.MarkLoose(step.path2);
      return "";
    }
    case StepKind::kLowerCorrupt: {
      const Entry* e = model_.Find(step.path);
      if (e == nullptr || e->dir || e->content.empty()) return "";
      int fd = open(LowerPath(step.path).c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return absl::StrCat("lower open: ", ErrName(errno));
      char byte = static_cast<char>(e->content.back() ^ 1);
      bool ok = pwrite(fd, &byte, 1, e->content.size() - 1) == 1;
      close(fd);
      return ok ? "" : "lower pwrite failed";  // the model is not told: the checks must notice
    }
    case StepKind::kReload: {
      granted_ = !granted_;
      std::string text = ReadFileOrDie("policy/configs/apps.textproto");
      if (granted_) text = absl::StrReplaceAll(text, {{kCameraEntry, kCameraGranted}});
      std::string tmp = apps_path_ + ".tmp";
      {
        std::ofstream out(tmp);
        out << text;
      }
      if (rename(tmp.c_str(), apps_path_.c_str()) != 0) return "cannot replace the apps file";
      absl::StatusOr<std::string> out = storage_.Ctl({"reload"});
      if (!out.ok()) return absl::StrCat("scopedfsctl reload: ", out.status().ToString());
      if (absl::Status s = oracle_.Load(policy_path_, apps_path_); !s.ok()) return s.ToString();
      model_.loose.clear();  // a reload drops every name and attribute the kernel cached
      return "";
    }
    case StepKind::kRestart: {
      StopWorkers();
      model_.held.clear();
      if (step.flags == 1) {
        kill(storage_.daemon_pid(), SIGKILL);
        storage_.WaitDaemonExit(absl::Seconds(30));
      } else {
        DaemonExit e = storage_.StopDaemon();
        if (!e.clean()) return absl::StrCat("the daemon did not stop cleanly: ", e.ToString());
      }
      if (absl::Status s = StartDaemon(); !s.ok()) return absl::StrCat("restart: ", s.ToString());
      if (absl::Status s = StartWorkers(); !s.ok()) return s.ToString();
      model_.loose.clear();
      return "";
    }
  }
  return "unknown step";
}

std::map<std::string, Entry> Run::ReadLower(const std::string& rel) {
  std::map<std::string, Entry> seen;
  struct stat st;
  if (lstat(LowerPath(rel).c_str(), &st) != 0) return seen;
  std::vector<std::string> pending;
  auto record = [&](const std::string& path, const struct stat& st) {
    Entry e;
    e.dir = S_ISDIR(st.st_mode);
    if (e.dir) {
      pending.push_back(path);
    } else {
      absl::StatusOr<std::string> bytes = storage_.ReadLower(path);
      e.content = bytes.value_or("<unreadable>");
    }
    std::optional<std::string> owner = storage_.LowerOwner(path);
    uint32_t o;
    if (owner && absl::SimpleAtoi(*owner, &o)) e.owner = o;
    seen[path] = std::move(e);
  };
  record(rel, st);
  while (!pending.empty()) {
    std::string dir = pending.back();
    pending.pop_back();
    DIR* d = opendir(LowerPath(dir).c_str());
    if (d == nullptr) continue;
    while (dirent* de = readdir(d)) {
      std::string name = de->d_name;
      if (name == "." || name == "..") continue;
      std::string path = Join(dir, name);
      struct stat child;
      if (lstat(LowerPath(path).c_str(), &child) != 0) continue;
      record(path, child);
    }
    closedir(d);
  }
  return seen;
}

// After a step that named a loose name: what it did to the lower tree is not the model's to
// predict (the kernel may have walked a name cached from before a change behind the daemon's
// back to the object it named then, wherever that object is now), as what it answered is not
// (Judge). So the model takes the lower tree's word for every loose name and what is below it,
// as it was not told otherwise; every other name is still checked against the model.
void Run::ResyncLoose() {
  for (const std::string& l : model_.loose) {
    if (l.empty()) continue;  // the root holds the arena: its loose children are resynced
    model_.Erase(l);
    std::map<std::string, Entry> now = ReadLower(l);
    model_.tree.insert(now.begin(), now.end());
  }
}

// The lower tree, walked as root, against the model: names, kinds, bytes and recorded creators.
std::string Run::CheckLower() {
  std::map<std::string, Entry> seen = ReadLower("");
  seen[""] = model_.tree[""];
  for (const auto& [path, want] : model_.tree) {
    auto it = seen.find(path);
    if (it == seen.end()) return absl::StrCat("lower tree lost ", path);
    const Entry& got = it->second;
    if (got.dir != want.dir) return absl::StrCat("lower ", path, " changed kind");
    if (got.content != want.content) {
      size_t i = 0;
      while (i < got.content.size() && i < want.content.size() && got.content[i] == want.content[i])
        ++i;
      return absl::StrCat("lower ", path, ": ", got.content.size(), " bytes, the model has ",
                          want.content.size(), "; first difference at ", i);
    }
    // A directory's creator is recorded at mkdir by some daemons, not at all by others: only a
    // file's is compared.
    if (!want.dir && got.owner != want.owner) {
      return absl::StrCat("lower ", path, ": creator ",
                          got.owner ? absl::StrCat(*got.owner) : "none", ", the model has ",
                          want.owner ? absl::StrCat(*want.owner) : "none");
    }
  }
  for (const auto& [path, e] : seen) {
    if (!model_.tree.count(path))
      return absl::StrCat("lower tree has ", path, ", the model has not");
  }
  return "";
}

// Every app's view of the arena against the oracle, in one round trip per app.
std::string Run::CheckViews() {
  std::vector<std::string> paths;
  for (const auto& [p, e] : model_.tree) {
    for (const char* top : kArena) {
      if (IsUnder(p, top)) paths.push_back(p);
    }
  }
  std::vector<std::string> ghosts;
  for (const std::string& g : ghosts_) {
    if (!model_.Resolve(g)) ghosts.push_back(g);
  }
  // Each name also in another spelling, which must reach the same entry.
  std::vector<std::string> spelled;
  for (const std::string& p : paths) {
    std::string s = absl::AsciiStrToUpper(p);
    if (s == p) s = absl::AsciiStrToLower(p);
    spelled.push_back(s);
  }
  std::vector<std::string> asked = paths;
  asked.insert(asked.end(), spelled.begin(), spelled.end());
  asked.insert(asked.end(), ghosts.begin(), ghosts.end());
  for (uid_t uid : kApps) {
    AppWorker* w = WorkerOf(uid);
    if (w == nullptr) return absl::StrCat("no worker for uid ", uid);
    WorkerCommand c = Command(WorkerOp::kProbe);
    c.paths = asked;
    std::vector<WorkerResult> rs = w->Call(c);
    if (rs.size() != 2 * asked.size()) {
      return absl::StrCat("uid ", uid, ": probe answered ", ErrName(rs[0].err));
    }
    for (size_t i = 0; i < asked.size(); ++i) {
      const WorkerResult& st = rs[2 * i];
      const WorkerResult& second = rs[2 * i + 1];
      std::string who = absl::StrCat("uid ", uid, " ", asked[i], ": ");
      if (AlwaysWrong(st.err)) return absl::StrCat(who, "stat ", ErrName(st.err));
      if (AlwaysWrong(second.err)) return absl::StrCat(who, "read/list ", ErrName(second.err));
      bool is_ghost = i >= paths.size() + spelled.size();
      std::optional<std::string> lower =
          i < paths.size() ? std::optional<std::string>(paths[i]) : model_.Resolve(asked[i]);
      if (is_ghost) {
        if (model_.IsLoose(asked[i])) continue;
        // ENOTDIR where a directory on the way is now a file (an exchange or a rename over it).
        bool file_on_way = false;
        for (std::string up = Dirname(asked[i]); !up.empty(); up = Dirname(up)) {
          std::optional<std::string> at = model_.Resolve(up);
          file_on_way = file_on_way || (at && !model_.Find(*at)->dir);
        }
        if (st.err != ENOENT && !(st.err == ENOTDIR && file_on_way))
          return absl::StrCat(who, "removed, but stat answered ", ErrName(st.err));
        continue;
      }
      if (!lower || model_.IsLoose(*lower)) continue;
      ++counts["view checks"];
      const Entry* e = model_.Find(*lower);
      bool found = oracle_.Reaches(model_, uid, *lower);
      if (!found) {
        if (st.err == 0) return absl::StrCat(who, "stat succeeded, the model says not found");
        continue;
      }
      if (st.err != 0) return absl::StrCat(who, "stat ", ErrName(st.err), ", the model says found");
      if (e->dir != S_ISDIR(st.mode))
        return absl::StrCat(who, "wrong type, mode 0", absl::Hex(st.mode));
      if (e->dir) {
        if (!oracle_.Decide(uid, OP_LOOKUP, *lower, e).Permits()) continue;
        if (second.err != 0) return absl::StrCat(who, "list ", ErrName(second.err));
        std::vector<std::string> want;
        bool loose_child = false;
        for (const std::string& child : model_.Children(*lower)) {
          std::string cp = Join(*lower, child);
          loose_child = loose_child || model_.IsLoose(cp);
          if (oracle_.Lookup(uid, cp, *model_.Find(cp)).lookup.Permits()) want.push_back(child);
        }
        if (!loose_child) ++counts["listing checks"];
        if (!loose_child && second.names != want) {
          return absl::StrCat(who, "lists [", absl::StrJoin(second.names, ","), "], the model [",
                              absl::StrJoin(want, ","), "]");
        }
        continue;
      }
      if (st.size != static_cast<int64_t>(e->content.size())) {
        return absl::StrCat(who, "size ", st.size, ", the model has ", e->content.size());
      }
      Decision read = oracle_.Decide(uid, OP_READ, *lower, e);
      if (!read.Permits()) {
        if (second.err != ErrnoOf(read)) {
          return absl::StrCat(who, "read answered ", ErrName(second.err), ", the policy says ",
                              ErrName(ErrnoOf(read)), " (", policy::OutcomeName(read.outcome), ")");
        }
        continue;
      }
      if (second.err != 0)
        return absl::StrCat(who, "read ", ErrName(second.err), ", the policy allows it");
      if (second.size != static_cast<int64_t>(e->content.size())) {
        return absl::StrCat(who, "read ", second.size, " bytes, the model has ", e->content.size());
      }
      ++counts["reads compared"];
      if (read.outcome == OUTCOME_ALLOW && second.hash != ContentHash(e->content)) {
        return absl::StrCat(who, "read other bytes than the model's");
      }
    }
    // Every fd the app holds still answers fstat, and reads where it was opened to read.
    for (const auto& [slot, h] : model_.held[uid]) {
      WorkerResult r = w->Call(Command(WorkerOp::kHeldStat, "", "", 0, slot))[0];
      std::string who = absl::StrCat("uid ", uid, " fd held on ", h.path, " (slot ", slot, "): ");
      if (r.err != 0) return absl::StrCat(who, "fstat ", ErrName(r.err));
      if (h.flags != O_PATH) {
        WorkerResult rd = w->Call(Command(WorkerOp::kHeldRead, "", "", 0, slot))[0];
        if (AlwaysWrong(rd.err)) return absl::StrCat(who, "pread ", ErrName(rd.err));
      }
    }
  }
  return "";
}

RunResult RunSteps(const Config& config, uint64_t seed, const std::vector<Step>* replay) {
  RunResult result;
  Run run(config, seed);
  if (absl::Status s = run.Setup(); !s.ok()) {
    result.failure = Failure{-1, s.ToString(), ""};
    return result;
  }
  int n = replay != nullptr ? static_cast<int>(replay->size()) : config.steps;
  struct CountsOut {
    Run& run;
    RunResult& result;
    ~CountsOut() { result.counts = run.counts; }
  } counts_out{run, result};
  for (int i = 0; i < n; ++i) {
    Step step = replay != nullptr ? (*replay)[i] : run.Generate();
    result.steps.push_back(step);
    ++run.counts[absl::StrCat("step ", StepToString(step).substr(0, StepToString(step).find(' ')))];
    std::string err = run.Do(step);
    if (!err.empty()) {
      result.failure = Failure{i, err, run.LogTail(25)};
      break;
    }
  }
  return result;
}

}  // namespace

std::string StepToString(const Step& s) {
  std::string name = "?";
  for (const auto& [k, n] : KindNames()) {
    if (k == s.kind) name = n;
  }
  std::string out = absl::StrCat(name, " uid=", s.uid);
  if (!s.path.empty()) absl::StrAppend(&out, " path=", s.path);
  if (!s.path2.empty()) absl::StrAppend(&out, " path2=", s.path2);
  if (s.flags != 0) absl::StrAppend(&out, " flags=0x", absl::Hex(s.flags));
  if (s.kind == StepKind::kHold || s.kind == StepKind::kClose)
    absl::StrAppend(&out, " slot=", s.slot);
  if (s.offset != 0) absl::StrAppend(&out, " offset=", s.offset);
  if (s.length != 0) absl::StrAppend(&out, " length=", s.length);
  if (s.seed != 0) absl::StrAppend(&out, " seed=", s.seed);
  return out;
}

absl::StatusOr<Step> ParseStep(const std::string& line) {
  std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
  if (words.empty()) return absl::InvalidArgumentError("empty step");
  Step s;
  bool known = false;
  for (const auto& [k, n] : KindNames()) {
    if (words[0] == n) {
      s.kind = k;
      known = true;
    }
  }
  if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown step: ", words[0]));
  for (size_t i = 1; i < words.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(words[i], absl::MaxSplits('=', 1));
    const std::string& v = kv.second;
    bool ok = true;
    if (kv.first == "uid") {
      ok = absl::SimpleAtoi(v, &s.uid);
    } else if (kv.first == "path") {
      s.path = v;
    } else if (kv.first == "path2") {
      s.path2 = v;
    } else if (kv.first == "flags") {
      ok = absl::SimpleHexAtoi(v, &s.flags);
    } else if (kv.first == "slot") {
      ok = absl::SimpleAtoi(v, &s.slot);
    } else if (kv.first == "offset") {
      ok = absl::SimpleAtoi(v, &s.offset);
    } else if (kv.first == "length") {
      ok = absl::SimpleAtoi(v, &s.length);
    } else if (kv.first == "seed") {
      ok = absl::SimpleAtoi(v, &s.seed);
    } else {
      ok = false;
    }
    if (!ok) return absl::InvalidArgumentError(absl::StrCat("bad field: ", words[i]));
  }
  return s;
}

RunResult RunSeed(const Config& config, uint64_t seed) { return RunSteps(config, seed, nullptr); }

RunResult Replay(const Config& config, const std::vector<Step>& steps) {
  return RunSteps(config, 0, &steps);
}

// What kind of failure a message reports, so that shrinking keeps to one bug: the errno no step
// may see, else the text after the last ": ".
std::string Signature(const std::string& message) {
  for (const char* name : {"ESTALE", "EIO", "ENOTCONN", "ECONNABORTED", "worker gone"}) {
    if (absl::StrContains(message, name)) return name;
  }
  size_t at = message.rfind(": ");
  return at == std::string::npos ? message : message.substr(at + 2);
}

std::vector<Step> Shrink(const Config& config, std::vector<Step> steps, int max_runs) {
  int runs = 0;
  std::string signature;
  auto fails = [&](const std::vector<Step>& candidate, std::vector<Step>* ran) {
    ++runs;
    RunResult r = Replay(config, candidate);
    if (!r.failure || r.failure->step < 0) return false;
    if (signature.empty()) signature = Signature(r.failure->message);
    if (Signature(r.failure->message) != signature) return false;
    *ran = r.steps;  // up to the failing step
    return true;
  };
  std::vector<Step> ran;
  if (!fails(steps, &ran)) return steps;  // does not fail again: nothing to shrink against
  steps = ran;
  for (size_t chunk = std::max<size_t>(1, steps.size() / 2); runs < max_runs;) {
    bool dropped = false;
    for (size_t at = 0; at < steps.size() && runs < max_runs;) {
      std::vector<Step> candidate(steps.begin(), steps.begin() + at);
      candidate.insert(candidate.end(), steps.begin() + std::min(steps.size(), at + chunk),
                       steps.end());
      std::vector<Step> ran;
      if (candidate.size() < steps.size() && fails(candidate, &ran)) {
        steps = ran;
        dropped = true;
      } else {
        at += chunk;
      }
    }
    if (chunk == 1 && !dropped) break;
    if (!dropped) chunk = std::max<size_t>(1, chunk / 2);
  }
  return steps;
}

}  // namespace scopedfs::tests::explore
