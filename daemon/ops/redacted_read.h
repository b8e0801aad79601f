// The redacted read path: what a reader of a redacted view gets for a byte range of the lower
// file. Every location range any parser finds in the file's current version is filled (zero, or
// space inside XMP); a file that cannot be vouched for gets the scan's fallback filled too, and a
// file whose bytes cannot be read at all is filled whole (media::RedactedFills, in
// media/location, decides which bytes; scopedfsctl explain/scan show the same). The fills and the
// bytes always come from one version of the file.
//
// Fill plans are shared: one per (lower file, version), refcounted by the handles that read that
// version, made from a bounded scan (location_bounds.h) and charged to the budget of the app
// whose read made it (app_budget.h) until the last handle lets go.
#ifndef SCOPEDFS_DAEMON_OPS_REDACTED_READ_H_
#define SCOPEDFS_DAEMON_OPS_REDACTED_READ_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/tables/app_budget.h"
#include "daemon/tables/node_table.h"
#include "daemon/tables/object_id.h"
#include "media/location/location.h"

namespace scopedfs::daemon {

using FillPlan = std::shared_ptr<const std::vector<media::FillRange>>;

// The shared plans of every file version some handle is reading.
class PlanTable {
 public:
  // `budget` may be null (nothing is charged); both must outlive every plan handed out.
  PlanTable(FactsCache* facts, AppBudget* budget) : facts_(facts), budget_(budget) {}
  PlanTable(const PlanTable&) = delete;
  PlanTable& operator=(const PlanTable&) = delete;

  // The kinds of location range plans fill (bits 1 << Redaction; the policy's
  // Engine::redaction_kinds). Set before the first read; fixed for the mount's lifetime, since
  // plans and the kernel's pages of redacted views outlive a reload.
  void set_kinds(uint32_t kinds) { kinds_.store(kinds, std::memory_order_relaxed); }
  uint32_t kinds() const { return kinds_.load(std::memory_order_relaxed); }

  // The plan for the lower file open as `fd`, in the version *st describes, settled first
  // (UntilSettled: on a filesystem that does not stamp every change, this may wait a few
  // milliseconds after a write, a second on one-second timestamps), so the plan's
  // bytes are the version's; *st becomes the version the plan is for. A new plan is charged to
  // `app` (nullopt: root or a system uid, not charged). Returns 0, ENOMEM past the app's budget,
  // EAGAIN while the file keeps changing, will not settle or cannot be read (the caller answers
  // zeros, as for a file that cannot be vouched for), or an errno. `object`: the object `fd` is
  // when the caller knows it (its node's), so that no name_to_handle_at is made for it; null: read
  // from `fd`.
  int For(int fd, std::optional<uid_t> app, struct stat* st, FillPlan* out,
          const ObjectId* object = nullptr) ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);  // live plans

 private:
  // One version of one object (object_id.h).
  struct Key {
    ObjectId object;
    FileVersion version;
    bool operator==(const Key& o) const { return object == o.object && version == o.version; }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.object, k.version.size, k.version.mtime_ns,
                        k.version.ctime_ns);
    }
  };
  struct Plan {
    std::vector<media::FillRange> fills;
    std::optional<uid_t> charged;  // who pays for it
    uint64_t bytes = 0;
  };

  void Forget(const Key& key, const Plan* plan) ABSL_LOCKS_EXCLUDED(mu_);

  FactsCache* const facts_;
  AppBudget* const budget_;
  std::atomic<uint32_t> kinds_{media::kAllLocationKinds};
  // A leaf lock: the budget's is taken only after it is released.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::weak_ptr<const Plan>> plans_ ABSL_GUARDED_BY(mu_);
};

// The plan one handle reads with: the shared plan of the version it read last.
class RedactionPlan {
 public:
  // `object`: the object the handle's fd is (its node's), when known; else read from the fd.
  explicit RedactionPlan(std::optional<ObjectId> object = std::nullopt) : object_(object) {}

  // As PlanTable::For, reusing the handle's plan while the version is the same.
  int For(PlanTable& table, int fd, std::optional<uid_t> app, struct stat* st, FillPlan* out)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The plan the handle holds and the version it is for; false while it holds none.
  bool Current(FillPlan* out, FileVersion* version) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::optional<ObjectId> object_;
  absl::Mutex mu_;
  FileVersion version_ ABSL_GUARDED_BY(mu_);
  FillPlan fills_ ABSL_GUARDED_BY(mu_);
};

// Reads [off, off + size) through `fd` (an open fd of the lower file) with the fills applied.
// Writes change the version before they copy data, and the plan's version was settled before
// its bytes were read, so a version unchanged after the read means the bytes belong to the
// plan's version (no change came between the plan and the stat after the read: a change never
// gives a file back a version it had: its ctime moves on with the clock); otherwise the plan is
// remade and the read repeated. A handle that holds a plan reads first and stats once, after the
// read. If the file keeps changing, zeros are answered rather than bytes no plan was made for.
// `app`: who a new plan is charged to. Returns 0 or an errno; *got is the number of bytes in `buf`;
// *zero_filled, when given, says whether they are such zeros rather than the file's bytes (the
// caller must then keep them out of the kernel's page cache, so that the next read tries again).
int ReadRedacted(PlanTable& plans, int fd, std::optional<uid_t> app, RedactionPlan* plan,
                 size_t size, off_t off, char* buf, size_t* got, bool* zero_filled = nullptr);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_REDACTED_READ_H_
