// ThreadSanitizer support for Debian's abseil (linked into every binary by `--config=tsan`, see
// .bazelrc; empty in every other build). Debian's libabsl_synchronization is built without
// -fsanitize=thread, so its Mutex, CondVar and Notification take and hand over locks with atomics
// and futexes ThreadSanitizer never sees: every access guarded by an absl::Mutex would be reported
// as a race. Abseil's own sources annotate these operations when built with ThreadSanitizer; this
// file does the same from outside. It defines the library's exported entry points in the
// executable, which the dynamic linker then prefers for every caller (ours, and the library's own
// calls, which go through its PLT), tells ThreadSanitizer what each one does (acquire, release, a
// wait that releases and reacquires), and calls the library's definition, found with
// dlsym(RTLD_NEXT).
//
// Between each __tsan_mutex_pre_* and its __tsan_mutex_post_*, ThreadSanitizer ignores the thread's
// memory accesses, as abseil's own annotations make it: a Condition is evaluated inside the
// library, by the waiter or by whichever thread unlocks, with the lock held but outside any
// annotated critical section.
//
// The mangled names are those of Debian's libabsl 20220623 (inline namespace debian3); a symbol
// that is not found aborts the program with its name, so an abseil update cannot make this file
// silently do nothing.
#if defined(__SANITIZE_THREAD__)

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>
#include <stdio.h>
#include <stdlib.h>

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

// The library's definition of `symbol`, as a function pointer of type F (a member function
// takes `this` as its first argument in the Itanium C++ ABI).
template <typename F>
F Real(std::atomic<F>* cache, const char* symbol) {
  F f = cache->load(std::memory_order_acquire);
  if (f != nullptr) return f;
  f = reinterpret_cast<F>(dlsym(RTLD_NEXT, symbol));
  if (f == nullptr) {
    fprintf(stderr, "tsan_absl_sync: %s not found in the abseil libraries: %s\n", symbol,
            dlerror());
    abort();
  }
  cache->store(f, std::memory_order_release);
  return f;
}

#define SCOPEDFS_REAL(type, symbol) \
  static std::atomic<type> cache{}; \
  type real = Real(&cache, #symbol)

constexpr unsigned kRead = __tsan_mutex_read_lock;
constexpr unsigned kTry = __tsan_mutex_try_lock;
constexpr unsigned kTryFailed = __tsan_mutex_try_lock_failed;

// The library's entry points call each other (AwaitWithTimeout calls AwaitWithDeadline, a
// Notification locks its Mutex): only the outermost one a thread is in is annotated.
thread_local int depth = 0;
class Outermost {
 public:
  Outermost() : outer_(depth++ == 0) {}
  ~Outermost() { --depth; }
  bool operator()() const { return outer_; }

 private:
  const bool outer_;
};

// A wait that gives `mu` up and has it again when it returns (Await, CondVar::Wait).
template <typename Call>
auto ReleasedDuring(void* mu, unsigned flags, Call call) {
  Outermost outer;
  if (!outer()) return call();
  __tsan_mutex_pre_unlock(mu, flags);
  auto result = call();
  __tsan_mutex_post_unlock(mu, flags);
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
  return result;
}

// A blocking acquisition (Lock, LockWhen...): the library's call runs between pre and post.
template <typename Call>
auto Acquired(void* mu, unsigned flags, Call call) {
  Outermost outer;
  if (!outer()) return call();
  __tsan_mutex_pre_lock(mu, flags);
  auto result = call();
  __tsan_mutex_post_lock(mu, flags, 0);
  return result;
}

// An attempt (TryLock): annotated as failed when it did not lock.
template <typename Call>
bool Attempted(void* mu, unsigned flags, Call call) {
  Outermost outer;
  if (!outer()) return call();
  __tsan_mutex_pre_lock(mu, flags | kTry);
  bool locked = call();
  __tsan_mutex_post_lock(mu, flags | kTry | (locked ? 0 : kTryFailed), 0);
  return locked;
}

// A release (Unlock).
template <typename Call>
void Released(void* mu, unsigned flags, Call call) {
  Outermost outer;
  if (!outer()) return call();
  __tsan_mutex_pre_unlock(mu, flags);
  call();
  __tsan_mutex_post_unlock(mu, flags);
}

}  // namespace

// The acquire/release of a Notification: its flag is read with an inline atomic load
// (HasBeenNotified) that ThreadSanitizer sees, but written inside the library, which it does not.
static_assert(sizeof(absl::Notification) == sizeof(absl::Mutex) + sizeof(void*),
              "absl::Notification is a Mutex followed by its flag");
