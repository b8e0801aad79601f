// Whole-configuration validation (see config.h). Each check adds to one ProblemList so the user
// sees every problem in one run.
#include "policy/config.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/folded_name.h"
#include "policy/app_registry.h"
#include "policy/rule_set.h"
#include "policy/status_macros.h"
#include "policy/storage_path.h"

namespace scopedfs::policy {
namespace {

// "android.permission.READ_MEDIA_IMAGES": dotted segments of [A-Za-z0-9_], at least two.
bool IsWellFormedPermission(absl::string_view name) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
  if (parts.size() < 2) return false;
  for (absl::string_view part : parts) {
    if (part.empty()) return false;
    for (char ch : part) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
    }
  }
  return true;
}

class Validator {
 public:
  Validator(const TextConfigSource* policy_src, const TextConfigSource* apps_src,
            std::string packages_list_name)
      : policy_src_(policy_src),
        apps_src_(apps_src),
        packages_list_name_(std::move(packages_list_name)) {}

  void Run(LoadedConfig* config) {
    const Policy& policy = config->policy;
    CheckPermissions(policy);
    PermissionIndex permissions(policy);
    CheckTargetSdkPermissions(policy, permissions);
    std::optional<StorageLayout> layout = CheckLayout(policy.layout());
    if (layout.has_value()) {
      CheckRules(policy, permissions, *layout, config);
      CheckLocationGuard(policy, permissions, *layout);
    }
    CompileAction(policy.default_action(), /*outcome_required=*/false,
                  [&](std::vector<FieldStep> steps, std::string message) {
                    steps.insert(steps.begin(), FieldStep{"default_action"});
                    PolicyProblem(steps, message);
                  })
        .IgnoreError();
    if (!Tristate_IsValid(policy.redact_place_names())) {
      PolicyProblem({{"redact_place_names"}},
                    absl::StrCat("unknown redact_place_names number ",
                                 static_cast<int>(policy.redact_place_names())));
    }
    CheckApps(config->apps, permissions);
    CheckPackagesList(config->apps, config->packages_list);
  }

  ProblemList& problems() { return problems_; }

 private:
  void PolicyProblem(const std::vector<FieldStep>& steps, absl::string_view message) {
    problems_.Add(policy_src_->Where(steps), message);
  }
  void AppsProblem(const std::vector<FieldStep>& steps, absl::string_view message) {
    problems_.Add(apps_src_->Where(steps), message);
  }

  void CheckPermissions(const Policy& policy) {
    absl::flat_hash_map<std::string, int> seen;
    for (int i = 0; i < policy.permission_size(); ++i) {
      const std::string& name = policy.permission(i).name();
      if (!IsWellFormedPermission(name)) {
        PolicyProblem({{"permission", i}, {"name"}},
                      absl::StrCat("malformed permission name \"", absl::CEscape(name),
                                   "\" (want e.g. android.permission.READ_MEDIA_IMAGES)"));
      }
      auto [it, inserted] = seen.emplace(name, i);
      if (!inserted) {
        PolicyProblem({{"permission", i}, {"name"}},
                      absl::StrCat("permission \"", name, "\" is declared twice (first at ",
                                   policy_src_->Where({{"permission", it->second}}), ")"));
      }
    }
    if (policy.permission_size() > static_cast<int>(kMaxPermissions)) {
      PolicyProblem({{"permission", static_cast<int>(kMaxPermissions)}},
                    absl::StrCat("more than ", kMaxPermissions, " permissions declared"));
    }
  }

  std::optional<StorageLayout> CheckLayout(const Layout& layout) {
    size_t before = problems_.size();
    absl::flat_hash_map<std::string, int> dirs;
    for (int i = 0; i < layout.top_level_dir_size(); ++i) {
      const std::string& dir = layout.top_level_dir(i);
      std::vector<FieldStep> at = {{"layout"}, {"top_level_dir", i}};
      if (dir.empty() || absl::StrContains(dir, '/') || dir == "." || dir == "..") {
        PolicyProblem(at, absl::StrCat("top_level_dir \"", absl::CEscape(dir),
                                       "\" is not a single path segment"));
      } else if (!base::IsAsciiName(dir)) {
        PolicyProblem(at, absl::StrCat("top_level_dir \"", absl::CEscape(dir),
                                       "\" is not ASCII (names are folded as a casefolded "
                                       "lower folds ASCII ones)"));
      } else if (!dirs.emplace(absl::AsciiStrToLower(dir), i).second) {
        PolicyProblem(at, absl::StrCat("top_level_dir \"", dir, "\" is listed twice"));
      }
    }
    absl::flat_hash_set<std::string> names;
    for (int i = 0; i < layout.area_size(); ++i) {
      const Area& area = layout.area(i);
      if (area.name().empty()) {
        PolicyProblem({{"layout"}, {"area", i}}, "area needs a name");
      } else if (!names.insert(area.name()).second) {
        PolicyProblem({{"layout"}, {"area", i}, {"name"}},
                      absl::StrCat("area \"", area.name(), "\" is defined twice"));
      }
      if (absl::Status s = StorageLayout::ValidateAreaPattern(area.pattern()); !s.ok()) {
        PolicyProblem({{"layout"}, {"area", i}, {"pattern"}}, s.message());
      }
    }
    if (layout.area_size() > 64) {
      PolicyProblem({{"layout"}, {"area", 64}}, "more than 64 areas");
    }
    if (problems_.size() != before) return std::nullopt;
    absl::StatusOr<StorageLayout> compiled = StorageLayout::Compile(layout);
    if (!compiled.ok()) {
      PolicyProblem({{"layout"}}, compiled.status().message());
      return std::nullopt;
    }
    return *std::move(compiled);
  }

