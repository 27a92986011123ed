import csv
import json

import pytest
from django.contrib.auth.models import User

from annotate.models import Article, Assignment, Label, LabelChange, Pair, Span, System
from annotate.rendering import plain_text
from annotate.services.answers import overall_shown
from annotate.services.campaigns import campaign_create
from common.names import NAME_RULE
from interchange import LABEL_COLUMNS, OVERALL_COLUMNS, SPAN_COLUMNS
from tests.helpers import csv_file, run
from tests.test_export_labels import choose, claim, finish, mark, read_csv

pytestmark = pytest.mark.django_db


def label_row(**changes) -> dict:
    row = {
        "campaign": "Demo campaign",
        "topic": "Marrow River",
        "criterion": "ww_cc_1",
        "rater_kind": "human",
        "rater": "ext_rater",
        "left_system": "wikipedia",
        "right_system": "atlas_agent",
        "winner_system": "atlas_agent",
        "rationale": "Its lead is clearer.",
        "started_at": "2025-03-01T09:00:00Z",
        "saved_at": "2025-03-01T09:05:00Z",
    }
    return {**row, **changes}


def overall_row(**changes) -> dict:
    row = {key: value for key, value in label_row().items() if key in OVERALL_COLUMNS}
    return {**row, "overall": "atlas_agent", **changes}


def span_row(**changes) -> dict:
    text = plain_text(Article.objects.get(topic__title="Marrow River", system__key="atlas_agent").html)
    row = {key: value for key, value in label_row().items() if key in SPAN_COLUMNS}
    row.update(
        system="atlas_agent", start="0", end="6", quote=text[0:6], polarity="down", comment="Vague.", created_at="2025-03-01T09:03:00Z"
    )
    return {**row, **changes}


def write_csv(path, rows, columns=LABEL_COLUMNS):
    return csv_file(path, rows, columns)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" if row is not None else "\n" for row in rows), encoding="utf-8")
    return path


def import_labels(path, *args):
    return run("import_labels", "--campaign", "Demo campaign", str(path), *args)


def test_it_imports_rows_for_an_external_rater(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(),
            label_row(criterion="ww_cc_2", winner_system="wikipedia", saved_at="2025-03-01T09:07:30.5Z"),
        ],
    )

    result = import_labels(path)

    assert result.code == 0, result.err
    rater = User.objects.get(username="ext_rater")
    assert not rater.is_active and not rater.has_usable_password()
    assignment = Assignment.objects.get(annotator=rater)
    assert (assignment.pair.campaign, assignment.pair.topic.title, assignment.pair.article_b.system.key) == (
        demo_campaign,
        "Marrow River",
        "atlas_agent",
    )
    assert assignment.a_first and assignment.status == Assignment.Status.SUBMITTED
    assert assignment.first_opened_at.isoformat() == "2025-03-01T09:00:00+00:00"
    assert assignment.submitted_at.isoformat() == "2025-03-01T09:07:30.500000+00:00"
    labels = {label.criterion.key: label for label in assignment.labels.select_related("criterion")}
    assert labels["ww_cc_1"].winner == Label.Winner.B
    assert labels["ww_cc_2"].winner == Label.Winner.A
    assert labels["ww_cc_1"].rationale == "Its lead is clearer."
    assert "labels: 2 new, 0 updated, 0 unchanged" in result.out
    assert "rater accounts created: 1" in result.out


def test_it_maps_the_winner_to_the_pair_side_for_both_orders(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(rater="left_a"),
            label_row(rater="left_b", left_system="atlas_agent", right_system="wikipedia"),
        ],
    )

    assert import_labels(path).code == 0
    a_first = Assignment.objects.get(annotator__username="left_a")
    b_first = Assignment.objects.get(annotator__username="left_b")
    assert a_first.pair == b_first.pair
    assert (a_first.a_first, b_first.a_first) == (True, False)
    assert a_first.labels.get().winner == b_first.labels.get().winner == Label.Winner.B


