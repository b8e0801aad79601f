// Loads and validates a complete scopedfs configuration: the policy, the app registry and,
// optionally, Android's packages.list. Every problem in every file is reported at once, each as
// "file:line:col: message". A configuration that loads is safe to hand to the engine.
#ifndef SCOPEDFS_POLICY_CONFIG_H_
#define SCOPEDFS_POLICY_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/packages_list.h"
#include "policy/text_config.h"
#include "proto/apps.pb.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {

struct ConfigPaths {
  std::string policy;
  std::string apps;
  std::string packages_list;  // optional
};

struct LoadedConfig {
  Policy policy;
  scopedfs::AppRegistry apps;
  std::vector<PackagesListEntry> packages_list;
  std::vector<std::string> rule_locations;  // "file:line:col" of each rule, parallel to rules
};

// Reads, parses and validates. On failure: InvalidArgument listing every problem (NotFound etc.
// if a file cannot be read). Problems found: syntax errors, unknown fields and enum values,
// undeclared or malformed permission names, duplicate and conflicting package/uid pairs (also
// between apps and packages.list), malformed globs and area patterns, rules that can never match,
// and rules an earlier rule makes unreachable.
absl::StatusOr<LoadedConfig> LoadConfig(const ConfigPaths& paths);

// Same, from text already in memory (tests, fuzzing). `packages_list_text` empty = none.
absl::StatusOr<LoadedConfig> ParseConfig(absl::string_view policy_text, std::string policy_name,
                                         absl::string_view apps_text, std::string apps_name,
                                         absl::string_view packages_list_text = "",
                                         std::string packages_list_name = "");

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_CONFIG_H_
