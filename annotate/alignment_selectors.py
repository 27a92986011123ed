"""The section map as the pair page shows it (issue 37), read from the stored alignment
(`annotate.services.alignments`, `annotate.alignment`)."""

from __future__ import annotations

from annotate.models import Article, SectionAlignment
from protocols.pairwise import FIRST, SECOND


def section_maps(*, shown: dict[str, Article], alignment: SectionAlignment) -> dict[str, list[dict]]:
    """Each column's section map (issue 37): per section of the article shown there, its anchor on
    the page, its title, and its counterpart in the other column (anchor and title) or None.
    Built the same way for both columns from one symmetric alignment (`annotate.alignment`), with
    no score and no article id: it says what matches what, never how well."""
    by_id = {
        alignment.first_id: (alignment.first_sections, alignment.first_to_second),
        alignment.second_id: (alignment.second_sections, alignment.second_to_first),
    }

    def anchor(position: str, raw: str) -> str:
        # The same per-column prefix as `_column`; the opening prose is the article's top.
        return f"a{position}-{raw or 'top'}"

    maps = {}
    for position, other in ((FIRST, SECOND), (SECOND, FIRST)):
        sections, matches = by_id[shown[position].pk]
        others, _ = by_id[shown[other].pk]
        rows = []
        for (raw, title), match in zip(sections, matches):
            counterpart = None
            if match is not None:
                counterpart = {"anchor": anchor(other, others[match][0]), "title": others[match][1], "position": other}
            rows.append({"anchor": anchor(position, raw), "title": title, "match": counterpart, "other": other})
        maps[position] = rows
    return maps
