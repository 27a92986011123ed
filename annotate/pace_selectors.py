"""How long a pair takes, as the home page shows it before claiming (issue 37)."""

from __future__ import annotations

from annotate.models import Assignment, Campaign

PAIR_TIME_MIN_PAIRS = 5  # fewer submitted pairs give no estimate
PAIR_TIME_RECENT = 500  # the estimate reads the campaign's latest submitted pairs


def pair_time_estimate(*, campaign: Campaign) -> dict | None:
    """The expected time per pair shown before claiming one (issue 37): the median, in minutes, of
    the time from first opening a pair to submitting it, over the campaign's latest
    `PAIR_TIME_RECENT` submitted pairs (every annotator; breaks count, as they do for the reader),
    with its n and a 95% distribution-free interval for the median (scipy.stats.quantile_test's
    order-statistic interval). None under `PAIR_TIME_MIN_PAIRS` pairs."""
    import numpy as np
    from scipy.stats import quantile_test

    rows = (
        Assignment.objects.filter(pair__campaign=campaign, status=Assignment.Status.SUBMITTED, submitted_at__isnull=False)
        .order_by("-submitted_at")
        .values_list("submitted_at", "first_opened_at", "claimed_at")[:PAIR_TIME_RECENT]
    )
    minutes = [
        (done - (opened or claimed)).total_seconds() / 60
        for done, opened, claimed in rows
        if (opened or claimed) and done >= (opened or claimed)
    ]
    if len(minutes) < PAIR_TIME_MIN_PAIRS:
        return None
    values = np.array(minutes)
    interval = quantile_test(values, p=0.5).confidence_interval(0.95)
    return {"median": float(np.median(values)), "low": float(interval.low), "high": float(interval.high), "n": len(minutes)}
