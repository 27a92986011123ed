"""Small calibration datasets built through the real services (humans) and real rows (judges).

The hand-made campaign: one topic, three systems, pairs wikipedia-vs-atlas_agent
and wikipedia-vs-quill_researcher (article A is wikipedia in both), three criteria
(c1, c2 in category `style`; c3 in `neutral`). Word counts: atlas_agent <
wikipedia < quill_researcher, so the longer article is A in the first pair and B
in the second.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from annotate.models import Assignment, Campaign, Criterion, CriterionSet, Pair
from annotate.services import articles_import, criterion_set_import
from annotate.services.answers import label_save, position_from_winner
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next
from annotate.services.labelling import assignment_submit
from annotate.sources import ArticleRecord, Batch, CategoryRecord, CriterionRecord, RubricRecord, SystemRecord
from calibration import metrics as M
from calibration import selectors
from calibration.metrics import LabelRow
from judges.models import Judge, JudgeCall, JudgeUnit, JudgeVerdict

ATLAS, QUILL, WIKI = "atlas_agent", "quill_researcher", "wikipedia"
CRITERIA = ("c1", "c2", "c3")
REASON = "Clearer on this point."


def tiny_rubric():
    rubric = RubricRecord(
        key="calib_tiny",
        name="Calibration tiny rubric",
        description="",
        categories=[
            CategoryRecord("style", "Style", "", [CriterionRecord("c1", "Plain sentences."), CriterionRecord("c2", "Short paragraphs.")]),
            CategoryRecord("neutral", "Neutral", "", [CriterionRecord("c3", "Fair to every side.")]),
        ],
    )
    return criterion_set_import(rubric=rubric)[0]


def _body(words: int) -> str:
    return " ".join(["word"] * words)


def tiny_articles(topics: tuple[str, ...] = ("Red Fox",)) -> None:
    batch = Batch(benchmark="calib")
    batch.systems = {
        WIKI: SystemRecord(WIKI, "Wikipedia", is_reference=True),
        ATLAS: SystemRecord(ATLAS, "Atlas Agent"),
        QUILL: SystemRecord(QUILL, "Quill Researcher"),
    }
    for title in topics:
        for system, words in ((WIKI, 120), (ATLAS, 60), (QUILL, 200)):
            batch.articles.append(
                ArticleRecord(topic=title, system=system, markdown=f"# {title}\n\n{_body(words)}\n", source=f"{system}/{title}")
            )
    summary = articles_import(batch=batch)
    assert not summary.problems, summary.problems


def hand_campaign(annotators, *, name: str = "Calib", topics: tuple[str, ...] = ("Red Fox",), allow_tie: bool = False) -> Campaign:
    criterion_set = tiny_rubric()
    tiny_articles(topics)
    return campaign_create(
        name=name,
        criterion_set=criterion_set,
        systems=[WIKI, ATLAS, QUILL],
        overlap=len(annotators),
        annotators=list(annotators),
        rationale_min_length=5,
        allow_tie=allow_tie,
        benchmark="calib",
    )


def pair_of(campaign: Campaign, other: str, topic: str | None = None) -> Pair:
    pairs = Pair.objects.filter(campaign=campaign, article_b__system__key=other)
    if topic is not None:
        pairs = pairs.filter(topic__title=topic)
    return pairs.get()


def label_pairs(campaign: Campaign, user, winners: dict, *, a_first: bool | dict = True, submit: bool = True) -> list[Assignment]:
    """`winners`: {pair: {criterion key: 'a' | 'b' | 'tie'}}; labels every pair through the services."""
    done = []
    for _ in range(len(winners)):
        assignment = assignment_claim_next(campaign=campaign, user=user)
        assert assignment is not None
        left = a_first if isinstance(a_first, bool) else a_first[assignment.pair]
        Assignment.objects.filter(pk=assignment.pk).update(a_first=left, order="ab" if left else "ba")
        assignment.refresh_from_db()
        for key, side in winners[assignment.pair].items():
            criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key=key)
            label_save(
                assignment=assignment,
                criterion=criterion,
                user=user,
                position=position_from_winner(assignment, side),
                rationale=f"{user.username}: {REASON}",
            )
        if submit:
            assignment_submit(assignment=assignment, user=user)
        done.append(assignment)
    return done


def judge_rows(
    campaign: Campaign,
    name: str,
    verdicts: dict,
    *,
    cost_per_unit: str = "0.01",
    latency_ms: int = 800,
    model: str = "",
    errors: list[tuple[Pair, str, bool]] = (),
) -> Judge:
    """`verdicts`: {(pair, a_first): {criterion key: 'a' | 'b' | 'tie'}}. One DONE unit per (pair, category, order),
    with one valid call costing `cost_per_unit`; `errors`: (pair, category key, a_first) units left in ERROR."""
    judge, _ = Judge.objects.get_or_create(name=name, defaults={"kind": Judge.Kind.LLM if model else Judge.Kind.IMPORTED, "model": model})
    criteria = {c.key: c for c in Criterion.objects.filter(criterion_set=campaign.criterion_set).select_related("category")}
    for (pair, a_first), by_criterion in verdicts.items():
        categories: dict = {}
        for key, side in by_criterion.items():
            categories.setdefault(criteria[key].category, []).append((criteria[key], side))
        for category, items in categories.items():
            unit = JudgeUnit.objects.create(
                judge=judge, pair=pair, category=category, a_first=a_first, order="ab" if a_first else "ba", status=JudgeUnit.Status.DONE
            )
            call = JudgeCall.objects.create(
                unit=unit,
                attempt=1,
                request_hash=f"{name}-{unit.pk}",
                valid=True,
                prompt_tokens=1000,
                completion_tokens=100,
                cost_usd=Decimal(cost_per_unit),
                latency_ms=latency_ms,
            )
            for criterion, side in items:
                JudgeVerdict.objects.create(
                    unit=unit, call=call, criterion=criterion, winner=side, rationale=f"{name} says {side}: {REASON}"
                )
    for pair, category_key, a_first in errors:
        category = next(c.category for c in criteria.values() if c.category.key == category_key)
        unit = JudgeUnit.objects.create(
            judge=judge,
            pair=pair,
            category=category,
            a_first=a_first,
            order="ab" if a_first else "ba",
            status=JudgeUnit.Status.ERROR,
            error="invalid JSON",
        )
        JudgeCall.objects.create(
            unit=unit, attempt=1, request_hash=f"{name}-{unit.pk}", valid=False, cost_usd=Decimal(cost_per_unit), latency_ms=latency_ms
        )
    return judge


def by_criterion(*sides: str) -> dict:
    return dict(zip(CRITERIA, sides))


def order_flipping_judge(campaign: Campaign, pairs: list[Pair]) -> Judge:
    """ "judge-1" on both orders of every pair: sure of "a" on the odd pairs (by position in `pairs`),
    flipping with the order on the even ones ("a" first, "b" swapped)."""
    verdicts = {}
    for i, pair in enumerate(pairs):
        verdicts[(pair, True)] = by_criterion("a", "a", "a")
        verdicts[(pair, False)] = by_criterion("a", "a", "a") if i % 2 else by_criterion("b", "b", "b")
    return judge_rows(campaign, "judge-1", verdicts)


def hand_dataset(alice, bob, *, before_labels=None) -> Campaign:
    """The dataset whose figures the report tests check by hand (see test_calibration_report).

    `before_labels(campaign)`, when given, runs once the campaign exists and before its first label (e.g. freezing a study plan)."""
    campaign = hand_campaign([alice, bob])
    if before_labels is not None:
        before_labels(campaign)
    p1, p2 = pair_of(campaign, ATLAS), pair_of(campaign, QUILL)
    label_pairs(campaign, alice, {p1: by_criterion("a", "a", "b"), p2: by_criterion("a", "b", "b")}, a_first={p1: True, p2: False})
    label_pairs(campaign, bob, {p1: by_criterion("a", "b", "b"), p2: by_criterion("a", "b", "a")}, a_first={p1: False, p2: True})
    # sharp: one order, agrees with alice everywhere; its neutral unit on p1 with B first failed.
    judge_rows(
        campaign,
        "sharp",
        {(p1, True): by_criterion("a", "a", "b"), (p2, True): by_criterion("a", "b", "b")},
        cost_per_unit="0.02",
        model="big-model",
        errors=[(p1, "neutral", False)],
    )
    # cheap: both orders, always picks A when A is shown first.
    judge_rows(
        campaign,
        "cheap",
        {
            (p1, True): by_criterion("a", "a", "a"),
            (p2, True): by_criterion("a", "a", "a"),
            (p1, False): by_criterion("a", "b", "a"),
            (p2, False): by_criterion("b", "a", "a"),
        },
        cost_per_unit="0.001",
        model="small-model",
    )
    return campaign


# --- reports from inputs built in memory (no database rows) ---------------------------------


def offline_campaign() -> Campaign:
    """An unsaved campaign: `report_from_inputs` reads only its name, rubric and reference."""
    return Campaign(name="Offline", criterion_set=CriterionSet(key="arena", version=1), pair_mode=Campaign.PairMode.ALL)


def summary(name: str, cost: float | None = 0.01) -> selectors.JudgeSummary:
    return selectors.JudgeSummary(
        name=name,
        model=f"{name}-model",
        kind="imported",
        n_units=1,
        errors=0,
        n_calls=1,
        n_invalid_calls=0,
        cost_usd=cost,
        prompt_tokens=0,
        cached_tokens=0,
        completion_tokens=0,
        mean_latency_ms=None,
    )


def offline_inputs(rows: list[LabelRow], judges: list[selectors.JudgeSummary]) -> selectors.CalibrationInputs:
    table = M.LabelTable.from_labels(rows)
    return selectors.CalibrationInputs(
        table=table, judges=judges, systems=sorted(table.vocab.systems), n_pairs=len(table.vocab.pairs), include_unsubmitted=False
    )


# --- the JSON contract (docs/calibration-report.md) ------------------------------------------

TOP_KEYS = {
    "schema": str,
    "version": int,
    "campaign": dict,
    "generated_at": str,
    "parameters": dict,
    "n_pairs": int,
    "judges": list,
    "humans": dict,
    "comparisons": list,
    "pareto_frontier": list,
    "recommendation": str,
    "recommended_judge": (str, type(None)),
    "bradley_terry": dict,
    "bradley_terry_meta": dict,
    "bradley_terry_by_category": dict,
    "kendall_tau": dict,
    "win_rates": dict,
    "notes": list,
    "judge_pairs": list,
    "human_likeness": (dict, type(None)),
    "consensus": (dict, type(None)),
    "tie_accuracy": dict,
    "davidson": dict,
    "soft_labels": (dict, type(None)),
    "prediction_powered": dict,
    "alt_test": dict,
    "tied_for_best": list,
    "cost_unknown": list,
}
JUDGE_ESTIMATES = ("par", "par_majority", "par_no_ties", "cohen_kappa", "position_consistency", "first_position_rate", "prefers_longer")
JUDGE_COUNTS = (
    "n_verdicts",
    "n_items_judged",
    "n_pairs_judged",
    "n_swapped_items",
    "n_items",
    "n_labels",
    "n_no_majority",
    "n_calls",
    "n_invalid_calls",
    "n_units",
    "errors",
)
HUMAN_ESTIMATES = ("par_leave_one_out", "par_all_pairs", "krippendorff_alpha", "prefers_longer", "first_position_rate")
NUMBER = (int, float)


def _check_ci(value, ci, where: str, *, contains: bool = True) -> None:
    if value is None:
        assert ci is None, f"{where}: a CI without a value"
        return
    assert isinstance(value, NUMBER) and value == value, f"{where}: {value!r} is not a number"
    if ci is None:
        return
    assert isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, NUMBER) for x in ci), f"{where}: bad CI {ci!r}"
    lo, hi = ci
    assert lo <= hi, f"{where}: CI {ci} is reversed"
    if contains:
        assert lo - 1e-9 <= value <= hi + 1e-9, f"{where}: {value} outside its CI {ci}"


def _check_pairs(value, ci, n_pairs, note, where: str) -> None:
    """The pairs behind a figure, and the rule that withholds an interval below 10 of them."""
    assert isinstance(n_pairs, int) and n_pairs >= 0, f"{where}: n_pairs {n_pairs!r}"
    too_few = value is not None and n_pairs < 10
    if note == "interval not computed" and not too_few:  # the judges' per-category intervals, left out by rule
        assert ci is None and where.startswith("bradley_terry_by_category."), f"{where}: {note} with an interval {ci}"
        return
    assert note == ("too few pairs for an interval" if too_few else None), f"{where}: ci_note {note!r} with {n_pairs} pairs"
    if too_few:
        assert ci is None, f"{where}: an interval from {n_pairs} pairs"


def _pairs_or_n(n: int, n_pairs: int | None) -> int:
    """What † counts: the pairs a figure rests on (the bootstrap's units), its n where none are counted."""
    return n if n_pairs is None else n_pairs


def _check_flat(section: dict, name: str, n_key: str, where: str) -> None:
    assert name in section and f"{name}_ci" in section and n_key in section, f"{where}: {name} is incomplete"
    assert isinstance(section[n_key], int) and section[n_key] >= 0
    _check_ci(section[name], section[f"{name}_ci"], f"{where}.{name}")
    _check_pairs(section[name], section[f"{name}_ci"], section[f"{name}_n_pairs"], section[f"{name}_ci_note"], f"{where}.{name}")
    assert (name in section["small_n_figures"]) == (_pairs_or_n(section[n_key], section[f"{name}_n_pairs"]) < 30), (
        f"{where}: small_n flag of {name}"
    )


def _check_nested(entry: dict, value_key: str, where: str, *, contains: bool = True) -> None:
    assert set(entry) >= {value_key, "ci", "n", "small_n", "n_pairs", "ci_note"}, f"{where}: keys {sorted(entry)}"
    assert isinstance(entry["n"], int) and entry["small_n"] == (_pairs_or_n(entry["n"], entry["n_pairs"]) < 30), f"{where}: small_n"
    _check_ci(entry[value_key], entry["ci"], where, contains=contains)
    _check_pairs(entry[value_key], entry["ci"], entry["n_pairs"], entry["ci_note"], where)


def assert_contract(report: dict) -> None:
    """Every documented key with its type; CIs ordered around their value; n beside every figure; no NaN."""
    import json

    json.dumps(report, allow_nan=False)
    for key, kind in TOP_KEYS.items():
        assert key in report, f"missing {key}"
        assert isinstance(report[key], kind), f"{key} is {type(report[key]).__name__}"
    assert report["schema"] == "pairwise-calibration-report" and report["version"] == 3
    assert set(report["campaign"]) >= {"id", "name", "criterion_set", "pair_mode", "systems", "categories"}
    assert set(report["parameters"]) >= {
        "rounds",
        "seed",
        "reference",
        "anchor",
        "ensembles",
        "ensemble_tie_rule",
        "include_unsubmitted",
        "confidence_level",
        "small_n_threshold",
        "min_pairs_for_ci",
        "interval_rule",
        "tie_tolerance",
        "swap_policy",
        "unparsable",
        "convention",
    }
    assert report["parameters"]["swap_policy"] in ("tie", "half", "both") and report["parameters"]["unparsable"] in ("drop", "wrong")
    anchor = report["parameters"]["anchor"]
    assert anchor["kind"] in ("reference", "mean") and (anchor["system"] is None) == (anchor["kind"] == "mean")
    assert anchor["system"] == report["parameters"]["reference"] and isinstance(anchor["text"], str)
    for j in report["judges"]:
        where = f"judges[{j['name']}]"
        for key in ("name", "model", "kind"):
            assert isinstance(j[key], str)
        assert (j["members"] is None) == (j["tie_rule"] is None) == (j["kind"] != "ensemble"), f"{where}: ensemble fields"
        for key in JUDGE_COUNTS:
            assert isinstance(j[key], int), f"{where}.{key}"
        for name in JUDGE_ESTIMATES:
            _check_flat(j, name, "n_labels" if name == "par" else f"{name}_n", where)
        for key in ("share_kept_no_ties", "cost_per_pair_usd", "cost_per_1000_verdicts_usd", "mean_latency_ms"):
            assert j[key] is None or isinstance(j[key], NUMBER), f"{where}.{key}"
        # A cost is null when unknown (imported verdicts, a judge without prices), never 0 for that.
        assert (j["cost_usd"] is None or isinstance(j["cost_usd"], NUMBER)) and j["small_n"] == (j["n_items"] < 30)
        assert (j["cost_usd"] is None) == (j["name"] in report["cost_unknown"]), f"{where}: cost unknown"
        assert j["cost_usd"] is not None or j["cost_per_pair_usd"] is None
        assert isinstance(j["n_unparsable"], int)
        assert j["possibly_billed_usd"] is None or isinstance(j["possibly_billed_usd"], NUMBER)
        assert isinstance(j["n_possibly_billed_calls"], int)
        assert ((j["possibly_billed_usd"] or 0) > 0) <= (j["n_possibly_billed_calls"] > 0)
        assert set(j["tokens"]) == {"prompt", "cached", "completion"}
        for breakdown in ("by_category", "by_criterion"):
            for key, entry in j[breakdown].items():
                _check_nested(entry, "par", f"{where}.{breakdown}.{key}")
    h = report["humans"]
    for key in ("n_labels", "n_annotators", "n_items", "n_items_multi", "n_pairs", "n_loo_excluded"):
        assert isinstance(h[key], int), f"humans.{key}"
    for name in HUMAN_ESTIMATES:
        _check_flat(h, name, f"{name}_n", "humans")
    for key, entry in h["by_category"].items():
        _check_nested(entry, "par_leave_one_out", f"humans.by_category.{key}")
    for c in report["comparisons"]:
        assert set(c) >= {"a", "b", "difference", "ci", "significant", "n", "n_pairs", "ci_note"}
        assert isinstance(c["significant"], bool) and isinstance(c["n"], int)
        _check_ci(c["difference"], c["ci"], f"comparison {c['a']}-{c['b']}")
        _check_pairs(c["difference"], c["ci"], c["n_pairs"], c["ci_note"], f"comparison {c['a']}-{c['b']}")
        assert not (c["significant"] and c["ci"] is None)
    names = {j["name"] for j in report["judges"]}
    assert set(report["pareto_frontier"]) <= names - set(report["cost_unknown"])
    assert report["recommended_judge"] is None or report["recommended_judge"] in report["tied_for_best"]
    assert set(report["tied_for_best"]) <= names
    for rater, scores in report["bradley_terry"].items():
        for s in scores or []:
            _check_score(s, f"bradley_terry.{rater}.{s['system']}")
    for rater, categories in report["bradley_terry_by_category"].items():
        for scores in (categories or {}).values():
            for s in scores or []:
                _check_score(s, f"bradley_terry_by_category.{rater}.{s['system']}")
    for name, tau in report["kendall_tau"].items():
        assert set(tau) == {"tau", "p_value", "n_systems"} and isinstance(tau["n_systems"], int)
    for rater, systems in report["win_rates"].items():
        for system, figures in (systems or {}).items():
            assert "overall" in figures
            for key, entry in figures.items():
                _check_nested(entry, "rate", f"win_rates.{rater}.{system}.{key}")
    for entry in h["annotator_pairs"] + report["judge_pairs"]:
        assert set(entry) == {"a", "b", "kappa", "agreement"}
        _check_nested(entry["kappa"], "value", f"pair {entry['a']}-{entry['b']}", contains=False)
        _check_nested(entry["agreement"], "value", f"pair {entry['a']}-{entry['b']}")
    _check_nested(h["fleiss_kappa"], "value", "humans.fleiss_kappa", contains=False)
    _check_powered(report["prediction_powered"], names)
    _check_alt_test(report["alt_test"], names)
    if "plan" in report:  # added by build_report and the cached reports, not by report_from_inputs alone
        _check_plan(report["plan"])
    for a in h["annotators"]:
        assert isinstance(a["outlier"], bool) and isinstance(a["n_labels"], int) and isinstance(a["n_pairs"], int)
        _check_nested(a["agreement_with_others"], "value", f"annotator {a['name']}")
        for key in ("seconds_per_pair", "seconds_per_criterion"):
            spread = a[key]
            assert set(spread) == {"median", "q1", "q3", "n"} and isinstance(spread["n"], int)
            assert (spread["median"] is None) == (spread["n"] == 0)
            if spread["n"]:
                assert spread["q1"] <= spread["median"] <= spread["q3"]


ALT_RESULT_KEYS = {"ran", "passes", "omega", "n_rejected", "n_annotators", "rho", "items_per_annotator", "untested", "humans_per_item_max",
                   "reason", "summary"}  # fmt: skip


def _check_alt_result(r: dict, where: str) -> None:
    assert set(r) >= ALT_RESULT_KEYS, f"{where}: keys {sorted(r)}"
    assert (r["reason"] is None) == r["ran"], f"{where}: a reason exactly when the test cannot run"
    if not r["ran"]:
        assert r["omega"] is None and r["passes"] is None and r["rho"] is None, f"{where}: a verdict where the test cannot run"
        return
    assert 0 <= r["omega"] <= 1 and r["passes"] == (r["omega"] >= 0.5) and r["n_annotators"] >= 3
    assert r["n_rejected"] == round(r["omega"] * r["n_annotators"])
    assert set(r["rho"]) == {"value", "ci", "n", "n_pairs", "ci_note"}
    _check_ci(r["rho"]["value"], r["rho"]["ci"], f"{where}.rho")


def _check_alt_test(section: dict, judges: set[str]) -> None:
    """No verdict without epsilon; with it, every judge (ensembles too) pooled and per criterion, with their n."""
    assert set(section) >= {"epsilon", "epsilon_reason", "epsilon_source", "unit", "unit_rule", "q", "pass_omega", "min_annotators",
                            "min_items", "method", "note", "judges"}  # fmt: skip
    assert section["unit"] in ("pair", "item")
    if section["epsilon"] is None:
        assert section["judges"] == {} and section["note"].startswith("ε not set")
        return
    assert 0 < section["epsilon"] < 1 and section["epsilon_reason"] and section["note"] is None
    assert set(section["judges"]) == judges
    for name, f in section["judges"].items():
        _check_alt_result(f["pooled"], f"alt_test.{name}.pooled")
        per = f["by_criterion"]
        assert per["n_passed"] <= per["n_ran"] <= per["n_criteria"] == len(per["criteria"])
        for c in per["criteria"]:
            _check_alt_result(c, f"alt_test.{name}.{c['criterion']}")


def _check_powered(section: dict, judges: set[str]) -> None:
    """Every judge (ensembles too) has its counts; every figure its CI around it and its n."""
    assert set(section) >= {"method", "assumption", "rank_set_rule", "confidence_level", "cluster", "judges"}
    assert set(section["judges"]) == judges
    for name, f in section["judges"].items():
        for key in ("n_human", "n_human_pairs", "n_judge", "n_unlabelled", "n_unlabelled_pairs"):
            assert isinstance(f[key], int), f"prediction_powered.{name}.{key}"
        assert f["n_unlabelled"] + f["n_human"] <= f["n_judge"]
        assert (f["note"] is None) or isinstance(f["note"], str)
        for system, rates in f["win_rates"].items():
            for method in ("ppi", "human", "judge"):
                e = rates[method]
                _check_ci(e["rate"], e["ci"], f"prediction_powered.{name}.{system}.{method}")
                assert isinstance(e["n"], int) and isinstance(e["n_pairs"], int) and e["small_n"] == (e["n_pairs"] < 30)
                _check_pairs(e["rate"], e["ci"], e["n_pairs"], e["ci_note"], f"prediction_powered.{name}.{system}.{method}")
            assert 0 <= rates["lam"] <= 1
        if f["bradley_terry"] is not None:
            for s in f["bradley_terry"]["scores"]:
                for method in ("ppi", "human", "judge"):
                    if s[method] is not None:
                        _check_ci(s[method]["score"], s[method]["ci"], f"prediction_powered.{name}.bt.{s['system']}.{method}")
                        _check_pairs(
                            s[method]["score"], s[method]["ci"], s[method]["n_pairs"], s[method]["ci_note"], f"ppi.{name}.bt.{s['system']}"
                        )
                        assert len(s[method]["rank_set"]) == 2
            assert all(reason.startswith("not estimable: ") for reason in f["bradley_terry"]["left_out"].values())


def _check_score(s: dict, where: str) -> None:
    """A Bradley–Terry score: a number with an ordered CI whose ends may be unbounded (null), or not estimable and why."""
    assert set(s) >= {
        "system",
        "score",
        "ci",
        "n",
        "small_n",
        "estimable",
        "side",
        "reason",
        "wins",
        "losses",
        "n_pairs",
        "ci_note",
        "rank",
    }, where
    assert s["wins"] + s["losses"] == pytest.approx(s["n"]), f"{where}: wins and losses do not add up to n"
    assert s["rank"] is None or (isinstance(s["rank"], int) and s["rank"] >= 1), where
    _check_pairs(s["score"], s["ci"], s["n_pairs"], s["ci_note"], where)
    if not s["estimable"]:
        assert s["score"] is None and s["ci"] is None and s["side"] in ("below", "above", "apart"), where
        assert s["reason"].startswith("not estimable: "), where
        return
    assert isinstance(s["score"], NUMBER) and s["side"] is None and s["reason"] is None, where
    if s["ci"] is not None:
        lo, hi = s["ci"]
        assert all(x is None or isinstance(x, NUMBER) for x in (lo, hi)), where
        if lo is not None and hi is not None:
            # Percentile CIs may sit beside the point; only their order is promised.
            assert lo <= hi, f"{where}: CI {s['ci']} is reversed"


def _check_plan(plan: dict) -> None:
    assert set(plan) >= {"frozen", "sha256", "frozen_at", "frozen_by", "planned_pairs", "statistics", "deviations", "rubric", "design"}
    assert isinstance(plan["deviations"], list) and (plan["sha256"] is None) != plan["frozen"]
    for d in plan["deviations"]:
        assert set(d) == {"kind", "what", "planned", "now"} and isinstance(d["what"], str)
