// UniqueFd (see unique_fd.h).
#include "base/unique_fd.h"

#include <unistd.h>

#include <cerrno>

namespace scopedfs::base {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  // release() first: self-move must keep the fd, not close it.
  reset(other.release());
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) {
    int saved_errno = errno;
    ::close(fd_);
    errno = saved_errno;
  }
  fd_ = fd;
}

int UniqueFd::Close() {
  if (fd_ < 0) return 0;
  return ::close(release());
}

}  // namespace scopedfs::base
