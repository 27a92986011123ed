"""The alt-test's epsilon of a campaign: how far the annotators may beat a judge and still let it
stand in for them (calibration.metrics.alttest). It is never defaulted: the researcher chooses it
and records why, and the report states both."""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError

from annotate.models import Campaign

SUGGESTED = "the authors suggest 0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd workers"
REASON_MAX = 2000


def epsilon_problem(epsilon: float | None, reason: str | None) -> str | None:
    """One line saying what is wrong with (epsilon, reason), or None. No epsilon and no reason is
    fine (the test then gives no verdict); a reason alone, or an epsilon without one, is not."""
    reason = (reason or "").strip()
    if epsilon is None:
        return "an epsilon reason was given without an epsilon" if reason else None
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon):
        return f"epsilon must be a number strictly between 0 and 1, not {epsilon!r}"
    if not 0 < epsilon < 1:
        return f"epsilon must lie strictly between 0 and 1, not {epsilon:g} ({SUGGESTED})"
    if not reason:
        return f"epsilon {epsilon:g} needs a reason: say why it fits these annotators ({SUGGESTED})"
    if len(reason) > REASON_MAX:
        return f"the epsilon reason is {len(reason):,} characters long; at most {REASON_MAX:,}"
    return None


def parse_epsilon(text: str | None) -> float | None:
    """An epsilon typed in a form or a query string: blank is None; ValueError with a message otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"epsilon must be a number strictly between 0 and 1, not '{text[:40]}'") from None
    if not math.isfinite(value):
        raise ValueError(f"epsilon must be a number strictly between 0 and 1, not '{text[:40]}'")
    return value


def campaign_set_alt_epsilon(*, campaign: Campaign, epsilon: float | None, reason: str | None) -> None:
    """Records (or, with None, clears) the campaign's alt-test epsilon and its reason."""
    if problem := epsilon_problem(epsilon, reason):
        raise ValidationError([problem[0].upper() + problem[1:] + "."])
    reason = (reason or "").strip() if epsilon is not None else ""
    epsilon = None if epsilon is None else float(epsilon)
    Campaign.objects.filter(pk=campaign.pk).update(alt_epsilon=epsilon, alt_epsilon_reason=reason)
    campaign.alt_epsilon, campaign.alt_epsilon_reason = epsilon, reason
