"""Votes on the agents' steps, and passages marked in a step, in the long labels format (issue 42,
item 6): `<stem>.steps.<ext>` beside the labels and a `step` column in the spans file, exported and
imported back exactly, with bad rows reported by line and nothing written."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotate.models import Assignment, CriterionSet, LabelChange, Span, StepVote
from annotate.rendering import plain_text
from annotate.services.campaigns import campaign_create
from annotate.services.labelling import span_add
from annotate.services.step_votes import step_vote_save
from interchange import STEP_VOTE_COLUMNS
from tests.helpers import csv_file, run
from tests.test_campaign_steps import AGENTS, TRACES
from tests.test_export_labels import at, claim, finish

pytestmark = pytest.mark.django_db


@pytest.fixture
def traces_campaign(db):
    call_command("import_articles", str(TRACES), "--benchmark", "traces", stdout=io.StringIO())
    call_command("import_criteria", "fixtures/criteria/wiki_writing.json", stdout=io.StringIO())
    for name in ("ada", "lin"):
        User.objects.create_user(name, password=f"pw-{name}-12345")
    return make_campaign("Traces", annotators=list(User.objects.filter(username__in=["ada", "lin"])))


def make_campaign(name, **extra):
    return campaign_create(
        name=name, criterion_set=CriterionSet.objects.get(key="wiki_writing"), systems=AGENTS, pair_mode="all", benchmark="traces",
        show_steps=True, ask_overall=True, **extra,
    )  # fmt: skip


def shown(assignment):
    pair = assignment.pair
    return (pair.article_a, pair.article_b) if assignment.a_first else (pair.article_b, pair.article_a)


def worded_step(article, nth=0):
    """The article's nth step with at least two words of text."""
    return [s for s in article.steps.order_by("order") if len(plain_text(s.html).split()) > 1][nth]


def voted(campaign):
    """Two raters' submitted work with votes on steps (one with a comment on several lines), a passage in
    a step and one in an article."""
    first = claim(campaign, "ada", a_first=True)
    left, right = shown(first)
    steps = list(left.steps.order_by("order"))
    step_vote_save(assignment=first, step_id=steps[0].pk, vote="up", user=first.annotator, now=at(2))
    step_vote_save(assignment=first, step_id=steps[1].pk, vote="down", comment='A "forum" page,\nnot a source.', user=first.annotator)
    step_vote_save(assignment=first, step_id=right.steps.order_by("order").last().pk, vote="up", user=first.annotator, now=at(4))
    inside = worded_step(right)
    text = plain_text(inside.html)
    word = text.split()[1]
    start = text.index(word)
    span_add(assignment=first, position="2", step=inside.pk, start=start, end=start + len(word), quote=word, polarity=-1, now=at(3))
    article_text = plain_text(left.html)
    span_add(assignment=first, position="1", start=0, end=9, quote=article_text[:9], polarity=1, comment="Clear.", now=at(3))
    finish(first, overall="1")
    second = claim(campaign, "lin", a_first=False)
    step_vote_save(assignment=second, step_id=shown(second)[0].steps.first().pk, vote="down", user=second.annotator, now=at(5))
    finish(second, overall="2")
    return first, second


def files(stem):
    return [stem.with_name(f"{stem.stem}{part}{stem.suffix}") for part in ("", ".overall", ".spans", ".steps")]


def table(path):
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return [{k: v for k, v in row.items() if k != "campaign"} for row in csv.DictReader(handle)]
    return [{k: v for k, v in json.loads(line).items() if k != "campaign"} for line in path.read_text(encoding="utf-8").splitlines()]


