#include "daemon/kernel/after_reply.h"

#include <utility>

namespace scopedfs::daemon {
namespace {

thread_local AfterReply* current = nullptr;

}  // namespace

AfterReply::AfterReply() : outer_(current) { current = this; }

AfterReply::~AfterReply() {
  current = outer_;
  if (outer_ != nullptr) {
    for (std::function<void()>& work : work_) outer_->work_.push_back(std::move(work));
    return;
  }
  for (std::function<void()>& work : work_) work();
}

void AfterReply::Run(std::function<void()> work) {
  if (current == nullptr) return work();
  current->work_.push_back(std::move(work));
}

}  // namespace scopedfs::daemon
