#!/usr/bin/env python3
"""The documentation test: README.md and docs/*.md stay what a reader can follow.

Checks, printing every problem with file:line before failing:
  - every relative link in README.md and docs/*.md names a file or directory of the source tree,
    and every #anchor names a heading of the page it points to (GitHub's heading ids);
  - every page under docs/ is linked from README.md or from another page, so none is lost;
  - README.md has at most 200 lines (it is the five-minute read; the rest is under docs/);
  - no user document (README.md, docs/*.md, the man pages, the shipped configs, the .proto
    comments) cites an internal issue or review finding by number.
As a Bazel test it finds the source tree through README.md, which the runfiles hold as a symlink
into the tree, so links to any file of the tree are checked against the tree itself; it is tagged
"external" so it always reruns. Run directly (python3 tools/check_docs.py) it checks the tree it
is in.
"""

import os
import re
import sys
import unicodedata

README_MAX_LINES = 200

LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# An issue or finding cited by number: "issue 11", "issues 4 and 7", "(issue", "finding 7",
# "#12". HTML character references (&#51;) and URL fragments (/#12, (#12) are not citations.
ISSUE_NUMBER = re.compile(
    r"\bissues?\s*#?\d+|\(issues?\b|\bfindings?\s*#?\d+|(?<![\w&/(#])#\d+\b", re.IGNORECASE
)


def source_root():
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        readme = os.path.join(srcdir, os.environ.get("TEST_WORKSPACE", "scopedfs"), "README.md")
        return os.path.dirname(os.path.realpath(readme))
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def slug(heading):
    """GitHub's id for a heading: links keep their text, markup goes, lower case, spaces to '-'."""
    text = LINK.sub(lambda m: m.group(1), heading)
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LN":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def prose_lines(path, keep_code_spans=False):
    """(line number, text) of every line outside fenced code blocks, code spans blanked."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and keep_code_spans:
            yield number, line
        elif not fenced:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        ids = set()
        for _, line in prose_lines(path, keep_code_spans=True):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.add(base if n == 0 else "%s-%d" % (base, n))
        cache[path] = ids
    return cache[path]


def main():
    root = source_root()
    os.chdir(root)
    problems = []
    docs_dir = os.path.join(root, "docs")
    pages = ["README.md"] + sorted(
        os.path.join("docs", name) for name in os.listdir(docs_dir) if name.endswith(".md")
    )
    linked = set()
    for page in pages:
        for number, line in prose_lines(page):
            for m in LINK.finditer(line):
                target = m.group(2)
                where = "%s:%d" % (page, number)
                if not target:
                    problems.append("%s: empty link target for [%s]" % (where, m.group(1)))
                    continue
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                    continue  # https:, mailto:, ...: not checked offline
                file_part, _, anchor = target.partition("#")
                if file_part.startswith("/"):
                    problems.append("%s: link %s is absolute; make it relative" % (where, target))
                    continue
                resolved = page if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(page), file_part)
                )
                if resolved.startswith(".."):
                    problems.append("%s: link %s leaves the repository" % (where, target))
                    continue
                if not os.path.exists(resolved):
                    problems.append("%s: link %s: no file %s" % (where, target, resolved))
                    continue
                linked.add(resolved)
                if anchor:
                    if not resolved.endswith(".md"):
                        problems.append("%s: link %s: anchor on a non-Markdown file" % (where, target))
                    elif anchor not in anchors(resolved):
                        problems.append(
                            "%s: link %s: %s has no heading with id #%s" % (where, target, resolved, anchor)
                        )
    for page in pages[1:]:
        if page not in linked:
            problems.append("%s: no page links to it (add it to README.md's reading list)" % page)

    with open("README.md", encoding="utf-8") as f:
        readme_lines = f.read().rstrip("\n").count("\n") + 1
    if readme_lines > README_MAX_LINES:
        problems.append(
            "README.md: %d lines, more than %d: move detail into docs/" % (readme_lines, README_MAX_LINES)
        )

    user_documents = list(pages)
    for folder, suffixes in (("tools/man", None), ("policy/configs", (".textproto",)), ("proto", (".proto",))):
        for name in sorted(os.listdir(folder)):
            if suffixes is None or name.endswith(suffixes):
                user_documents.append(os.path.join(folder, name))
    for document in user_documents:
        with open(document, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for m in ISSUE_NUMBER.finditer(line):
                    problems.append(
                        "%s:%d: cites an internal issue number (%r): say what it is instead"
                        % (document, number, m.group(0))
                    )

    for problem in problems:
        print(problem)
    print(
        "check_docs: %d pages, %d user documents, README.md %d lines, %d problems"
        % (len(pages), len(user_documents), readme_lines, len(problems))
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
