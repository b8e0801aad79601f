// The emulator guest's system-call probe (tools/emulator/guest/answers_check.sh): makes one call
// on the mount, as whatever uid it runs under, and prints the answer as the kernel gave it, "ok"
// or the errno's name (EACCES), so that the guest's checks compare answers, not messages. The
// guest's Debian userland cannot ask for some of the calls (renameat2 with RENAME_EXCHANGE needs
// coreutils 9.5), and a shell would apply its own umask and retries. Creations run under umask
// 077, so the mode a new object gets shows whether the daemon applied Android's 0664 and 0775.
//   answer_probe rename FROM TO [exchange|noreplace]
//   answer_probe mkdir|create|chmod PATH OCTAL_MODE
//   answer_probe chown PATH UID GID
//   answer_probe rmdir PATH
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace {

int Usage() {
  fprintf(stderr,
          "usage: answer_probe rename FROM TO [exchange|noreplace] | mkdir|create|chmod PATH MODE"
          " | chown PATH UID GID | rmdir PATH\n");
  return 64;
}

// The answer of a call that returned `rc` (-1 with errno set on failure).
int Report(int rc) {
  if (rc == 0) {
    puts("ok");
  } else {
    const char* name = strerrorname_np(errno);
    printf("%s\n", name != nullptr ? name : std::to_string(errno).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  std::string op = argv[1];
  const char* path = argv[2];
  umask(077);
  if (op == "rename" && (argc == 4 || argc == 5)) {
    unsigned int flags = 0;
    if (argc == 5) {
      std::string how = argv[4];
      if (how == "exchange") {
        flags = RENAME_EXCHANGE;
      } else if (how == "noreplace") {
        flags = RENAME_NOREPLACE;
      } else {
        return Usage();
      }
    }
    return Report(renameat2(AT_FDCWD, path, AT_FDCWD, argv[3], flags));
  }
  if ((op == "mkdir" || op == "create" || op == "chmod") && argc == 4) {
    mode_t mode = static_cast<mode_t>(strtoul(argv[3], nullptr, 8));
    if (op == "mkdir") return Report(mkdir(path, mode));
    if (op == "chmod") return Report(chmod(path, mode));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0) close(fd);
    return Report(fd >= 0 ? 0 : -1);
  }
  if (op == "chown" && argc == 5) {
    return Report(chown(path, static_cast<uid_t>(strtoul(argv[3], nullptr, 10)),
                        static_cast<gid_t>(strtoul(argv[4], nullptr, 10))));
  }
  if (op == "rmdir" && argc == 3) return Report(rmdir(path));
  return Usage();
}
