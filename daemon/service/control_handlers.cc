// The control socket's requests and the notified reload (control_handlers.h).
#include "daemon/service/control_handlers.h"

#include "absl/strings/str_cat.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/service/live_explain.h"
#include "daemon/service/service_notify.h"

namespace scopedfs::daemon {

absl::StatusOr<std::string> ReloadNotified(ConfigReloader* reloader,
                                           const policy::ConfigPaths& files,
                                           absl::string_view why) {
  NotifyReloading(absl::StrCat("reloading (", why, ")"));
  absl::StatusOr<std::string> reloaded = reloader->Reload(files, why);
  NotifyReady(reloaded.ok() ? *reloaded
                            : absl::StrCat("reload rejected, old policy kept: ",
                                           reloaded.status().message()));
  return reloaded;
}

ControlResponse HandleControl(const ControlRequest& request, Filesystem* fs,
                              ConfigReloader* reloader) {
  ControlResponse response;
  if (request.has_stats()) {
    scopedfs::Stats* out = response.mutable_stats();
    fs->stats().ToProto(out);
    out->set_nodes(static_cast<double>(fs->node_count()));
    out->set_reused_numbers(static_cast<double>(fs->nodes().reused_numbers()));
    out->set_kept_removed(static_cast<double>(fs->nodes().kept_removed()));
    out->set_lock_waits(static_cast<double>(fs->locks().waiting()));
    out->set_scans_pending(static_cast<double>(fs->facts().scans().pending()));
    out->set_scan_waiting(static_cast<double>(fs->facts().scans().waiting()));
    out->set_scan_waiting_most(static_cast<double>(fs->facts().scans().most_waiting()));
    out->set_scan_cache_bytes(static_cast<double>(fs->facts().scan_bytes()));
    out->set_facts_records_waiting(static_cast<double>(fs->facts().records_waiting()));
    if (fs->options().audit != nullptr) {
      out->set_audit_lines_waiting(static_cast<double>(fs->options().audit->waiting()));
    }
    const AppBudget& budget = fs->budget();
    AppBudget::Use fds = budget.use(AppBudget::kFds);
    AppBudget::Use bytes = budget.use(AppBudget::kBytes);
    AppBudget::Use waits = budget.use(AppBudget::kLockWaits);
    out->set_budget_fds_held(static_cast<double>(fds.held));
    out->set_budget_fds_most_by_one_app(static_cast<double>(fds.most_by_one_app));
    out->set_budget_bytes_held(static_cast<double>(bytes.held));
    out->set_budget_bytes_most_by_one_app(static_cast<double>(bytes.most_by_one_app));
    out->set_budget_lock_waits_held(static_cast<double>(waits.held));
    out->set_budget_lock_waits_most_by_one_app(static_cast<double>(waits.most_by_one_app));
    out->set_budget_apps(static_cast<double>(budget.apps()));
    out->set_passthrough_enabled(fs->passthrough_active());
    if (FuseSession* session = fs->session(); session != nullptr) {
      out->set_transport(session->transport_description());
      out->set_uring_serving(session->uring_serving());
      out->set_uring_requests(static_cast<double>(session->uring_requests()));
    }
    out->set_policy(fs->engine()->policy_name());
    out->set_listings_pinned(fs->listings_pinned());
    return response;
  }
  if (request.has_reload()) {
    const ReloadRequest& r = request.reload();
    absl::StatusOr<std::string> reloaded =
        ReloadNotified(reloader, {r.policy(), r.apps(), r.packages_list()}, "control socket");
    if (!reloaded.ok()) {
      response.set_error(std::string(reloaded.status().message()));
    } else {
      response.set_message(*reloaded);
    }
    return response;
  }
  if (request.has_explain()) return LiveExplain(request.explain(), fs);
  response.set_error("empty request");
  return response;
}

}  // namespace scopedfs::daemon
