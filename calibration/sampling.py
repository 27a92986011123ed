"""Drawing the human queue of an actively sampled campaign (`Campaign.sampling` "active").

`sample_pairs` gives every eligible pair that has no `PairAdmission` yet its inclusion probability
and one uniform draw, and stores both: the claim path (annotate) only reads them. A pair is drawn
once, when it first becomes eligible, and never again.

- Burn-in: the first `sampling_burn_in` ordinary pairs (campaign order) get the uniform rate
  budget / pairs, with or without judge verdicts (not pi = 1: a certain pair would waste its label).
- Active: the other pairs, once the judges have a verdict on them, get pi from
  `metrics.active.inclusion_probabilities` on the squared judge-human error predicted by
  `metrics.active.error_model_fit`, fitted (weights 1 / pi) on the admitted pairs humans have
  labelled. Features per pair: position-swap disagreement, disagreement between judges, 1 - the
  judges' mean confidence (where given), relative length difference. Until MIN_FIT labelled pairs
  exist, active pairs wait. Each run spends on the pairs eligible now their share of the budget
  not yet spent (sum of pi over the admissions so far).

Calibration and known-answer (gold) pairs are not sampled: the claim path hands them out as before.

Staff run it (`manage.py sample_pairs`) to draw the burn-in; after that the task worker runs it again
by itself (`calibration.tasks.active_sample_task`) whenever a submission leaves it something to draw
(`sampler_due`): without that, an active campaign would hand out nothing beyond its burn-in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotate.models import Assignment, Campaign, Label, Pair, PairAdmission
from calibration.metrics.active import error_model_fit, inclusion_probabilities
from judges.models import JudgeUnit, JudgeVerdict

# Labelled pairs with judge verdicts the error model needs before the active phase starts.
MIN_FIT = 8
VALUE = {"a": 1.0, "b": -1.0, "tie": 0.0}
FEATURES = ("swap disagreement", "judge disagreement", "1 - confidence", "length difference")


@dataclass(frozen=True)
class SamplingRun:
    burn_in: int  # admissions written in the burn-in phase
    active: int  # admissions written in the active phase
    admitted: int  # of those written, how many the draw admitted
    waiting: int  # eligible pairs left without an admission (no verdict yet, or too few labels to fit)
    model_version: str
    fit_n: int


def _pair_features(pair_ids: list[int]) -> tuple[dict[int, list[float]], dict[int, float]]:
    """Per pair with done verdicts: the feature vector (FEATURES) and the judges' mean value (a=1, b=-1, tie=0)."""
    rows = JudgeVerdict.objects.filter(unit__pair_id__in=pair_ids, unit__status=JudgeUnit.Status.DONE).values_list(
        "unit__pair_id", "unit__judge_id", "criterion_id", "unit__a_first", "winner", "confidence"
    )
    by_pair: dict[int, list] = {}
    for row in rows:
        by_pair.setdefault(row[0], []).append(row[1:])
    words = dict(
        (pk, (wa, wb))
        for pk, wa, wb in Pair.objects.filter(pk__in=by_pair).values_list("pk", "article_a__word_count", "article_b__word_count")
    )
    features, yhat = {}, {}
    for pair_id, verdicts in by_pair.items():
        orders: dict[tuple, dict[bool, float]] = {}
        for judge, criterion, a_first, winner, _ in verdicts:
            orders.setdefault((judge, criterion), {})[a_first] = VALUE[winner]
        both = [o for o in orders.values() if len(o) == 2]
        swap = float(np.mean([o[True] != o[False] for o in both])) if both else 0.0
        per_criterion: dict[int, list[float]] = {}
        for (_, criterion), o in orders.items():
            per_criterion.setdefault(criterion, []).append(float(np.mean(list(o.values()))))
        spread = [float(np.std(v)) for v in per_criterion.values() if len(v) > 1]
        between = float(np.mean(spread)) if spread else 0.0
        conf = [c for *_, c in verdicts if c is not None]
        unsure = 1.0 - float(np.mean(conf)) if conf else 0.0
        wa, wb = words[pair_id]
        length = abs(wa - wb) / max(wa, wb, 1)
        features[pair_id] = [swap, between, unsure, length]
        yhat[pair_id] = float(np.mean([VALUE[w] for *_, w, _ in verdicts]))
    return features, yhat


