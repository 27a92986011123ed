"""Inline citation apparatus: markers, URLs, links and images, then the tidying.

The inline half of ``strip_citations`` (the package docstring has the rules and
their trade-offs): each citation marker, URL, link target or image becomes a
``\\x01`` mark (``protect.MARK``), so that the whitespace and punctuation around
it can be tidied afterwards, in one place, knowing that something was removed
there: "word [1]." becomes "word.", a line left with no words goes, and a mark
glued between a sentence end and a capital letter ("it.[3]It was") becomes one
space. Text where no mark was is never touched.
"""

from __future__ import annotations

import re

from annotate.cleaning.protect import MARK

_URL_BODY = r"(?:[^\s()<>]|\([^\s()<>]*\))*"
_IMAGE_RE = re.compile(r"!\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\[\]\n]*\])")
_NUM_LABEL_RE = re.compile(r"\s*\^?\d{1,3}(?:[ \t]*[,–—-][ \t]*\d{1,3})*\s*")
_LINK_RE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\((?:[^()\n]|\([^()\n]*\))*\)")
_AUTOLINK_RE = re.compile(r"<(?:https?:|www\.|ftp:|mailto:)[^>\s]*>")
_PAREN_URL_RE = re.compile(rf"\([ \t]*(?:https?:|www\.){_URL_BODY}(?:[ \t]*[,;][ \t]*(?:https?:|www\.){_URL_BODY})*[ \t]*\)")
# Two passes, each starting with a literal, scan much faster than one alternation.
_BARE_URL_RE = re.compile(r"https?(?::/*|/+|(?=www\.))[^\s<>\"\[\]`]*")
_WWW_RE = re.compile(r"www\.[^\s<>\"\[\]`]+")
_NUMS = r"\d{1,3}(?:[ \t]*(?:[,;]|[-–—]|and)[ \t]*\d{1,3})*"
_CITE = (
    r"\[(?:"
    r"(?:\^[^\]\s]{1,40}"
    rf"|[ \t]*\d{{1,3}}†[^\]\n]{{0,80}}"
    rf"|[ \t]*{_NUMS}(?:[ \t]*,[ \t]*pp?\.[ \t]*\d{{1,5}}(?:[-–]\d{{1,5}})?)?[ \t]*"
    r"|(?i:(?:source|ref|reference|cite|citation|note)s?[ \t]*:?[ \t]*)"
    + _NUMS
    + r"|(?i:[a-z ]{0,30}(?:citation|source|verification|clarification|page|year|date|reference)s? needed"
    r"|citation missing|failed verification|dubious(?:[ \t]*[–—-][ \t]*discuss)?|unreliable source\??"
    r"|according to whom\?|by whom\?|who\?|when\?|which\?|where\?|not in citation given"
    r"|self-published source\??))\]"
    r"|\[\d{1,3}\][^\s\[\]]*\)(?:[ \t]*,[ \t]*\[\d{1,3}\])*\]"  # [[1]), [26]]
    r")"
)
# A whole run ("[1][2]", "[4], [5]") becomes one mark. A literal "[" comes first, so
# the regex engine can skip quickly from one "[" to the next.
_CITATION_RE = re.compile(rf"{_CITE}(?:[ \t]*[,;]?[ \t]*{_CITE})*")
_LENTICULAR_RE = re.compile(r"【[^】\n]{0,80}】")
_SUP_RE = re.compile(
    r"<sup>[ \t]*(\[?[ \t]*(?:\d{1,3}(?:[ \t]*[,–-][ \t]*\d{1,3})*|\^?[A-Za-z]|\^\w{1,10})[ \t]*\]?|\[[^\]\n]{1,40}\])[ \t]*</sup>"
)
_UNIT_BEFORE_RE = re.compile(r"\b(?:10|k?m|cm|mm|ft|mi|yd|in|sq|km/h|m/s)$")
_REF_LINK_RE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])+)\](?:\[([^\[\]\n]*)\])?")