  void CheckRules(const Policy& policy, const PermissionIndex& permissions,
                  const StorageLayout& layout, LoadedConfig* config) {
    absl::flat_hash_map<std::string, int> names;
    std::vector<std::pair<int, CompiledRule>> compiled;
    for (int i = 0; i < policy.rule_size(); ++i) {
      const Rule& rule = policy.rule(i);
      config->rule_locations.push_back(policy_src_->Where({{"rule", i}}));
      if (!rule.name().empty()) {
        auto [it, inserted] = names.emplace(rule.name(), i);
        if (!inserted) {
          PolicyProblem({{"rule", i}, {"name"}},
                        absl::StrCat("rule name \"", rule.name(), "\" is used twice (first at ",
                                     policy_src_->Where({{"rule", it->second}}), ")"));
        }
      }
      absl::StatusOr<CompiledRule> c =
          CompileRule(rule, permissions, layout, [&](std::vector<FieldStep> steps, std::string m) {
            steps.insert(steps.begin(), FieldStep{"rule", i});
            PolicyProblem(steps, absl::StrCat("rule \"", rule.name(), "\": ", m));
          });
      if (!c.ok()) continue;
      if (std::string why = WhyNeverMatches(*c, layout); !why.empty()) {
        PolicyProblem({{"rule", i}},
                      absl::StrCat("rule \"", rule.name(), "\" can never match: ", why));
        continue;
      }
      for (const auto& [j, earlier] : compiled) {
        if (Covers(earlier, *c)) {
          PolicyProblem({{"rule", i}},
                        absl::StrCat("rule \"", rule.name(), "\" can never be reached: rule \"",
                                     earlier.name, "\" at ", policy_src_->Where({{"rule", j}}),
                                     " comes first and matches everything it matches"));
          break;
        }
      }
      compiled.emplace_back(i, *std::move(c));
    }
  }

  // Each entitled AppMatch compiles like a rule's app section; `owner` has no meaning there (the
  // guard never applies to owners).
  void CheckLocationGuard(const Policy& policy, const PermissionIndex& permissions,
                          const StorageLayout& layout) {
    for (int i = 0; i < policy.location_guard().entitled_size(); ++i) {
      const AppMatch& app = policy.location_guard().entitled(i);
      std::vector<FieldStep> at = {{"location_guard"}, {"entitled", i}};
      if (app.owner() != OWNERSHIP_UNSPECIFIED) {
        std::vector<FieldStep> owner = at;
        owner.push_back({"owner"});
        PolicyProblem(owner, "location_guard: entitled callers cannot depend on ownership");
      }
      Rule rule;
      rule.set_name("location-guard-entitled");
      *rule.mutable_app() = app;
      rule.mutable_action()->set_outcome(OUTCOME_ALLOW);
      CompileRule(rule, permissions, layout, [&](std::vector<FieldStep> steps, std::string m) {
        // Steps are relative to the synthetic rule: drop its "app" step.
        if (!steps.empty() && steps.front().field == "app") steps.erase(steps.begin());
        steps.insert(steps.begin(), at.begin(), at.end());
        PolicyProblem(steps, absl::StrCat("location_guard: ", m));
      }).IgnoreError();
    }
  }

