// The emulator's stand-in for vold's part in starting emulated storage: it makes vold's FUSE mount
// of one Android user and hands the /dev/fuse fd to the daemon, then bind-mounts that mount where
// apps find it. Run from the scopedfsd@ unit (tools/emulator/guest/scopedfsd-vold.conf):
//   vold_mount --user=N -- /usr/local/sbin/scopedfsd --fuse_fd=3 ...   (ExecStart)
//   vold_mount --user=N --bind_storage                                  (ExecStartPost)
//   vold_mount --user=N --unmount                                       (ExecStopPost)
// The first prepares /mnt/user/<N> as vold does, detaches whatever a killed daemon left mounted
// at /mnt/user/<N>/emulated, opens /dev/fuse, mounts it with vold's exact source, type, flags
// and data (AOSP system/vold Utils.cpp MountUserFuse) and execs the daemon with the fd as fd 3,
// so the daemon keeps the pid systemd started (Type=notify, the unit's sandbox). The second
// runs once the daemon is READY (a bind mount would otherwise wait for FUSE_INIT) and binds
// /mnt/user/<N>/emulated at /storage/emulated/<N>, detaching a dead bind first. The third runs
// whenever the daemon has stopped, crashed or been killed, and detaches both, as vold's
// UnmountUserFuse does when MediaProvider goes away: a FUSE mount outliving its daemon would keep
// the lower files it passed through open, and /data could not be unmounted at shutdown.
// Plain system calls, no library: it runs before anything of the project is up.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

constexpr gid_t kMediaRwGid = 1023;  // AID_MEDIA_RW

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "vold_mount: %s: %s\n", what.c_str(), strerror(errno));
  exit(71);
}

// mkdir + chmod + chown, as vold's PrepareDir (an existing directory gets the mode and owner).
void PrepareDir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) Die("mkdir " + path);
  if (chmod(path.c_str(), mode) != 0) Die("chmod " + path);
  if (chown(path.c_str(), uid, gid) != 0) Die("chown " + path);
}

// Detaches every mount stacked at `path` (MNT_DETACH needs no answer from a dead FUSE daemon).
void DetachAll(const std::string& path) {
  for (int i = 0; i < 16; ++i) {
    if (umount2(path.c_str(), MNT_DETACH) != 0) {
      if (errno == EINVAL || errno == ENOENT) return;  // nothing (more) mounted there
      Die("umount2 " + path);
    }
    fprintf(stderr, "vold_mount: detached an old mount at %s\n", path.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  int user = -1;
  bool bind_storage = false;
  bool unmount = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--user=", 0) == 0) {
      user = atoi(arg.c_str() + 7);
    } else if (arg == "--bind_storage") {
      bind_storage = true;
    } else if (arg == "--unmount") {
      unmount = true;
    } else if (arg == "--") {
      ++i;
      break;
    } else {
      fprintf(stderr, "vold_mount: unknown argument %s\n", arg.c_str());
      return 64;
    }
  }
  if (user < 0 || (!bind_storage && !unmount && i >= argc)) {
    fprintf(stderr,
            "usage: vold_mount --user=N -- DAEMON ARGS... | vold_mount --user=N --bind_storage | "
            "vold_mount --user=N --unmount\n");
    return 64;
  }
  const std::string pre_fuse = "/mnt/user/" + std::to_string(user);
  const std::string fuse_path = pre_fuse + "/emulated";

  const std::string storage = "/storage/emulated/" + std::to_string(user);
  if (unmount) {
    DetachAll(storage);
    DetachAll(fuse_path);
    return 0;
  }
  if (bind_storage) {
    mkdir("/storage", 0755);
    mkdir("/storage/emulated", 0755);
    DetachAll(storage);
    if (mkdir(storage.c_str(), 0700) != 0 && errno != EEXIST) Die("mkdir " + storage);
    // The daemon serves vold's layout: the user's storage is its <user>/ directory.
    const std::string user_dir = fuse_path + "/" + std::to_string(user);
    if (mount(user_dir.c_str(), storage.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      Die("bind " + user_dir + " at " + storage);
    }
    return 0;
  }

  // vold: /mnt/user/<u> 0710 root:media_rw, /mnt/user/<u>/emulated 0700 root:root.
  PrepareDir("/mnt/user", 0755, 0, 0);
  PrepareDir(pre_fuse, 0710, 0, kMediaRwGid);
  DetachAll(fuse_path);  // vold unmounts the user's old FUSE mount before mounting again
  PrepareDir(fuse_path, 0700, 0, 0);

  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) Die("open /dev/fuse");
  // vold's data string, trailing comma included; no default_permissions: MediaProvider decides.
  const std::string data =
      "fd=" + std::to_string(fd) + ",rootmode=40000,allow_other,user_id=0,group_id=0,";
  if (mount("/dev/fuse", fuse_path.c_str(), "fuse",
            MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_LAZYTIME, data.c_str()) != 0) {
    Die("mount fuse at " + fuse_path + " (" + data + ")");
  }
  // The daemon gets the fd as 3 (--fuse_fd=3), without O_CLOEXEC; vold keeps no copy, so the
  // mount dies with the daemon, as on a device.
  if (fd != 3) {
    if (dup2(fd, 3) != 3) Die("dup2");
    close(fd);
  } else if (fcntl(3, F_SETFD, 0) != 0) {
    Die("fcntl");
  }
  std::vector<char*> args(argv + i, argv + argc);
  args.push_back(nullptr);
  execv(args[0], args.data());
  Die(std::string("exec ") + args[0]);
}
