#!/usr/bin/env python3
"""The mutation check: breaks the daemon's guarantees one at a time and shows the suite notices.

Each mutant in mutants.txt (beside this file) replaces one exact snippet of one source file; this
script applies it in a scratch git worktree of the commit under test (never in the developer's
tree), builds, runs the tests named to catch it, and reports it killed (a test failed) or
SURVIVED (every test passed). A mutant whose snippet is not found exactly once is stale: an error,
never a pass. Before any mutant, the same tests run on the unchanged tree and must pass there and
run at least one case each, so a kill is the mutant's doing, not a broken or empty test.

Usage: tools/mutants/run.sh [--only=ID,...] [--rotate=N] [--commit=REV] [--in_place] [--list]
       tools/mutants/run.sh --check   (no build: every snippet applies to this checkout)

--in_place mutates the checkout itself instead (each file put back as it was, also on SIGINT,
SIGTERM or SIGHUP): no second Bazel output base, so everything the tests need is built already.
tools/test.sh uses it; a file with uncommitted changes is not mutated (its mutants are skipped).
Every mutant's snippet is checked on every run, chosen or not, so a stale one fails any run.
"""

import argparse
import datetime
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

# The source tree, also when run from Bazel's runfiles (symlinks into the tree): //tools:mutants_test.
HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIELDS = ("invariant", "breaks", "file", "tests")


class Mutant:
    def __init__(self, ident, line):
        self.id = ident
        self.line = line  # where it starts in mutants.txt, for error messages
        self.fields = {}
        self.original = None
        self.replacement = None

    def tests(self):
        """[(target, gtest filter or None)] from `tests: //a:b@Filter.*; //c:d`."""
        specs = []
        for spec in self.fields["tests"].split(";"):
            spec = spec.strip()
            target, _, flt = spec.partition("@")
            specs.append((target.strip(), flt.strip() or None))
        return specs


def parse(path):
    """mutants.txt: blocks of `[id]`, `key: value` lines, then <<< original === replacement >>>."""
    mutants, cur, mode, buf = [], None, None, []
    with open(path) as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if mode in ("orig", "repl"):
            if line == "===" and mode == "orig":
                cur.original, mode, buf = "\n".join(buf), "repl", []
            elif line == ">>>" and mode == "repl":
                cur.replacement, mode, buf = "\n".join(buf), None, []
            else:
                buf.append(line)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[([a-z0-9][a-z0-9-]*)\]", line)
        if m:
            cur = Mutant(m.group(1), n)
            mutants.append(cur)
            continue
        if cur is None:
            sys.exit(f"{path}:{n}: text before the first [id]")
        if line == "<<<":
            mode, buf = "orig", []
            continue
        key, sep, value = line.partition(":")
        if not sep or key not in FIELDS:
            sys.exit(f"{path}:{n}: expected one of {', '.join(FIELDS)}, <<< or [id]: {line!r}")
        cur.fields[key] = (cur.fields.get(key, "") + " " + value.strip()).strip()
    if mode is not None:
        sys.exit(f"{path}: the last snippet is not closed with >>>")
    seen = set()
    for m in mutants:
        missing = [k for k in FIELDS if k not in m.fields]
        if missing or m.original is None or m.replacement is None:
            sys.exit(f"{path}:{m.line}: [{m.id}] lacks {missing or 'its <<< === >>> snippets'}")
        if m.original == m.replacement:
            sys.exit(f"{path}:{m.line}: [{m.id}] changes nothing")
        if m.id in seen:
            sys.exit(f"{path}:{m.line}: [{m.id}] twice")
        seen.add(m.id)
    return mutants


def rotate(mutants, n, key):
    """N mutants, a window that moves by N each day (or each `key`), so CI covers them all in turn."""
    if n >= len(mutants):
        return mutants
    start = (int(key) * n) % len(mutants)
    return [mutants[(start + i) % len(mutants)] for i in range(n)]


def git(*args, cwd=REPO, **kw):
    return subprocess.run(["git", *args], cwd=cwd, check=True, text=True, capture_output=True, **kw)