def test_it_uses_an_existing_account(demo_campaign, tmp_path):
    result = import_labels(write_csv(tmp_path / "labels.csv", [label_row(rater="annotator1")]))
    assert result.code == 0, result.err
    assert "rater accounts created: 0" in result.out
    assert User.objects.get(username="annotator1").is_active
    assert Assignment.objects.get(annotator__username="annotator1").labels.count() == 1


def test_it_changes_nothing_when_the_same_files_come_again(demo_campaign, tmp_path):
    path = write_csv(tmp_path / "labels.csv", [label_row(), label_row(criterion="ww_cc_2")])
    write_csv(tmp_path / "labels.overall.csv", [overall_row()], OVERALL_COLUMNS)
    write_csv(tmp_path / "labels.spans.csv", [span_row()], SPAN_COLUMNS)
    assert import_labels(path).code == 0
    before = (LabelChange.objects.count(), list(Label.objects.values_list("saved_at", flat=True)), list(Assignment.objects.values()))

    again = import_labels(path)

    assert again.code == 0, again.err
    assert "labels: 0 new, 0 updated, 2 unchanged" in again.out
    assert "overall: 0 new, 0 updated, 1 unchanged" in again.out
    assert "spans: 0 new, 1 unchanged" in again.out
    assert "assignments: 0 new, 0 updated, 1 unchanged" in again.out
    assert "unchanged: everything in the file(s) was already stored" in again.out
    assert (
        LabelChange.objects.count(),
        list(Label.objects.values_list("saved_at", flat=True)),
        list(Assignment.objects.values()),
    ) == before
    assert Span.objects.count() == 1


def test_it_updates_a_label_that_changed_and_records_the_change(demo_campaign, tmp_path):
    path = tmp_path / "labels.csv"
    import_labels(write_csv(path, [label_row(), label_row(criterion="ww_cc_2")]))

    result = import_labels(
        write_csv(path, [label_row(winner_system="wikipedia", saved_at="2025-03-02T10:00:00Z"), label_row(criterion="ww_cc_2")])
    )

    assert result.code == 0, result.err
    assert "labels: 0 new, 1 updated, 1 unchanged" in result.out
    label = Label.objects.get(criterion__key="ww_cc_1")
    assert label.winner == Label.Winner.A
    assert label.assignment.submitted_at.isoformat() == "2025-03-02T10:00:00+00:00"
    change = LabelChange.objects.filter(field="winner").latest("id")
    assert (change.old_value, change.new_value, change.changed_by.username) == ("b", "a", "ext_rater")


BAD_ROWS = [
    ({"campaign": "Other"}, "campaign is 'Other', not 'Demo campaign'"),
    ({"topic": "Atlantis"}, "unknown topic 'Atlantis'"),
    ({"left_system": "nobody"}, "unknown system 'nobody'"),
    ({"right_system": "lonely_agent", "winner_system": "lonely_agent"}, "no article by 'lonely_agent' on topic 'Marrow River'"),
    ({"right_system": "wikipedia", "winner_system": "wikipedia"}, "left_system and right_system are both 'wikipedia'"),
    ({"winner_system": "quill_researcher"}, "winner_system 'quill_researcher' is neither left_system, right_system, tie nor cannot_judge"),
    ({"winner_system": ""}, "winner_system is empty"),
    ({"winner_system": "tie"}, "this campaign does not allow ties"),
    ({"winner_system": "cannot_judge"}, "winner_system is cannot_judge, which this campaign does not allow"),
    ({"criterion": "zz_9"}, "unknown criterion 'zz_9'"),
    ({"saved_at": "yesterday"}, "saved_at: 'yesterday' is not an ISO 8601 time"),
    ({"saved_at": "2025-03-01T09:05:00"}, "saved_at: '2025-03-01T09:05:00' has no time zone"),
    ({"started_at": "2025-13-01T00:00:00Z"}, "started_at: '2025-13-01T00:00:00Z' is not an ISO 8601 time"),
    ({"started_at": "2025-03-01T08:00:00Z"}, "started_at differs from line 2 (same pair and rater)"),
    ({"criterion": "ww_cc_1", "rationale": "Changed my mind."}, "repeats line 2 (same pair, criterion and rater)"),
    ({"left_system": "atlas_agent", "right_system": "wikipedia"}, "left_system and right_system are swapped compared with line 2"),
    ({"rater_kind": "judge", "rater": "two words"}, f"judge name 'two words' must be {NAME_RULE}"),
    ({"rater_kind": "robot"}, "rater_kind must be 'human', not 'robot'"),
    ({"rater": "two words"}, "rater 'two words' is not a valid username"),
    (
        {"left_system": "atlas_agent", "right_system": "quill_researcher", "winner_system": "atlas_agent"},
        "this campaign pairs 'wikipedia' with each system; 'atlas_agent' vs 'quill_researcher' is not such a pair",
    ),
    ({"rationale": "x" * 5001}, "rationale is longer than 5000 characters"),
]


