"""The hooks: code of an app above annotate or judges that their services run, named in one place.

Imports run one way (config -> calibration -> interchange -> judges -> annotate -> ...), so annotate
cannot import the gold-accuracy rule it must apply at every claim, and judges cannot import the
report it must have computed ahead after a run. Each such point is a hook: a name below, with the
call it makes, and the dotted paths of the functions it runs in ``settings.HOOKS``. A reader of the
claim, settings-change, submit or run code sees ``hooks("claim_gates")`` and finds every function it
runs in the settings, in order (docs/architecture.md, "Hooks").

Fails closed: a hook name that is not listed here, or a path that does not import, is an error of
``manage.py check`` (and of the first call), never a rule silently skipped.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from django.conf import settings
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

# Each hook: what it is called with and what it answers. The order of settings.HOOKS is the order of the calls.
HOOK_CALLS = {
    # annotate.services.claims.work_claim, before any new claim: (campaign=, user=) -> a refusal or None.
    "claim_gates": "(campaign=, user=) -> the message refusing new claims, or None",
    # annotate.services.campaign_settings, before a settings change is stored: (campaign=, changes=) -> a refusal or None.
    "settings_guards": "(campaign=, changes=) -> the sentence refusing the change, or None",
    # annotate.services.labelling.assignment_submit, after the submission is committed; a failure is logged.
    "after_submit": "(pair_id=, assignment_id=) -> None, after the commit",
    # judges.engine.judge_run_execute, once a run has ended; a failure is logged.
    "after_run": "(run=, verdicts=) -> None, once the run is stored",
}


class HookError(LookupError):
    """A hook name that is not known, or a dotted path that does not import."""


@functools.cache
def _resolve(name: str, paths: tuple[str, ...]) -> tuple[Callable, ...]:
    if name not in HOOK_CALLS:
        raise HookError(f"unknown hook {name!r}: the hooks are {', '.join(HOOK_CALLS)} (common/hooks.py)")
    functions = []
    for path in paths:
        try:
            functions.append(import_string(path))
        except ImportError as exc:
            raise HookError(f"settings.HOOKS[{name!r}] names {path!r}, which does not import: {exc}") from exc
    return tuple(functions)


def hooks(name: str) -> tuple[Callable, ...]:
    """The functions hook ``name`` runs, in the order ``settings.HOOKS`` lists them."""
    return _resolve(name, tuple(getattr(settings, "HOOKS", {}).get(name, ())))


def hooks_run_logged(name: str, **arguments) -> None:
    """Calls every function of hook ``name``; a failure is logged and the next one still runs (for
    hooks that act after the user's work is stored, which their failure must not undo or hide)."""
    for function in hooks(name):
        try:
            function(**arguments)
        except Exception:
            logger.exception("hook %s: %s.%s failed", name, function.__module__, function.__qualname__)


def hooks_problems() -> list[str]:
    """What is wrong with ``settings.HOOKS`` (a system check reports each)."""
    configured = getattr(settings, "HOOKS", {})
    problems = [
        f"settings.HOOKS names an unknown hook {name!r} (known: {', '.join(HOOK_CALLS)})" for name in configured if name not in HOOK_CALLS
    ]
    for name in HOOK_CALLS:
        try:
            hooks(name)
        except HookError as exc:
            problems.append(str(exc))
    return problems