def scratch_tree(commit):
    """A detached worktree of `commit` under /tmp, made once per checkout and reset at every run,
    so its Bazel output base (and what it has built) is kept between runs."""
    digest = hashlib.sha1(REPO.encode()).hexdigest()[:8]
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"scopedfs-mutants-{digest}")
    if not os.path.isdir(os.path.join(path, ".git")) and not os.path.isfile(
        os.path.join(path, ".git")
    ):
        if os.path.exists(path):
            shutil.rmtree(path)
        # --force: the path may still be registered from a scratch tree since deleted.
        git("worktree", "add", "--force", "--detach", path, commit)
    git("checkout", "--force", "--detach", commit, cwd=path)
    git("reset", "--hard", cwd=path)  # whatever an interrupted run left there
    git("clean", "-fdq", "-e", "/bazel-*", cwd=path)
    return path


def bazel_test(tree, target, flt, log):
    cmd = ["bazel", "test", target, "--test_output=errors", "--test_summary=terse"]
    if flt:
        cmd.append(f"--test_filter={flt}")
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        return subprocess.run(cmd, cwd=tree, stdout=out, stderr=subprocess.STDOUT).returncode


def test_log(tree, target):
    rel = target.lstrip("/").replace(":", "/")
    return os.path.join(tree, "bazel-testlogs", rel, "test.log")


def baseline(tree, mutants, logdir):
    """Every (target, filter) the chosen mutants use passes on the unchanged tree and runs a case."""
    specs = sorted({s for m in mutants for s in m.tests()}, key=lambda s: (s[0], s[1] or ""))
    bad = 0
    for target, flt in specs:
        log = os.path.join(logdir, "baseline.log")
        rc = bazel_test(tree, target, flt, log)
        name = target + (f"@{flt}" if flt else "")
        text = ""
        if os.path.exists(test_log(tree, target)):
            with open(test_log(tree, target), errors="replace") as f:
                text = f.read()
        if rc != 0:
            print(f"baseline: {name} fails on the unchanged tree (exit {rc}; {log})")
            bad += 1
        elif re.search(r"^\[  SKIPPED \]|^SKIPPED: ", text, re.M):
            print(f"baseline: {name} skipped a case on the unchanged tree")
            bad += 1
        elif "[==========]" in text and re.search(r"^\[==========\] 0 tests", text, re.M):
            print(f"baseline: {name} runs no test case (filter matches nothing)")
            bad += 1
    return bad


def stale(tree, m):
    """Why `m` cannot be applied to `tree`, or None."""
    try:
        with open(os.path.join(tree, m.fields["file"])) as f:
            count = f.read().count(m.original)
    except OSError as e:
        return f"cannot read {m.fields['file']}: {e.strerror}"
    if count != 1:
        return f"its snippet is found {count} times in {m.fields['file']}, not once"
    return None


