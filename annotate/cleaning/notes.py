"""Agents' notes at an article's start and end: the agent's message to its user.

Pure Python, no Django. A whole paragraph before the article's first section
(after its title) or after its last content that speaks to the user about the
task (``blocks.note_score`` with the task features only, at least
``blocks.NOTE_THRESHOLD``) is removed, with a list that follows its colon and a
rule beside it. Self-reference inside the article's own prose is never judged
here: it is the article's writing (the blindness audit measures it).
"""

from __future__ import annotations

import re

from annotate.cleaning.blocks import NOTE, NOTE_THRESHOLD, RULE_RE, Block, Decision, decision, ends_with_colon, note_score, split_blocks

# How far from each end of an article (before its first heading, after its last)
# an agent's note is looked for, in non-blank lines and characters.
NOTE_WINDOW_LINES = 16
NOTE_WINDOW_CHARS = 2500


_HEADING_RE = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")


def _is_heading(line: str) -> bool:
    return line.lstrip(" ")[:1] == "#" and bool(_HEADING_RE.match(line))


def _end_windows(lines: list[str]) -> tuple[str, str]:
    """The text an agent's note at the start could sit in (up to the first heading
    after the title) and at the end (from the last heading), each at most
    ``NOTE_WINDOW_LINES`` non-blank lines."""
    head: list[str] = []
    for i, line in enumerate(lines):
        if not line:
            continue
        if _is_heading(line) and not (not head and line.lstrip().startswith("# ")):
            break
        head.append(line)
        if len(head) >= NOTE_WINDOW_LINES:
            break
    tail: list[str] = []
    for line in reversed(lines):
        if not line:
            continue
        if _is_heading(line) or len(tail) >= NOTE_WINDOW_LINES:
            break
        tail.append(line)
    return "\n".join(head)[:NOTE_WINDOW_CHARS], "\n".join(reversed(tail))[-NOTE_WINDOW_CHARS:]


def drop_agent_notes(lines: list[str], log: list[Decision] | None = None) -> list[str]:
    """Drop whole blocks at the start or the end of an article that speak to the user
    about the task (``NOTE``), with a list that follows such a note's colon, a rule
    between them and the article, and a heading left with nothing under it at the end.
    Self-reference inside the article's prose is never judged here."""
    n = len(lines)
    # Most articles have no note: a block's score is at most that of the text it sits
    # in (each feature counts once), so one look at each end rules them out.
    if not any(note_score(w, under_source_heading=False, at_least=NOTE_THRESHOLD)[0] >= NOTE_THRESHOLD for w in _end_windows(lines)):
        return lines
    heads = {i for i in range(n) if _is_heading(lines[i])}
    blocks = split_blocks(lines, 0, n, heads)
    if not blocks:
        return lines
    drop: set[int] = set()

    def note(b: Block) -> tuple[float, str]:
        if b.kind not in ("paragraph", "quote"):
            return 0.0, ""
        return note_score(b.text, under_source_heading=False)

    # The start: after the title (an H1 first) only.
    first = next((i for i in range(n) if lines[i]), None)
    k = 0
    while k < len(blocks):
        b = blocks[k]
        between = [i for i in range(first if first is not None else 0, b.start) if lines[i] and i not in drop]
        if any(i in heads and not (i == first and lines[i].lstrip().startswith("# ")) for i in between):
            break
        score, best = note(b)
        if score < NOTE_THRESHOLD:
            break
        drop.update(range(b.start, b.end))
        if log is not None:
            log.append(decision("", b, (NOTE, best, score)))
        k += 1
        if ends_with_colon(b.text):
            while k < len(blocks) and blocks[k].kind == "item":
                drop.update(range(blocks[k].start, blocks[k].end))
                if log is not None:
                    log.append(decision("", blocks[k], (NOTE, "continues the agent's note above (a list after its colon)", score)))
                k += 1
    start_blocks = k
    if start_blocks and start_blocks < len(blocks):
        # A rule between the opening note and the article goes with the note.
        drop.update(i for i in range(blocks[0].start, blocks[start_blocks].start) if RULE_RE.fullmatch(lines[i]))

    # The end: trailing items wait for the note whose colon introduces them.
    k = len(blocks) - 1
    items: list[Block] = []
    while k >= start_blocks:
        b = blocks[k]
        after = [i for i in range(b.end, n) if lines[i] and i not in drop and not RULE_RE.fullmatch(lines[i])]
        if any(i not in heads for i in after if not any(x.start <= i < x.end for x in items)):
            break
        if b.kind == "item":
            items.insert(0, b)
            k -= 1
            continue
        score, best = note(b)
        if score < NOTE_THRESHOLD or (items and not ends_with_colon(b.text)):
            break
        drop.update(range(b.start, b.end))
        if log is not None:
            log.append(decision("", b, (NOTE, best, score)))
            log.extend(decision("", item, (NOTE, "continues the agent's note above (a list after its colon)", score)) for item in items)
        for item in items:
            drop.update(range(item.start, item.end))
        items = []
        k -= 1
    if not drop:
        return lines
    # Headings left with nothing under them at the end, and rules next to what went.
    kept = [i for i in range(n) if i not in drop]
    while kept:
        last = kept[-1]
        if not lines[last] or RULE_RE.fullmatch(lines[last]) or (last in heads and not lines[last].lstrip().startswith("# ")):
            kept.pop()
            continue
        break
    lead = 0
    while lead < len(kept) and (not lines[kept[lead]] or RULE_RE.fullmatch(lines[kept[lead]])):
        lead += 1
    return [lines[i] for i in kept[lead:]]