  void CheckTargetSdkPermissions(const Policy& policy, const PermissionIndex& permissions) {
    absl::flat_hash_map<std::string, int> seen;
    for (int i = 0; i < policy.target_sdk_permission_size(); ++i) {
      const TargetSdkPermission& t = policy.target_sdk_permission(i);
      auto declared = [&](const std::string& name, std::vector<FieldStep> steps) {
        if (permissions.Find(name) >= 0) return;
        PolicyProblem(steps, absl::StrCat("unknown permission \"", absl::CEscape(name),
                                          "\" (not declared by the policy's permission list)"));
      };
      declared(t.permission(), {{"target_sdk_permission", i}, {"permission"}});
      for (int f = 0; f < t.from_size(); ++f) {
        declared(t.from(f), {{"target_sdk_permission", i}, {"from", f}});
        if (t.from(f) == t.permission()) {
          PolicyProblem({{"target_sdk_permission", i}, {"from", f}},
                        absl::StrCat("\"", t.permission(), "\" is derived from itself"));
        }
      }
      if (t.below_target_sdk() == 0) {
        PolicyProblem({{"target_sdk_permission", i}},
                      "target_sdk_permission needs below_target_sdk (an SDK level, e.g. 33)");
      }
      auto [it, inserted] = seen.emplace(t.permission(), i);
      if (!inserted) {
        PolicyProblem({{"target_sdk_permission", i}, {"permission"}},
                      absl::StrCat("\"", t.permission(), "\" already depends on the target SDK at ",
                                   policy_src_->Where({{"target_sdk_permission", it->second}})));
      }
    }
  }

  void CheckApps(const scopedfs::AppRegistry& apps, const PermissionIndex& permissions) {
    // First entry for each package and for each app id (uids of all users share the app id).
    absl::flat_hash_map<std::string, int> by_package;
    absl::flat_hash_map<uint32_t, int> by_app_id;
    for (int i = 0; i < apps.app_size(); ++i) {
      const App& app = apps.app(i);
      if (!IsValidPackageName(app.package())) {
        AppsProblem({{"app", i}, {"package"}},
                    absl::StrCat("invalid package name \"", absl::CEscape(app.package()), "\""));
      }
      if (app.uid() == 0) AppsProblem({{"app", i}}, "app needs a uid (uid 0 is root)");
      auto [pit, new_package] = by_package.emplace(app.package(), i);
      if (!new_package) {
        const App& first = apps.app(pit->second);
        std::string first_at = apps_src_->Where({{"app", pit->second}});
        if (first.uid() == app.uid()) {
          AppsProblem({{"app", i}}, absl::StrCat("package \"", app.package(),
                                                 "\" is listed twice (first at ", first_at, ")"));
        } else {
          AppsProblem({{"app", i}, {"uid"}},
                      absl::StrCat("conflicting uid for package \"", app.package(),
                                   "\": ", app.uid(), " here, ", first.uid(), " at ", first_at));
        }
      } else {
        auto [uit, new_app_id] = by_app_id.emplace(AppIdOf(app.uid()), i);
        if (!new_app_id) {
          const App& first = apps.app(uit->second);
          bool shared = !app.shared_user().empty() && app.shared_user() == first.shared_user();
          if (!shared) {
            AppsProblem(
                {{"app", i}, {"uid"}},
                absl::StrCat("duplicate uid ", app.uid(), ": package \"", app.package(),
                             "\" and package \"", first.package(), "\" at ",
                             apps_src_->Where({{"app", uit->second}}),
                             " (apps that share a uid must both set the same shared_user)"));
          }
        }
      }
      for (int p = 0; p < app.permission_size(); ++p) {
        if (permissions.Find(app.permission(p)) < 0) {
          AppsProblem({{"app", i}, {"permission", p}},
                      absl::StrCat("unknown permission \"", absl::CEscape(app.permission(p)),
                                   "\" (not declared by the policy)"));
        }
      }
      for (int u = 0; u < app.user_selected_size(); ++u) {
        const std::string& path = app.user_selected(u);
        bool bad = path.empty() || path.front() == '/' || path.back() == '/' ||
                   absl::StrContains(path, '\0') || absl::StrContains(path, "//");
        for (absl::string_view segment : absl::StrSplit(path, '/')) {
          if (segment == "." || segment == "..") bad = true;
        }
        if (bad) {
          AppsProblem({{"app", i}, {"user_selected", u}},
                      absl::StrCat("user_selected \"", absl::CEscape(path),
                                   "\" is not a path below the storage root (want e.g. "
                                   "DCIM/Camera/IMG_0001.jpg)"));
        }
      }
    }
  }

