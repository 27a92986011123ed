"""Writing items: the one way a pair is made, its articles written into its slots with it.

Every pair is saved through `pairs_save`, which writes the pair rows and their `ItemArticle` rows
(slot 0 `article_a`, slot 1 `article_b`) in one go, so the two never disagree (issue 38 moves the
readers from the columns to the slots). Call it inside the caller's transaction.
"""

from __future__ import annotations

from annotate.models import ItemArticle, Pair


def pairs_save(pairs: list[Pair], *, batch_size: int | None = None) -> list[Pair]:
    """Insert `pairs` (unsaved) and their slots; gives the saved pairs, with their ids."""
    saved = Pair.objects.bulk_create(pairs, batch_size=batch_size)
    slots = [
        ItemArticle(item_id=pair.pk, slot=slot, article_id=article_id)
        for pair in saved
        for slot, article_id in enumerate((pair.article_a_id, pair.article_b_id))
    ]
    ItemArticle.objects.bulk_create(slots, batch_size=batch_size)
    return saved


def pair_save(pair: Pair) -> Pair:
    """Insert one unsaved pair and its slots."""
    return pairs_save([pair])[0]
