"""The first step of the cleaner: ``strip_citations``, in the order its passes run.

Lines first (``sections``: metadata, definitions, reference sections, source
commentary, trailing entries), then inline apparatus (``inline``), then what is
left around it (``residue``: caption labels; ``tables``: empty source columns,
doubled flag names), then a last tidy of the whole text. Code is stashed before
and put back after (``protect``).
"""

from __future__ import annotations

import re

from annotate.cleaning.blocks import Decision
from annotate.cleaning.inline import strip_inline
from annotate.cleaning.notes import drop_agent_notes
from annotate.cleaning.protect import prepare, split_lines, unstash
from annotate.cleaning.residue import drop_caption_residue
from annotate.cleaning.sections import drop_sections, drop_trailing_entries, scan
from annotate.cleaning.tables import tidy_tables
from annotate.markdown_lines import BLANK_RUN_RE

# A space before sentence punctuation that ends a word, only after a word-ish
# character (not after "-", "|", ...).
_SPACE_BEFORE_PUNCT_RE = re.compile(r" ([.,;:!?])(?<=[\w)\]\"'”’*%] .)(?=\s|$)")


def strip_citations(markdown: str, *, is_reference: bool = False, log: list[Decision] | None = None) -> str:
    """Remove citations, URLs, images, footnotes and reference sections; keep prose.
    ``is_reference`` (the human-written article) turns off the source-commentary
    rule and the agent's notes, which only agents' articles need. ``log`` receives a
    ``blocks.Decision`` for every block under a source heading and every agent's
    note removed at the article's start or end."""
    text = prepare(markdown)
    stash: list[str] = []
    lines = split_lines(text, stash)
    labels: set[str] = set()
    lines, headings = scan(lines, labels, log)
    if headings:
        lines = drop_sections(lines, headings, is_reference, log)
    lines = drop_trailing_entries(lines, log)
    if not is_reference:
        lines = drop_agent_notes(lines, log)
    text = "\n".join(lines)

    text = strip_inline(text, labels)
    text = drop_caption_residue(text)
    if "|" in text:
        text = tidy_tables(text)
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", text)
    text = BLANK_RUN_RE.sub("\n\n", text).strip("\n")
    return unstash(text, stash)
