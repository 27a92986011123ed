"""The calibration report of a campaign: one dict, the versioned JSON contract of
docs/calibration-report.md (its renderings are in `calibration.report.formats`).

`build_report` reads the campaign through `calibration.selectors` and computes
every figure with `calibration.metrics`; nothing here touches the ORM directly.
"""

from __future__ import annotations

import os
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from itertools import combinations

import numpy as np
from django.conf import settings
from threadpoolctl import threadpool_limits

from annotate.models import Campaign
from calibration import cache as report_cache
from calibration import charts, selectors
from calibration import metrics as M
from calibration.cascade import confidence_table
from calibration.metrics.rater_fits import fitting_pool, rater_fits, start_server, wants_processes
from calibration.plan import study as study_plan
from calibration.report import acceptable as report_acceptable
from calibration.report import alttest as report_alttest
from calibration.report import blinding as report_blinding
from calibration.report import consensus as report_consensus
from calibration.report import gold as report_gold
from calibration.report import ppi as report_ppi
from calibration.report import reference as report_reference
from calibration.report import sections
from calibration.report import selective as report_selective
from calibration.report import steps as report_steps
from calibration.report import ties as report_ties
from calibration.report.design import notes as design_notes
from calibration.report.design import with_design
from calibration.report.ensembles import ensemble_inputs, ensemble_name
from calibration.report.options import ReportOptions, options_with
from calibration.report.orderings import orderings_add
from calibration.report.pointwise import pointwise_add
from calibration.report.position import section as position_section
from calibration.report.raters import (
    ANCHOR,
    CATEGORY_INTERVAL_NOTE,
    CATEGORY_INTERVALS,  # noqa: F401 (the command and views import it here)
    CATEGORY_INTERVALS_MAX_JUDGES,
    HUMANS,
    Rater,
    anchor_raters,
    kendall,
)
from common.names import REFERENCE_SYSTEM

SCHEMA = "pairwise-calibration-report"
VERSION = 3
CACHE_SECONDS = report_cache.CACHE_SECONDS
# At most this many threads compute a report's independent parts side by side (the raters'
# Bradley-Terry fits above all); numpy releases the GIL in them.
_THREADS = 4


# --- building -----------------------------------------------------------------------------


def resolve_reference(campaign: Campaign, systems: list[str], reference: str | None) -> str | None:
    """The system every score is anchored to: the one asked for (it must be compared in the campaign), else the campaign's
    reference, else `wikipedia` when compared, else None (scores anchored on their mean, win rates against the field)."""
    if reference is not None:
        if reference not in systems:
            raise ValueError(
                f"reference system '{reference}' is not compared in campaign '{campaign.name}' (systems: {', '.join(systems) or 'none'})"
            )
        return reference
    if campaign.reference_system_id:
        return campaign.reference_system.key
    return REFERENCE_SYSTEM if REFERENCE_SYSTEM in systems else None


def anchor_description(reference: str | None, anchor: float = ANCHOR, systems: list[str] | None = None) -> dict:
    """How the scores are placed on their scale, for the report's parameters. `systems`: without a
    reference, the anchor systems every rater shares (None when the raters have none in common)."""
    if reference is None:
        if systems is None:
            text = (
                f"no reference system: each rater's mean score is {anchor:g} over its own anchor systems "
                "(bradley_terry_meta.<rater>.anchor_systems), for no system is finite in every bootstrap round for every rater; "
                "compare scores within a rater only; win rates are against the field"
            )
        else:
            text = (
                f"no reference system: the mean score of {', '.join(systems)} is {anchor:g} for every rater "
                "(the systems finite in every bootstrap round for every rater); win rates are against the field"
            )
        return {"kind": M.MEAN_ANCHOR, "system": None, "score": anchor, "text": text, "systems": systems}
    return {
        "kind": "reference",
        "system": reference,
        "score": anchor,
        "text": f"{reference} = {anchor:g}; win rates are against {reference}",
        "systems": [reference],
    }


