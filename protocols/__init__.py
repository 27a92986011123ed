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

from types import ModuleType

from protocols import checklist, count, nominal, pairwise, rating, text
from protocols.base import JudgeRequest

DEFAULT = pairwise.NAME
REGISTRY: dict[str, ModuleType] = {module.NAME: module for module in (pairwise, checklist, rating, count, nominal, text)}
# What a campaign's `protocol` may be: the protocol of its rubric's pairwise criteria. The
# one-article protocols are named per criterion (`Criterion.response`), not per campaign: a
# campaign whose rubric has such criteria asks them on readings, one article at a time.
NAMES = (pairwise.NAME,)


def problem(name: object) -> str | None:
    """None when `name` is a protocol a campaign may run, else a message listing the ones there are."""
    if isinstance(name, str) and name in NAMES:
        return None
    return f"protocol '{name}' is not one of: {', '.join(NAMES)}"


def registered_problem(name: object) -> str | None:
    """None when `name` is a registered protocol (a criterion's response type), else why not."""
    if isinstance(name, str) and name in REGISTRY:
        return None
    return f"protocol '{name}' is not one of: {', '.join(REGISTRY)}"


def get(name: str) -> ModuleType:
    """The registered protocol module called `name`; ValueError saying which there are if none."""
    if (message := registered_problem(name)) is not None:
        raise ValueError(message)
    return REGISTRY[name]


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
    """The verdicts in a judge's reply to `request`, read by the request's protocol
    (raises `protocols.base.InvalidResponse`)."""
    return get(request.protocol).parse_verdicts(
        content, criteria=request.criteria, allow_tie=request.allow_tie, responses=request.responses
    )
