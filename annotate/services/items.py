"""Writing items: the one way a pair or a reading is made, its articles written into its slots with it.

Every item is saved through `pairs_save` or `readings_save`, which write the item rows and their
`ItemArticle` rows (slot 0 `article_a`, slot 1 `article_b` for a pair) in one go, so the two never
disagree (issue 38 moves the readers from the columns to the slots). Call them inside the caller's
transaction.
"""

from __future__ import annotations

import protocols
from annotate.models import Campaign, Criterion, Item, ItemArticle, Pair, Reading

# The kind of item that holds the criteria of each arity (`protocols.arity`), and back: how many
# articles an item of each kind shows at once (the length of the order a claim draws).
KIND_OF_ARITY = {2: Item.Kind.PAIR, 1: Item.Kind.READING}
ARTICLES = {kind: arity for arity, kind in KIND_OF_ARITY.items()}


def criterion_kind(response: dict | None) -> str:
    """The kind of item a criterion is asked on, by its protocol's arity; ValueError for an arity no
    kind of item holds (the registry refuses such a protocol first: this is the second lock)."""
    arity = protocols.arity(response)
    if arity not in KIND_OF_ARITY:
        raise ValueError(f"no kind of item holds {arity} articles")
    return KIND_OF_ARITY[arity]


def rubric_kinds(*, criterion_set_id: int | None) -> frozenset[str]:
    """The kinds of item a rubric's criteria are asked on: pairs for its pairwise criteria, readings
    for its one-article ones."""
    responses = Criterion.objects.filter(criterion_set_id=criterion_set_id).values_list("response", flat=True)
    return frozenset(criterion_kind(response) for response in responses)


def campaign_kinds(campaign: Campaign) -> frozenset[str]:
    """`rubric_kinds` of the campaign's rubric, read once per campaign object: a rubric's rows are
    never edited, and a claim asks several times (it must stay as quick as a pairwise claim)."""
    if not hasattr(campaign, "_rubric_kinds"):
        campaign._rubric_kinds = rubric_kinds(criterion_set_id=campaign.criterion_set_id)
    return campaign._rubric_kinds


def _items_save(model, kind: str, items: list, batch_size: int | None) -> list:
    """Insert `items` (unsaved) as items of `kind` and their slots: slot 0 `article_a`, slot 1
    `article_b` where the kind has one."""
    for item in items:
        item.kind = kind
    saved = model.objects.bulk_create(items, batch_size=batch_size)
    slots = [
        ItemArticle(item_id=item.pk, slot=slot, article_id=article_id)
        for item in saved
        for slot, article_id in enumerate((item.article_a_id, item.article_b_id))
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