def submit_all(executor: Executor, jobs: list[tuple]) -> list[Future]:
    """Every `(fn, args)` of `jobs` submitted to `executor`: their futures, in order."""
    return [executor.submit(fn, *args) for fn, args in jobs]


def _workers() -> int:
    return max(1, min(_THREADS, os.cpu_count() or 1))


BASELINE_KINDS = ("length", "words-to-watch", "random")  # judges.models.Judge.Kind's deterministic baselines


def _interval(fields: dict, name: str, n_key: str | None = None) -> M.Estimate:
    ci = fields.get(f"{name}_ci") or (None, None)
    return M.Estimate(fields.get(name), fields.get(n_key or f"{name}_n") or 0, ci[0], ci[1])


def _recommendation(
    judges: list[dict], differences: list[M.PairedDifference], has_humans: bool, humans: dict | None = None
) -> tuple[str, str | None, list[str]]:
    """The sentence, the recommended judge (or None) and the judges tied for the best PAR.

    The judges that are not baselines are ranked against each other (`metrics.recommend`), and the
    choice is then held against the humans' leave-one-out ceiling (`metrics.verdict_against_ceiling`):
    a judge below the humans' own agreement is named only as the closest, never recommended."""
    rated = [j for j in judges if j["par"] is not None]
    if rated:
        candidates = [j for j in rated if j["kind"] not in BASELINE_KINDS]
        ranked = None
        tied: list[str] = []
        if candidates:
            names = {j["name"] for j in candidates}
            points = [M.JudgePoint(j["name"], j["cost_per_pair_usd"], j["par"], j["n_labels"]) for j in candidates]
            ranked = M.recommend(points, [d for d in differences if d.judge_a in names and d.judge_b in names])
            tied = list(ranked.tied)
        standings = [
            M.JudgeStanding(j["name"], _interval(j, "par", "n_labels"), _interval(j, "cohen_kappa"), j["kind"] in BASELINE_KINDS)
            for j in rated
        ]
        ceiling = _interval(humans, "par_leave_one_out") if humans else None
        verdict = M.verdict_against_ceiling(standings, ranked, ceiling if ceiling and ceiling.value is not None else None)
        return verdict.sentence + " Costs are USD per judged pair.", verdict.judge, tied
    if not has_humans:
        return "No recommendation: there are no human labels to calibrate against.", None, []
    if not judges:
        return "No recommendation: no judge has worked on this campaign yet.", None, []
    return "No recommendation: no judge has verdicts on the items the humans labelled.", None, []


def _parameters(
    rounds: int,
    seed: int,
    reference: str | None,
    anchors: list[str] | None,
    ensembles: list,
    inputs,
    swap_policy: str,
    unparsable: str,
    neutral_emphasis: bool,
    majority_ties: str = M.DEFAULT_MAJORITY_TIES,
) -> dict:
    return {
        "rounds": rounds,
        "seed": seed,
        "reference": reference,
        "anchor": anchor_description(reference, systems=anchors),
        "ensembles": [ensemble_name(m) for m in ensembles],
        "ensemble_tie_rule": M.TIE_RULE,
        "include_unsubmitted": inputs.include_unsubmitted,
        "confidence_level": 0.95,
        "small_n_threshold": M.SMALL_N,
        "bootstrap_unit": "pair",
        "neutral_emphasis": neutral_emphasis,
        "min_pairs_for_ci": M.MIN_PAIRS_FOR_CI,
        "interval_rule": f"an estimate resting on fewer than {M.MIN_PAIRS_FOR_CI} pairs has no interval: {M.TOO_FEW_PAIRS}",
        "tie_tolerance": M.TIE_TOLERANCE,
        "swap_policy": swap_policy,
        "unparsable": unparsable,
        "convention": M.convention_text(swap_policy, unparsable),
        "majority_ties": majority_ties,
        "majority_rule": M.MAJORITY_TIE_RULES[majority_ties],
    }


