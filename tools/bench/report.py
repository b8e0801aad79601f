#!/usr/bin/env python3
"""Writes BENCHMARKS.md and benchmarks.png from the results run.sh collected.

results.tsv: contender, workload, unit, OK|FAILED, then every run's figure (OK) or the reason.
requests.tsv: contender, step, FUSE op, count (scopedfsd's counters, first run).
kernel_requests.tsv: contender, step, FUSE opcode, count (the kernel's fuse_request_send
tracepoint, first run; every FUSE contender; opcode _lost when the trace buffer overran).
profile.txt: perf report excerpts of the daemon (the full run).
profiles.tsv: one JSON summary a line of each target row's system-wide profile (the targets run;
written by `report.py --profile-summary` from `perf script`); `report.py
--misses --results=results.tsv` prints the rows that run.sh profiles. The chart is drawn by gnuplot (Debian's
gnuplot-nox); without it the markdown says so and no PNG is written.
"""
import argparse
import json
import os
import re
import sys
import platform
import shutil
import statistics
import subprocess
from collections import OrderedDict, defaultdict

HIGHER_IS_BETTER = {"MB/s", "ops/s"}

# The semantics A/B: (POSIX contender, ANDROID-semantics contender, the caller both act as).
AB_PAIRS = (("permissive", "permissive_android", "root"),
            ("permissive_app", "permissive_android_app", "app uid 10067"))
AB_CONTENDERS = {c for a, b, _ in AB_PAIRS for c in (a, b)} - {"permissive"}
# The budget of POSIX semantics: the permissive policy may lose at most 5% to them.
AB_BUDGET = 1.05

# Why a target is missed, written from the profiles and request counts of the runs (see
# "Where the time goes"). Keyed by target id; shown only when the target is missed.
WHY = {
    "pt_seq": "The daemon sees no READ or WRITE request. Profiled separately (perf on fio), "
    "passthrough and native 4 KiB reads run the same kernel path (_copy_to_iter, "
    "filemap_get_entry, shmem_file_read_iter), and a repeat measured passthrough above native: "
    "the shortfall is within the noise of 1 s jobs on this shared machine (see the analysis).",
    "pt_rand": "As for sequential 4 KiB: no daemon work per call; within this machine's noise.",
    "red_warm": "Served from the redacted inode's page cache like a passthrough read from the "
    "lower page cache; the passthrough photo rows show the same 0.7-0.8× in this run, so the "
    "gap is the machine's noise rather than the redaction.",
    "red_cold": "One READ request per 128 KiB answered with pread plus the fills: the same round "
    "trips bindfs makes. A 2× lead needs fewer round trips (larger READ requests via FUSE "
    "max_pages, or splice replies), not cheaper fills.",
    "tree": "Each step's time follows its FUSE request count (shown per row: requests per file, "
    "top ops); the daemon's profile is the kernel's context switch, not its own code. Directories "
    "are cached for everyone where the rules prove it, so a path walk costs one LOOKUP; a file "
    "whose visibility depends on the caller (the android rows) still costs one LOOKUP per "
    "path-based call, and under POSIX semantics ls -l's security.selinux question is one request "
    "per file (the kernel caches no other xattr; ACLs it caches). Closing the rest needs fewer "
    "requests per file than FUSE allows today: a name cache per caller in the kernel, or "
    "batched replies (see the analysis).",
}


# --- System-wide profiles of one step (perf record -a; perf script)
# One sample of `perf script -F pid,comm,ip,sym,dso`: "comm pid ip symbol (dso)".
PERF_SCRIPT_LINE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<pid>\d+)\s+(?P<ip>[0-9a-f]+)\s+"
                              r"(?P<sym>.*?)\s+\((?P<dso>[^()]*)\)\s*$")
# Kernel symbols of the scheduler and of wake-ups: where a FUSE round trip spends its CPU time
# outside fs/fuse when the two sides sit on different CPUs.
SCHED_SYM = re.compile(r"schedule|switch_to|finish_task_switch|pick_next|try_to_wake_up|ttwu|"
                       r"wake_up|enqueue_|dequeue_|update_curr|update_load|select_task_rq|"
                       r"newidle_balance|load_balance|__sysvec_call_function|flush_smp_call")
# The kernel's FUSE code (fs/fuse, built in here: its functions are fuse_* and a few others).
FUSE_SYM = re.compile(r"^(__)?fuse_|^request_wait_answer$|^queue_request|^flush_bg_queue$|"
                      r"^process_init_reply$|^create_new_entry$|^lookup_entry")
SHARE_NAMES = (("app_user", "app, user"), ("app_kernel", "app, kernel"),
               ("daemon_user", "daemon, user"), ("daemon_kernel", "daemon, kernel"),
               ("idle", "idle (swapper)"), ("perf", "perf itself"), ("other", "other processes"))


def profile_summary(argv):
    """Reads `perf script -F pid,comm,ip,sym,dso` (one sample a line) on stdin and prints one
    JSON line: the shares of the samples by who ran (the app, the daemon process --daemon-pid,
    each in user and kernel mode; idle; perf; others), the kernel's FUSE functions and the
    scheduler across all of them, and the top symbols. The daemon is told by its process id, as
    other scopedfsd processes (another engineer's tests) may run on the machine meanwhile."""
    p = argparse.ArgumentParser()
    p.add_argument("--profile-summary", action="store_true")
    for name in ("contender", "step", "app", "seconds", "error", "daemon-pid"):
        p.add_argument("--" + name, default="")
    a = p.parse_args(argv)
    shares = defaultdict(int)
    fuse = sched = total = 0
    rows = defaultdict(int)
    for line in sys.stdin:
        m = PERF_SCRIPT_LINE.match(line.rstrip("\n"))
        if not m:
            continue
        comm, pid, name, dso = m.group("comm"), m.group("pid"), m.group("sym"), m.group("dso")
        kernel = dso.startswith("[kernel")
        n = 1
        total += n
        if pid == a.daemon_pid:
            who = "daemon"
        elif comm == a.app:
            who = "app"
        elif comm.startswith("swapper"):
            who = "idle"
        elif comm.startswith("perf"):
            who = "perf"
        else:
            who = "other"
        if who in ("app", "daemon"):
            who += "_kernel" if kernel else "_user"
        shares[who] += n
        if kernel and FUSE_SYM.search(name):
            fuse += n
        if kernel and who != "idle" and SCHED_SYM.search(name):
            sched += n
        # The daemon's threads are one line per symbol (sfs-uring-0.2 and sfs-uring-1.5 alike).
        dso = os.path.basename(dso) if dso.startswith("/") else dso
        rows[("scopedfsd (daemon)" if who.startswith("daemon") else comm, dso, name)] += n
    rows = sorted(((n, comm, dso, name) for (comm, dso, name), n in rows.items()),
                  key=lambda r: -r[0])
    out = {"contender": a.contender, "step": a.step, "app": a.app, "seconds": float(a.seconds or 0),
           "samples": total, "error": a.error if not total else "",
           "shares": {k: shares.get(k, 0) / max(1, total) for k, _ in SHARE_NAMES},
           "fuse_kernel": fuse / max(1, total), "scheduler": sched / max(1, total),
           "top": [[n / max(1, total), comm, dso, name] for n, comm, dso, name in rows[:15]]}
    print(json.dumps(out))