def run_mutant(tree, m, logdir):
    """'killed', 'SURVIVED', 'STALE' or 'BROKEN' (the mutant does not build), with what killed it."""
    path = os.path.join(tree, m.fields["file"])
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        return "STALE", f"cannot read {m.fields['file']}: {e.strerror}"
    count = text.count(m.original)
    if count != 1:
        return "STALE", f"its snippet is found {count} times in {m.fields['file']}, not once"
    log = os.path.join(logdir, f"{m.id}.log")
    try:
        with open(path, "w") as f:
            f.write(text.replace(m.original, m.replacement))
        for target, flt in m.tests():
            rc = bazel_test(tree, target, flt, log)
            name = target + (f"@{flt}" if flt else "")
            if rc == 3:  # built, and a test failed
                return "killed", name
            if rc != 0:
                return "BROKEN", f"bazel exit {rc} on {name} (see {log})"
        return "SURVIVED", "all of " + ", ".join(t for t, _ in m.tests())
    finally:
        with open(path, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--rotate", type=int, help="run N mutants, chosen by --rotate_key")
    ap.add_argument(
        "--rotate_key",
        help="what picks the rotating window (default: days since 1970, UTC)",
    )
    ap.add_argument("--commit", default="HEAD", help="the commit to mutate (default HEAD)")
    ap.add_argument("--in_place", action="store_true", help="mutate this checkout (see above)")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument(
        "--check", action="store_true", help="only check every snippet against this checkout"
    )
    ap.add_argument("--table", action="store_true", help="print docs/testing.md's table and exit")
    ap.add_argument("--no_baseline", action="store_true", help="skip the unchanged-tree run")
    ap.add_argument("--mutants", default=os.path.join(HERE, "mutants.txt"))
    args = ap.parse_args()

    everything = mutants = parse(args.mutants)
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in {m.id for m in mutants}]
        if unknown:
            sys.exit(f"mutants: no such mutant: {', '.join(unknown)}")
        mutants = [m for m in mutants if m.id in wanted]
    if args.rotate:
        key = args.rotate_key or str(
            (datetime.datetime.now(datetime.timezone.utc).date() - datetime.date(1970, 1, 1)).days
        )
        mutants = rotate(mutants, args.rotate, int(key))
    if args.table:
        print("| mutant | what it breaks | invariant | the tests that kill it |")
        print("|---|---|---|---|")
        for m in mutants:
            tests = "; ".join(f"`{t}`" + (f" (`{f}`)" if f else "") for t, f in m.tests())
            print(f"| `{m.id}` | {m.fields['breaks']} | {m.fields['invariant']} | {tests} |")
        return 0
    if args.check:
        bad = [(m.id, stale(REPO, m)) for m in everything if stale(REPO, m)]
        for ident, why in bad:
            print(f"{ident} STALE ({why})")
        print(f"mutants: {len(everything) - len(bad)} of {len(everything)} apply to {REPO}")
        return 1 if bad else 0
    if args.list:
        for m in mutants:
            print(f"{m.id}\t{m.fields['file']}\t{m.fields['tests']}")
        return 0

    # SIGTERM and SIGHUP unwind like ^C, so every `finally` puts its file back.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    started = time.time()
    if args.in_place:
        tree = REPO
        commit = git("rev-parse", "HEAD").stdout.strip()
        logdir = os.path.join(REPO, "bazel-mutant-logs")
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.split("\n")
        dirty = {line[3:] for line in dirty if line}
        for m in [m for m in mutants if m.fields["file"] in dirty]:
            print(f"{m.id} SKIPPED ({m.fields['file']} has uncommitted changes: not mutated)")
        mutants = [m for m in mutants if m.fields["file"] not in dirty]
    else:
        commit = git("rev-parse", "--verify", args.commit + "^{commit}").stdout.strip()
        tree = scratch_tree(commit)
        logdir = os.path.join(tree, "mutant-logs")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    print(f"mutants: {len(mutants)} at {commit[:10]} in {tree} (logs in {logdir})", flush=True)
    stale_ids = []
    for m in everything:
        why = stale(tree, m)
        if why:
            print(f"{m.id} STALE ({why})")
            stale_ids.append(m.id)
    mutants = [m for m in mutants if m.id not in stale_ids]
    results = {i: "STALE" for i in stale_ids}
    try:
        if not args.no_baseline:
            if baseline(tree, mutants, logdir):
                print("mutants: the unchanged tree fails or skips the tests above: no verdicts")
                return 2
            print(f"baseline: every test passes unchanged ({time.time() - started:.0f} s)", flush=True)
        for m in mutants:
            t0 = time.time()
            verdict, detail = run_mutant(tree, m, logdir)
            results[m.id] = verdict
            print(f"{m.id} {verdict} ({detail}, {time.time() - t0:.0f} s)", flush=True)
    finally:
        if not args.in_place:
            git("checkout", "--force", "--", ".", cwd=tree)
            # The scratch tree's Bazel server holds memory that the developer's needs.
            subprocess.run(["bazel", "shutdown"], cwd=tree, capture_output=True)
    counts = {v: list(results.values()).count(v) for v in ("killed", "SURVIVED", "STALE", "BROKEN")}
    print(
        f"mutants: {counts['killed']}/{len(results)} killed, {counts['SURVIVED']} survived, "
        f"{counts['STALE']} stale, {counts['BROKEN']} broken, at {commit[:10]}, "
        f"{time.time() - started:.0f} s"
    )
    return 0 if counts["killed"] == len(results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        sys.exit(f"mutants: interrupted ({e or 'SIGINT'}); every mutated file was put back")
