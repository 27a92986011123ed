"""Importing the verdict files of the Wiki Live Challenge evaluation script as an imported judge."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from annotate.models import Article, Campaign, Pair, System, Topic
from annotate.services.items import pairs_save
from common.names import name_problem
from judges.imports import (
    SCOPE_CAMPAIGN,
    JudgeScopeError,
    imported_judge_create,
    imported_judges_find,
    imported_unit_save,
    scope_owner,
    unit_tally,
)
from judges.models import Judge
from protocols.pairwise import FIRST, SECOND, TIE, side_of

# The script's winners by the position they name: the reference ("gt") is always Article 1.
WLC_WINNERS = {"gt": FIRST, "gen": SECOND, "tie": TIE}


@dataclass
class ResultsImport:
    judge: Judge | None = None
    judge_created: bool = False
    files: int = 0
    pairs_created: int = 0
    verdicts: int = 0
    errors: int = 0
    ties_outside_policy: int = 0
    units: dict[str, int] = field(default_factory=unit_tally)
    problems: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


def _results_topic(campaign: Campaign, title: str, campaign_topics: set[int]):
    """The topic a results file names, by the lookup rules of the labels import (`interchange`)."""
    topics = list(Topic.objects.filter(title=title).order_by("id"))
    inside = [t for t in topics if t.id in campaign_topics]
    topics = inside or topics
    if not topics:
        return None, f"unknown topic '{title}'"
    if len(topics) > 1:
        return (
            None,
            f"topic '{title}' is ambiguous: {len(topics)} benchmarks have a topic with that title",
        )
    return topics[0], ""


def wlc_results_import(
    *, campaign: Campaign, judge_name: str, system: str, files: list[tuple[str, object]], judge_scope: str = SCOPE_CAMPAIGN
) -> ResultsImport:
    """Imports verdict files of the Wiki Live Challenge evaluation script as an imported judge's units.

    In that protocol the reference ("gt") is always Article 1, the system ("gen")
    Article 2. Its script writes a tie whose reason starts with "Error:" when the API
    call failed: those become units in ERROR, never ties. Files with problems are
    reported by name and skipped (unknown criteria only skip their entries). `judge_scope`: whose judge
    `judge_name` is (`judges.imports.imported_judges_find`): the campaign's own (the default) or the global one.
    """
    report = ResultsImport()
    errors = []
    judge = None
    if problem := name_problem(judge_name, what="judge name"):
        errors.append(f"The {problem}.")
    else:
        try:
            judge = imported_judges_find(campaign=campaign, names=[judge_name], scope=judge_scope).get(judge_name)
        except JudgeScopeError as exc:
            errors.append(f"{exc}.")
    if judge is not None and judge.kind != Judge.Kind.IMPORTED:
        errors.append(f"The judge '{judge_name}' is a {judge.get_kind_display()} judge; import into a new name.")
    reference = campaign.reference_system or System.objects.filter(is_reference=True).first()
    if reference is None:
        errors.append(f"The campaign '{campaign.name}' has no reference system to stand for 'gt'.")
    if not System.objects.filter(key=system).exists():
        errors.append(f"Unknown system '{system}'.")
    if errors:
        raise ValidationError(errors)
    criteria = {c.key: c for c in campaign.criterion_set.criteria.select_related("category")}
    pairs = {frozenset((p.article_a_id, p.article_b_id)): p for p in campaign.pairs.all()}
    campaign_topics = {p.topic_id for p in pairs.values()}

    # (pair, a_first, category) -> [(criterion, side or None, reason)]
    wanted: dict[tuple, list] = {}
    new_pairs = []
    for name, data in files:
        report.files += 1
        if not isinstance(data, dict) or not isinstance(data.get("topic"), str) or not isinstance(data.get("details"), dict):
            report.problems.append(
                (
                    name,
                    "not a results file: expected an object with 'topic' and 'details'",
                )
            )
            continue
        if data.get("mode", "winrate") != "winrate":
            report.problems.append(
                (
                    name,
                    f"mode is '{data.get('mode')}', only 'winrate' files can be imported",
                )
            )
            continue
        topic, problem = _results_topic(campaign, data["topic"], campaign_topics)
        if topic is None:
            report.problems.append((name, problem))
            continue
        articles = {
            a.system.key: a for a in Article.objects.filter(topic=topic, system__key__in=[reference.key, system]).select_related("system")
        }
        missing = [key for key in (reference.key, system) if key not in articles]
        if missing:
            report.problems.append(
                (
                    name,
                    f"no article by {', '.join(repr(m) for m in missing)} on topic '{topic.title}'",
                )
            )
            continue
        gt, gen = articles[reference.key], articles[system]
        pair = pairs.get(frozenset((gt.id, gen.id)))
        if pair is None:
            pair = Pair(campaign=campaign, topic=topic, article_a=gt, article_b=gen)
            pairs[frozenset((gt.id, gen.id))] = pair
            new_pairs.append(pair)
        a_is_gt = pair.article_a_id == gt.id
        file_errors = 0
        for block in data["details"].values():
            if not isinstance(block, list):
                report.problems.append((name, "a category in 'details' is not a list of verdicts"))
                continue
            for entry in block:
                key = entry.get("criterion_id") if isinstance(entry, dict) else None
                criterion = criteria.get(key)
                if criterion is None:
                    report.problems.append(
                        (
                            name,
                            f"unknown criterion '{key}' (not in {campaign.criterion_set})",
                        )
                    )
                    continue
                winner, reason = entry.get("winner"), entry.get("reason") or ""
                if not isinstance(reason, str):
                    reason = str(reason)
                if reason.lstrip().startswith("Error:"):
                    side = None
                    file_errors += 1
                elif winner not in WLC_WINNERS:
                    report.problems.append((name, f"{key}: winner '{winner}' is not gt, gen or tie"))
                    continue
                else:
                    side = side_of(WLC_WINNERS[winner], a_is_gt)
                    report.ties_outside_policy += side == TIE and not campaign.allow_tie
                wanted.setdefault((frozenset((gt.id, gen.id)), a_is_gt, criterion.category_id), []).append((criterion, side, reason))
        if file_errors:
            report.notes.append(
                (
                    name,
                    f"{file_errors} verdict(s) were API errors in the source ('Error: …'): imported as errors, not ties",
                )
            )

    with transaction.atomic():
        if judge is None:
            judge = imported_judge_create(name=judge_name, model=f"imported:{judge_name}", campaign=scope_owner(campaign, judge_scope))
            report.judge_created = True
        report.judge = judge
        if new_pairs:
            top = max((p.order for p in campaign.pairs.all()), default=0)
            for offset, pair in enumerate(new_pairs, 1):
                pair.order = top + offset
            pairs_save(new_pairs)
            report.pairs_created = len(new_pairs)
        expected: dict[int, set[str]] = {}
        for criterion in criteria.values():
            expected.setdefault(criterion.category_id, set()).add(criterion.key)
        for (pair_key, a_first, category_id), rows in wanted.items():
            pair = pairs[pair_key]
            verdicts = {c.key: (c, side, reason) for c, side, reason in rows}
            failed = [f"{key}: {reason}" for key, (_, side, reason) in verdicts.items() if side is None]
            absent = sorted(expected[category_id] - set(verdicts))
            if absent:
                failed.append(f"no verdict in the results file for {', '.join(absent)}")
            fresh = [(c.id, side, reason) for c, side, reason in verdicts.values() if side is not None]
            outcome = imported_unit_save(
                judge=judge,
                pair=pair,
                category_id=category_id,
                criterion_id=None,
                a_first=a_first,
                verdicts=fresh,
                errors=failed,
            )
            report.units[outcome] += 1
            report.verdicts += len(fresh)
            report.errors += sum(1 for _, side, _ in verdicts.values() if side is None)
    return report