@pytest.mark.parametrize("changes, message", BAD_ROWS, ids=[m.split(" ")[0] + str(i) for i, (_, m) in enumerate(BAD_ROWS)])
def test_it_reports_a_bad_row_by_line_and_imports_nothing(demo_campaign, tmp_path, changes, message):
    System.objects.create(key="lonely_agent", name="Lonely agent")
    path = write_csv(
        tmp_path / "labels.csv", [label_row(), label_row(**{"criterion": "ww_cc_2", **changes}), label_row(criterion="ww_cc_3")]
    )

    result = import_labels(path)

    assert result.code == 1
    assert f"{path}:3: {message}" in result.err
    assert "1 bad row(s) (listed above); nothing was imported" in result.err
    assert f"{path}:2:" not in result.err and f"{path}:4:" not in result.err
    assert Label.objects.count() == 0
    assert not User.objects.filter(username="ext_rater").exists()


def test_it_counts_physical_lines_when_a_rationale_spans_several(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(rationale="First line,\nsecond line,\r\nthird line."),
            label_row(criterion="ww_cc_2", topic="Atlantis"),
        ],
    )

    result = import_labels(path)

    assert f"{path}:5: unknown topic 'Atlantis'" in result.err


def test_it_reads_json_lines_and_numbers_them(demo_campaign, tmp_path):
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            label_row(),
            None,
            label_row(criterion="ww_cc_2", winner_system="tie"),
        ],
    )
    with path.open("a", encoding="utf-8") as handle:
        handle.write("[1, 2]\n{broken\n" + json.dumps({"campaign": "Demo campaign"}) + "\n")

    result = import_labels(path)

    assert result.code == 1
    assert f"{path}:3: this campaign does not allow ties" in result.err
    assert f"{path}:4: is not a JSON object" in result.err
    assert f"{path}:5: is not valid JSON" in result.err
    assert f"{path}:6: missing field(s) topic, criterion" in result.err
    assert Label.objects.count() == 0

    path = write_jsonl(tmp_path / "good.jsonl", [label_row(), label_row(criterion="ww_cc_2", winner_system="wikipedia")])
    result = import_labels(path)
    assert result.code == 0, result.err
    assert "labels: 2 new" in result.out


def test_it_imports_the_good_rows_with_skip_bad(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(),
            label_row(criterion="ww_cc_2", winner_system="tie"),
            label_row(criterion="ww_cc_3"),
            label_row(criterion="ww_cc_1", rater="other_rater", topic="Atlantis"),
        ],
    )

    result = import_labels(path, "--skip-bad")

    assert result.code == 2
    assert f"{path}:3: this campaign does not allow ties" in result.err
    assert f"{path}:5: unknown topic 'Atlantis'" in result.err
    assert "2 bad row(s) skipped (listed above); the rest was imported" in result.err
    assert "labels: 2 new" in result.out
    assert sorted(Label.objects.values_list("criterion__key", flat=True)) == ["ww_cc_1", "ww_cc_3"]
    assert not User.objects.filter(username="other_rater").exists()


