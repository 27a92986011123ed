"""Calibration's functions that annotate's services run (settings.HOOKS, common/hooks.py).

Light to import: each imports what its rule needs (the metrics, numpy, scipy) when it first applies,
not when a command starts.
"""


def gold_pause_gate(*, campaign, user) -> str | None:
    """Hook ``claim_gates``: the gold pause rule (`calibration.gold.gold_pause_reason`)."""
    if campaign.gold_pause_below is None:
        return None
    from calibration.gold import gold_pause_reason

    return gold_pause_reason(campaign=campaign, user=user)


def study_plan_guard(*, campaign, changes) -> str | None:
    """Hook ``settings_guards``: the frozen plan's refusal of a settings change (`calibration.plan.study.settings_guard`)."""
    from calibration.plan.study import settings_guard

    return settings_guard(campaign=campaign, changes=changes)