def _human_values(pair_ids) -> dict[int, float]:
    """Per pair with submitted labels: the humans' mean value (a=1, b=-1, tie=0)."""
    values: dict[int, list[float]] = {}
    for pair_id, winner in (
        Label.objects.filter(
            assignment__pair_id__in=pair_ids, assignment__status=Assignment.Status.SUBMITTED, assignment__repeat_of__isnull=True
        )
        .exclude(winner="")
        .values_list("assignment__pair_id", "winner")
    ):
        values.setdefault(pair_id, []).append(VALUE[winner])
    return {pair_id: float(np.mean(v)) for pair_id, v in values.items()}


def _ordinary_ids(campaign: Campaign) -> list[int]:
    """The pairs the sampler draws, in campaign order: neither gold nor among the first calibration pairs."""
    ordinary = list(Pair.objects.filter(campaign=campaign, gold__isnull=True).order_by("order", "id").values_list("id", flat=True))
    return ordinary[campaign.calibration_pairs :]


def sampler_due(*, campaign: Campaign) -> bool:
    """Whether a run of `sample_pairs` now would draw an active pair: the campaign samples actively, its
    burn-in is drawn and done (every admitted burn-in pair has a submitted assignment and none still in
    progress), at least MIN_FIT admitted pairs are labelled, and a pair still waiting for its draw has a
    judge verdict. A few counting queries: the submit path asks it after every submission."""
    if campaign.sampling != "active":
        return False
    admissions = PairAdmission.objects.filter(pair__campaign=campaign)
    burn_in = admissions.filter(phase=PairAdmission.Phase.BURN_IN, admitted=True)
    if not admissions.filter(phase=PairAdmission.Phase.BURN_IN).exists():
        return False  # staff have not drawn the burn-in yet
    submitted = Assignment.Status.SUBMITTED
    if burn_in.exclude(pair__assignments__status=submitted).exists():
        return False
    if burn_in.filter(pair__assignments__status=Assignment.Status.ACTIVE).exists():
        return False
    if admissions.filter(admitted=True, pair__assignments__status=submitted).values("pair").distinct().count() < MIN_FIT:
        return False
    waiting = Pair.objects.filter(pk__in=_ordinary_ids(campaign), admission__isnull=True, judge_units__status=JudgeUnit.Status.DONE)
    return waiting.exists()


@dataclass(frozen=True)
class ErrorForecast:
    """The sampler's error model predicted on every pair it could draw that the judges have verdicts on
    (`errors`: None when there is no model yet, `note` says why)."""

    errors: np.ndarray | None
    note: str


def error_forecast(*, campaign: Campaign) -> ErrorForecast:
    """The squared judge-human error the sampler's model predicts per pair (the planner's active design):
    fitted as `sample_pairs` fits it, on the labelled pairs with verdicts, weighted by 1 / pi where a pair
    was drawn (a uniformly sampled campaign: equal weights)."""
    ordinary = _ordinary_ids(campaign)
    features, yhat = _pair_features(ordinary)
    labelled = _human_values(list(features))
    if len(labelled) < MIN_FIT:
        return ErrorForecast(
            None, f"No error model yet: it needs {MIN_FIT} labelled pairs with judge verdicts, the campaign has {len(labelled)}."
        )
    pi = dict(PairAdmission.objects.filter(pair_id__in=list(labelled)).values_list("pair_id", "probability"))
    fit_ids = sorted(labelled)
    model = error_model_fit(
        [features[p] for p in fit_ids], [(labelled[p] - yhat[p]) ** 2 for p in fit_ids], weights=[1 / pi.get(p, 1.0) for p in fit_ids]
    )
    drawable = [p for p in ordinary if p in features]
    verdict = "predict" if model.useful else "do not predict"
    note = (
        f"Error model fitted on {model.n} labelled pairs ({', '.join(FEATURES)}): they {verdict} the error (F-test p = {model.p_value:.3g})"
    )
    note += "." if model.useful else "; the active design is then the uniform one."
    return ErrorForecast(model.predict([features[p] for p in drawable]), note)


