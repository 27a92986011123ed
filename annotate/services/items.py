"""Writing items: the one way a pair or a reading is made, its articles written into its slots with it.

Every item is saved through `pairs_save` or `readings_save`, which write the item rows and their
`ItemArticle` rows (slot 0 `article_a`, slot 1 `article_b` for a pair) in one go, so the two never
disagree (issue 38 moves the readers from the columns to the slots). Call them inside the caller's
transaction.
"""

from __future__ import annotations

from annotate.models import Item, ItemArticle, Pair, Reading
from protocols import order as orders


def _items_save(model, kind: str, items: list, batch_size: int | None, articles: list[list[int]] | None = None) -> list:
    """Insert `items` (unsaved) as items of `kind` and their slots: slot 0 `article_a`, slot 1
    `article_b` where the kind has one, or, for a group, the slots `articles` gives each item."""
    for item in items:
        item.kind = kind
    saved = model.objects.bulk_create(items, batch_size=batch_size)
    held = articles or [(item.article_a_id, item.article_b_id) for item in saved]
    slots = [
        ItemArticle(item_id=item.pk, slot=slot, article_id=article_id)
        for item, ids in zip(saved, held, strict=True)
        for slot, article_id in enumerate(ids)
        if article_id is not None
    ]
    ItemArticle.objects.bulk_create(slots, batch_size=batch_size)
    return saved


def pairs_save(pairs: list[Pair], *, batch_size: int | None = None) -> list[Pair]:
    """Insert `pairs` (unsaved) and their slots; gives the saved pairs, with their ids."""
    return _items_save(Pair, Item.Kind.PAIR, pairs, batch_size)


def pair_save(pair: Pair) -> Pair:
    """Insert one unsaved pair and its slots."""
    return pairs_save([pair])[0]


def readings_save(readings: list[Reading], *, batch_size: int | None = None) -> list[Reading]:
    """Insert `readings` (unsaved, `article_a` their article) and their one slot each; gives the
    saved readings, with their ids."""
    return _items_save(Reading, Item.Kind.READING, readings, batch_size)


def groups_save(groups: list[tuple[Item, list[int]]], *, batch_size: int | None = None) -> list[Item]:
    """Insert groups, each an unsaved item and its articles' ids in slot order (three or more: slot a
    is also its `article_a`); gives the saved items, with their ids."""
    for item, articles in groups:
        if not 3 <= len(articles) <= orders.MAX_ARTICLES or len(set(articles)) != len(articles):
            raise ValueError(f"a group holds 3 to {orders.MAX_ARTICLES} distinct articles, not {articles}")
        item.article_a_id, item.article_b_id = articles[0], None
    return _items_save(Item, Item.Kind.GROUP, [item for item, _ in groups], batch_size, [articles for _, articles in groups])
