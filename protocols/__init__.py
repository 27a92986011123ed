"""Annotation protocols: what an item, an answer and a judge's question are, one module each.

`get(name)` gives a campaign's protocol (`Campaign.protocol`); `NAMES` lists them and
`problem(name)` says why a name is not one. A new protocol is a module beside
`pairwise` (the contract is `protocols.base`) and a line in `REGISTRY`.

Pure: no Django. Below every app, above `common` only.
"""

from __future__ import annotations

from types import ModuleType

from protocols import pairwise

DEFAULT = pairwise.NAME
REGISTRY: dict[str, ModuleType] = {module.NAME: module for module in (pairwise,)}
NAMES = tuple(REGISTRY)


def problem(name: object) -> str | None:
    """None when `name` is a protocol, else a message listing the ones there are."""
    if isinstance(name, str) and name in REGISTRY:
        return None
    return f"protocol '{name}' is not one of: {', '.join(NAMES)}"


def get(name: str) -> ModuleType:
    """The protocol module called `name`; ValueError (with `problem`'s message) if there is none."""
    if (message := problem(name)) is not None:
        raise ValueError(message)
    return REGISTRY[name]
