"""The section map of two articles (`annotate.alignment`), computed once and stored.

Computed the first time a page shows the two articles together (so it covers pairs however they
were made: campaigns, gold pairs, imports) and kept in `SectionAlignment`, keyed by the two
articles alone: every campaign, annotator and order reuses it.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from annotate.alignment import MIN_SIMILARITY, align, sections_of
from annotate.models import Article, SectionAlignment

METHOD = f"tfidf-cosine, sections by heading, counterpart at similarity >= {MIN_SIMILARITY}"


def section_alignment_ensure(*, first: Article, second: Article) -> SectionAlignment:
    """The stored alignment of two articles, computing and storing it if there is none yet.
    Safe against two requests computing it at once: one insert wins, the other reads it."""
    low, high = sorted((first, second), key=lambda article: article.pk)
    found = SectionAlignment.objects.filter(first_id=low.pk, second_id=high.pk).first()
    if found is not None:
        return found
    low_sections, high_sections = sections_of(low.html), sections_of(high.html)
    result = align(low_sections, high_sections)
    row = SectionAlignment(
        first_id=low.pk,
        second_id=high.pk,
        first_sections=[[s.anchor, s.title] for s in low_sections],
        second_sections=[[s.anchor, s.title] for s in high_sections],
        first_to_second=list(result.first_to_second),
        second_to_first=list(result.second_to_first),
        method=METHOD,
    )
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        return SectionAlignment.objects.get(first_id=low.pk, second_id=high.pk)
    return row