def load_profiles(path):
    """{(contender, step): summary} from profiles.tsv (absent or empty: {})."""
    out = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                out[(d["contender"], d["step"])] = d
    return out


def profile_sections(profiles, kreqs, reqs, labels, files, meta_missed):
    """details.md's "Profiles of the missed target rows": a heading per row (the table links to
    it), the shares of the samples, the FUSE requests per file by opcode, the top symbols."""
    L = ["## Profiles of the missed target rows", ""]
    L.append("One extra, untimed pass of each step that missed its goal, with the contender's "
             "mount as in the timed runs, under `perf record -a -e cpu-clock -F 499` (every CPU, "
             "idle included: a FUSE request's time is split between the app, the kernel and the "
             "daemon, and the waits show as idle), each sample read with `perf script -F "
             "pid,comm,ip,sym,dso`. Shares are of all samples on both CPUs while the step ran: "
             "*app* is the step's command (tar, ls, ...), *daemon* the contender's scopedfsd "
             "process (all its threads; other processes of the same name count as other), each "
             "split into user and kernel; *kernel FUSE* is self time in fs/fuse functions "
             "(`fuse_*`) whoever ran them, *scheduler* self time in the scheduler and wake-up "
             "functions outside idle. The seconds are the profiled pass's, perf running; the "
             "timed figures are in the table. FUSE requests per file are the kernel's count "
             "(`fuse_request_send`) of the first timed run.")
    L.append("")
    if not meta_missed:
        L.append("No target row missed its goal in this run.")
        L.append("")
    for c, w in meta_missed:
        heading, _ = profile_anchor(c, w)
        L.append("### " + heading)
        L.append("")
        d = profiles.get((c, w))
        L.append("%s, %s." % (labels.get(c, c), w))
        if d is None:
            L.append("")
            L.append("Not profiled in this run (perf missing, `--no-profile`, or the contender "
                     "could not be set up again).")
            L.append("")
            continue
        if not d["samples"]:
            L.append("")
            L.append("perf recorded no samples: %s" % (d.get("error") or "no reason given"))
            L.append("")
            continue
        sh = d["shares"]
        L.append("")
        L.append("%d samples in %.1f s (the command under perf, perf's start included):" % (
            d["samples"], d["seconds"]))
        L.append("")
        L.append("| " + " | ".join(text for _, text in SHARE_NAMES) +
                 " | kernel FUSE (any process) | scheduler (not idle) |")
        L.append("|" + "---|" * (len(SHARE_NAMES) + 2))
        L.append("| " + " | ".join("%.1f%%" % (100 * sh.get(k, 0)) for k, _ in SHARE_NAMES) +
                 " | %.1f%% | %.1f%% |" % (100 * d["fuse_kernel"], 100 * d["scheduler"]))
        if w in TREE_STEPS:
            ops, unit, n, src = kreqs.get((c, w), {}), "file", files, "the kernel's count"
        else:
            # fio and open+close: the daemon's counters around the step, per call (all fio jobs
            # together, per job).
            step = "fio" if w.startswith("fio ") else w
            ops = reqs.get((c, step), {})
            unit, n, src = ("fio job" if step == "fio" else "call"), ops.get("_calls", 0), \
                "the daemon's counters"
        lost = ops.get("_lost", 0)
        ops = {k: v for k, v in ops.items() if not k.startswith("_")}
        if ops:
            total = sum(ops.values())
            L.append("")
            L.append("FUSE requests (%s, first run): %.2f per %s (%s)%s." % (
                src, total / max(1, n), unit, ", ".join(
                    "%s %.2f" % (k.replace("FUSE_", ""), v / max(1, n))
                    for k, v in sorted(ops.items(), key=lambda kv: -kv[1])),
                "; the trace lost %d" % lost if lost else ""))
        else:
            L.append("")
            L.append("FUSE requests: none counted (%s)." % src)
        L.append("")
        L.append("| share | command | object | symbol |")
        L.append("|---|---|---|---|")
        for share, comm, dso, name in d["top"][:12]:
            name = name if len(name) <= 90 else name[:89] + "…"
            L.append("| %.1f%% | %s | %s | `%s` |" % (100 * share, comm, dso,
                                                     name.replace("|", "/").replace("`", "'")))
        L.append("")
    return L


