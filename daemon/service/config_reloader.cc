// Config reloader (see config_reloader.h).
#include "daemon/service/config_reloader.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {

absl::StatusOr<std::string> ConfigReloader::Reload(const policy::ConfigPaths& files,
                                                   absl::string_view trigger) {
  policy::ConfigPaths paths = started_with_;
  if (!files.policy.empty()) paths.policy = files.policy;
  if (!files.apps.empty()) paths.apps = files.apps;
  if (!files.packages_list.empty()) paths.packages_list = files.packages_list;

  absl::MutexLock lock(&reload_mu_);
  absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(paths);
  absl::Status problem = config.status();
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine;
  if (problem.ok()) {
    engine = policy::Engine::Create(*config);
    problem = engine.status();
  }
  if (problem.ok()) problem = install_(std::shared_ptr<const policy::Engine>(std::move(*engine)));
  if (!problem.ok()) {
    ++rejected_;
    std::string message = absl::StrCat(
        "reload (", trigger, ") rejected, previous policy stays in force:\n", problem.message());
    if (log_) log_(message);
    return absl::Status(problem.code(), message);
  }
  ++reloads_;
  std::string message =
      absl::StrCat("reloaded policy \"", config->policy.name(), "\" (", config->policy.rule_size(),
                   " rules, ", config->apps.app_size(), " apps)");
  if (log_) log_(absl::StrCat(message, " (", trigger, ")"));
  return message;
}

uint64_t ConfigReloader::reloads() const {
  absl::MutexLock lock(&reload_mu_);
  return reloads_;
}

uint64_t ConfigReloader::rejected() const {
  absl::MutexLock lock(&reload_mu_);
  return rejected_;
}

}  // namespace scopedfs::daemon