def report_from_inputs(
    campaign: Campaign,
    inputs: selectors.CalibrationInputs,
    options: ReportOptions | None = None,
    *,
    vetting: report_reference.Vetting | None = None,
    processes: bool | None = None,
    **changes,
) -> dict:
    """The report from the campaign's inputs. The alt-test's epsilon is the one given, else the
    campaign's; without either its section gives no verdict. The judge statistics are computed
    against `human_reference` (`calibration.report.reference`: majority, the labels as they are, by
    default). The annotators' vetting (Dawid-Skene, MACE, their bootstraps: `vetting`, else fitted
    here) is computed only for another reference or when `sensitivity` is asked. `processes`: whether the
    raters' fits go to other processes (None: when the work is big enough, `fitting_pool`); the figures
    are the same."""
    options = options_with(options, changes).with_rounds(1000)
    # One BLAS thread: the report makes thousands of small products and solves (a few thousand
    # rows by 30 systems at most), for which OpenBLAS's threads cost far more than they save, above
    # all on a busy machine, where each product waits for a second core (20 s of 60 at 100k labels).
    with ExitStack() as stack:
        stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=_workers()))
        # The raters' Bradley-Terry fits of a big report go to other processes (calibration.metrics.rater_fits).
        procs = fitting_pool(len(inputs.table), options.rounds, processes)
        fits_pool = pool if procs is None else stack.enter_context(procs)
        return _report(campaign, inputs, pool, fits_pool, options, vetting)