def test_it_refuses_a_file_missing_columns(demo_campaign, tmp_path):
    columns = [c for c in LABEL_COLUMNS if c not in ("winner_system", "topic")]
    path = write_csv(tmp_path / "labels.csv", [{c: v for c, v in label_row().items() if c in columns}], columns)

    result = import_labels(path)

    assert result.code == 1
    assert f"{path}: missing column(s) topic, winner_system; nothing was imported" in result.err
    assert Label.objects.count() == 0


def test_it_refuses_files_it_cannot_read(demo_campaign, tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes(",".join(LABEL_COLUMNS).encode() + b"\nDemo campaign,Caf\xe9\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n \n", encoding="utf-8")
    text = tmp_path / "labels.txt"
    text.write_text("campaign\n", encoding="utf-8")

    assert "latin.csv: is not valid UTF-8 (bad byte at offset" in import_labels(latin).err
    assert "empty.csv: is empty" in import_labels(empty).err
    assert "the file name must end in .csv or .jsonl" in import_labels(text).err
    assert "cannot be read" in import_labels(tmp_path / "missing.csv").err


def test_it_refuses_an_unknown_campaign(demo_campaign, tmp_path):
    result = run("import_labels", "--campaign", "Nope", str(write_csv(tmp_path / "labels.csv", [label_row()])))
    assert result.code == 1
    assert "No campaign named 'Nope'. Create it first with create_campaign." in result.err


def test_it_creates_a_pair_the_campaign_lacks(demo_campaign, tmp_path):
    small = campaign_create(
        name="Small", criterion_set=demo_campaign.criterion_set, systems=["wikipedia", "atlas_agent"], topics=1, benchmark="demo"
    )
    assert not small.pairs.filter(topic__title="Marrow River").exists()
    path = write_csv(tmp_path / "labels.csv", [label_row(campaign="Small", left_system="atlas_agent", right_system="wikipedia")])

    result = run("import_labels", "--campaign", "Small", str(path))

    assert result.code == 0, result.err
    assert "pairs created: 1" in result.out
    pair = Pair.objects.get(campaign=small, topic__title="Marrow River")
    assert (pair.article_a.system.key, pair.article_b.system.key) == ("wikipedia", "atlas_agent")
    assignment = pair.assignments.get()
    assert not assignment.a_first
    assert assignment.labels.get().winner == Label.Winner.B


def test_it_imports_overall_answers_and_spans_beside_the_labels(demo_campaign, tmp_path):
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(rater="r1"),
            label_row(rater="r2", left_system="atlas_agent", right_system="wikipedia"),
            label_row(rater="r3"),
        ],
    )
    write_csv(
        tmp_path / "labels.overall.csv",
        [
            overall_row(rater="r1"),
            overall_row(rater="r2", left_system="atlas_agent", right_system="wikipedia"),
            overall_row(rater="r3", overall="both_bad"),
        ],
        OVERALL_COLUMNS,
    )
    write_csv(tmp_path / "labels.spans.csv", [span_row(rater="r1"), span_row(rater="r1", polarity="up", comment="")], SPAN_COLUMNS)

    result = import_labels(path)

    assert result.code == 0, result.err
    overall = dict(Assignment.objects.values_list("annotator__username", "overall"))
    # atlas_agent, article B of the pair, whichever side it was shown on (second to r1, first to r2).
    assert overall == {"r1": "b", "r2": "b", "r3": "both_bad"}
    assert "overall: 3 new, 0 updated, 0 unchanged" in result.out
    spans = Span.objects.filter(assignment__annotator__username="r1").order_by("polarity")
    assert [(s.article.system.key, s.start, s.end, s.polarity) for s in spans] == [("atlas_agent", 0, 6, -1), ("atlas_agent", 0, 6, 1)]
    assert "spans: 2 new, 0 unchanged" in result.out