def print_misses(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--misses", action="store_true")
    p.add_argument("--results", required=True)
    a = p.parse_args(argv)
    cells, _, _ = load_results(a.results)
    for c, w in missed_targets(cells):
        print("%s\t%s" % (c, w))


def parse_args():
    p = argparse.ArgumentParser()
    for name in ("results", "requests", "profile", "out", "data", "rev", "load", "mode", "runs", "tree_files", "tree",
                 "fio_mb", "fio_runtime", "seconds", "labels"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--only", default="")
    p.add_argument("--kernel-requests", default="")
    p.add_argument("--profiles", default="")
    p.add_argument("--gallery_files", default="0")
    return p.parse_args()


class Cell:
    def __init__(self, unit, ok, payload):
        self.unit = unit
        self.ok = ok
        if ok:
            self.values = [float(v) for v in payload.split()]
            self.median = statistics.median(self.values)
            self.min = min(self.values)
            self.max = max(self.values)
            self.reason = ""
        else:
            self.values = []
            self.reason = payload


def load_results(path):
    cells = OrderedDict()
    workloads = []
    contenders = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        c, w, unit, status, payload = line.split("\t", 4)
        if status == "NA":
            payload = "n/a: " + payload
        cells[(c, w)] = Cell(unit, status == "OK", payload)
        if w not in workloads:
            workloads.append(w)
        if c not in contenders:
            contenders.append(c)
    return cells, workloads, contenders


def fmt(v, unit):
    if unit == "s":
        return "%.2f s" % v if v < 100 else "%.0f s" % v
    if unit == "files":
        return "{:,}".format(int(v))
    if unit == "ns":
        return "%.0f ns" % v
    return "{:,.0f} {}".format(v, unit)


def ratio(cells, c, w, base="native"):
    """Contender/base of the medians: time ratio for seconds, throughput ratio for rates."""
    a, b = cells.get((c, w)), cells.get((base, w))
    if not a or not b or not a.ok or not b.ok or b.median == 0:
        return None
    return a.median / b.median


def speed(cells, c, w, base="native"):
    """How fast against base, higher is better, whatever the unit."""
    r = ratio(cells, c, w, base)
    if r is None or r == 0:
        return None
    unit = cells[(c, w)].unit
    if unit == "files":
        return None
    return r if unit in HIGHER_IS_BETTER else 1.0 / r


def cell_text(cells, c, w, with_ratio=True):
    cell = cells.get((c, w))
    if cell is None:
        return ""
    if not cell.ok:
        if cell.reason.startswith("n/a"):
            return "n/a"
        return "**FAILED**: " + cell.reason.replace("|", "/")
    text = fmt(cell.median, cell.unit)
    r = ratio(cells, c, w)
    if with_ratio and r is not None and c != "native" and cell.unit != "files":
        text += " (%.2f×)" % r
    return text


def machine(rev, load):
    def run(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return "?"
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = "?"
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal"):
            mem = "%.0f GiB" % (int(line.split()[1]) / 1024 / 1024)
    pkgs = []
    for p in ("fuse3", "libfuse3-3", "fio", "bindfs", "mergerfs", "linux-source-6.1",
              "linux-perf", "gnuplot-nox"):
        v = run(["dpkg-query", "-W", "-f=${Version}", p])
        pkgs.append("%s %s" % (p, v or "(not installed)"))
    return {
        "cpu": cpu, "cores": os.cpu_count(), "mem": mem, "kernel": platform.release(),
        "pkgs": pkgs, "rev": rev, "load": load,
    }


TREE_STEPS = ("tar x", "files seen", "ls -lR cold", "ls -lR warm", "find -size", "grep -r", "du -s",
              "rm -rf")


def request_summary(reqs, c, step, files):
    ops = {k: v for k, v in reqs.get((c, step), {}).items() if not k.startswith("_")}
    if not ops:
        return ""
    total = sum(ops.values())
    top = sorted(ops.items(), key=lambda kv: -kv[1])[:3]
    return "%.1f FUSE requests per file (%s)" % (
        total / max(1, files), ", ".join("%s %.1f" % (k, v / max(1, files)) for k, v in top))


# The request-count table's columns: the ceiling first, then scopedfs under each policy and
# transport (a column whose contender did not run shows n/a with the reason below the table).
CEILING_COLUMNS = ("ceiling", "ceiling_uring", "permissive", "permissive_noattr", "permissive_nosys", "android_owner",
                   "android_strict", "permissive_uring", "permissive_nosys_uring", "android_owner_uring",
                   "android_device_uring",
                   "bindfs", "mergerfs")


def ceiling_section(cells, kreqs, labels, files):
    """Each tree row and open+close as a multiple of native, with the kernel's FUSE requests per
    file beside it, for the ceiling and every scopedfs contender."""
    L = ["## Against the FUSE ceiling", ""]
    L.append("Time as a multiple of native (rates: native over the contender, so higher is "
             "slower everywhere), and beside it the FUSE requests per file the kernel sent "
             "(`fuse_request_send` tracepoint, first run, %s files). The ceiling is a libfuse "
             "passthrough example at its most cached, built at run time (which one, and how it "
             "runs: see the contenders): what a FUSE filesystem can reach on this machine." %
             "{:,}".format(files))
    L.append("")
    cols = [c for c in CEILING_COLUMNS if any(k[0] == c for k in cells)]
    L.append("| step | " + " | ".join(labels.get(c, c) for c in cols) + " |")
    L.append("|---|" + "---|" * len(cols))
    reasons = {}
    for w in ("tar x", "ls -lR cold", "ls -lR warm", "find -size", "du -s", "grep -r", "rm -rf",
              "open+close rate", "stat rate"):
        row = []
        for c in cols:
            cell = cells.get((c, w))
            if cell is None or not cell.ok:
                if cell is not None:
                    reasons[c] = cell.reason
                row.append("n/a" if cell is None or cell.reason.startswith("n/a") else "FAILED")
                continue
            s = speed(cells, c, w)
            text = "%.2f×" % (1.0 / s) if s else "?"
            ops = kreqs.get((c, w), {})
            if ops and w in TREE_STEPS:
                lost = ops.get("_lost", 0)
                total = sum(v for k, v in ops.items() if not k.startswith("_"))
                text += " · %.2f req/file%s" % (total / max(1, files), " (trace lost %d)" % lost
                                                 if lost else "")
            row.append(text)
        L.append("| %s | " % w + " | ".join(row) + " |")
    L.append("")
    for c, why in reasons.items():
        L.append("- %s: %s" % (labels.get(c, c), why.replace("|", "/")))
    if reasons:
        L.append("")
    if kreqs:
        L.append("Requests by opcode per tree step (per file):")
        L.append("")
        L.append("| contender | step | per file | top opcodes (per file) |")
        L.append("|---|---|---|---|")
        for (c, step), ops in kreqs.items():
            if step not in TREE_STEPS:
                continue
            real = {k: v for k, v in ops.items() if not k.startswith("_")}
            total = sum(real.values())
            top = sorted(real.items(), key=lambda kv: -kv[1])[:6]
            L.append("| %s | %s | %.2f | %s |" % (
                labels.get(c, c), step, total / max(1, files),
                ", ".join("%s %.2f" % (k.replace("FUSE_", ""), v / max(1, files)) for k, v in top)))
        L.append("")
    return L


# Metadata targets: time as a multiple of native (open+close and fio: rate as a fraction of
# native's), for the permissive policy as root and the Android policy as the owner app, on each
# transport. (step, goal for the permissive group, goal for the android group.)
METADATA_GOALS = (("ls -lR warm", 1.5, 2.0), ("find -size", 1.3, 2.0), ("du -s", 1.3, 2.0),
                  ("ls -lR cold", 3.0, 4.0), ("grep -r", 2.5, 3.0), ("tar x", 3.0, 3.0),
                  ("rm -rf", 4.0, 4.0), ("open+close rate", 0.1, 0.1),
                  ("fio read 4k", 0.9, 0.9), ("fio write 4k", 0.9, 0.9),
                  ("fio randread 4k", 0.9, 0.9), ("fio randwrite 4k", 0.9, 0.9))
# The contenders each goal column applies to (run.sh's TARGET_CONTENDERS), and the peers shown
# beside them without a goal.
TARGET_GROUPS = (("permissive", "permissive_uring"),
                 ("android_owner", "android_owner_uring", "android_device_uring"))
TARGET_PEERS = ("ceiling", "ceiling_uring", "bindfs", "mergerfs")


def higher_is_better(w):
    return w.endswith("rate") or w.startswith("fio ")


def target_value(cells, c, w):
    """The figure a goal is compared with: time over native's, or for rates the fraction of
    native's rate; None when the contender or native has no figure."""
    sp = speed(cells, c, w)
    if not sp:
        return None
    return sp if higher_is_better(w) else 1.0 / sp


def target_met(w, value, goal):
    return value >= goal if higher_is_better(w) else value <= goal


def missed_targets(cells):
    """(contender, step) of every target row whose figure misses its goal, in table order."""
    out = []
    for w, goal_root, goal_android in METADATA_GOALS:
        for group, goal in zip(TARGET_GROUPS, (goal_root, goal_android)):
            for c in group:
                v = target_value(cells, c, w)
                if v is not None and not target_met(w, v, goal):
                    out.append((c, w))
    return out


def profile_anchor(c, w):
    """The details.md heading of a row's profile and GitHub's id for it (tools/check_docs.py's
    slug rule: lower case, letters, digits, space, '-' and '_' kept, spaces to '-')."""
    heading = "Profile: %s, %s" % (c, w)
    kept = [ch for ch in heading.lower() if ch.isalnum() or ch in " -_"]
    return heading, "".join(kept).replace(" ", "-")


def metadata_targets(cells, kreqs, labels, files, profiles=None, details=""):
    """The metadata targets table: each row's goal, every transport's figure with its FUSE
    requests per file, and the ceiling and the peers beside them; a missed figure links to its
    row's profile in <details> when there is one. Returns (lines, rows missed)."""
    groups = TARGET_GROUPS
    profiles = profiles or {}
    L = ["## Targets for metadata", ""]
    L.append("Time as a multiple of native's (open+close and fio: the rate as a fraction of "
             "native's, higher is better), with the FUSE requests per file the kernel sent, from "
             "this run. The ceiling is a libfuse passthrough example at its most cached (see the "
             "contenders); bindfs and mergerfs are peers. Goals, not test assertions. A missed "
             "figure links to its row's system-wide profile when the run made one "
             "(`run.sh --only=targets`).")
    L.append("")
    head = ["step", "goal: permissive, root"]
    for c in groups[0]:
        head.append(labels.get(c, c))
    head.append("goal: android, owner app")
    for c in groups[1]:
        head.append(labels.get(c, c))
    peers = [c for c in TARGET_PEERS if any(k[0] == c for k in cells)]
    for c in peers:
        head.append(labels.get(c, c))
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "---|" * len(head))
    missed = []

    def figure(c, w, goal):
        cell = cells.get((c, w))
        if cell is None:
            return "n/a"
        if not cell.ok:
            return "n/a" if cell.reason.startswith("n/a") else "FAILED"
        value = target_value(cells, c, w)
        if value is None:
            return "?"
        text = "%.2f×" % value
        ops = kreqs.get((c, w), {})
        if ops and w in TREE_STEPS:
            total = sum(v for k, v in ops.items() if not k.startswith("_"))
            text += " · %.2f req/file" % (total / max(1, files))
        if goal is not None:
            met = target_met(w, value, goal)
            if not met:
                missed.append((c, w))
                if (c, w) in profiles and details:
                    text = "[%s](%s#%s)" % (text, details, profile_anchor(c, w)[1])
            text += " ✓" if met else " **✗**"
        return text

    for w, goal_root, goal_android in METADATA_GOALS:
        rate = higher_is_better(w)
        g = (lambda x: ("≥ %g×" if rate else "≤ %g×") % x)
        row = [w, g(goal_root)]
        row += [figure(c, w, goal_root) for c in groups[0]]
        row.append(g(goal_android))
        row += [figure(c, w, goal_android) for c in groups[1]]
        row += [figure(c, w, None) for c in peers]
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    return L, missed



def targets(cells):
    """(target id, description, goal text, list of (what, measured text, met bool or None))."""
    out = []

    def thr(c, w, goal, base="native"):
        s = speed(cells, c, w, base)
        cell = cells.get((c, w))
        if s is None:
            return ("%s, %s" % (c, w), cell_text(cells, c, w) if cell else "missing", False)
        return ("%s, %s" % (c, w), "%.2f× %s" % (s, base), s >= goal)

    rows = []
    for c in ("permissive", "android_owner"):
        for w in ("fio read 4k", "fio write 4k"):
            rows.append(thr(c, w, 0.95))
    out.append(("pt_seq", "passthrough seq read/write, 4 KiB", "≥ 0.95× native", rows))
    rows = []
    for c in ("permissive", "android_owner"):
        for w in ("fio randread 4k", "fio randwrite 4k"):
            rows.append(thr(c, w, 0.9))
    out.append(("pt_rand", "passthrough random read/write, 4 KiB", "≥ 0.9× native", rows))
    out.append(("red_warm", "redacted read, warm", "≥ 0.8× native",
                [thr("redacted", "photo read warm", 0.8)]))
    out.append(("red_cold", "redacted read, cold", "≥ 2× bindfs",
                [thr("redacted", "photo read cold", 2.0, "bindfs")]))
    return out


# One bullet per contender, in run order (contender_list keeps those the run had).
CONTENDER_BULLETS = OrderedDict((
    ("native", "- **native**: the lower tmpfs directory itself, as root."),
    ("ceiling", """- **FUSE ceiling (passthrough_hp, libfuse master, cached)**, when `run.sh --libfuse=DIR` (or
  `BENCH_LIBFUSE`) names a libfuse checkout: its `example/passthrough_hp.cc`, built at run time
  with the checkout's libfuse (meson and ninja, out of tree, into the work directory), run as
  `passthrough_hp --foreground --num-threads=8 -o allow_other LOWER MNT` as root, as cached as the
  example goes (without `--nocache`: names and attributes cached for a day, `FOPEN_KEEP_CACHE` and
  `FOPEN_CACHE_DIR` on every open, kernel passthrough for file data), with
  `tools/bench/ceiling_shim.c` preloaded: it drops the example's FLUSH and xattr methods before
  the session is made, so those requests are answered ENOSYS once and never sent again (the
  example keeps no POSIX locks: the kernel does), and asks for READDIRPLUS on every chunk (no
  `FUSE_CAP_READDIRPLUS_AUTO`). OPENDIR is still answered: the example's readdir needs the handle
  its opendir makes. **... io_uring**: the same over FUSE over io_uring (libfuse's `-o io_uring`).
- **FUSE ceiling (passthrough_ll, cached)**, without a checkout (CI): libfuse's own low-level passthrough example as
  Debian's libfuse3-dev 3.14 ships it (`/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c`),
  compiled at run time (`gcc -O2 ... $(pkg-config --cflags --libs fuse3)`) into the work
  directory and run as `passthrough_ll -f -o source=LOWER,cache=always,timeout=86400,writeback,allow_other MNT`,
  as root. These are the most cached of the options it offers: `cache=always` keeps the page cache
  across opens (`FOPEN_KEEP_CACHE`) and caches listings (`FOPEN_CACHE_DIR`); `timeout=86400`
  caches names and attributes for a day; `writeback` lets the kernel cache writes
  (`FUSE_CAP_WRITEBACK_CACHE`); xattrs stay off (its default: every xattr request is answered
  ENOSYS, so the kernel stops asking); READDIRPLUS (its `lo_readdirplus`; libfuse 3.14 asks for
  `FUSE_CAP_READDIRPLUS` and `_AUTO` by default) and export support are on; multithreaded (libfuse's default loop and idle-thread count). Its other
  options do not cache more: `flock` only adds lock requests, and `-o clone_fd` (a /dev/fuse fd
  per thread) measured no clear difference on the 3,000-file slice here. No policy, no
  redaction: what a FUSE filesystem can reach on this machine."""),
    ("permissive", """- **scopedfs permissive, root**: `scopedfsd --policy=policy/configs/permissive.textproto
  --posix_locks=kernel`, acting as root; POSIX semantics (`default_permissions`, `FUSE_POSIX_ACL`);
  caller-independent, so names and attributes are cached for `--entry_cache_seconds` (10 s); the
  kernel keeps POSIX locks, so no close sends FLUSH (every contender with the permissive rules
  runs so; `BENCH_PERMISSIVE_LOCKS=lower` runs them with the daemon's locks)."""),
    ("android_owner", """- **scopedfs android, owner app**: `--policy=policy/configs/android.textproto`, acting as
  com.example.notes (uid 10067, `setpriv --reuid --regid --clear-groups`) on files it owns in
  `Download/`; directories the rules show to every caller are cached for 10 s; passthrough
  opens."""),
    ("permissive_uring", """- **... io_uring**: the same daemon and policy served over FUSE over io_uring
  (`--transport=uring`; needs `/sys/module/fuse/parameters/enable_uring` = Y at mount time, which
  `run.sh --uring` sets for the run and puts back)."""),
    ("android_device_uring", """- **scopedfs android, owner app, io_uring, one user's mount**: as the android io_uring
  contender with `--mount_reached_by_one_user`, as a device mounts it (vold's per-user mount: only
  one user's apps reach it, so attributes of names every app of the user finds are cached)."""),
    ("gallery_location", """- **scopedfs android, gallery app / app without location, one user's mount**: the gallery
  workload's apps, `--policy=policy/configs/android.textproto --mount_reached_by_one_user` (a
  device's per-user mount), over `/dev/fuse` and over io_uring: com.example.gallery (uid 10061,
  READ_MEDIA_IMAGES and ACCESS_MEDIA_LOCATION: every photo raw, kernel passthrough) and
  com.example.social (uid 10062, without ACCESS_MEDIA_LOCATION: every photo through its redacted
  view, served by the daemon). They run the gallery workload only."""),
    ("redacted", """- **scopedfs redacted reader**: the same policy, as com.example.social (uid 10062, no
  ACCESS_MEDIA_LOCATION) reading camera's GPS-tagged JPEG: every read is served by the daemon's
  redacted view. It only reads that photo, so the other workloads are n/a."""),
    ("nopassthrough", """- **scopedfs --passthrough=false**: the permissive policy as root, every read and write through
  the daemon."""),
    ("bindfs", """- **bindfs** 1.14: defaults plus `--multithreaded` (bindfs is single-threaded by default; its
  man page names this option as the speed trade-off) and `-o allow_other`."""),
    ("mergerfs", """- **mergerfs** 2.33, one branch: the man page's basic setup for software that needs mmap
  (`use_ino,cache.files=partial,dropcacheonclose=true,category.create=mfs`) plus two of its
  PERFORMANCE suggestions that keep POSIX behaviour (`cache.readdir=true`,
  `security_capability=false`) and `allow_other`; attribute and entry caches at their default
  1 s."""),
))


def contender_list(contenders):
    return "\n".join(text for c, text in CONTENDER_BULLETS.items()
                     if c in contenders or (c == "permissive_uring" and any(
                         x.endswith("_uring") for x in contenders)))


# The gallery workload (run.sh run_gallery): for each transport, the ceiling and the two apps.
GALLERY_STEPS = ("gallery cold", "gallery warm")
GALLERY_ROWS = (("/dev/fuse", "ceiling", ("gallery_location", "gallery_redacted")),
                ("io_uring", "ceiling_uring", ("gallery_location_uring", "gallery_redacted_uring")))
GALLERY_GOAL = 2.0  # each app's ratio to native within 2x the ceiling's, on the same transport


def gallery_section(cells, kreqs, labels, photos):
    """The gallery workload: each app's time as a multiple of native's, beside the ceiling's on
    the same transport, against the goal (within GALLERY_GOAL times the ceiling's ratio)."""
    if not any(k[1] in GALLERY_STEPS and k[0] != "native" and cells[k].ok for k in cells):
        return []
    L = ["## The gallery workload", ""]
    L.append("What a phone's gallery does to the camera folder: `tools/bench/metaops gallery` lists "
             "`DCIM/Camera` (%s photos the camera app took, half with GPS), stats every name and "
             "reads the first 64 KiB of each, after dropping the caches (cold) and again (warm); "
             "native and the ceilings as the gallery's uid. Time as a multiple of native's, then "
             "the app's ratio over the ceiling's on the same transport (goal: at most %g), and "
             "the FUSE requests per photo the kernel sent (first run)." % (
                 "{:,}".format(photos), GALLERY_GOAL))
    L.append("")
    L.append("| step | transport | ceiling | gallery app (location) | over the ceiling | "
             "app without location (redacted) | over the ceiling |")
    L.append("|---|---|---|---|---|---|---|")

    def ratio_text(c, w):
        cell = cells.get((c, w))
        if cell is None or not cell.ok:
            return None, "n/a" if cell is None or cell.reason.startswith("n/a") else "FAILED"
        sp = speed(cells, c, w)
        if not sp:
            return None, "?"
        text = "%.2f×" % (1.0 / sp)
        ops = kreqs.get((c, w), {})
        if ops and photos:
            total = sum(v for k, v in ops.items() if not k.startswith("_"))
            text += " · %.1f req/photo" % (total / photos)
        return 1.0 / sp, text

    for w in GALLERY_STEPS:
        for transport, ceiling, apps in GALLERY_ROWS:
            cr, ctext = ratio_text(ceiling, w)
            row = [w, transport, ctext]
            for app in apps:
                ar, atext = ratio_text(app, w)
                row.append(atext)
                if ar is None or cr is None:
                    row.append("n/a")
                else:
                    over = ar / cr
                    row.append("%.2f× %s" % (over, "✓" if over <= GALLERY_GOAL else "**✗**"))
            L.append("| " + " | ".join(row) + " |")
    L.append("")
    reasons = sorted({(c, cells[(c, w)].reason) for w in GALLERY_STEPS
                      for _, ceiling, apps in GALLERY_ROWS for c in (ceiling,) + apps
                      if (c, w) in cells and not cells[(c, w)].ok})
    for c, why in reasons:
        L.append("- %s: %s" % (labels.get(c, c), why.replace("|", "/")))
    if reasons:
        L.append("")
    return L


AB_CONTENDER_TEXT = """- **permissive rules, ANDROID semantics** (root, and app uid): the A/B of POSIX semantics. A copy of
  `policy/configs/permissive.textproto` whose only change is `semantics: SEMANTICS_ANDROID`: the
  same rule, so the same decisions, but no `default_permissions`, no `FUSE_POSIX_ACL`, creates as
  the daemon, and only `user.*` xattrs in the view. Measured next to the permissive policy in
  every run, in alternating order.
- **scopedfs permissive, app uid** and its ANDROID twin: as the contenders above but acting as
  com.example.notes (uid 10067, no supplementary groups) in `Download/app/`, a directory it owns;
  fio and the rates use the same files as root (the fio file is the app's, the rate files are
  readable by all).
"""


def time_ratio(cells, a, b, w):
    """a's time over b's for workload w (for rates: b's rate over a's), from the medians, with the
    range of the per-run ratios (runs are paired: a and b ran next to each other in each run)."""
    ca, cb = cells.get((a, w)), cells.get((b, w))
    if not ca or not cb or not ca.ok or not cb.ok or not ca.median or not cb.median:
        return None
    def one(x, y):
        return y / x if ca.unit in HIGHER_IS_BETTER else x / y
    per_run = [one(x, y) for x, y in zip(ca.values, cb.values) if x and y]
    return one(ca.median, cb.median), per_run


def per_unit(ops, unit_count):
    calls = ops.get("_calls")
    n = calls if calls else unit_count
    total = sum(v for k, v in ops.items() if not k.startswith("_"))
    return total, max(1, n)


def ab_section(cells, workloads, reqs, tree_files, runs):
    """The "Cost of POSIX semantics" section: lines of markdown, and (rows within budget, rows)."""
    L = []
    L.append("## Cost of POSIX semantics")
    L.append("")
    L.append("The budget: the permissive policy may lose at most 5%% to POSIX semantics. Each "
             "row compares the permissive policy as shipped (POSIX) with a copy of it that differs "
             "only in `semantics: SEMANTICS_ANDROID` (generated by run.sh, accepted by `scopedfsctl "
             "validate`), acting as the same caller on the same lower tree; the two ran next to each "
             "other in each of the %s run%s, in alternating order. POSIX/ANDROID is the ratio of the "
             "median times (for MB/s and ops/s, of the median rates inverted), with the range of the "
             "per-run ratios; within budget means at most %.2f. Requests: the FUSE requests the "
             "daemon answered in the first run, per file of the tree for the tree steps, per call "
             "for the rates, per job for fio; extra: the ops POSIX asks more (or fewer) of, per "
             "the same unit. Times on this shared machine vary by 10-20%%; request counts are "
             "deterministic up to cache expiry (names and attributes are cached for 10 s)." %
             (runs, "" if runs == "1" else "s", AB_BUDGET))
    L.append("")
    L.append("| workload | caller | POSIX | ANDROID | POSIX/ANDROID | within budget | requests "
             "POSIX | requests ANDROID | extra under POSIX |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    within = total = 0
    for a, b, caller in AB_PAIRS:
        for w in workloads:
            if w in ("files seen", "decision (mix)"):
                continue
            ca, cb = cells.get((a, w)), cells.get((b, w))
            if ca is None or cb is None:
                continue
            r = time_ratio(cells, a, w=w, b=b)
            if r is None:
                ratio_text, ok_text = "n/a", "n/a"
                if not ca.ok and not ca.reason.startswith("n/a"):
                    ok_text = "**FAILED**: " + ca.reason.replace("|", "/")
                elif not cb.ok and not cb.reason.startswith("n/a"):
                    ok_text = "**FAILED** (ANDROID): " + cb.reason.replace("|", "/")
            else:
                ratio, per_run = r
                total += 1
                ok = ratio <= AB_BUDGET
                within += ok
                rng = ""
                if len(per_run) > 1:
                    rng = " (%.2f-%.2f)" % (min(per_run), max(per_run))
                ratio_text = "%.2f×%s" % (ratio, rng)
                ok_text = "yes" if ok else "**no**"
            step = "fio" if w.startswith("fio ") else w
            unit = {"fio": "job"}.get(step, "call" if w.endswith("rate") else "file")
            ra, rb = reqs.get((a, step), {}), reqs.get((b, step), {})
            req_a = req_b = extra = ""
            if ra or rb:
                ta, na = per_unit(ra, tree_files)
                tb, nb = per_unit(rb, tree_files)
                req_a = "%.2f/%s" % (ta / na, unit)
                req_b = "%.2f/%s" % (tb / nb, unit)
                diffs = []
                for op in set(ra) | set(rb):
                    if op.startswith("_"):
                        continue
                    d = ra.get(op, 0) / na - rb.get(op, 0) / nb
                    if abs(d) >= 0.005:
                        diffs.append((op, d))
                diffs.sort(key=lambda kv: -abs(kv[1]))
                extra = ", ".join("%s %+.2f" % (op, d) for op, d in diffs[:4]) or "none"
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                w, caller, fmt(ca.median, ca.unit) if ca.ok else "n/a",
                fmt(cb.median, cb.unit) if cb.ok else "n/a", ratio_text, ok_text, req_a, req_b,
                extra))
    L.append("")
    L.append("%d of %d rows within the %.0f%% budget." % (within, total, (AB_BUDGET - 1) * 100))
    L.append("")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantics.md")
    if os.path.exists(notes):
        L.append(open(notes).read().strip())
        L.append("")
    return L


def write_chart(cells, workloads, contenders, labels, out_dir):
    """Draws benchmarks.png into out_dir; returns None, or why there is no chart."""
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot is not installed (apt-get install gnuplot-nox): no chart."
    shown = [c for c in contenders if c not in ("native", "policy_engine") and c not in AB_CONTENDERS]
    ws = [w for w in workloads if w != "files seen" and w != "decision (mix)"]
    dat = os.path.join(out_dir, "benchmarks.dat")
    with open(dat, "w") as f:
        f.write("workload\t" + "\t".join('"%s"' % labels.get(c, c) for c in shown) + "\n")
        for w in ws:
            vals = []
            for c in shown:
                s = speed(cells, c, w)
                vals.append("%.4f" % s if s else "NaN")
            f.write('"%s"\t' % w + "\t".join(vals) + "\n")
    png = os.path.join(out_dir, "benchmarks.png")
    script = """
set terminal pngcairo size 1600,700 font ",10"
set output '%s'
set title "Speed relative to native (1 = native, higher is better; missing bar = failed or n/a)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.003:3]
set grid ytics
set xtics rotate by -35 scale 0
set key outside right top vertical
set ytics ("0.01" 0.01, "0.03" 0.03, "0.1" 0.1, "0.3" 0.3, "0.5" 0.5, "1" 1, "2" 2)
plot for [i=2:%d] '%s' using i:xtic(1) title columnheader(i), 1 with lines lc rgb "black" dt 2 notitle
""" % (png, len(shown) + 1, dat)
    r = subprocess.run([gp], input=script, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return "gnuplot failed: " + r.stderr.strip().splitlines()[-1]
    return None


def main():
    a = parse_args()
    labels = dict(kv.split("=", 1) for kv in a.labels.split(";") if kv)
    labels["policy_engine"] = "policy engine"
    cells, workloads, contenders = load_results(a.results)
    m = machine(a.rev, a.load)
    bench_contenders = [c for c in contenders if c != "policy_engine"]
    reqs = defaultdict(lambda: defaultdict(int))
    if os.path.exists(a.requests):
        for line in open(a.requests):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4:
                reqs[(parts[0], parts[1])][parts[2]] += int(parts[3])
    kreqs = defaultdict(lambda: defaultdict(int))
    if a.kernel_requests and os.path.exists(a.kernel_requests):
        for line in open(a.kernel_requests):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4:
                kreqs[(parts[0], parts[1])][parts[2]] += int(parts[3])
    if a.only == "semantics":
        write_semantics_only(a, cells, workloads, reqs, labels, machine(a.rev, a.load))
        return
    if a.only == "targets":
        write_targets_only(a, cells, workloads, bench_contenders, reqs, kreqs, labels, m)
        return
    if a.only == "gallery":
        L = header_lines(a, m, ": the gallery workload")
        L.append("## Contenders")
        L.append("")
        L.append(contender_list(bench_contenders))
        L.append("")
        L.extend(gallery_section(cells, kreqs, labels, int(a.gallery_files)))
        L.extend(every_figure(cells, labels))
        write_lines(os.path.join(a.out, "BENCHMARKS.md"), L)
        return
    chart_problem = write_chart(cells, workloads, bench_contenders, labels, a.data)
    chart_link = os.path.relpath(os.path.join(a.data, "benchmarks.png"), a.out)

    L = []
    L.append("# Benchmarks")
    L.append("")
    L.append("Written by `tools/bench/run.sh%s` (do not edit by hand; rerun it). Every contender "
             "sits on the same tmpfs lower tree in the same run. Each figure is the median of %s "
             "run%s (min and max in the full table below); ratios are to native in the same run." %
             ("" if a.mode == "full" else " --" + a.mode, a.runs, "" if a.runs == "1" else "s"))
    L.append("")
    L.append("- Machine: %s, %s cores, %s RAM; kernel %s; load average at the end %s "
             "(FUSE round trips each need the daemon's thread scheduled, so on a busy 2-core "
             "machine they suffer more than native calls; expect ±10-20%% noise)." %
             (m["cpu"], m["cores"], m["mem"], m["kernel"], m["load"]))
    L.append("- scopedfs %s; %s." % (m["rev"], ", ".join(m["pkgs"])))
    L.append("- Source tree: `%s`, %s files (non-directory entries); fio files %s MiB; "
             "suite time %.0f s." % (a.tree, "{:,}".format(int(a.tree_files)), a.fio_mb,
                                     float(a.seconds)))
    L.append("")
    if chart_problem:
        L.append("Chart: " + chart_problem)
    else:
        L.append("![speed relative to native](%s)" % chart_link)
    L.append("")

    L.append("## Contenders")
    L.append("")
    L.append(contender_list(bench_contenders) + "\n" + AB_CONTENDER_TEXT)
    L.append("")
    L.append("## Workloads")
    L.append("")
    L.append("""- **fio**: one job, psync, 4 KiB and 1 MiB blocks, sequential and random, read and
  write, on a %s MiB file (%s), page cache kept between jobs (`--invalidate=0`). The redacted
  reader reads the photo instead (same size).
- **photo read cold / warm**: fio, 128 KiB sequential read of the whole %s MiB GPS-tagged JPEG,
  first after `echo 3 > /proc/sys/vm/drop_caches`, then again.
- **open+close rate, stat rate**: `tools/bench/metaops`, one name component per call, over
  existing empty files, for %s s each.
- **source tree**: `tar x --no-same-owner` of the tree into `Download/` through the mount; the
  count of files `find` sees afterwards (a mismatch fails every step); `ls -lR` after dropping
  the kernel's caches (cold) and again (warm); `find -size +16k` (its count must match
  native's); `grep -r -c -F kmalloc`; `du -s`; `rm -rf` (the tree must be gone).
- **policy decision**: `//policy:engine_benchmark`, `BM_DecideMix` (the Android policy, 200
  apps, a 4,096-request mix), ns per decision.""" % (
        a.fio_mb, "time-based, %s s per job after a ramp" % a.fio_runtime
        if a.fio_runtime not in ("0", "") else "one pass", a.fio_mb,
        "?" if a.mode == "" else {"full": "1", "quick": "0.5", "tiny": "0.1"}.get(a.mode, "?")))
    L.append("")

    L.append("## Results (median; ratio to native in brackets)")
    L.append("")
    L.append("For MB/s and ops/s the ratio is contender/native throughput (higher is better); for "
             "seconds it is contender/native time (lower is better).")
    L.append("")
    shown = [c for c in bench_contenders if c not in AB_CONTENDERS]
    L.append("| workload | " + " | ".join(labels.get(c, c) for c in shown) + " |")
    L.append("|---|" + "---|" * len(shown))
    for w in workloads:
        if w == "decision (mix)":
            continue
        L.append("| %s | " % w + " | ".join(cell_text(cells, c, w) for c in shown) + " |")
    eng = cells.get(("policy_engine", "decision (mix)"))
    if eng:
        L.append("")
        if eng.ok:
            L.append("Policy decision (`BM_DecideMix`): median %.0f ns per decision (min %.0f, "
                     "max %.0f; %d repetitions); there is no native counterpart." %
                     (eng.median, eng.min, eng.max, len(eng.values)))
        else:
            L.append("Policy decision: **FAILED**: " + eng.reason)
    L.append("")

    meta_lines, meta_missed = metadata_targets(cells, kreqs, labels, int(a.tree_files))
    L.extend(meta_lines)

    notes = []
    L.append("## Targets")
    L.append("")
    L.append("Passthrough and redaction goals. Goals, not test assertions.")
    L.append("")
    L.append("| target | goal | measured | met | why missed |")
    L.append("|---|---|---|---|---|")
    for tid, desc, goal, rows in targets(cells):
        if tid != "tree" and not all(met for _, _, met in rows):
            notes.append((tid, desc))
        for what, measured, met in rows:
            row_goal = goal
            if tid == "tree":
                row_goal = "≤ %d× native, ahead of bindfs and mergerfs" % (
                    4 if what == "android_owner, ls -lR warm" else 2)
                if what.endswith("files seen"):
                    row_goal = "every file"
            why = ""
            if not met:
                if tid == "tree":
                    c, step = [x.strip() for x in what.split(",", 1)]
                    why = request_summary(reqs, c, step, int(a.tree_files)) or "see below"
                    if step == "files seen":
                        why = "files missing through the mount"
                else:
                    why = "note %d below" % (len(notes))
            L.append("| %s: %s | %s | %s | %s | %s |" % (
                desc, what.replace("android_owner", "android owner"), row_goal, measured.replace("|", "/"),
                "yes" if met else "**no**", why))
    L.append("")
    for i, (tid, desc) in enumerate(notes, 1):
        L.append("%d. %s: %s" % (i, desc, WHY[tid]))
    L.append("")
    if meta_missed:
        L.append("Metadata rows missed: " + WHY["tree"])
        L.append("")

    L.append("## Every tree step (source tree)")
    L.append("")
    cols = [c for c in ("native", "ceiling", "permissive", "android_owner", "android_strict", "bindfs", "mergerfs") if any(k[0] == c for k in cells)]
    L.append("| step | " + " | ".join(labels.get(c, c) for c in cols) + " |")
    L.append("|---|" + "---|" * len(cols))
    for w in ("tar x", "ls -lR warm", "ls -lR cold", "find -size", "grep -r", "du -s", "rm -rf",
              "files seen"):
        L.append("| %s | " % w + " | ".join(cell_text(cells, c, w) for c in cols) + " |")
    L.append("")

    L.extend(ceiling_section(cells, kreqs, labels, int(a.tree_files)))
    L.extend(gallery_section(cells, kreqs, labels, int(a.gallery_files)))

    L.extend(ab_section(cells, workloads, reqs, int(a.tree_files), a.runs))

    details_path = os.path.join(a.data, "details.md")
    L.append("The per-run details (FUSE requests per step by op, the daemon's profile, the reading "
             "of the full run, and every figure of every run) are in [%s](%s)." %
             (os.path.relpath(details_path, a.out), os.path.relpath(details_path, a.out)))
    L.append("")
    write_lines(os.path.join(a.out, "BENCHMARKS.md"), L)

    L = details_start(a, m, "run")
    L.append("## Where the time goes")
    L.append("")
    if reqs:
        L.append("FUSE requests the daemon answered per tree step (first run, from "
                 "`scopedfsctl --socket=... stats --json`), with the %s files of the tree:" %
                 "{:,}".format(int(a.tree_files)))
        L.append("")
        L.append("| contender | step | requests | per file | top ops |")
        L.append("|---|---|---|---|---|")
        for (c, step), ops in reqs.items():
            if c in AB_CONTENDERS or step not in TREE_STEPS:
                continue  # the A/B contenders' counts are in "Cost of POSIX semantics"
            ops = {k: v for k, v in ops.items() if not k.startswith("_")}
            total = sum(ops.values())
            top = sorted(ops.items(), key=lambda kv: -kv[1])[:5]
            L.append("| %s | %s | %s | %.1f | %s |" % (
                labels.get(c, c), step, "{:,}".format(total), total / max(1, int(a.tree_files)),
                ", ".join("%s %s" % (k, "{:,}".format(v)) for k, v in top)))
        L.append("")
    prof = open(a.profile).read().strip() if os.path.exists(a.profile) else ""
    if prof:
        L.append("The daemon's profile during one extra, untimed pass of each step, a fresh daemon "
                 "started under `perf record -e cpu-clock -F 999 --` (attaching with `-p` gets no "
                 "samples on this kernel); top symbols by self time "
                 "(`perf report --no-children --sort dso,symbol`):")
        L.append("")
        L.append("```")
        L.append(prof)
        L.append("```")
        L.append("")
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "analysis.md")
    if os.path.exists(notes):
        L.append(open(notes).read().strip())
        L.append("")

    L.extend(every_figure(cells, labels))
    write_lines(details_path, L)


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines))


