"""Annotation protocols: what an item, an answer and a judge's question are, one module each.

`get(name)` gives a registered protocol (a campaign's `Campaign.protocol`, or a criterion's
response type); `NAMES` lists those a campaign may run and `problem(name)` says why a name is
not one (`registered_problem` the same for any registered protocol). A new protocol is a module beside
`pairwise` (the contract is `protocols.base`) and a line in `REGISTRY`. `criterion_response`
reads a criterion's `response` object from a criteria file; `parse_reply` reads a judge's reply
with the protocol its request names.

Pure: no Django. Below every app, above `common` only.
"""

from __future__ import annotations

import functools
from types import ModuleType

from protocols import checklist, count, nominal, order, pairwise, ranking, rating, step_vote, text
from protocols.base import REQUIRED, JudgeRequest
from protocols.pairwise import guess

DEFAULT = pairwise.NAME
REGISTRY: dict[str, ModuleType] = {module.NAME: module for module in (pairwise, checklist, rating, count, nominal, text, ranking)}
# What a campaign's `protocol` may be: the protocol of its rubric's pairwise criteria. The
# one-article protocols are named per criterion (`Criterion.response`), not per campaign: a
# campaign whose rubric has such criteria asks them on readings, one article at a time.
NAMES = (pairwise.NAME,)
# Questions judges are asked beside a protocol's criteria, by the `protocol` name their requests carry:
# not annotation protocols (no answers of raters to validate, store or show), so not in REGISTRY, and
# `get` never hands one out: the guess question (`protocols.pairwise.guess`) and the vote on an agent's
# step (`protocols.step_vote`).
QUESTIONS: dict[str, ModuleType] = {guess.NAME: guess, step_vote.NAME: step_vote}


def problem(name: object) -> str | None:
    """None when `name` is a protocol a campaign may run, else a message listing the ones there are."""
    if isinstance(name, str) and name in NAMES:
        return None
    return f"protocol '{name}' is not one of: {', '.join(NAMES)}"


# The items the apps can show, store and hand to judges: one article (a reading), two (a pair), or three
# to six (a group, `order.MAX_ARTICLES`). A protocol of any other arity is refused wherever it is
# named (a rubric's import first), never routed to the nearest shape.
ITEM_ARTICLES = tuple(range(1, order.MAX_ARTICLES + 1))


def registered_problem(name: object) -> str | None:
    """None when `name` is a registered protocol (a criterion's response type) that items can hold,
    else why not: not registered, missing part of the contract (`protocols.base.REQUIRED`), or of
    an arity no item has."""
    if not (isinstance(name, str) and name in REGISTRY):
        return f"protocol '{name}' is not one of: {', '.join(REGISTRY)}"
    return _contract_problem(name, REGISTRY[name])


@functools.cache
def _contract_problem(name: str, module: ModuleType) -> str | None:
    """What keeps `module` from serving as protocol `name`; once per module (`get` is on hot paths)."""
    if missing := [attribute for attribute in REQUIRED if not hasattr(module, attribute)]:
        return f"protocol '{name}' is incomplete: it does not define {', '.join(missing)}"
    held = arities(module)
    if len(held) > 1 and not hasattr(module, "article_count"):
        return f"protocol '{name}' is incomplete: it asks about {held[0]} to {held[-1]} articles but does not define article_count"
    if not held or not set(held) & set(ITEM_ARTICLES):
        asked = repr(module.ARTICLES) if len(held) <= 1 else f"{held[0]} to {held[-1]}"
        return f"protocol '{name}' asks about {asked} articles at once; items here hold {ITEM_ARTICLES[0]} to {ITEM_ARTICLES[-1]}"
    return None


def arities(module: ModuleType) -> tuple[int, ...]:
    """The numbers of articles a protocol's items may hold: its `ARTICLES`, a whole number of at
    least 1 or a range of them (a ranking's criterion sets its own within it); () for anything else."""
    declared = module.ARTICLES
    if isinstance(declared, range) and declared and declared[0] >= 1 and declared.step == 1:
        return tuple(declared)
    if isinstance(declared, int) and not isinstance(declared, bool) and declared >= 1:
        return (declared,)
    return ()


def arity(response: dict | None) -> int:
    """How many articles an item of a criterion holds: its protocol's `ARTICLES`, or, for a protocol
    of a range of them, the criterion's own (`article_count` of its response)."""
    module = for_criterion(response)
    held = arities(module)
    return held[0] if len(held) == 1 else module.article_count(response)


def group_sizes(responses) -> list[int]:
    """The numbers of articles, three or more, that criteria of these responses ask about at once,
    smallest first: each is a group of articles shown together."""
    return sorted({n for response in responses if (n := arity(response)) > 2})


def group_size_problem(responses) -> str | None:
    """Why one rubric cannot hold criteria of these responses, or None: those asking about three
    articles or more must all ask about the same number, since they are answered on the same groups."""
    if len(sizes := group_sizes(responses)) > 1:
        return (
            "criteria asking about three articles or more must all ask about the same number, since they are "
            f"answered on the same groups of articles; this rubric asks about {' and '.join(map(str, sizes))}"
        )
    return None


def get(name: str) -> ModuleType:
    """The registered protocol module called `name`; ValueError saying which there are if none."""
    if (message := registered_problem(name)) is not None:
        raise ValueError(message)
    return REGISTRY[name]


def for_criterion(response: dict | None) -> ModuleType:
    """The protocol a criterion's answers follow, from its stored `response` ({} or None: the campaign's
    pairwise verdict): the one lookup every layer routes a criterion by (`get`, which fails closed)."""
    return get((response or {}).get("type") or DEFAULT)


def criterion_response(response: object) -> tuple[dict, list[str]]:
    """A criteria file's `response` object (None: absent) as stored on the criterion ({} for
    pairwise, the default), and what is wrong with it, as short phrases."""
    if response is None:
        return {}, []
    if not isinstance(response, dict):
        return {}, [f"response must be an object with a 'type', not {type(response).__name__}"]
    name = response.get("type")
    if (message := registered_problem(name)) is not None:
        return {}, [f"response type {message.removeprefix('protocol ')}"]
    return REGISTRY[name].read_response(response)


def parse_reply(request: JudgeRequest, content: str) -> dict[str, tuple[str, str]]:
    """The verdicts in a judge's reply to `request`, read by the request's protocol, or by its question
    (`QUESTIONS`) (raises `protocols.base.InvalidResponse`)."""
    return reader(request.protocol).parse_verdicts(
        content, criteria=request.criteria, allow_tie=request.allow_tie, responses=request.responses
    )


def reader(name: str) -> ModuleType:
    """What reads a judge's reply to a request that names `name`: a question of `QUESTIONS`, else the
    registered protocol (`get`, which fails closed)."""
    return QUESTIONS.get(name) or get(name)
