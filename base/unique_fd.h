// UniqueFd: the one owner of a file descriptor in scopedfs. Move-only; closes what it holds when
// it goes away. Shared by daemon/, policy/ and tools/, so it lives in neither of them.
// Written here rather than taken from a library: abseil has none, and android-base's unique_fd is
// not packaged by Debian.
#ifndef SCOPEDFS_BASE_UNIQUE_FD_H_
#define SCOPEDFS_BASE_UNIQUE_FD_H_

namespace scopedfs::base {

class UniqueFd {
 public:
  UniqueFd() = default;
  // Takes ownership of `fd`; a negative value means "holds nothing", so the result of a failed
  // open() can be wrapped before it is checked.
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Gives up ownership without closing: the caller now owns the returned fd.
  [[nodiscard]] int release();

  // Closes the fd held (if any) and takes `fd`. errno is left as it was, so an fd dropped on an
  // error path cannot overwrite the errno that is about to be reported. The close error is lost;
  // where it matters (a file just written), use Close().
  void reset(int fd = -1);

  // Closes now and reports the result as close(2) does: 0, or -1 with errno set. Holds nothing
  // afterwards either way (Linux frees the fd even when close fails, so it is never retried).
  // Closing an empty UniqueFd returns 0.
  [[nodiscard]] int Close();

 private:
  int fd_ = -1;
};

}  // namespace scopedfs::base

#endif  // SCOPEDFS_BASE_UNIQUE_FD_H_
