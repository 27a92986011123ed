import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User

from annotate.models import Assignment, Campaign, Label
from annotate.rendering import plain_text
from annotate.services.answers import label_save, overall_save
from annotate.services.claims import assignment_claim_next, assignment_open
from annotate.services.labelling import assignment_submit, span_add
from interchange import label_rows
from tests.helpers import HUMAN_LABEL_HEADER, run

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    # Microseconds on purpose: an export must keep them for a round trip to be exact.
    return T0 + timedelta(minutes=minutes, microseconds=123)


def stamp(minutes: int) -> str:
    return at(minutes).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claim(campaign: Campaign, username: str, *, a_first: bool, opened: bool = True) -> Assignment:
    """Claims the next pair for a user with the left/right order forced, as if drawn that way."""
    user = User.objects.get(username=username)
    assignment = assignment_claim_next(campaign=campaign, user=user, now=T0)
    Assignment.objects.filter(pk=assignment.pk).update(a_first=a_first, order="ab" if a_first else "ba")
    assignment.refresh_from_db()
    if opened:
        assignment_open(assignment=assignment, now=at(1))
    return assignment


def choose(assignment: Assignment, key: str, position: str, *, minute: int = 2, rationale: str = "The lead says it plainly.") -> None:
    criterion = assignment.pair.campaign.criterion_set.criteria.get(key=key)
    label_save(
        assignment=assignment, criterion=criterion, user=assignment.annotator, position=position, rationale=rationale, now=at(minute)
    )


def finish(assignment: Assignment, *, overall: str, minute: int = 10) -> None:
    """Labels every criterion still open (alternating sides), answers overall and submits."""
    done = set(assignment.labels.exclude(winner="").values_list("criterion__key", flat=True))
    criteria = assignment.pair.campaign.criterion_set.criteria.order_by("order")
    for i, criterion in enumerate(criteria):
        if criterion.key not in done:
            choose(assignment, criterion.key, "12"[i % 2], minute=minute, rationale=f"Reason {i}: see the second paragraph.")
    overall_save(assignment=assignment, user=assignment.annotator, value=overall, now=at(minute))
    assignment_submit(assignment=assignment, user=assignment.annotator, now=at(minute + 1))


def mark(assignment: Assignment, position: str, start: int, length: int, polarity: int, comment: str = "", minute: int = 3):
    pair = assignment.pair
    article = pair.article_a if (position == "1") == assignment.a_first else pair.article_b
    quote = plain_text(article.html)[start : start + length]
    return span_add(
        assignment=assignment,
        position=position,
        start=start,
        end=start + length,
        quote=quote,
        polarity=polarity,
        comment=comment,
        now=at(minute),
    )


def systems(assignment: Assignment) -> tuple[str, str]:
    """(left, right) system keys as this annotator saw them."""
    a, b = assignment.pair.article_a.system.key, assignment.pair.article_b.system.key
    return (a, b) if assignment.a_first else (b, a)