def details_start(a, m, run):
    """The opening lines of details.md: the revision and a link back to the summary."""
    return ["# Benchmark details: %s" % m["rev"], "",
            "The per-run dump of the %s summarised in [BENCHMARKS.md](%s)." %
            (run, os.path.relpath(os.path.join(a.out, "BENCHMARKS.md"), a.data)), ""]


def every_figure(cells, labels):
    L = []
    L.append("## Every figure")
    L.append("")
    L.append("| contender | workload | median | min | max | × native | runs |")
    L.append("|---|---|---|---|---|---|---|")
    for (c, w), cell in cells.items():
        if cell.ok:
            r = ratio(cells, c, w)
            L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                labels.get(c, c), w, fmt(cell.median, cell.unit), fmt(cell.min, cell.unit),
                fmt(cell.max, cell.unit), "%.2f" % r if r is not None and c != "native" else "",
                " ".join("%.4g" % v for v in cell.values)))
        else:
            L.append("| %s | %s | %s | | | | |" % (labels.get(c, c), w,
                                                  ("n/a: " + cell.reason[5:]) if cell.reason.startswith("n/a") else
                                                  "**FAILED**: " + cell.reason.replace("|", "/")))
    L.append("")
    return L


def header_lines(a, m, what):
    L = ["# Benchmarks%s" % what, ""]
    L.append("Written by `tools/bench/run.sh%s%s` (do not edit by hand; rerun it). Every contender "
             "sits on the same tmpfs lower tree in the same run. Each figure is the median of %s "
             "run%s (min and max in the details); ratios are to native in the same run." %
             ("" if a.mode == "full" else " --" + a.mode, " --only=" + a.only if a.only else "",
              a.runs, "" if a.runs == "1" else "s"))
    L.append("")
    L.append("- Machine: %s, %s cores, %s RAM; kernel %s; load average at the end %s "
             "(FUSE round trips each need the daemon's thread scheduled, so on a busy 2-core "
             "machine they suffer more than native calls; expect ±10-20%% noise)." %
             (m["cpu"], m["cores"], m["mem"], m["kernel"], m["load"]))
    L.append("- scopedfs %s; %s." % (m["rev"], ", ".join(m["pkgs"])))
    L.append("- Source tree: `%s`, %s files (non-directory entries); fio files %s MiB; "
             "suite time %.0f s (profiles included)." % (
                 a.tree, "{:,}".format(int(a.tree_files)), a.fio_mb, float(a.seconds)))
    L.append("")
    return L


