// App registry: who a uid is (package(s), permissions, SELinux domain) and which uids are special
// (root, system, shell, media). Built once per policy load from apps.textproto and, optionally,
// Android's packages.list; lookups on the decision hot path do not allocate.
#ifndef SCOPEDFS_POLICY_APP_REGISTRY_H_
#define SCOPEDFS_POLICY_APP_REGISTRY_H_

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/packages_list.h"
#include "proto/apps.pb.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {

inline constexpr uint32_t kPerUserRange = 100000;  // AID_USER_OFFSET
inline constexpr uint32_t kFirstAppId = 10000;     // AID_APP_START
inline constexpr uint32_t kLastAppId = 19999;      // AID_APP_END

// Well-known app ids (system/core/libcutils/include/private/android_filesystem_config.h).
inline constexpr uint32_t kRootAppId = 0;
inline constexpr uint32_t kSystemAppId = 1000;
inline constexpr uint32_t kMediaAppId = 1013;
inline constexpr uint32_t kMediaRwAppId = 1023;
inline constexpr uint32_t kShellAppId = 2000;

// At most this many permissions may be declared by a policy, so a set fits in two words.
inline constexpr size_t kMaxPermissions = 128;
using PermissionSet = std::bitset<kMaxPermissions>;

// Permission name <-> bit, fixed by the order of Policy.permission; and which permissions count
// for an app of a given target SDK (Policy.target_sdk_permission).
class PermissionIndex {
 public:
  // Names must be unique and at most kMaxPermissions (validated by the config loader).
  explicit PermissionIndex(const Policy& policy);
  // -1 if the name is not declared.
  int Find(absl::string_view name) const;
  const std::string& Name(size_t bit) const { return names_[bit]; }
  size_t size() const { return names_.size(); }
  // Undeclared names are ignored (the loader has already reported them).
  PermissionSet SetOf(const google::protobuf::RepeatedPtrField<std::string>& names) const;
  // The permissions that count for an app granted `granted` and targeting `target_sdk` (0:
  // unknown, counted as the newest SDK).
  PermissionSet Counted(const PermissionSet& granted, uint32_t target_sdk) const;

 private:
  struct BySdk {
    size_t bit;
    uint32_t below_target_sdk;
    PermissionSet from;
  };
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int> bits_;
  std::vector<BySdk> by_sdk_;
};

// ASCII case-insensitive hashing and equality for sets of paths looked up by string_view.
struct CaseInsensitiveHash {
  using is_transparent = void;
  size_t operator()(absl::string_view s) const;
};
struct CaseInsensitiveEq {
  using is_transparent = void;
  bool operator()(absl::string_view a, absl::string_view b) const;
};
using CaseInsensitivePathSet =
    absl::flat_hash_set<std::string, CaseInsensitiveHash, CaseInsensitiveEq>;

enum class UidKind : uint8_t { kRoot, kSystem, kShell, kMedia, kOtherSystem, kApp, kOther };
absl::string_view UidKindName(UidKind kind);

// Everything known about the apps that run as one app id.
struct AppRecord {
  uint32_t app_id = 0;
  std::vector<std::string> packages;  // several for a shared uid, sorted
  PermissionSet granted;              // union over the packages (Android grants per shared user)
  PermissionSet permissions;          // those that count for target_sdk: what rules look at
  std::string selinux_domain;         // configured domain, "untrusted_app" if unset
  std::string shared_user;
  uint32_t target_sdk = 0;               // the highest over the packages; 0 unknown
  CaseInsensitivePathSet user_selected;  // App.user_selected, over the packages

  bool UserSelected(absl::string_view path) const {
    return !user_selected.empty() && user_selected.contains(path);
  }
};

// The identity of a calling uid.
struct Caller {
  uint32_t uid = 0;
  uint32_t user_id = 0;
  uint32_t app_id = 0;
  UidKind kind = UidKind::kOther;
  const AppRecord* app = nullptr;  // null for unregistered uids

  bool HoldsPackage(absl::string_view package) const;  // ASCII case-insensitive
};

class AppRegistry {
 public:
  // Builds from a validated registry (see config.h) plus optional packages.list entries, which add
  // packages with no permissions. Conflicts must have been rejected by validation; here the first
  // entry for a package wins.
  static AppRegistry Build(const scopedfs::AppRegistry& apps,
                           const std::vector<PackagesListEntry>& packages_list,
                           const PermissionIndex& permissions);

  // Never fails: unknown uids are callers with no app and no permissions.
  Caller Identify(uint32_t uid) const;

  // Lookup by package name (for explain); null if unknown.
  const AppRecord* FindPackage(absl::string_view package) const;

  size_t app_count() const { return records_.size(); }
  // Every registered app id, once each (a rename or link is checked against every app).
  const std::vector<AppRecord>& records() const { return records_; }

 private:
  std::vector<AppRecord> records_;
  absl::flat_hash_map<uint32_t, size_t> by_app_id_;  // app id -> index in records_
  absl::flat_hash_map<std::string, size_t> by_package_;
};

// uid / 100000 and uid % 100000.
inline uint32_t UserIdOf(uint32_t uid) { return uid / kPerUserRange; }
inline uint32_t AppIdOf(uint32_t uid) { return uid % kPerUserRange; }

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_APP_REGISTRY_H_