def renamed(path, name):
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            rows, columns = list(reader), reader.fieldnames
        csv_file(path, [{**row, "campaign": name} for row in rows], columns)
    else:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({**row, "campaign": name}) + "\n" for row in lines), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_exports_votes_on_steps_and_passages_in_steps_and_imports_them_back_exactly(traces_campaign, tmp_path, fmt):
    first, _ = voted(traces_campaign)
    source = tmp_path / f"x.{fmt}"
    result = run("export_labels", "--campaign", "Traces", "--out", str(source))
    assert result.code == 0, result.err
    assert f"4 step vote rows written to {tmp_path / f'x.steps.{fmt}'}" in result.out
    votes = table(files(source)[3])
    left, right = shown(first)
    assert [(v["rater"], v["system"], v["step"], v["vote"]) for v in votes if v["rater"] == "ada"] == [
        ("ada", left.system.key, "1" if fmt == "csv" else 1, "up"),
        ("ada", left.system.key, "2" if fmt == "csv" else 2, "down"),
        ("ada", right.system.key, str(right.steps.count()) if fmt == "csv" else right.steps.count(), "up"),
    ]
    ada = [v for v in votes if v["rater"] == "ada"]
    assert ada[1]["comment"] == 'A "forum" page,\nnot a source.' and ada[0]["kind"] == left.steps.get(order=0).kind
    spans = table(files(source)[2])
    assert sorted(str(s["step"]) for s in spans) == ["", str(worded_step(right).order + 1)]

    make_campaign("Copy")
    for path in files(source):
        renamed(path, "Copy")
    result = run("import_labels", "--campaign", "Copy", str(source))
    assert result.code == 0, result.err
    assert "votes on steps: 4 new, 0 updated, 0 unchanged" in result.out and "spans: 2 new, 0 unchanged" in result.out
    copied = Assignment.objects.get(pair__campaign__name="Copy", annotator__username="ada")
    assert Span.objects.filter(assignment=copied, step=worded_step(right)).count() == 1
    assert LabelChange.objects.filter(assignment=copied, field="step_vote", source="import").count() == 3
    again = tmp_path / f"y.{fmt}"
    assert run("export_labels", "--campaign", "Copy", "--out", str(again)).code == 0
    assert [table(path) for path in files(again)] == [table(path) for path in files(source)]
    # The same files again change nothing.
    result = run("import_labels", "--campaign", "Copy", str(source))
    assert result.code == 0 and "votes on steps: 0 new, 0 updated, 4 unchanged" in result.out


def step_row(campaign, assignment, **changes):
    left, right = shown(assignment)
    step = left.steps.get(order=0)
    row = {
        "campaign": campaign.name, "topic": assignment.pair.topic.title, "rater": assignment.annotator.username,
        "left_system": left.system.key, "right_system": right.system.key, "system": left.system.key, "step": "1", "kind": step.kind,
        "vote": "down", "comment": "", "saved_at": "",
    }  # fmt: skip
    return {**row, **changes}


def test_it_takes_a_vote_without_a_time_or_kind_from_elsewhere_and_keeps_the_time_empty(traces_campaign, tmp_path):
    first, _ = voted(traces_campaign)
    labels = tmp_path / "in.csv"
    assert run("export_labels", "--campaign", "Traces", "--out", str(labels)).code == 0
    row = step_row(traces_campaign, first, vote="down")
    del row["kind"], row["saved_at"], row["comment"]
    csv_file(tmp_path / "in.steps.csv", [row], [c for c in STEP_VOTE_COLUMNS if c in row])
    result = run("import_labels", "--campaign", "Traces", str(labels))
    assert result.code == 0, result.err
    assert "votes on steps: 0 new, 1 updated, 0 unchanged" in result.out
    vote = StepVote.objects.get(assignment=first, step=shown(first)[0].steps.get(order=0))
    assert (vote.vote, vote.saved_at, vote.comment) == (-1, None, "")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"step": "99"}, "step '99' is not a step of"),
        ({"step": "0"}, "step '0' is not a step of"),
        ({"step": "two"}, "step 'two' is not a step of"),
        ({"vote": "sideways"}, "vote must be up or down, not 'sideways'"),
        ({"kind": "dance"}, "kind 'dance' is not that step's"),
        ({"system": "agent.gamma"}, "system 'agent.gamma' is neither left_system nor right_system"),
        ({"saved_at": "yesterday"}, "saved_at"),
    ],
)
def test_it_reports_a_bad_vote_on_a_step_by_line_and_imports_nothing(traces_campaign, tmp_path, changes, message):
    first, _ = voted(traces_campaign)
    labels = tmp_path / "in.csv"
    assert run("export_labels", "--campaign", "Traces", "--out", str(labels)).code == 0
    csv_file(tmp_path / "in.steps.csv", [step_row(traces_campaign, first), step_row(traces_campaign, first, **changes)], STEP_VOTE_COLUMNS)
    before = list(StepVote.objects.values_list("pk", "vote", "comment", "saved_at"))
    result = run("import_labels", "--campaign", "Traces", str(labels))
    assert result.code != 0 and message in result.err and "in.steps.csv:3:" in result.err, result.err
    assert list(StepVote.objects.values_list("pk", "vote", "comment", "saved_at")) == before


def test_it_refuses_votes_on_steps_for_a_campaign_that_does_not_show_them(traces_campaign, tmp_path):
    first, _ = voted(traces_campaign)
    labels = tmp_path / "in.csv"
    assert run("export_labels", "--campaign", "Traces", "--out", str(labels)).code == 0
    plain = make_campaign("Plain")
    plain.show_steps = False
    plain.save(update_fields=["show_steps"])
    for path in files(labels):
        renamed(path, "Plain")
    result = run("import_labels", "--campaign", "Plain", str(labels))
    assert result.code != 0 and "this campaign does not show the agents' steps" in result.err
    assert not StepVote.objects.filter(assignment__pair__campaign=plain).exists()
