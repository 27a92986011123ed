"""Code protection and placeholders, shared by both steps of the cleaner.

Code (fenced blocks and inline code spans) is never modified: ``split_lines``
stashes each piece of code behind a placeholder before any rule runs, and
``unstash`` puts it back at the very end. ``prepare`` makes line endings ``\\n``
and removes the control characters the placeholders use, so that none can come
from the article itself.
"""

from __future__ import annotations

import re

from annotate.markdown_lines import FENCE_OPEN_RE

# Placeholders: \x01 marks a removed citation/URL until whitespace is tidied,
# \x02<n>\x03 stands for a stashed piece of code, \x04 for a heading while
# ``normalize_article`` works. Patterns elsewhere in the package spell them as
# literals ("\x01", "\x02").
MARK = "\x01"
_CTRL_RE = re.compile(r"[\x00-\x04]")
_STASH_RE = re.compile(r"\x02(\d+)\x03")

_CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")


def split_lines(text: str, stash: list[str]) -> list[str]:
    """Right-stripped lines, with each fenced code block replaced by one placeholder
    line and each inline code span by an inline placeholder (saved in ``stash``)."""
    lines = text.split("\n")
    # "~" before "~~~": a string is searched for one character many times faster than for several.
    if "`" not in text and ("~" not in text or "~~~" not in text):
        return [line.rstrip() for line in lines]
    out: list[str] = []
    append = out.append
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if "`" not in line and ("~" not in line or "~~~" not in line):
            append(line.rstrip())
            i += 1
            continue
        m = FENCE_OPEN_RE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in line[m.end() :]):
            fence = m.group(1)
            char, size = fence[0], len(fence)
            j = i + 1
            while j < n:
                s = lines[j].lstrip(" ")
                if len(lines[j]) - len(s) <= 3 and s.startswith(char * size) and not s.rstrip(" \t").strip(char):
                    break
                j += 1
            stash.append("\n".join(lines[i : j + 1]))
            append(f"\x02{len(stash) - 1}\x03")
            i = j + 1
            continue
        if "`" in line:
            line = _CODE_SPAN_RE.sub(lambda mm: _stash_one(mm.group(0), stash), line)
        append(line.rstrip())
        i += 1
    return out


def _stash_one(text: str, stash: list[str]) -> str:
    stash.append(text)
    return f"\x02{len(stash) - 1}\x03"


def unstash(text: str, stash: list[str]) -> str:
    if not stash:
        return text
    # Stashed text never contains \x02, so one pass restores everything.
    return _STASH_RE.sub(lambda m: stash[int(m.group(1))], text)


def prepare(markdown: str) -> str:
    if "\r" in markdown:
        markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    # Only the characters used as internal placeholders need to go.
    if "\x00" in markdown or "\x01" in markdown or "\x02" in markdown or "\x03" in markdown or "\x04" in markdown:
        markdown = _CTRL_RE.sub("", markdown)
    return markdown
