#include "base/small_thread.h"

#include <memory>
#include <utility>

#include "base/signals.h"

namespace scopedfs::base {

int SmallThread::Start(std::function<void()> body) {
  if (started_) return 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStack);
  auto* owned = new std::function<void()>(std::move(body));
  int rc;
  {
    NoTerminationSignals no_signals;  // the new thread inherits the mask
    rc = pthread_create(
        &thread_, &attr,
        +[](void* arg) -> void* {
          std::unique_ptr<std::function<void()>> run(static_cast<std::function<void()>*>(arg));
          (*run)();
          return nullptr;
        },
        owned);
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete owned;
    return rc;
  }
  started_ = true;
  return 0;
}

void SmallThread::Join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);
  started_ = false;
}

}  // namespace scopedfs::base
