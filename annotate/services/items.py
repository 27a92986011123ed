"""Writing items: the one way a pair or a reading is made, its articles written into its slots with it.

Every item is saved through `pairs_save` or `readings_save`, which write the item rows and their
`ItemArticle` rows (slot 0 `article_a`, slot 1 `article_b` for a pair) in one go, so the two never
disagree (issue 38 moves the readers from the columns to the slots). Call them inside the caller's
transaction.
"""

from __future__ import annotations

from annotate.models import Item, ItemArticle, Pair, Reading


def pairs_save(pairs: list[Pair], *, batch_size: int | None = None) -> list[Pair]:
    """Insert `pairs` (unsaved) and their slots; gives the saved pairs, with their ids."""
    for pair in pairs:
        pair.kind = Item.Kind.PAIR
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


def readings_save(readings: list[Reading], *, batch_size: int | None = None) -> list[Reading]:
    """Insert `readings` (unsaved, `article_a` their article) and their one slot each; gives the
    saved readings, with their ids."""
    for reading in readings:
        reading.kind = Item.Kind.READING
    saved = Reading.objects.bulk_create(readings, batch_size=batch_size)
    ItemArticle.objects.bulk_create(
        [ItemArticle(item_id=reading.pk, slot=0, article_id=reading.article_a_id) for reading in saved], batch_size=batch_size
    )
    return saved
