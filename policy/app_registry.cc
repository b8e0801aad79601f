// App registry construction and uid identification (see app_registry.h).
#include "policy/app_registry.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace scopedfs::policy {

PermissionIndex::PermissionIndex(const Policy& policy) {
  for (const Permission& p : policy.permission()) {
    if (names_.size() == kMaxPermissions || bits_.contains(p.name())) continue;
    bits_.emplace(p.name(), static_cast<int>(names_.size()));
    names_.push_back(p.name());
  }
  for (const TargetSdkPermission& t : policy.target_sdk_permission()) {
    int bit = Find(t.permission());
    if (bit < 0 || t.below_target_sdk() == 0) continue;  // reported by the loader
    by_sdk_.push_back({static_cast<size_t>(bit), t.below_target_sdk(), SetOf(t.from())});
  }
}

PermissionSet PermissionIndex::Counted(const PermissionSet& granted, uint32_t target_sdk) const {
  if (target_sdk == 0) return granted;
  PermissionSet counted = granted;
  for (const BySdk& rule : by_sdk_) {
    if (target_sdk >= rule.below_target_sdk) continue;
    counted.set(rule.bit, (granted & rule.from).any());
  }
  return counted;
}

size_t CaseInsensitiveHash::operator()(absl::string_view s) const {
  size_t h = 14695981039346656037u;  // FNV-1a over the lower-cased bytes
  for (char c : s) h = (h ^ static_cast<unsigned char>(absl::ascii_tolower(c))) * 1099511628211u;
  return h;
}

bool CaseInsensitiveEq::operator()(absl::string_view a, absl::string_view b) const {
  return absl::EqualsIgnoreCase(a, b);
}

int PermissionIndex::Find(absl::string_view name) const {
  auto it = bits_.find(name);
  return it == bits_.end() ? -1 : it->second;
}

PermissionSet PermissionIndex::SetOf(
    const google::protobuf::RepeatedPtrField<std::string>& names) const {
  PermissionSet set;
  for (const std::string& name : names) {
    int bit = Find(name);
    if (bit >= 0) set.set(static_cast<size_t>(bit));
  }
  return set;
}

absl::string_view UidKindName(UidKind kind) {
  switch (kind) {
    case UidKind::kRoot:
      return "root";
    case UidKind::kSystem:
      return "system";
    case UidKind::kShell:
      return "shell";
    case UidKind::kMedia:
      return "media";
    case UidKind::kOtherSystem:
      return "system service";
    case UidKind::kApp:
      return "app";
    case UidKind::kOther:
      return "other";
  }
  return "other";
}

bool Caller::HoldsPackage(absl::string_view package) const {
  if (app == nullptr) return false;
  for (const std::string& p : app->packages) {
    if (absl::EqualsIgnoreCase(p, package)) return true;
  }
  return false;
}

AppRegistry AppRegistry::Build(const scopedfs::AppRegistry& apps,
                               const std::vector<PackagesListEntry>& packages_list,
                               const PermissionIndex& permissions) {
  AppRegistry registry;
  auto add = [&registry](absl::string_view package, uint32_t uid) -> AppRecord* {
    if (registry.by_package_.contains(package)) return nullptr;
    uint32_t app_id = AppIdOf(uid);
    auto [it, inserted] = registry.by_app_id_.try_emplace(app_id, registry.records_.size());
    if (inserted) {
      registry.records_.emplace_back();
      registry.records_.back().app_id = app_id;
    }
    registry.by_package_.emplace(std::string(package), it->second);
    AppRecord* record = &registry.records_[it->second];
    record->packages.emplace_back(package);
    return record;
  };
  for (const App& app : apps.app()) {
    AppRecord* record = add(app.package(), app.uid());
    if (record == nullptr) continue;
    record->granted |= permissions.SetOf(app.permission());
    if (record->selinux_domain.empty()) record->selinux_domain = app.selinux_domain();
    if (record->shared_user.empty()) record->shared_user = app.shared_user();
    record->target_sdk = std::max(record->target_sdk, app.target_sdk());
    record->user_selected.insert(app.user_selected().begin(), app.user_selected().end());
  }
  // packages.list's seinfo carries the target SDK of every package, also of those the registry
  // lists without one.
  for (const PackagesListEntry& entry : packages_list) {
    AppRecord* record = add(entry.package, entry.uid);
    if (record == nullptr) {
      auto it = registry.by_package_.find(entry.package);
      if (it != registry.by_package_.end() &&
          AppIdOf(entry.uid) == registry.records_[it->second].app_id) {
        record = &registry.records_[it->second];
      }
    }
    if (record != nullptr) record->target_sdk = std::max(record->target_sdk, entry.target_sdk);
  }
  for (AppRecord& record : registry.records_) {
    std::sort(record.packages.begin(), record.packages.end());
    if (record.selinux_domain.empty()) record.selinux_domain = "untrusted_app";
    // A shared uid runs with the highest target SDK of its packages, as its union of grants.
    record.permissions = permissions.Counted(record.granted, record.target_sdk);
  }
  return registry;
}

Caller AppRegistry::Identify(uint32_t uid) const {
  Caller caller;
  caller.uid = uid;
  caller.user_id = UserIdOf(uid);
  caller.app_id = AppIdOf(uid);
  switch (caller.app_id) {
    case kRootAppId:
      caller.kind = UidKind::kRoot;
      break;
    case kSystemAppId:
      caller.kind = UidKind::kSystem;
      break;
    case kShellAppId:
      caller.kind = UidKind::kShell;
      break;
    case kMediaAppId:
    case kMediaRwAppId:
      caller.kind = UidKind::kMedia;
      break;
    default:
      if (caller.app_id < kFirstAppId) {
        caller.kind = UidKind::kOtherSystem;
      } else if (caller.app_id <= kLastAppId) {
        caller.kind = UidKind::kApp;
      } else {
        caller.kind = UidKind::kOther;
      }
  }
  auto it = by_app_id_.find(caller.app_id);
  if (it != by_app_id_.end()) caller.app = &records_[it->second];
  return caller;
}

const AppRecord* AppRegistry::FindPackage(absl::string_view package) const {
  auto it = by_package_.find(package);
  return it == by_package_.end() ? nullptr : &records_[it->second];
}

}  // namespace scopedfs::policy
