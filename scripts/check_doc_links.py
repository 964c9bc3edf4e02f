#!/usr/bin/env python3
"""Checks that every relative link and #anchor in docs/*.md and README.md resolves.

A link [text](target) or image ![alt](target) whose target is not a URL must name an
existing file (relative to the page); a #fragment must be the GitHub anchor of a heading
of the target page (or of the page itself). Links inside fenced code blocks and inline
code are ignored. Exit status 1 and one line per broken link, else 0.

    /usr/bin/python3 scripts/check_doc_links.py [REPO]
"""
import re
import sys
from pathlib import Path

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)", re.S)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def strip_code(text):
    """The text with fenced code blocks blanked (line count kept) and inline code removed."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`\n]*`", "``", line))
    return "\n".join(out)


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found, fenced = {}, set(), False
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    pages = sorted((repo / "docs").glob("*.md")) + [repo / "README.md"]
    broken = checked = 0
    for page in pages:
        text = strip_code(page.read_text(encoding="utf-8"))
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            checked += 1
            line = text.count("\n", 0, m.start()) + 1
            file_part, _, fragment = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(repo)}:{line}: {target}"
            if not dest.exists():
                print(f"{where}: no such file")
                broken += 1
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                print(f"{where}: no heading with anchor #{fragment} in {dest.relative_to(repo)}")
                broken += 1
    print(f"{checked} relative links in {len(pages)} pages, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