static void* NotifiedFlag(const absl::Notification* n) {
  return reinterpret_cast<char*>(const_cast<absl::Notification*>(n)) + sizeof(absl::Mutex);
}

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  using F = void (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex4LockEv);
  Acquired(this, 0, [&] { return (real(this), 0); });
}

void Mutex::ReaderLock() {
  using F = void (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex10ReaderLockEv);
  Acquired(this, kRead, [&] { return (real(this), 0); });
}

void Mutex::Unlock() {
  using F = void (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex6UnlockEv);
  Released(this, 0, [&] { real(this); });
}

void Mutex::ReaderUnlock() {
  using F = void (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex12ReaderUnlockEv);
  Released(this, kRead, [&] { real(this); });
}

bool Mutex::TryLock() {
  using F = bool (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex7TryLockEv);
  return Attempted(this, 0, [&] { return real(this); });
}

bool Mutex::ReaderTryLock() {
  using F = bool (*)(Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex13ReaderTryLockEv);
  return Attempted(this, kRead, [&] { return real(this); });
}

void Mutex::LockWhen(const Condition& cond) {
  using F = void (*)(Mutex*, const Condition&);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE);
  Acquired(this, 0, [&] { return (real(this, cond), 0); });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  using F = void (*)(Mutex*, const Condition&);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE);
  Acquired(this, kRead, [&] { return (real(this, cond), 0); });
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  using F = bool (*)(Mutex*, const Condition&, absl::Duration);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE);
  return Acquired(this, 0, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  using F = bool (*)(Mutex*, const Condition&, absl::Time);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE);
  return Acquired(this, 0, [&] { return real(this, cond, deadline); });
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  using F = bool (*)(Mutex*, const Condition&, absl::Duration);
  SCOPEDFS_REAL(F,
                _ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE);
  return Acquired(this, kRead, [&] { return real(this, cond, timeout); });
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  using F = bool (*)(Mutex*, const Condition&, absl::Time);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE);
  return Acquired(this, kRead, [&] { return real(this, cond, deadline); });
}

// Await keeps the lock in the mode it was held in; only writers' waits are annotated as such
// (the library does not say which mode the caller holds, and every Await of ours holds it
// exclusively: MutexLock).
void Mutex::Await(const Condition& cond) {
  using F = void (*)(Mutex*, const Condition&);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE);
  ReleasedDuring(this, 0, [&] { return (real(this, cond), 0); });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  using F = bool (*)(Mutex*, const Condition&, absl::Duration);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE);
  return ReleasedDuring(this, 0, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  using F = bool (*)(Mutex*, const Condition&, absl::Time);
  SCOPEDFS_REAL(F, _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE);
  return ReleasedDuring(this, 0, [&] { return real(this, cond, deadline); });
}

void CondVar::Wait(Mutex* mu) {
  using F = void (*)(CondVar*, Mutex*);
  SCOPEDFS_REAL(F, _ZN4absl7debian37CondVar4WaitEPNS0_5MutexE);
  ReleasedDuring(mu, 0, [&] { return (real(this, mu), 0); });
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  using F = bool (*)(CondVar*, Mutex*, absl::Duration);
  SCOPEDFS_REAL(F, _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE);
  return ReleasedDuring(mu, 0, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  using F = bool (*)(CondVar*, Mutex*, absl::Time);
  SCOPEDFS_REAL(F, _ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE);
  return ReleasedDuring(mu, 0, [&] { return real(this, mu, deadline); });
}

void Notification::Notify() {
  using F = void (*)(Notification*);
  SCOPEDFS_REAL(F, _ZN4absl7debian312Notification6NotifyEv);
  Outermost outer;
  if (outer()) {
    __tsan_release(this);
    __tsan_release(NotifiedFlag(this));
  }
  real(this);
}

void Notification::WaitForNotification() const {
  using F = void (*)(const Notification*);
  SCOPEDFS_REAL(F, _ZNK4absl7debian312Notification19WaitForNotificationEv);
  Outermost outer;
  real(this);
  if (outer()) __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  using F = bool (*)(const Notification*, absl::Duration);
  SCOPEDFS_REAL(F, _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE);
  Outermost outer;
  bool notified = real(this, timeout);
  if (notified && outer()) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  using F = bool (*)(const Notification*, absl::Time);
  SCOPEDFS_REAL(F, _ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE);
  Outermost outer;
  bool notified = real(this, deadline);
  if (notified && outer()) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl

#undef SCOPEDFS_REAL

// Reports stop the program (a test fails, a daemon under a mount test exits), and each names
// both threads' stacks.
extern "C" const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:history_size=4";
}

#endif  // __SANITIZE_THREAD__
