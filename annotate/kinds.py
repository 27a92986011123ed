"""Which kind of item each criterion is asked on, read from its protocol's arity: a reading (one article
alone), a pair (two, compared) or a group (three to six, seen together, as many as the rubric's
rankings ask about). Reads only: the items are written by `annotate.services.items`.
"""

from __future__ import annotations

import protocols
from annotate.models import Campaign, Criterion, Item
from protocols import order as orders

# The kind of item that holds the criteria of each arity (`protocols.arity`): a group holds three to
# six articles, as many as its rubric's ranking criteria ask about. And back: how many articles an
# item of each kind of one size shows at once (the length of the order a claim draws); a group's is
# its number of slots.
KIND_OF_ARITY = {1: Item.Kind.READING, 2: Item.Kind.PAIR} | {k: Item.Kind.GROUP for k in range(3, orders.MAX_ARTICLES + 1)}
ARTICLES = {Item.Kind.READING: 1, Item.Kind.PAIR: 2}


def criterion_kind(response: dict | None) -> str:
    """The kind of item a criterion is asked on, by its protocol's arity; ValueError for an arity no
    kind of item holds (the registry refuses such a protocol first: this is the second lock)."""
    arity = protocols.arity(response)
    if arity not in KIND_OF_ARITY:
        raise ValueError(f"no kind of item holds {arity} articles")
    return KIND_OF_ARITY[arity]


def kind_of_type(name: str) -> str:
    """The kind of item a criterion of response type `name` is asked on, from the type alone (a rubric's
    criteria of three articles or more all ask about one number, so every ranking is asked on groups)."""
    held = protocols.arities(protocols.get(name))
    return Item.Kind.GROUP if held[0] > 2 else KIND_OF_ARITY[held[0]]


def rubric_kinds(*, criterion_set_id: int | None) -> frozenset[str]:
    """The kinds of item a rubric's criteria are asked on: pairs for its pairwise criteria, readings
    for its one-article ones, groups for its rankings."""
    responses = Criterion.objects.filter(criterion_set_id=criterion_set_id).values_list("response", flat=True)
    return frozenset(criterion_kind(response) for response in responses)


def campaign_kinds(campaign: Campaign) -> frozenset[str]:
    """`rubric_kinds` of the campaign's rubric, read once per campaign object: a rubric's rows are
    never edited, and a claim asks several times (it must stay as quick as a pairwise claim)."""
    if not hasattr(campaign, "_rubric_kinds"):
        campaign._rubric_kinds = rubric_kinds(criterion_set_id=campaign.criterion_set_id)
    return campaign._rubric_kinds


def rubric_group_size(*, criterion_set_id: int | None) -> int | None:
    """How many articles the groups of a rubric hold: the one number its criteria of three articles
    or more (a ranking's) share, which the rubric import checks (`protocols.group_size_problem`);
    None when it has none."""
    responses = Criterion.objects.filter(criterion_set_id=criterion_set_id).values_list("response", flat=True)
    sizes = protocols.group_sizes(responses)
    return sizes[0] if sizes else None