  void CheckPackagesList(const scopedfs::AppRegistry& apps,
                         const std::vector<PackagesListEntry>& entries) {
    absl::flat_hash_map<std::string, int> by_package;
    absl::flat_hash_map<uint32_t, int> by_app_id;
    for (int i = 0; i < apps.app_size(); ++i) {
      by_package.emplace(apps.app(i).package(), i);
      by_app_id.emplace(AppIdOf(apps.app(i).uid()), i);
    }
    for (const PackagesListEntry& entry : entries) {
      std::string at = absl::StrCat(packages_list_name_, ":", entry.line, ":1");
      auto pit = by_package.find(entry.package);
      if (pit != by_package.end()) {
        const App& app = apps.app(pit->second);
        if (AppIdOf(app.uid()) != AppIdOf(entry.uid)) {
          problems_.Add(at, absl::StrCat("conflicting uid for package \"", entry.package,
                                         "\": ", entry.uid, " here, ", app.uid(), " at ",
                                         apps_src_->Where({{"app", pit->second}, {"uid"}})));
        }
        continue;
      }
      auto uit = by_app_id.find(AppIdOf(entry.uid));
      if (uit != by_app_id.end() && apps.app(uit->second).shared_user().empty()) {
        problems_.Add(at, absl::StrCat("uid ", entry.uid, " of package \"", entry.package,
                                       "\" belongs to \"", apps.app(uit->second).package(),
                                       "\" at ", apps_src_->Where({{"app", uit->second}}),
                                       ", which has no shared_user"));
      }
    }
  }

  const TextConfigSource* policy_src_;
  const TextConfigSource* apps_src_;
  std::string packages_list_name_;
  ProblemList problems_;
};

// Parse errors of one file become problems of the whole load, so a broken apps file does not hide
// a broken policy.
void AddParseErrors(const absl::Status& status, ProblemList* problems) {
  for (absl::string_view line : absl::StrSplit(status.message(), '\n')) {
    size_t colon = line.find(": ");
    problems->Add(std::string(line.substr(0, colon)),
                  colon == absl::string_view::npos ? "" : line.substr(colon + 2));
  }
}

absl::StatusOr<LoadedConfig> Validate(absl::StatusOr<TextConfigSource> policy_src,
                                      absl::StatusOr<TextConfigSource> apps_src,
                                      absl::StatusOr<std::vector<PackagesListEntry>> packages,
                                      std::string packages_list_name, LoadedConfig config) {
  // A file that could not be read at all is reported on its own, with its own code.
  for (const absl::Status* s : {&policy_src.status(), &apps_src.status(), &packages.status()}) {
    if (!s->ok() && s->code() != absl::StatusCode::kInvalidArgument) return *s;
  }
  ProblemList problems;
  if (!policy_src.ok()) AddParseErrors(policy_src.status(), &problems);
  if (!apps_src.ok()) AddParseErrors(apps_src.status(), &problems);
  if (!packages.ok()) AddParseErrors(packages.status(), &problems);
  if (!problems.empty()) return problems.ToStatus();

  config.packages_list = *std::move(packages);
  Validator validator(&*policy_src, &*apps_src, std::move(packages_list_name));
  validator.Run(&config);
  RETURN_IF_ERROR(validator.problems().ToStatus());
  return config;
}

}  // namespace

absl::StatusOr<LoadedConfig> LoadConfig(const ConfigPaths& paths) {
  LoadedConfig config;
  absl::StatusOr<TextConfigSource> policy_src =
      TextConfigSource::Load(paths.policy, &config.policy);
  absl::StatusOr<TextConfigSource> apps_src = TextConfigSource::Load(paths.apps, &config.apps);
  absl::StatusOr<std::vector<PackagesListEntry>> packages = std::vector<PackagesListEntry>{};
  if (!paths.packages_list.empty()) packages = ReadPackagesList(paths.packages_list);
  return Validate(std::move(policy_src), std::move(apps_src), std::move(packages),
                  paths.packages_list, std::move(config));
}

absl::StatusOr<LoadedConfig> ParseConfig(absl::string_view policy_text, std::string policy_name,
                                         absl::string_view apps_text, std::string apps_name,
                                         absl::string_view packages_list_text,
                                         std::string packages_list_name) {
  LoadedConfig config;
  absl::StatusOr<TextConfigSource> policy_src =
      TextConfigSource::Parse(policy_text, std::move(policy_name), &config.policy);
  absl::StatusOr<TextConfigSource> apps_src =
      TextConfigSource::Parse(apps_text, std::move(apps_name), &config.apps);
  absl::StatusOr<std::vector<PackagesListEntry>> packages = std::vector<PackagesListEntry>{};
  if (!packages_list_name.empty()) {
    packages = ParsePackagesList(packages_list_text, packages_list_name);
  }
  return Validate(std::move(policy_src), std::move(apps_src), std::move(packages),
                  std::move(packages_list_name), std::move(config));
}

}  // namespace scopedfs::policy