def _url_tail(m: re.Match) -> str:
    """Drop a bare URL but give back trailing sentence punctuation and a ')' that
    closes a parenthesis opened before the URL."""
    url = m.group(0)
    tail = ""
    while url and url[-1] in ".,;:!?'’”)*_":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        tail = url[-1] + tail
        url = url[:-1]
    return MARK + tail


def _link_text(m: re.Match) -> str:
    """``[text](url)`` keeps ``text``; ``[3](url)`` and ``[](url)`` go."""
    label = m.group(1)
    if not label.strip() or _NUM_LABEL_RE.fullmatch(label):
        return MARK
    return label


def _sup(m: re.Match) -> str:
    before = m.string[max(0, m.start() - 8) : m.start()]
    if _UNIT_BEFORE_RE.search(before) and not m.group(1).startswith("["):
        return m.group(0)
    return MARK


# ---------------------------------------------------------------- removing the marks

_EMPTY_EMPH_RE = re.compile(r"(\*{1,3}|_{1,3})\x01\1")
# A line holding only list/quote/table syntax, punctuation, marks and at most a short
# label such as "Source:" or "- Website:". Possessive quantifiers: no backtracking.
_WORDLESS_RE = re.compile(
    r"[ \t>]*+(?:(?:[-*+]|\d{1,4}[.)])[ \t]+)?+(?:\*\*|__)?+"
    r"(?:[^\W\d_][\w'’/-]*+(?:[ \t]++[\w'’/&-]++){0,2}+(?:\*\*|__)?+[ \t]*+:"
    r"|(?i:(?:sources?|references?|citations?|refs?|links?|see(?: also)?|via|urls?)\b))?"
    r"(?:\*\*|__)?[\s\x01,;:.()\[\]\-–—|*_†]*+"
)
_MARK_RUN_RE = re.compile(r"\x01(?:[ \t]*[,;]?[ \t]*\x01)+")
_MARK_IN_BRACKETS_RE = re.compile(r"[ \t]*(?:\(\x01\)|\[\x01\])")
_MARK_AFTER_OPENER_RE = re.compile(r"([(\[])\x01[ \t]*")
# A mark goes with the space before it when closing punctuation, a space or the end
# of the line follows ("word [1]." "word [1] next"); any other mark goes alone
# ("word[1] next"). The pattern starts with a literal, so the scan is fast.
_SPACE_MARK_RE = re.compile(r" \x01(?=[ \t\n.,;:!?)\]}”’»…]|$|[*_]{1,3}(?:[\s.,;:!?)]|$))")
# "it.[3]It was": a mark between a sentence end and a capital letter becomes a space.
# The pattern starts with the mark itself (fast to find); _unglue looks behind it.
# Not "\x01+": that loses the fast scan.
_GLUED_MARK_RE = re.compile(r"\x01\x01*(?=[A-ZÀ-ÖØ-Þ])")


def _unglue(m: re.Match) -> str:
    before = m.string[max(0, m.start() - 2) : m.start()]
    if before[-1:] in (".", "!", "?") or (before[-1:] in ('"', "'", "”", "’", ")") and before[:1] in (".", "!", "?")):
        return " "
    return m.group(0)


_WORDLESS_STRIP = " \t|-*+>.,;:()[]\x01"


def _rare_mark(line: str) -> bool:
    """Whether a mark of ``line`` stands in one of the rarer places _tidy_marked_line
    handles: before emphasis, after a comma or semicolon (a space between or not),
    after an opening bracket. A walk from mark to mark (marks are few) instead of
    eight searches of the whole line, which most lines fail."""
    at = line.find(MARK)
    while at >= 0:
        before = line[at - 2 : at] if at >= 2 else line[:at]
        if line[at + 1 : at + 2] in ("*", "_") or before[-1:] in (",", ";", "(", "[") or before in (", ", "; "):
            return True
        at = line.find(MARK, at + 1)
    return False