def sample_pairs(*, campaign: Campaign, seed: int | None = None) -> SamplingRun:
    """Writes the admissions of the campaign's eligible pairs that have none (module docstring).
    Existing admissions are never changed; a second run with nothing new writes nothing."""
    if campaign.sampling != "active":
        raise ValidationError([f"Campaign '{campaign.name}' samples uniformly: every pair is in the human queue, nothing to draw."])
    rng = np.random.default_rng(seed)
    with transaction.atomic():
        # One run at a time per campaign: the campaign's row is the lock.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        ordinary = _ordinary_ids(campaign)
        if not ordinary:
            return SamplingRun(0, 0, 0, 0, "", 0)
        existing = dict(PairAdmission.objects.filter(pair_id__in=ordinary).values_list("pair_id", "probability"))
        rate = min(1.0, campaign.sampling_budget / len(ordinary))
        burn_in_ids = set(ordinary[: campaign.sampling_burn_in])
        new = []
        for pair_id in ordinary:
            if pair_id in burn_in_ids and pair_id not in existing:
                new.append(_admission(pair_id, rate, rng, PairAdmission.Phase.BURN_IN, f"uniform rate {rate:.6g}"))
        spent = sum(existing.values()) + rate * len(new)
        waiting = [pair_id for pair_id in ordinary if pair_id not in existing and pair_id not in burn_in_ids]
        features, yhat = _pair_features(list(ordinary))
        eligible = [pair_id for pair_id in waiting if pair_id in features]
        labelled = {pair_id: y for pair_id, y in _human_values(list(existing)).items() if pair_id in features}
        version, active = "", 0
        if eligible and len(labelled) >= MIN_FIT:
            fit_ids = sorted(labelled)
            model = error_model_fit(
                [features[p] for p in fit_ids],
                [(labelled[p] - yhat[p]) ** 2 for p in fit_ids],
                weights=[1 / existing[p] for p in fit_ids],
            )
            version = (
                f"ols n={model.n} {'useful' if model.useful else 'flat'} p={model.p_value:.3g} coef={np.round(model.coef, 4).tolist()}"
            )
            left = (campaign.sampling_budget - spent) * len(eligible) / len(waiting)
            if left <= 0:
                raise ValidationError(
                    [
                        f"The budget of {campaign.sampling_budget} pairs is spent by the admissions so far: raise the campaign's sampling budget."
                    ]
                )
            cost = float(campaign.human_cost_per_pair or 1)
            pi = inclusion_probabilities(
                model.predict([features[p] for p in eligible]), left * cost, uniform_share=campaign.sampling_uniform_share, human_cost=cost
            )
            new += [_admission(p, float(q), rng, PairAdmission.Phase.ACTIVE, version) for p, q in zip(eligible, pi, strict=True)]
            active = len(eligible)
        try:
            PairAdmission.objects.bulk_create(new)
        except IntegrityError as exc:
            raise ValidationError(
                ["Some of these pairs already have an admission: an admission is written once and never redrawn."]
            ) from exc
    return SamplingRun(
        burn_in=len(new) - active,
        active=active,
        admitted=sum(a.admitted for a in new),
        waiting=len(waiting) - active,
        model_version=version,
        fit_n=len(labelled),
    )


def _admission(pair_id: int, probability: float, rng: np.random.Generator, phase: str, version: str) -> PairAdmission:
    probability = min(1.0, probability)
    draw = float(rng.random())
    return PairAdmission(
        pair_id=pair_id, probability=probability, draw=draw, admitted=draw < probability, phase=phase, model_version=version[:200]
    )
