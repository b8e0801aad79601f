// Live explain (see live_explain.h).
#include "daemon/service/live_explain.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/judge/request_context.h"
#include "daemon/service/explain_text.h"

namespace scopedfs::daemon {
namespace {

ControlResponse Error(std::string message) {
  ControlResponse response;
  response.set_error(std::move(message));
  return response;
}

// Opens `path` (already checked by the layout: no "..", ".", empty names or NUL) below the lower
// root without following any symlink. *missing is set when only the last name does not exist.
int Walk(Filesystem* fs, const std::string& path, base::UniqueFd* out, bool* missing) {
  *missing = false;
  std::shared_ptr<Node> root = fs->nodes().Get(kRootNodeId);
  if (root == nullptr) return ESTALE;
  base::UniqueFd fd;
  if (int err = fs->nodes().OpenNode(*root, &fd)) return err;
  if (path.empty()) {
    *out = std::move(fd);
    return 0;
  }
  std::vector<std::string> names = absl::StrSplit(path, '/');
  for (size_t i = 0; i < names.size(); ++i) {
    base::UniqueFd next(openat(fd.get(), names[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      int err = errno;
      if (err == ENOENT && i + 1 == names.size()) *missing = true;
      return err;
    }
    fd = std::move(next);
  }
  *out = std::move(fd);
  return 0;
}

}  // namespace

ControlResponse LiveExplain(const ExplainRequest& req, Filesystem* fs) {
  std::shared_ptr<const policy::Engine> engine = fs->engine();
  if (engine == nullptr) return Error("no policy in force");
  ExplainInput in;
  in.engine = engine.get();
  policy::Request& request = in.request;
  request.storage_user_id = fs->options().user_id;
  // Under the device layout the path names a user's storage ("0/DCIM/a.jpg"): judged as the
  // daemon judges it, as that storage's path for its user (RequestContext::Place).
  Placement place = PlaceNodePath(fs->options().device_layout, request.storage_user_id, req.path());
  if (place.kind != Placement::Kind::kStorage) {
    return Error(absl::StrCat("path \"", req.path(),
                              "\": not in a user's storage (--device_layout: <user>/PATH)"));
  }
  request.storage_user_id = place.user;
  if (!req.package().empty()) {
    const policy::AppRecord* app = engine->apps().FindPackage(req.package());
    if (app == nullptr)
      return Error(absl::StrCat("package \"", req.package(), "\" is not installed"));
    request.uid = request.storage_user_id * policy::kPerUserRange + app->app_id;
  } else {
    request.uid = req.uid();
  }
  std::optional<scopedfs::Op> op = ParseOpName(req.op());
  if (!op.has_value()) return Error(absl::StrCat("unknown op \"", req.op(), "\""));
  request.op = *op;
  request.path = place.path;
  request.selinux_domain = req.domain();
  if (absl::StatusOr<policy::PathInfo> valid = engine->layout().Classify(place.path); !valid.ok()) {
    return Error(absl::StrCat("path \"", req.path(), "\": ", valid.status().message()));
  }

  base::UniqueFd fd;
  bool missing = false;
  media::ContentFacts facts;
  FileInfo info;
  std::string name =
      req.path().substr(req.path().rfind('/') == std::string::npos ? 0 : req.path().rfind('/') + 1);
  int err = Walk(fs, req.path(), &fd, &missing);
  if (err != 0 && !missing) {
    return Error(absl::StrCat("path \"", req.path(), "\" in the lower tree: ", strerror(err)));
  }
  if (missing) {
    // What a create sees: no content, no creator yet.
    request.node_type =
        (request.op == OP_MKDIR || request.op == OP_RMDIR) ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
    if (request.node_type == NODE_TYPE_FILE) {
      facts = media::FactsFromName(name);
      request.content = &facts;
      in.content_note = "live: not in the lower tree, judged from the name alone";
    }
  } else {
    struct stat st;
    if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return Error(absl::StrCat("stat \"", req.path(), "\": ", strerror(errno)));
    }
    if (S_ISDIR(st.st_mode)) {
      request.node_type = NODE_TYPE_DIRECTORY;
      request.owner_uid = RecordedOwner(fd.get());
    } else {
      // The ops judge every non-directory as a file, through the same facts cache.
      request.node_type = NODE_TYPE_FILE;
      info = fs->facts().Lookup(fd.get(), st, name);
      request.content = &info.facts;
      request.owner_uid = info.owner;
      in.content_size = static_cast<uint64_t>(st.st_size);
      if (info.content_read && S_ISREG(st.st_mode)) {
        in.sniffed_format = info.facts.format;
        in.scan = info.scan.get();
      }
      in.content_note =
          S_ISREG(st.st_mode)
              ? (info.content_read
                     ? absl::StrCat(
                           "live: the daemon's facts for this version of the file (format ",
                           media::FormatName(info.facts.format), ", ", st.st_size, " bytes)")
                     : "live: the file's bytes could not be read")
              : "live: not a regular file";
    }
  }
  ControlResponse response;
  response.set_message(ExplainText(in));
  return response;
}

}  // namespace scopedfs::daemon