BAD_SPANS = [
    ({"start": "10", "end": "99999"}, "offsets 10..99999 are outside the article's text"),
    ({"start": "7", "end": "7"}, "offsets 7..7 are outside the article's text"),
    ({"start": "-1"}, "start and end must be whole numbers"),
    ({"quote": "not the text"}, "quote does not match the article's text at 0..6"),
    ({"system": "quill_researcher"}, "system 'quill_researcher' is neither left_system nor right_system"),
    ({"polarity": "sideways"}, "polarity must be up or down, not 'sideways'"),
    ({"created_at": ""}, "created_at is empty"),
    ({"comment": "x" * 2001}, "comment is longer than 2000 characters"),
    ({"rater": "nobody_here"}, "no labels for this rater and pair, in the labels file or stored"),
    ({"left_system": "atlas_agent", "right_system": "wikipedia"}, "left_system and right_system are swapped compared with the labels"),
    ({}, "repeats line 2"),
]


@pytest.mark.parametrize("changes, message", BAD_SPANS, ids=[str(i) for i in range(len(BAD_SPANS))])
def test_it_reports_a_bad_span_and_imports_nothing(demo_campaign, tmp_path, changes, message):
    path = write_csv(tmp_path / "labels.csv", [label_row()])
    spans = write_csv(tmp_path / "labels.spans.csv", [span_row(), span_row(**changes)], SPAN_COLUMNS)

    result = import_labels(path)

    assert result.code == 1
    assert f"{spans}:3: {message}" in result.err
    assert Label.objects.count() == Span.objects.count() == 0


BAD_OVERALL = [
    ({"overall": "quill_researcher"}, "overall 'quill_researcher' must be left_system, right_system, tie or both_bad"),
    ({"overall": ""}, "overall '' must be left_system, right_system, tie or both_bad"),
    ({"rater_kind": "judge"}, "judge verdicts are not supported in overall and spans files"),
    ({"rater": "nobody_here"}, "no labels for this rater and pair"),
    ({}, "repeats line 2 (same pair and rater)"),
]


@pytest.mark.parametrize("changes, message", BAD_OVERALL, ids=[str(i) for i in range(len(BAD_OVERALL))])
def test_it_reports_a_bad_overall_answer_and_imports_nothing(demo_campaign, tmp_path, changes, message):
    path = write_csv(tmp_path / "labels.csv", [label_row()])
    overall = write_csv(tmp_path / "labels.overall.csv", [overall_row(), overall_row(**changes)], OVERALL_COLUMNS)

    result = import_labels(path)

    assert result.code == 1
    assert f"{overall}:3: {message}" in result.err
    assert Label.objects.count() == 0


def test_it_refuses_overall_answers_for_a_campaign_that_does_not_ask(demo_campaign, tmp_path):
    campaign_create(name="Quiet", criterion_set=demo_campaign.criterion_set, systems=["wikipedia", "atlas_agent"], benchmark="demo")
    path = write_csv(tmp_path / "labels.csv", [label_row(campaign="Quiet")])
    overall = write_csv(tmp_path / "labels.overall.csv", [overall_row(campaign="Quiet")], OVERALL_COLUMNS)

    result = run("import_labels", "--campaign", "Quiet", str(path))

    assert f"{overall}:2: this campaign does not ask for an overall preference" in result.err


def test_it_keeps_a_stored_overall_answer_on_the_same_article_when_the_order_flips(demo_campaign, tmp_path):
    assignment = claim(demo_campaign, "annotator1", a_first=True)
    finish(assignment, overall="2")
    left, right = assignment.pair.article_a.system.key, assignment.pair.article_b.system.key
    path = write_csv(
        tmp_path / "labels.csv",
        [
            label_row(rater="annotator1", topic=assignment.pair.topic.title, left_system=right, right_system=left, winner_system=left),
        ],
    )

    result = import_labels(path)

    assert result.code == 0, result.err
    assignment.refresh_from_db()
    assert not assignment.a_first
    assert assignment.overall == "b"  # still the non-reference article, now shown on the left
    assert overall_shown(assignment) == "1"
    assert assignment.labels.get(criterion__key="ww_cc_1").winner == Label.Winner.A


