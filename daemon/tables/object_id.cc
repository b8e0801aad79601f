// Object identity (see object_id.h).
#include "daemon/tables/object_id.h"

#include <fcntl.h>

namespace scopedfs::daemon {

uint64_t HandleDigest(int type, absl::string_view bytes) {
  if (bytes.empty()) return 0;
  // FNV-1a over the handle type and bytes: stable across runs (so tests and logs can compare),
  // and for one (dev, ino) the only inputs that differ are the generation's bytes.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (int i = 0; i < 4; ++i)
    mix(static_cast<unsigned char>(static_cast<unsigned>(type) >> (8 * i)));
  for (char c : bytes) mix(static_cast<unsigned char>(c));
  return h == 0 ? 1 : h;
}

ObjectId ObjectIdOf(int fd, const struct stat& st) {
  struct {
    struct file_handle header;
    unsigned char bytes[MAX_HANDLE_SZ];
  } buf;
  buf.header.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  ObjectId id{st.st_dev, st.st_ino, 0};
  if (name_to_handle_at(fd, "", &buf.header, &mount_id, AT_EMPTY_PATH) == 0) {
    id.generation =
        HandleDigest(buf.header.handle_type,
                     absl::string_view(reinterpret_cast<const char*>(buf.header.f_handle),
                                       buf.header.handle_bytes));
  }
  return id;
}

}  // namespace scopedfs::daemon