def write_targets_only(a, cells, workloads, contenders, reqs, kreqs, labels, m):
    """BENCHMARKS.md of `run.sh --only=targets`: the targets table first, each missed figure
    linked to its row's profile in details.md; details.md has the profiles."""
    profiles = load_profiles(a.profiles)
    details_path = os.path.join(a.data, "details.md")
    details_rel = os.path.relpath(details_path, a.out)
    files = int(a.tree_files)
    L = header_lines(a, m, ": metadata targets")
    meta_lines, meta_missed = metadata_targets(cells, kreqs, labels, files, profiles, details_rel)
    L.extend(meta_lines)
    profiled = sum(1 for k in meta_missed if k in profiles)
    L.append("%d of %d target figures missed their goal; %d of them profiled (linked above; "
             "every profile is in [%s](%s))." % (
                 len(meta_missed), sum(1 for w, _, _ in METADATA_GOALS for g in TARGET_GROUPS
                                       for c in g if target_value(cells, c, w) is not None),
                 profiled, details_rel, details_rel))
    L.append("")
    L.append("## Contenders")
    L.append("")
    L.append(contender_list(contenders))
    L.append("")
    L.append("## Workloads")
    L.append("")
    L.append("""- **fio**: one job each, psync, 4 KiB blocks, sequential and random, read and write,
  on a %s MiB file the app owns (%s), page cache kept between jobs (`--invalidate=0`).
  scopedfs opens it with kernel passthrough: the daemon sees no READ or WRITE.
- **open+close rate**: `tools/bench/metaops open`, one name component per call, over existing
  empty files, for %s s.
- **source tree**: `tar x --no-same-owner` of the tree into `Download/` through the mount; the
  count of files `find` sees afterwards (a mismatch fails every step); `ls -lR` after dropping
  the kernel's caches (cold) and again (warm); `find -size +16k` (its count must match
  native's); `grep -r -c -F kmalloc`; `du -s`; `rm -rf` (the tree must be gone).
- **order**: every contender once per run, in the order listed, %s; the per-row profiles
  come after the last run, so perf never runs during a timed step.""" % (
        a.fio_mb, "time-based, %s s per job after a ramp" % a.fio_runtime
        if a.fio_runtime not in ("0", "") else "one pass",
        {"full": "1", "quick": "0.5", "tiny": "0.1"}.get(a.mode, "?"),
        "1 run" if a.runs == "1" else "%s runs" % a.runs))
    L.append("")
    L.append("## Results (median; ratio to native in brackets)")
    L.append("")
    L.append("| workload | " + " | ".join(labels.get(c, c) for c in contenders) + " |")
    L.append("|---|" + "---|" * len(contenders))
    for w in workloads:
        if w == "decision (mix)":
            continue
        L.append("| %s | " % w + " | ".join(cell_text(cells, c, w) for c in contenders) + " |")
    L.append("")
    L.extend(ceiling_section(cells, kreqs, labels, files))
    L.extend(gallery_section(cells, kreqs, labels, int(a.gallery_files)))
    L.append("The per-run details (the profiles of the missed rows, FUSE requests by op, every "
             "figure of every run) are in [%s](%s)." % (details_rel, details_rel))
    L.append("")
    write_lines(os.path.join(a.out, "BENCHMARKS.md"), L)

    D = details_start(a, m, "targets run")
    D.extend(profile_sections(profiles, kreqs, reqs, labels, files, meta_missed))
    D.extend(every_figure(cells, labels))
    write_lines(details_path, D)