def _report(
    campaign: Campaign,
    inputs: selectors.CalibrationInputs,
    pool: ThreadPoolExecutor,
    fits_pool: Executor,
    options: ReportOptions,
    vetting: report_reference.Vetting | None,
) -> dict:
    rounds, seed, swap_policy, unparsable = options.rounds, options.seed, options.swap_policy, options.unparsable
    alt_unit, human_reference, sensitivity = options.alt_unit, options.human_reference, options.sensitivity
    category_intervals, majority_ties = options.category_intervals, options.majority_ties
    epsilon = report_alttest.resolve_epsilon(campaign, options.alt_epsilon, options.alt_epsilon_reason)
    reference = resolve_reference(campaign, inputs.systems, options.reference)
    ensembles = list(options.ensembles)
    table = inputs.table
    humans = table.humans()
    if report_reference.vetting_needed(human_reference, sensitivity):
        adjudicated = report_reference.adjudicated_used(human_reference, inputs.adjudicated)
        vetting = vetting if vetting is not None else report_reference.vet(humans, rounds, seed, adjudicated)
    else:
        vetting = None  # the default report fits no annotator model
    # What the judges are measured against: the humans themselves under the default reference.
    reference_labels = humans if vetting is None else vetting.labels(human_reference)
    failed = inputs.failed if inputs.failed is not None else M.LabelTable.empty(table.vocab)
    notes: list[str] = []
    if not len(humans):
        notes.append(
            "No human labels yet"
            + ("" if inputs.include_unsubmitted else " in submitted assignments")
            + ": agreement figures are null and there is no recommendation."
        )
    if not inputs.judges:
        notes.append("No judge has worked on this campaign yet.")
    sampling = getattr(campaign, "sampling", "uniform")
    inclusion = M.unequal_inclusion(inputs.inclusion)  # None: the uniform forms
    notes += design_notes(sampling, inputs.inclusion)
    # Independent parts go to the pool as soon as their inputs exist; the notes stay in order.
    humans_figures = pool.submit(sections.humans_section, humans, inputs.annotator_times, rounds, seed)
    # With the swapped repeats: the annotators' position figures, and nothing else (a repeat is not a vote).
    position = pool.submit(position_section, inputs.position if inputs.position is not None else humans, rounds, seed)
    unordered = int((humans.first == M.UNKNOWN).sum()) if len(humans) else 0
    if unordered:
        notes.append(
            f"humans: {unordered} of {len(humans)} labels were imported without the order their articles were shown in; "
            f"the humans' first-position rate uses the other {len(humans) - unordered}."
        )

    merged_by_judge, votes_by_judge, raw_by_judge = {}, {}, {}
    for summary in inputs.judges:
        raw = table.for_rater(summary.name)
        votes = M.judge_votes(raw, failed.for_rater(summary.name), swap_policy=swap_policy, unparsable=unparsable)
        merged = votes.items if votes.share is None else (M.merge_swapped(raw) if len(raw) else raw)
        merged_by_judge[summary.name], votes_by_judge[summary.name], raw_by_judge[summary.name] = merged, votes, raw
    by_name = {s.name: s for s in inputs.judges}
    ensemble_summaries = []
    for members in ensembles:
        summary, merged = ensemble_inputs(members, by_name, merged_by_judge, campaign)
        # An ensemble votes once per item, in no order: the conventions leave it as it is.
        merged_by_judge[summary.name], votes_by_judge[summary.name] = merged, M.Votes(merged, None, 0)
        ensemble_summaries.append((summary, members))

    # The rankings first: the longest part (in other processes for a big report) while the sections are computed here.
    n_judges = len(merged_by_judge)
    judge_category_rounds = rounds if category_intervals == "all" or n_judges <= CATEGORY_INTERVALS_MAX_JUDGES else 0
    if judge_category_rounds != rounds and rounds:
        notes.append(
            f"Per-category Bradley-Terry scores of the judges have no intervals: with more than {CATEGORY_INTERVALS_MAX_JUDGES} judges "
            f"({n_judges} here) they are computed only when asked (calibration_report --category-intervals all); "
            "the humans' per-category intervals and every rater's overall intervals are computed."
        )
    weights = {HUMANS: M.inverse_probability_weights(np.asarray(humans.vocab.pairs)[humans.pair], inclusion) if inclusion else None}
    fit_tables = ([(HUMANS, humans)] if len(humans) else []) + list(merged_by_judge.items())
    fit_jobs = [
        (table, reference, rounds, seed, weights.get(name), rounds if name == HUMANS else judge_category_rounds)
        for name, table in fit_tables
    ]
    # Submitted from a thread (the first submissions to a process pool wait for its server to start), the
    # prediction-powered figures first (the longest single part; in the judges' order here, sorted below).
    ppi_job = (report_ppi.section, (reference_labels, dict(merged_by_judge), reference, ANCHOR, inclusion))
    submitted = pool.submit(submit_all, fits_pool, [ppi_job] + [(rater_fits, job) for job in fit_jobs])
    # Likewise the judges' agreement with each other, which needs only the verdicts.
    real = [s.name for s in inputs.judges if len(merged_by_judge[s.name])]
    judge_pairs = (
        pool.submit(sections.rater_pairs, M.LabelTable.concat(*[merged_by_judge[n] for n in real]), rounds, seed) if len(real) > 1 else None
    )
    # Each judge's kappa with each annotator against the annotators' kappas with each other (issue 40).
    # A crowd (hundreds of raters, a vote or two per item) gives kappas on a handful of shared items: the
    # recipe is for panels, and a crowd's tens of thousands of rater pairs cost seconds, so it is left out.
    panel = len(humans) and len(humans.rater_names()) <= M.HUMAN_LIKENESS_MAX_ANNOTATORS
    likeness = (
        pool.submit(sections.human_likeness, M.LabelTable.concat(humans, *[merged_by_judge[n] for n in real]), real, rounds, seed)
        if real and panel
        else None
    )

    # Agreement on unanimous, split and single-annotator items; ties (a calibrated tie threshold, Davidson's
    # fit) and the annotators' distributions per item (issue 40). The judges' intervals follow their
    # per-category ones at scale.
    consensus = pool.submit(report_consensus.section, humans, {n: merged_by_judge[n] for n in real}, rounds, seed, judge_category_rounds)
    tie_accuracy = pool.submit(report_ties.tie_accuracy_section, humans, inputs.confidences, rounds, seed)
    soft_labels = pool.submit(report_ties.soft_labels_section, humans, inputs.confidences, rounds, seed)
    davidson = pool.submit(
        report_ties.davidson_section, fit_tables, reference, seed, lambda name: rounds if name == HUMANS else judge_category_rounds
    )

    judges = [
        sections.judge_section(summary, raw_by_judge[summary.name], merged_by_judge[summary.name], votes_by_judge[summary.name],
                               reference_labels, rounds, seed, inclusion=inclusion, majority_ties=majority_ties)
        for summary in inputs.judges
    ]  # fmt: skip
    by_section = {j["name"]: j for j in judges}
    for summary, members in ensemble_summaries:
        judges.append(
            sections.judge_section(
                summary,
                merged_by_judge[summary.name],
                merged_by_judge[summary.name],
                votes_by_judge[summary.name],
                reference_labels,
                rounds,
                seed,
                members=[by_section[m] for m in members],
                inclusion=inclusion,
                majority_ties=majority_ties,
            )
        )
    judges.sort(key=lambda j: (j["par"] is None, -(j["par"] or 0), j["name"]))
    rater_tables = [(HUMANS, humans)] if len(humans) else []
    rater_tables += [(j["name"], merged_by_judge[j["name"]]) for j in judges]
    merged_judges = {j["name"]: merged_by_judge[j["name"]] for j in judges}

    rated = [j for j in judges if j["par"] is not None]
    # Every two rated judges, in one computation (65 judges: 2,080 pairs).
    differences = M.paired_differences(
        [(votes_by_judge[j["name"]].items, votes_by_judge[j["name"]].share) for j in rated], reference_labels, rounds, seed
    )
    comparisons = [sections.comparison(ja["name"], jb["name"], d) for (ja, jb), d in zip(combinations(rated, 2), differences)]

    points = [M.JudgePoint(j["name"], j["cost_per_pair_usd"], j["par"], j["n_labels"]) for j in rated]
    frontier = [p.name for p in M.pareto_frontier(points)]
    recommendation, recommended, tied = _recommendation(judges, differences, bool(len(reference_labels)), humans_figures.result())
    reference_section = report_reference.reference_section(
        vetting, human_reference, report_reference.adjudicated_counts_of(inputs.adjudicated)
    )
    if human_reference != report_reference.DEFAULT_REFERENCE:
        notes.append(reference_section["statement"])

    powered, *fitting = submitted.result()
    fitted = {name: future for (name, _), future in zip(fit_tables, fitting)}
    raters = [Rater(name, table, reference, fitted[name].result(), notes) for name, table in rater_tables]
    anchors = None
    if reference is None:
        anchors = anchor_raters(raters)
        if anchors is None:
            notes.append(
                "No system keeps a finite Bradley-Terry score in every bootstrap round for every rater: each rater's scores "
                "are anchored on its own systems, so scores of different raters are not on one scale."
            )

    report = {
        "schema": SCHEMA,
        "version": VERSION,
        "campaign": {
            "id": campaign.pk,
            "name": campaign.name,
            "criterion_set": str(campaign.criterion_set),
            "pair_mode": campaign.pair_mode,
            "systems": inputs.systems,
            "categories": sorted(set(table.vocab.categories[c] for c in np.unique(table.category))) if len(table) else [],
        },
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "parameters": {
            **_parameters(
                rounds, seed, reference, anchors, ensembles, inputs, swap_policy, unparsable, campaign.neutral_emphasis, majority_ties
            ),
            "category_intervals": {
                "asked": category_intervals,
                "max_judges": CATEGORY_INTERVALS_MAX_JUDGES,
                "judges_computed": judge_category_rounds == rounds,
            },
        },
        "n_pairs": inputs.n_pairs,
        "judges": judges,
        "humans": humans_figures.result(),
        "human_position": position.result(),
        "judge_pairs": [] if judge_pairs is None else judge_pairs.result(),
        "human_likeness": None if likeness is None else likeness.result(),
        "comparisons": comparisons,
        "pareto_frontier": frontier,
        "recommendation": recommendation,
        "recommended_judge": recommended,
        "bradley_terry": {r.name: sections.scores(r.bt) for r in raters},
        "bradley_terry_meta": {r.name: sections.bt_meta(r.bt) for r in raters},
        "bradley_terry_by_category": {
            r.name: None
            if r.bt_by_category is None
            else {
                c: sections.scores(bt, None if r.name == HUMANS or judge_category_rounds == rounds else CATEGORY_INTERVAL_NOTE)
                for c, bt in r.bt_by_category.items()
            }
            for r in raters
        },
        "kendall_tau": kendall(raters),
        "consensus": consensus.result(),
        "tie_accuracy": tie_accuracy.result(),
        "davidson": report_ties.davidson_report(davidson.result(), {r.name: sections.scores(r.bt) for r in raters}, inclusion is not None),
        "soft_labels": soft_labels.result(),
        "win_rates": {r.name: None if r.win_rates is None else sections.win_rates(r.win_rates) for r in raters},
        "prediction_powered": report_ppi.in_order(powered.result(), [j["name"] for j in judges]),
        "alt_test": report_alttest.section(
            reference_labels,
            merged_judges,
            epsilon=epsilon[0],
            reason=epsilon[1],
            source=epsilon[2],
            unit=alt_unit,
            rounds=rounds,
            seed=seed,
            inclusion=inclusion,
        ),
        "notes": notes,
        "tied_for_best": tied,
        "cost_unknown": [j["name"] for j in judges if j["cost_usd"] is None],
        "human_reference": reference_section,
        "competence": report_reference.competence_section(vetting, humans, seed),
        "sensitivity": report_reference.sensitivity_section(
            vetting,
            humans,
            votes_by_judge,
            merged_by_judge,
            chosen=human_reference,
            epsilon=epsilon[0],
            unit=alt_unit,
            rounds=rounds,
            seed=seed,
        ),  # fmt: skip
    }
    return with_design(report, sampling, inputs.inclusion, reference_labels, merged_judges)


