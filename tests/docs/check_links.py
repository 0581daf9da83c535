#!/usr/bin/env python3
"""Every relative link of README.md, docs/*.md, docs/specs/*.md and client/*.md
must name a file of the repository, and its #anchor a heading of that file
(GitHub's heading ids). ctest: docs_links_test.

  tests/docs/check_links.py SOURCE_DIR [FILE.md ...]
"""
import glob
import os
import re
import sys

LINK = re.compile(r"(?<!\!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text):
    """The lines outside fenced code blocks, with inline code removed."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading, seen):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    n = seen.get(text, 0)
    seen[text] = n + 1
    return text if n == 0 else f"{text}-{n}"


def heading_ids_with_code(path):
    """Headings keep the words of their inline code: read them unstripped."""
    seen, ids = {}, set()
    inside = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                inside = not inside
                continue
            m = None if inside else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line.rstrip("\n"))
            if m:
                ids.add(slug(m.group(1), seen))
    return ids


def check(root, path):
    errors = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, line in prose_lines(text):
        for target in LINK.findall(line) + IMAGE.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # http:, https:, mailto: ...
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f"{os.path.relpath(path, root)}:{number}: [{target}]"
            if not os.path.abspath(dest).startswith(os.path.abspath(root) + os.sep):
                errors.append(f"{where} leaves the repository")
            elif not os.path.exists(dest):
                errors.append(f"{where}: no file {os.path.relpath(dest, root)}")
            elif anchor and dest.endswith(".md") and anchor not in heading_ids_with_code(dest):
                errors.append(f"{where}: {os.path.relpath(dest, root)} has no heading #{anchor}")
    return errors


def main(argv):
    root = os.path.abspath(argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = argv[1:] or sorted({p for pattern in ("README.md", "docs/*.md", "docs/specs/*.md", "client/*.md")
                                for p in glob.glob(os.path.join(root, pattern))})
    errors = [e for path in files for e in check(root, path)]
    for e in errors:
        print(e)
    if errors:
        print(f"docs_links_test: {len(errors)} broken link(s); fix the link or the heading it names")
        return 1
    print(f"docs_links_test: every relative link of {len(files)} files resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