def read_csv(path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_it_names_the_system_each_annotator_chose_whichever_side_it_was_on(demo_campaign, tmp_path):
    first = claim(demo_campaign, "annotator1", a_first=True)
    second = claim(demo_campaign, "annotator2", a_first=False)
    for assignment in (first, second):
        choose(assignment, "ww_cc_1", "1")
        choose(assignment, "ww_cc_2", "2", minute=4)
    out = tmp_path / "labels.csv"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    rows = {(r["rater"], r["criterion"]): r for r in read_csv(out)}
    assert len(rows) == 4
    for assignment in (first, second):
        left, right = systems(assignment)
        name = assignment.annotator.username
        for row in (rows[name, "ww_cc_1"], rows[name, "ww_cc_2"]):
            assert (row["left_system"], row["right_system"]) == (left, right)
            assert (row["campaign"], row["topic"], row["rater_kind"]) == ("Demo campaign", assignment.pair.topic.title, "human")
            assert row["started_at"] == stamp(1)
        assert rows[name, "ww_cc_1"]["winner_system"] == left
        assert rows[name, "ww_cc_2"]["winner_system"] == right
        assert rows[name, "ww_cc_2"]["saved_at"] == stamp(4)
    # The same position means opposite pair sides for the two orders.
    assert first.labels.get(criterion__key="ww_cc_1").winner == Label.Winner.A
    assert second.labels.get(criterion__key="ww_cc_1").winner == Label.Winner.B
    assert rows["annotator1", "ww_cc_1"]["winner_system"] == "wikipedia"
    assert rows["annotator2", "ww_cc_1"]["winner_system"] != "wikipedia"
    assert list(read_csv(out)[0]) == list(HUMAN_LABEL_HEADER)
    assert "4 label rows written" in result.out


def test_it_leaves_out_criteria_without_a_winner(demo_campaign, tmp_path):
    assignment = claim(demo_campaign, "annotator1", a_first=True, opened=False)
    choose(assignment, "ww_cc_1", "2")
    choose(assignment, "ww_cc_2", "", rationale="Not sure yet, thinking.")
    out = tmp_path / "labels.csv"

    run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    rows = read_csv(out)
    assert [r["criterion"] for r in rows] == ["ww_cc_1"]
    # Never opened: the claim time stands in for the start.
    assert rows[0]["started_at"] == T0.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_it_writes_overall_answers_and_spans_beside_the_labels(demo_campaign, tmp_path):
    first = claim(demo_campaign, "annotator1", a_first=True)
    second = claim(demo_campaign, "annotator2", a_first=False)
    mark(first, "2", 0, 12, -1, comment="Puffery in the opening.")
    mark(second, "2", 5, 20, 1)
    finish(first, overall="2")
    finish(second, overall="both_bad")
    out = tmp_path / "labels.csv"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    assert len(read_csv(out)) == 2 * 39
    overall = {r["rater"]: r for r in read_csv(tmp_path / "labels.overall.csv")}
    assert overall["annotator1"]["overall"] == systems(first)[1] != "wikipedia"
    assert overall["annotator2"]["overall"] == "both_bad"
    assert (overall["annotator2"]["left_system"], overall["annotator2"]["right_system"]) == systems(second)
    spans = {r["rater"]: r for r in read_csv(tmp_path / "labels.spans.csv")}
    assert spans["annotator1"]["system"] == systems(first)[1]
    assert (spans["annotator1"]["polarity"], spans["annotator1"]["comment"]) == ("down", "Puffery in the opening.")
    assert (spans["annotator1"]["start"], spans["annotator1"]["end"]) == ("0", "12")
    assert spans["annotator2"]["system"] == "wikipedia"
    assert spans["annotator2"]["polarity"] == "up"
    assert spans["annotator2"]["quote"] == second.spans.get().quote
    assert spans["annotator2"]["created_at"] == stamp(3)
    assert "2 overall rows written" in result.out and "2 span rows written" in result.out
    assert not list(tmp_path.glob("*.part"))


def test_it_writes_json_lines(demo_campaign, tmp_path):
    assignment = claim(demo_campaign, "annotator1", a_first=False)
    choose(assignment, "ww_cc_1", "1", rationale='Quotes "like this", commas, and\na second line.')
    mark(assignment, "1", 3, 9, 1)
    out = tmp_path / "labels.jsonl"

    result = run("export_labels", "--campaign", "Demo campaign", "--format", "jsonl", "--out", str(out))

    assert result.code == 0, result.err
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["winner_system"] == systems(assignment)[0] != "wikipedia"
    assert row["rationale"] == 'Quotes "like this", commas, and\na second line.'
    [span] = [json.loads(line) for line in (tmp_path / "labels.spans.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (span["start"], span["end"], span["system"]) == (3, 12, systems(assignment)[0])
    assert (tmp_path / "labels.overall.jsonl").read_text(encoding="utf-8") == ""


def test_it_writes_header_only_files_for_a_campaign_without_labels(demo_campaign, tmp_path):
    out = tmp_path / "empty.csv"

    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert result.code == 0, result.err
    assert out.read_text(encoding="utf-8").startswith("campaign,topic,criterion,rater_kind,rater,")
    assert read_csv(out) == read_csv(tmp_path / "empty.overall.csv") == read_csv(tmp_path / "empty.spans.csv") == []
    assert (tmp_path / "empty.spans.csv").read_text(encoding="utf-8").strip() == (
        "campaign,topic,rater,left_system,right_system,system,start,end,quote,polarity,comment,created_at,criterion,neutral_emphasis"
    )
    assert "0 label rows written" in result.out


def test_it_writes_only_the_labels_to_standard_output(demo_campaign, tmp_path):
    assignment = claim(demo_campaign, "annotator1", a_first=True)
    choose(assignment, "ww_cc_1", "1")
    mark(assignment, "1", 0, 5, 1)

    result = run("export_labels", "--campaign", "Demo campaign", "--out", "-")

    assert result.code == 0, result.err
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert [(r["criterion"], r["winner_system"]) for r in rows] == [("ww_cc_1", "wikipedia")]
    assert "1 label rows" in result.err
    assert list(tmp_path.iterdir()) == []


def test_it_flags_labels_of_annotators_later_removed_from_the_campaign(demo_campaign, tmp_path, django_assert_num_queries):
    kept = claim(demo_campaign, "annotator1", a_first=True)
    choose(kept, "ww_cc_1", "1")
    # The labels, who was removed (the one query the flag costs), whether it has readings (one-article
    # answers), then the judges' units, rubric and criteria.
    campaign = Campaign.objects.get(pk=demo_campaign.pk)
    with django_assert_num_queries(6):
        label_rows(campaign)
    gone = claim(demo_campaign, "annotator2", a_first=False)
    for key in ("ww_cc_1", "ww_cc_2", "ww_cc_3"):
        choose(gone, key, "2")
    demo_campaign.removed_annotators.add(gone.annotator)
    out = tmp_path / "labels.csv"

    campaign = Campaign.objects.get(pk=demo_campaign.pk)
    with django_assert_num_queries(6):  # flat: as many with more labels and a removed annotator
        rows = label_rows(campaign)
    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    assert {(row["rater"], row["annotator_removed"]) for row in rows} == {("annotator1", False), ("annotator2", True)}
    assert result.code == 0, result.err
    assert {(r["rater"], r["annotator_removed"]) for r in read_csv(out)} == {("annotator1", "false"), ("annotator2", "true")}
    jsonl = tmp_path / "labels.jsonl"
    run("export_labels", "--campaign", "Demo campaign", "--out", str(jsonl))
    assert {(r["rater"], r["annotator_removed"]) for r in map(json.loads, jsonl.read_text(encoding="utf-8").splitlines())} == {
        ("annotator1", False),
        ("annotator2", True),
    }
    # Read back with or without the column: the flag is the campaign's, never imported.
    assert "labels: 0 new, 0 updated, 4 unchanged" in run("import_labels", "--campaign", "Demo campaign", str(out)).out
    rows = read_csv(out)
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[c for c in rows[0] if c != "annotator_removed"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    assert "labels: 0 new, 0 updated, 4 unchanged" in run("import_labels", "--campaign", "Demo campaign", str(out)).out
    assert demo_campaign.removed_annotators.get() == gone.annotator


def test_it_refuses_an_unknown_campaign(demo_campaign, tmp_path):
    result = run("export_labels", "--campaign", "Nope", "--out", str(tmp_path / "x.csv"))
    assert result.code == 1
    assert "No campaign named 'Nope'" in result.err


def test_it_refuses_an_output_folder_that_does_not_exist(demo_campaign, tmp_path):
    result = run("export_labels", "--campaign", "Demo campaign", "--out", str(tmp_path / "missing" / "x.csv"))
    assert result.code == 1
    assert "no such folder" in result.err


def test_it_refuses_a_file_name_that_does_not_match_the_format(demo_campaign, tmp_path):
    assert (
        "must end in .jsonl"
        in run("export_labels", "--campaign", "Demo campaign", "--format", "jsonl", "--out", str(tmp_path / "x.csv")).err
    )
    assert "must end in .csv or .jsonl" in run("export_labels", "--campaign", "Demo campaign", "--out", str(tmp_path / "x.txt")).err
    assert list(tmp_path.iterdir()) == []