def build_report(campaign: Campaign, options: ReportOptions | None = None, **changes) -> dict:
    """The calibration report of a campaign (see docs/calibration-report.md). ``changes``: options
    by name (`ReportOptions`'s fields), applied to ``options``."""
    options = options_with(options, changes).with_rounds(1000)
    rounds, seed, include_unsubmitted = options.rounds, options.seed, options.include_unsubmitted
    human_reference, sensitivity, alt_unit = options.human_reference, options.sensitivity, options.alt_unit
    report_alttest.resolve_epsilon(campaign, options.alt_epsilon, options.alt_epsilon_reason)  # a bad epsilon is refused before the reading
    if wants_processes(selectors.rows_to_rank(campaign=campaign), rounds):
        start_server()  # it starts on another core while the labels are read
    inputs = selectors.calibration_inputs(campaign=campaign, include_unsubmitted=include_unsubmitted)
    inputs = replace(inputs, confidences=confidence_table(campaign=campaign))
    vetting = None
    if report_reference.vetting_needed(human_reference, sensitivity):
        adjudicated = report_reference.adjudicated_used(human_reference, inputs.adjudicated)
        vetting = report_reference.vet_cached(campaign.pk, inputs.table.humans(), rounds, seed, adjudicated)
    report = report_from_inputs(campaign, inputs, options, vetting=vetting)
    # Answers about one article alone (checklists, ratings, counts): a section only when there are any.
    pointwise_add(report, campaign, include_unsubmitted, unit=alt_unit, rounds=rounds, seed=seed, human_reference=human_reference)
    # Rankings of k articles (groups): a section only when the rubric asks them.
    orderings_add(report, campaign, include_unsubmitted, rounds=rounds, seed=seed)
    # What the annotators could tell (the guess question), verdicts by guess and style control (issue 34).
    report["blinding"] = report_blinding.section(
        campaign,
        inputs.table,
        rounds=rounds,
        seed=seed,
        style_judges=report["parameters"]["category_intervals"]["judges_computed"],
        max_judges=CATEGORY_INTERVALS_MAX_JUDGES,
    )
    report["plan"] = study_plan.plan_section(campaign, report)
    if campaign.accept_sets:  # judge selection under single choices and under sets (issue 40)
        report["acceptable_sets"] = report_acceptable.section(campaign, include_unsubmitted=include_unsubmitted, rounds=rounds, seed=seed)
    if report_gold.wanted(campaign):  # every rater's accuracy on the known-answer pairs (issue 41)
        report["gold"] = report_gold.section(campaign)
    if report_steps.wanted(campaign):  # votes on the agents' steps and passages (issue 42)
        report["steps"] = report_steps.section(
            campaign, report, include_unsubmitted=include_unsubmitted, rounds=rounds, seed=seed,
            epsilon=report["alt_test"]["epsilon"], unit=alt_unit,
        )  # fmt: skip
    # "Cannot judge" answers have no winner: no figure reads them, none takes them for a tie (issue 37).
    report["humans"]["n_cannot_judge"] = selectors.human_cannot_judge_count(campaign=campaign, include_unsubmitted=include_unsubmitted)
    return report


