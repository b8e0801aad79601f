"""The runner the differential redaction tests share (differential_image_test.py and
differential_formats_test.py). Each test brings its variants and its oracle; the runner writes
every variant, asks the oracle what it finds in the original, has `scopedfsctl scan
--redacted_out` write the copy a redacted reader gets, asks the oracle again, and judges:

  inert          the oracle finds nothing in the original: the variant proves nothing
  redacted       the oracle finds something in the original and nothing in the copy
  fail-closed    the scan says malformed (under uncertain_location DENY the read is refused) and
                 the REDACT_ALL copy it wrote shows nothing
  leak           parsed, and the copy still shows something
  fallback leak  malformed, and the REDACT_ALL copy still shows something (REDACT_ALL is a
                 policy choice that must not leak either)
  error          the scan failed or wrote no copy, or the test's own check of the copy failed

Leaks, fallback leaks, errors and more than a quarter of the variants inert fail the test.
"""

import os
import re
import shutil
import subprocess
import tempfile

OUTCOMES = ("redacted", "fail-closed", "leak", "fallback leak", "inert", "error")


def plain_image(path):
    """A 16x16 red image whose bytes never change: without ImageMagick's PNG tIME and date:*
    chunks, which hold the time and whose CRCs can hold any two bytes a check looks for."""
    subprocess.run(["convert", "-size", "16x16", "xc:red", "-strip", "-define",
                    "png:exclude-chunks=date,time", path], check=True)


def parse_args(argv, doc):
    """(ctl, keep, only) from --ctl=PATH, --keep=DIR and --only=SUBSTRING; None (after printing
    `doc`) for anything else."""
    opts = {"ctl": None, "keep": None, "only": None}
    for arg in argv[1:]:
        key, eq, value = arg[2:].partition("=")
        if not arg.startswith("--") or not eq or key not in opts:
            print(doc)
            return None
        opts[key] = value
    return opts["ctl"], opts["keep"], opts["only"]


def judge(ctl, name, ext, data, dirs, findings, check):
    """(outcome, detail) for one variant."""
    file_name = name.replace("/", "__") + "." + ext
    orig = os.path.join(dirs["orig"], file_name)
    with open(orig, "wb") as f:
        f.write(data)
    found = findings(orig)
    if not found:
        return "inert", None
    res = subprocess.run([ctl, "scan", orig, f"--redacted_out={dirs['redacted']}"],
                         capture_output=True, text=True, check=False)
    red = os.path.join(dirs["redacted"], file_name)
    if res.returncode != 0 or not os.path.exists(red):
        return "error", f"scan rc {res.returncode}: {res.stderr.strip()}"
    malformed = re.search(r"^  malformed: yes(.*)$", res.stdout, re.M)
    why = malformed.group(1).strip(": ") if malformed else None
    left = findings(red)
    if malformed and left:
        return "fallback leak", f"malformed ({why}) and REDACT_ALL copy still has {left}"
    if malformed:
        return "fail-closed", why[:90]
    if left:
        return "leak", f"{sorted(found)} -> still {left}"[:160]
    wrong = check(name, red) if check else None
    if wrong:
        return "error", wrong
    return "redacted", ", ".join(sorted(found))[:90]


def main(argv, doc, test_name, tools, prepare, oracle):
    """Runs one differential test; returns its exit code.

    tools: programs that must be on PATH. prepare(work): the variants and the oracle, as
    (variants, findings, check), or an exit code if they cannot be made; `variants` maps a name
    ("family/case") to (extension, bytes), findings(path) is what the oracle finds in a file
    (empty: nothing), check(name, redacted path) is None or why an otherwise redacted copy is
    still wrong (None for no check). oracle: what the oracle is called in the report.
    """
    args = parse_args(argv, doc)
    if args is None:
        return 2
    ctl, keep, only = args
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"FAIL: {tool} is not installed (run tools/setup.sh)")
            return 1
    ctl = ctl or os.environ.get("SCOPEDFSCTL", "tools/scopedfsctl")
    work = keep or tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    dirs = {k: os.path.join(work, k) for k in ("orig", "redacted")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    prepared = prepare(work)
    if isinstance(prepared, int):
        return prepared
    variants, findings, check = prepared
    if only:
        variants = {k: v for k, v in variants.items() if only in k}

    counts = {outcome: 0 for outcome in OUTCOMES}
    rows = []
    for name, (ext, data) in sorted(variants.items()):
        outcome, detail = judge(ctl, name, ext, data, dirs, findings, check)
        if outcome == "inert":
            detail = f"{oracle} finds no coordinate in the original"
        counts[outcome] += 1
        rows.append((name, outcome, detail))

    width = max(len(r[0]) for r in rows)
    for name, outcome, detail in rows:
        print(f"{name:<{width}}  {outcome:<13}  {detail}")
    print()
    print(", ".join(f"{k}: {v}" for k, v in counts.items()), f"(of {len(rows)} variants)")
    bad = counts["leak"] + counts["fallback leak"] + counts["error"]
    # Inert variants prove nothing; too many would mean the generator stopped testing anything.
    if counts["inert"] * 4 > len(rows):
        print(f"FAIL: more than a quarter of the variants carry no coordinate {oracle} can see")
        bad += 1
    print(f"{test_name}:", "FAIL" if bad else "PASS")
    return 1 if bad else 0