def rename_campaign(path, name):
    if path.suffix == ".csv":
        rows = read_csv(path)
        columns = list(csv.DictReader(path.open(encoding="utf-8", newline="")).fieldnames)
        write_csv(path, [{**row, "campaign": name} for row in rows], columns)
    else:
        write_jsonl(path, [{**json.loads(line), "campaign": name} for line in path.read_text(encoding="utf-8").split("\n") if line])


def exported(path):
    """Every row of the three files without the campaign column."""
    files = [path, path.with_name(f"{path.stem}.overall{path.suffix}"), path.with_name(f"{path.stem}.spans{path.suffix}")]
    if path.suffix == ".csv":
        tables = [read_csv(f) for f in files]
    else:
        tables = [[json.loads(line) for line in f.read_text(encoding="utf-8").split("\n") if line] for f in files]
    return [[{k: v for k, v in row.items() if k != "campaign"} for row in table] for table in tables]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_round_trips_an_export_into_a_fresh_campaign(demo_campaign, tmp_path, fmt):
    first = claim(demo_campaign, "annotator1", a_first=True)
    mark(first, "2", 0, 12, -1, comment='Puffery, "quoted".')
    finish(first, overall="2")
    second = claim(demo_campaign, "annotator2", a_first=False)
    mark(second, "1", 5, 20, 1)
    mark(second, "2", 30, 8, -1, comment="Two\nlines.")
    finish(second, overall="both_bad")
    unfinished = claim(demo_campaign, "annotator1", a_first=False)
    choose(unfinished, "ww_cc_1", "1", rationale="Ünïcödé — rationale\u2028with a line separator.")
    source = tmp_path / f"x.{fmt}"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(source)).code == 0
    copy = campaign_create(
        name="Copy",
        criterion_set=demo_campaign.criterion_set,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        overlap=2,
        ask_overall=True,
        benchmark="demo",
        neutral_emphasis=demo_campaign.neutral_emphasis,  # the demo shows emphasis neutrally; the column says so
    )
    for path in (source, tmp_path / f"x.overall.{fmt}", tmp_path / f"x.spans.{fmt}"):
        rename_campaign(path, "Copy")

    result = run("import_labels", "--campaign", "Copy", str(source))

    assert result.code == 0, result.err
    assert "pairs created: 0" in result.out
    assert sorted(Assignment.objects.filter(pair__campaign=copy).values_list("a_first", flat=True)) == [False, False, True]
    again = tmp_path / f"y.{fmt}"
    assert run("export_labels", "--campaign", "Copy", "--out", str(again)).code == 0
    original = exported(source)
    assert [len(table) for table in original] == [2 * 39 + 1, 2, 3]
    assert exported(again) == original


def test_it_checks_overall_answers_against_a_stored_assignment(demo_campaign, tmp_path):
    assignment = claim(demo_campaign, "annotator1", a_first=False)
    finish(assignment, overall="1")
    left, right = assignment.pair.article_b.system.key, assignment.pair.article_a.system.key
    path = write_csv(tmp_path / "labels.csv", [])
    base = {"rater": "annotator1", "topic": assignment.pair.topic.title}
    overall = write_csv(
        tmp_path / "labels.overall.csv",
        [
            overall_row(**base, left_system=left, right_system=right, overall=right),
            overall_row(**base, left_system=right, right_system=left, overall=right),
        ],
        OVERALL_COLUMNS,
    )

    result = import_labels(path)

    assert f"{overall}:3: left_system and right_system are swapped compared with the stored assignment" in result.err
    assert f"{overall}:2:" not in result.err
    overall.write_text("\n".join(overall.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8")
    result = import_labels(path)
    assert result.code == 0, result.err
    assert "overall: 0 new, 1 updated, 0 unchanged" in result.out
    assignment.refresh_from_db()
    assert assignment.overall == "a"  # the reference article, shown second