def _tidy_marked_line(line: str) -> str | None:
    """First step of removing the \x01 marks of one line: None when the line is left
    without content (it is then dropped); otherwise the line with the rarer cases
    done (a run of marks joined by commas/semicolons becomes one mark, ``(mark)``
    goes with the space before it, a mark starting the line goes with the spaces
    after it). The common cases are left to one pass over the whole text."""
    if len(line.strip(_WORDLESS_STRIP)) <= 60 and _WORDLESS_RE.fullmatch(line):
        return None
    if _rare_mark(line):  # most lines need none of the eight searches below
        if "\x01*" in line or "\x01_" in line:
            line = _EMPTY_EMPH_RE.sub(MARK, line)
        if ",\x01" in line or ", \x01" in line or ";\x01" in line or "; \x01" in line:
            line = _MARK_RUN_RE.sub(MARK, line)
        if "(\x01" in line or "[\x01" in line:
            line = _MARK_IN_BRACKETS_RE.sub("", line)
            line = _MARK_AFTER_OPENER_RE.sub(r"\1", line)
    body = line.lstrip(" \t")
    if body[:1] == MARK:  # keep the indentation only
        line = line[: len(line) - len(body)] + body.lstrip("\x01 \t")
    return line


def _remove_marks(text: str) -> str:
    """Remove the \x01 marks left where citations and URLs were, tidying whitespace:
    no space before closing punctuation or at a line start, never a double space.
    Only the lines with a mark are visited (found with ``find``); a line left without
    content goes with its line break, as if the lines were joined again without it."""
    pieces = []
    pos = 0  # text[:pos] is settled
    n = len(text)
    last_dropped = False
    at = text.find(MARK)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end < 0:
            end = n
        pieces.append(text[pos:start])
        line = _tidy_marked_line(text[start:end])
        if line is None:
            pos = end + 1 if end < n else end
            last_dropped = end == n
        else:
            pieces.append(line)
            pos = end
        at = text.find(MARK, pos)
    pieces.append(text[pos:])
    text = "".join(pieces)
    if last_dropped and text.endswith("\n"):  # the line break before a last line that went, as a join would
        text = text[:-1]
    text = _SPACE_MARK_RE.sub("", text)
    text = _GLUED_MARK_RE.sub(_unglue, text)
    return text.replace(MARK, "")


# ---------------------------------------------------------------- the inline pass


def strip_inline(text: str, labels: set[str]) -> str:
    """Replace every inline citation, URL, link target and image with a mark, keep
    the text of links (and of reference links whose label is in ``labels``, the
    link definitions ``scan`` found), then remove the marks."""
    # A one-character test first where it is rare: it is many times faster than a test for two.
    if "!" in text and "![" in text:
        text = _IMAGE_RE.sub(MARK, text)
    if "]" in text and "](" in text:
        text = _LINK_RE.sub(_link_text, text)
    if "<" in text:
        text = _AUTOLINK_RE.sub(MARK, text)
        if "<sup>" in text:
            text = _SUP_RE.sub(_sup, text)
    if "http" in text or "www." in text:
        if "(" in text:
            text = _PAREN_URL_RE.sub(MARK, text)
        if "http" in text:
            text = _BARE_URL_RE.sub(_url_tail, text)
        if "www." in text:
            text = _WWW_RE.sub(_url_tail, text)
    if "[" in text:
        text = _CITATION_RE.sub(MARK, text)
    if "【" in text:
        text = _LENTICULAR_RE.sub(MARK, text)
    if labels:

        def ref_link(m: re.Match) -> str:
            label = m.group(2) if m.group(2) else m.group(1)
            if " ".join(label.lower().split()) in labels:
                return m.group(1)
            return m.group(0)

        text = _REF_LINK_RE.sub(ref_link, text)

    if MARK in text:
        text = _remove_marks(text)
    return text
