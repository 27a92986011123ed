"""The second step of the cleaner: one skeleton for every article.

``normalize_article`` gives both articles of a pair the same skeleton, so that
nothing but content tells them apart: one ``# Title`` first line, sections from
``##`` down, ATX headings only (the rules are in the package docstring,
"normalize_article: rules").
"""

from __future__ import annotations

import re

from annotate.cleaning.protect import prepare, split_lines, unstash
from annotate.cleaning.sections import setext_heading
from annotate.markdown_lines import BLANK_RUN_RE, atx

_HEAD_SLOT = "\x04"  # control characters never survive prepare
_WRAP_RE = re.compile(r"(\*{2,3}|_{2,3})(.+)\1")  # bold, not italics (titles of works)
_TITLE_KEY_RE = re.compile(r"[\W_]+")


def _clean_heading_text(text: str) -> str:
    t = text.strip()
    if not t.endswith(":") and t[:2] not in ("**", "__"):
        return t
    for _ in range(3):
        before = t
        t = t.rstrip(" \t:").strip()
        m = _WRAP_RE.fullmatch(t) if t[:2] in ("**", "__") else None
        if m and m.group(1)[0] not in m.group(2):
            t = m.group(2).strip()
        if t == before:
            break
    return t


def _title_key(text: str) -> str:
    return _TITLE_KEY_RE.sub("", text.casefold())


def normalize_article(markdown: str, title: str) -> str:
    """One ``# title`` first line, sections from ``##`` down, ATX headings only,
    ``\\n`` line endings, no trailing spaces, one trailing newline."""
    title = " ".join(title.replace("_", " ").split())
    text = prepare(markdown)
    stash: list[str] = []
    lines = split_lines(text, stash)

    # Headings: setext converted, text cleaned; heads holds [out index, level, text].
    out: list = []
    heads: list[list] = []
    append = out.append
    n = len(lines)
    prev_blank = True
    skip = False
    for i, line in enumerate(lines):
        if skip:  # a setext underline
            skip = False
            continue
        if not line:
            append(line)
            prev_blank = True
            continue
        first = line[0]
        if first == " ":
            first = line.lstrip(" ")[:1]
        if first == "#":
            found = atx(line)
            if found:
                text_ = _clean_heading_text(found[1])
                if text_:  # an empty heading is dropped
                    heads.append([len(out), found[0], text_])
                    append(_HEAD_SLOT)
                prev_blank = True
                continue
        elif prev_blank and i + 1 < n:
            nxt = lines[i + 1]
            if setext_heading(line, nxt):
                text_ = _clean_heading_text(line)
                if text_:
                    heads.append([len(out), 1 if "=" in nxt else 2, text_])
                    append(_HEAD_SLOT)
                skip = True
                prev_blank = True
                continue
        append(line)
        prev_blank = False

    # The title: replace a leading H1 (or a leading heading spelling the title),
    # or an H1 spelling the title anywhere; otherwise insert one.
    first_content = next((k for k, line in enumerate(out) if line), None)
    title_key = _title_key(title)
    drop_head = None
    if heads:
        first = heads[0]
        if first[0] == first_content and (first[1] == 1 or _title_key(first[2]) == title_key):
            drop_head = 0
        else:
            for k, head in enumerate(heads):
                if head[1] == 1 and _title_key(head[2]) == title_key:
                    drop_head = k
                    break
    if drop_head is not None:
        out[heads[drop_head][0]] = None
        del heads[drop_head]

    if heads:
        shift = min(h[1] for h in heads) - 2
        for idx, level, text_ in heads:
            level = min(6, max(2, level - shift))
            out[idx] = "\n" + "#" * level + " " + text_ + "\n"

    body = "\n".join(line for line in out if line is not None)
    body = BLANK_RUN_RE.sub("\n\n", body).strip("\n")
    result = f"# {title}\n\n{body}\n" if body else f"# {title}\n"
    return unstash(result, stash)
