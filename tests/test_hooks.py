"""The hooks registry (common/hooks.py, settings.HOOKS): what annotate's and judges' services run of
the apps above them, listed in one place, and refused when it cannot be resolved."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from common.hooks import HOOK_CALLS, HookError, hooks, hooks_problems, hooks_run_logged

CALLS: list[str] = []


def first(**arguments) -> None:
    CALLS.append(f"first {sorted(arguments)}")
    raise RuntimeError("a hook that fails")


def second(**arguments) -> None:
    CALLS.append(f"second {sorted(arguments)}")


def test_it_lists_every_hook_the_services_run_and_resolves_each():
    assert set(HOOK_CALLS) == {"claim_gates", "settings_guards", "after_submit", "after_run"}
    assert [f.__qualname__ for f in hooks("claim_gates")] == ["gold_pause_gate"]
    assert [f.__qualname__ for f in hooks("settings_guards")] == ["study_plan_guard"]
    assert [f.__qualname__ for f in hooks("after_submit")] == ["sample_when_due", "report_warm_after_submission"]
    assert hooks_problems() == []


def test_it_refuses_a_hook_name_it_does_not_know(settings):
    with pytest.raises(HookError, match="unknown hook 'after_claim'"):
        hooks("after_claim")
    settings.HOOKS = {**settings.HOOKS, "after_claim": ["tests.test_hooks.second"]}
    assert hooks_problems() == [
        "settings.HOOKS names an unknown hook 'after_claim' (known: claim_gates, settings_guards, after_submit, after_run)"
    ]
    with pytest.raises(SystemCheckError, match="unknown hook 'after_claim'"):
        call_command("check")


def test_it_refuses_a_path_that_does_not_import(settings):
    settings.HOOKS = {**settings.HOOKS, "claim_gates": ["calibration.hooks.no_such_gate"]}
    with pytest.raises(HookError, match="'calibration.hooks.no_such_gate', which does not import"):
        hooks("claim_gates")
    with pytest.raises(SystemCheckError, match="no_such_gate"):
        call_command("check")


def test_it_runs_logged_hooks_in_order_and_a_failure_does_not_stop_the_next(settings, caplog):
    settings.HOOKS = {**settings.HOOKS, "after_run": ["tests.test_hooks.first", "tests.test_hooks.second"]}
    CALLS.clear()
    hooks_run_logged("after_run", run=None, verdicts=0)
    assert CALLS == ["first ['run', 'verdicts']", "second ['run', 'verdicts']"]
    assert "hook after_run: tests.test_hooks.first failed" in caplog.text
