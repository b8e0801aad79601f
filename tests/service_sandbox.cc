// Runs a program under the sandbox a systemd unit file gives its service, as systemd would apply
// it before exec: the system-call allow-list of SystemCallFilter= (each @set expanded by
// `systemd-analyze syscall-filter`, plus @default, which systemd always adds to an allow-list),
// with SystemCallErrorNumber= for everything else; the CapabilityBoundingSet=; and
// NoNewPrivileges=. Used by tests/service_sandbox_mount_test.cc to prove the shipped unit works.
//   service_sandbox UNIT_FILE PROGRAM [ARG...]
// Exits 125 with a message on stderr if the unit cannot be read or the sandbox applied.
#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace {

[[noreturn]] void Die(const std::string& message) {
  fprintf(stderr, "service_sandbox: %s\n", message.c_str());
  _exit(125);
}

// The unit's [Service] settings of interest, each the concatenation of its assignments.
struct Unit {
  std::vector<std::string> syscall_filter;
  std::string syscall_errno = "EPERM";
  std::vector<std::string> capabilities;
  bool no_new_privileges = false;
};

Unit ReadUnit(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die(absl::StrCat("cannot read ", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StrReplaceAll({{"\\\n", " "}}, &text);
  Unit unit;
  bool have_caps = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, eq));
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(eq + 1));
    std::vector<std::string> words = absl::StrSplit(value, ' ', absl::SkipEmpty());
    if (key == "SystemCallFilter") {
      if (!words.empty() && absl::StartsWith(words[0], "~")) {
        Die("a deny-list SystemCallFilter= is not emulated");
      }
      unit.syscall_filter.insert(unit.syscall_filter.end(), words.begin(), words.end());
    } else if (key == "SystemCallErrorNumber") {
      unit.syscall_errno = std::string(value);
    } else if (key == "CapabilityBoundingSet") {
      have_caps = true;
      unit.capabilities.insert(unit.capabilities.end(), words.begin(), words.end());
    } else if (key == "NoNewPrivileges") {
      unit.no_new_privileges = value == "yes" || value == "true" || value == "1";
    }
  }
  if (unit.syscall_filter.empty()) Die(absl::StrCat(path, " has no SystemCallFilter="));
  if (!have_caps) Die(absl::StrCat(path, " has no CapabilityBoundingSet="));
  return unit;
}

// The system calls of one @set, as `systemd-analyze syscall-filter` lists them; the sets it
// names inside are expanded in turn (each once).
void ExpandSet(const std::string& set, std::set<std::string>* seen, std::set<std::string>* calls) {
  if (!seen->insert(set).second) return;
  std::string command = absl::StrCat("systemd-analyze syscall-filter --no-pager ", set, " 2>&1");
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) Die(absl::StrCat("popen ", command, ": ", strerror(errno)));
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), out)) > 0) text.append(buf, n);
  int status = pclose(out);
  if (status != 0) {
    Die(absl::StrCat("`", command,
                     "` failed (is systemd installed? tools/setup.sh installs it): ", text));
  }
  bool first = true;
  size_t listed = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    if (first) {  // the set's own name heads the list
      first = false;
      continue;
    }
    ++listed;
    if (line[0] == '@') {
      ExpandSet(std::string(line), seen, calls);
    } else {
      calls->insert(std::string(line));
    }
  }
  if (listed == 0) Die(absl::StrCat("`", command, "` listed nothing"));
}

int CapabilityNumber(absl::string_view name) {
  static const std::pair<const char*, int> kCaps[] = {
      {"CAP_CHOWN", CAP_CHOWN},
      {"CAP_DAC_OVERRIDE", CAP_DAC_OVERRIDE},
      {"CAP_DAC_READ_SEARCH", CAP_DAC_READ_SEARCH},
      {"CAP_FOWNER", CAP_FOWNER},
      {"CAP_FSETID", CAP_FSETID},
      {"CAP_KILL", CAP_KILL},
      {"CAP_SETGID", CAP_SETGID},
      {"CAP_SETUID", CAP_SETUID},
      {"CAP_SETPCAP", CAP_SETPCAP},
      {"CAP_LINUX_IMMUTABLE", CAP_LINUX_IMMUTABLE},
      {"CAP_NET_BIND_SERVICE", CAP_NET_BIND_SERVICE},
      {"CAP_NET_ADMIN", CAP_NET_ADMIN},
      {"CAP_IPC_LOCK", CAP_IPC_LOCK},
      {"CAP_SYS_CHROOT", CAP_SYS_CHROOT},
      {"CAP_SYS_PTRACE", CAP_SYS_PTRACE},
      {"CAP_SYS_ADMIN", CAP_SYS_ADMIN},
      {"CAP_SYS_RESOURCE", CAP_SYS_RESOURCE},
      {"CAP_MKNOD", CAP_MKNOD},
      {"CAP_AUDIT_WRITE", CAP_AUDIT_WRITE},
  };
  for (const auto& [n, v] : kCaps) {
    if (name == n) return v;
  }
  Die(absl::StrCat("capability ", name, " is not known to this emulation"));
}

int ErrnoNumber(const std::string& name) {
  if (name == "EPERM") return EPERM;
  if (name == "EACCES") return EACCES;
  if (name == "ENOSYS") return ENOSYS;
  int number;
  if (absl::SimpleAtoi(name, &number)) return number;
  Die(absl::StrCat("SystemCallErrorNumber=", name, " is not emulated"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) Die("usage: service_sandbox UNIT_FILE PROGRAM [ARG...]");
  Unit unit = ReadUnit(argv[1]);

  std::set<std::string> seen;
  std::set<std::string> allowed;
  ExpandSet("@default", &seen, &allowed);
  for (const std::string& entry : unit.syscall_filter) {
    if (absl::StartsWith(entry, "@")) {
      ExpandSet(entry, &seen, &allowed);
    } else {
      allowed.insert(entry);
    }
  }

  // The bounding set: every capability the unit does not name is dropped before exec, so the
  // program (root) starts with exactly those.
  std::set<int> keep;
  for (const std::string& name : unit.capabilities) keep.insert(CapabilityNumber(name));
  for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) {
    if (keep.count(cap) == 0 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      Die(absl::StrCat("PR_CAPBSET_DROP ", cap, ": ", strerror(errno)));
    }
  }
  if (unit.no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Die(absl::StrCat("PR_SET_NO_NEW_PRIVS: ", strerror(errno)));
  }

  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ErrnoNumber(unit.syscall_errno)));
  if (ctx == nullptr) Die("seccomp_init failed");
  int known = 0;
  for (const std::string& name : allowed) {
    int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR)
      continue;  // not a call of this architecture (systemd skips them too)
    if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) != 0) {
      Die(absl::StrCat("seccomp_rule_add ", name));
    }
    ++known;
  }
  if (seccomp_load(ctx) != 0) Die("seccomp_load failed");
  seccomp_release(ctx);
  fprintf(stderr, "service_sandbox: %d system calls allowed, %zu capabilities kept%s\n", known,
          keep.size(), unit.no_new_privileges ? ", no new privileges" : "");
  execv(argv[2], argv + 2);
  Die(absl::StrCat("exec ", argv[2], ": ", strerror(errno)));
}