def default_rounds() -> int:
    """Bootstrap rounds of the dashboard, its downloads and the API (settings.CALIBRATION_ROUNDS, else 1000)."""
    return int(getattr(settings, "CALIBRATION_ROUNDS", 1000))


def report_cached(
    campaign: Campaign,
    options: ReportOptions | None = None,
    *,
    stamp: tuple | None = None,
    wait: bool = True,
    selective: dict | None = None,
    **changes,
) -> dict:
    """`build_report`, reused until a label, submission, verdict or call of the campaign changes
    (or the alt-test's epsilon recorded on it), with the `selective` section (`selective`: the options
    alpha, delta, cascade and human_cost, else the frozen plan's α and δ; `calibration.report.selective`).
    The cache key is `ReportOptions.cache_key`: the defaults left out."""
    options = options_with(options, changes).with_rounds(default_rounds())
    rounds = options.rounds
    key = options.cache_key(epsilon=report_alttest.resolve_epsilon(campaign, options.alt_epsilon, options.alt_epsilon_reason))
    request = report_selective.selective_request(campaign, selective)  # a bad α or δ is refused before the reading
    stamp = stamp if stamp is not None else selectors.calibration_stamp(campaign=campaign)
    report = report_cache.campaign_cached(campaign, "report", stamp, key, lambda: build_report(campaign, options), wait=wait)
    # The cascade has its own cache entry, keyed by its options: they never make the rest be computed again.
    report = {**report, "selective": report_selective.section(campaign, request, rounds=rounds, stamp=stamp)}
    # Read afresh each time: freezing a plan, or a change the stamp does not see (a judge's settings, the rubric), must show at once.
    return {**report, "plan": study_plan.plan_section(campaign, report)}


def report_and_charts_cached(
    campaign: Campaign, options: ReportOptions | None = None, *, wait: bool = True, stamp: tuple | None = None, **changes
) -> tuple[dict, dict[str, str]]:
    """The default report (with these options) and its SVG charts (rendering them takes as long as a warm report)."""
    options = options_with(options, changes)
    stamp = stamp if stamp is not None else selectors.calibration_stamp(campaign=campaign)
    report = report_cached(campaign, options, stamp=stamp, wait=wait)
    key = options.charts_key(rounds=report["parameters"]["rounds"])
    return report, report_cache.campaign_cached(campaign, "charts", stamp, key, lambda: charts.report_charts(report), wait=wait)