def write_semantics_only(a, cells, workloads, reqs, labels, m):
    """BENCHMARKS.md of `run.sh --only=semantics`: the A/B alone."""
    L = ["# Benchmarks: the cost of POSIX semantics", ""]
    L.append("Written by `tools/bench/run.sh --only=semantics%s`: only native and the four A/B "
             "contenders, %s runs. Machine: %s, %s cores; kernel %s; load average at the end %s; "
             "scopedfs %s. Source tree `%s`, %s files; fio files %s MiB; suite time %.0f s." % (
                 "" if a.mode == "full" else " --" + a.mode, a.runs, m["cpu"], m["cores"],
                 m["kernel"], m["load"], m["rev"], a.tree, "{:,}".format(int(a.tree_files)),
                 a.fio_mb, float(a.seconds)))
    L.append("")
    L.append("## Contenders")
    L.append("")
    L.append(AB_CONTENDER_TEXT.strip())
    L.append("")
    L.extend(ab_section(cells, workloads, reqs, int(a.tree_files), a.runs))
    L.extend(every_figure(cells, labels))
    write_lines(os.path.join(a.out, "BENCHMARKS.md"), L)


if __name__ == "__main__":
    if "--profile-summary" in sys.argv[1:]:
        profile_summary(sys.argv[1:])
    elif "--misses" in sys.argv[1:]:
        print_misses(sys.argv[1:])
    else:
        main()
