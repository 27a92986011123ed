"""Another group's labels as they come: no times, no display order, no rubric file, semicolons.

Issue 21 (item 4) and issue 22 (break 7): a labels file from elsewhere often lacks `saved_at`,
`started_at` and the order its raters saw the systems in, names its criteria without a rubric
file, and may be separated by semicolons. And a rater name that becomes another one under
Unicode normalisation is reported on its lines instead of crashing the import.
"""

import csv
import json

import pytest
from django.contrib.auth.models import User

from annotate.models import Assignment, Campaign, Criterion, Label, LabelChange
from annotate.services.placeholders import CRITERIA_FROM_LABELS
from calibration.report.build import build_report
from tests.helpers import run

pytestmark = pytest.mark.django_db

A, B, C = "gpt-4.1", "qwen2.5-72b", "claude-3.5-sonnet"
# What such a file holds: no campaign, rater_kind, rationale or time columns.
SHORT = ("topic", "criterion", "rater", "left_system", "right_system", "winner_system")


def votes(n: int = 12, *, order_known=None, criteria=("helpful",)) -> list[dict]:
    """`n` battles, two raters each, cycling over three systems; `order_known` (a function of the
    battle number) adds that column."""
    rows = []
    systems = [(A, B), (B, C), (C, A)]
    for i in range(n):
        left, right = systems[i % 3]
        for r, rater in enumerate(("crowd_1", "crowd_2")):
            for criterion in criteria:
                winner = left if (i + r) % 3 else right
                row = {
                    "topic": f"battle {i}",
                    "criterion": criterion,
                    "rater": rater,
                    "left_system": left,
                    "right_system": right,
                    "winner_system": winner,
                }
                if order_known is not None:
                    row["order_known"] = "true" if order_known(i) else "false"
                rows.append(row)
    return rows


def write(path, rows, *, delimiter=",", columns=None):
    columns = columns or list(rows[0])
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def campaign_without_rubric(name: str = "crowd") -> Campaign:
    result = run("create_campaign", "--name", name, "--labels-only")
    assert result.code == 0, result.err
    assert "criteria from its labels" in result.out
    return Campaign.objects.get(name=name)


def import_labels(path, *args, campaign="crowd"):
    return run("import_labels", "--campaign", campaign, str(path), *args)


def test_it_takes_a_labels_only_campaigns_criteria_from_its_labels(tmp_path):
    campaign = campaign_without_rubric()
    assert campaign.criterion_set.source == CRITERIA_FROM_LABELS
    assert campaign.criterion_set.criteria.count() == 0

    result = import_labels(write(tmp_path / "votes.csv", votes(criteria=("helpful", "harmless"))))

    assert result.code == 0, result.err
    assert "criteria created from the labels: 2" in result.out
    assert list(campaign.criterion_set.criteria.order_by("order").values_list("key", flat=True)) == ["helpful", "harmless"]
    assert Label.objects.count() == 12 * 2 * 2
    # Importing again creates nothing; a new criterion joins the others.
    again = import_labels(write(tmp_path / "votes.csv", votes(criteria=("helpful", "harmless"))))
    assert "unchanged: everything in the file(s) was already stored" in again.out
    more = import_labels(write(tmp_path / "more.csv", votes(criteria=("honest",))))
    assert more.code == 0, more.err
    assert Criterion.objects.filter(criterion_set=campaign.criterion_set).count() == 3
    report = build_report(campaign, rounds=20)
    assert report["humans"]["n_labels"] == 12 * 2 * 3


def test_it_refuses_a_criterion_name_it_cannot_use_and_creates_nothing(tmp_path):
    campaign = campaign_without_rubric()
    rows = votes(2)
    rows[1]["criterion"] = "two words"

    result = import_labels(write(tmp_path / "votes.csv", rows))

    assert result.code == 1
    assert f"{tmp_path / 'votes.csv'}:3: criterion 'two words' must be" in result.err
    assert not Criterion.objects.filter(criterion_set=campaign.criterion_set).exists()


def test_it_never_grows_a_rubric_that_came_from_a_file(tmp_path, catalogue):
    run("create_campaign", "--name", "crowd", "--labels-only", "--criteria", "wiki_writing")

    result = import_labels(write(tmp_path / "votes.csv", votes(2)))

    assert result.code == 1
    assert "unknown criterion 'helpful' (not in wiki_writing v1)" in result.err
    assert Criterion.objects.filter(key="helpful").count() == 0


def test_it_imports_labels_without_times_or_order_and_counts_them_out_of_position_figures(tmp_path):
    campaign = campaign_without_rubric()
    # Battles 0-5 say their order, 6-11 do not.
    path = write(tmp_path / "votes.csv", votes(12, order_known=lambda i: i < 6))

    result = import_labels(path)

    assert result.code == 0, result.err
    assert Assignment.objects.filter(order_known=False).count() == 12
    assert not Label.objects.filter(saved_at__isnull=False).exists()
    assert not Assignment.objects.filter(claimed_at__isnull=False).exists()
    report = build_report(campaign, rounds=20)
    humans = report["humans"]
    assert humans["n_labels"] == 24
    assert humans["n_labels_order_unknown"] == 12
    # Known order only: every one of the 12 known labels names a winner (no ties here).
    assert humans["first_position_rate_n"] == 12
    assert (
        "humans: 12 of 24 labels were imported without the order their articles were shown in; "
        "the humans' first-position rate uses the other 12."
    ) in report["notes"]


def test_it_takes_every_row_as_of_unknown_order_with_the_option(tmp_path):
    campaign = campaign_without_rubric()

    result = import_labels(write(tmp_path / "votes.csv", votes(6)), "--order-unknown")

    assert result.code == 0, result.err
    humans = build_report(campaign, rounds=20)["humans"]
    assert (humans["n_labels_order_unknown"], humans["first_position_rate_n"], humans["first_position_rate"]) == (12, 0, None)


def test_it_refuses_an_order_it_cannot_read_and_a_judge_without_an_order(tmp_path):
    campaign_without_rubric()
    rows = votes(2, order_known=lambda i: True)
    rows[1]["order_known"] = "maybe"
    judge = {**rows[2], "rater": "gpt-4o", "order_known": "false"}
    path = write(tmp_path / "votes.csv", [*rows, {**judge, "rater_kind": "judge"}], columns=[*rows[0], "rater_kind"])

    result = import_labels(path)

    assert result.code == 1
    assert f"{path}:3: order_known must be true or false, not 'maybe'" in result.err
    assert f"{path}:6: a judge row needs the order its judge was shown (order_known false is for human rows)" in result.err
    assert Label.objects.count() == 0


def test_it_gives_back_missing_times_and_orders_as_they_came(tmp_path):
    """Export then import is exact: no started_at or saved_at is made up, no order either."""
    campaign_without_rubric()
    rows = [
        {**row, "campaign": "crowd", "rater_kind": "human", "rationale": "", "started_at": "", "saved_at": ""}
        for row in votes(4, order_known=lambda i: i % 2 == 0)
    ]
    rows[0]["started_at"], rows[0]["saved_at"] = "2024-05-01T10:00:00Z", "2024-05-01T10:02:00Z"
    rows[1]["started_at"] = "2024-05-01T10:00:00Z"  # another rater of the same battle: a start, no save time
    source = write(tmp_path / "votes.csv", rows)
    assert import_labels(source).code == 0

    out = tmp_path / "out.csv"
    assert run("export_labels", "--campaign", "crowd", "--out", str(out)).code == 0

    with out.open(encoding="utf-8", newline="") as handle:
        exported = list(csv.DictReader(handle))
    keys = ("topic", "rater", "left_system", "right_system", "winner_system", "started_at", "saved_at", "order_known")
    # A known order is written as an empty cell, as in files without the column.
    given = [{**row, "order_known": "" if row["order_known"] == "true" else row["order_known"]} for row in rows]
    assert sorted(tuple(r[k] for k in keys) for r in exported) == sorted(tuple(r[k] for k in keys) for r in given)
    # And into a second campaign, the same again.
    campaign_without_rubric("crowd2")
    copy = [{**row, "campaign": "crowd2"} for row in exported]
    assert import_labels(write(tmp_path / "copy.csv", copy), campaign="crowd2").code == 0
    out2 = tmp_path / "out2.csv"
    run("export_labels", "--campaign", "crowd2", "--out", str(out2))
    with out2.open(encoding="utf-8", newline="") as handle:
        again = [{**r, "campaign": "crowd"} for r in csv.DictReader(handle)]
    assert again == exported


def test_it_leaves_started_at_empty_for_imported_rows_that_had_none(tmp_path, demo_campaign):
    """The export used to give imported rows without started_at their first save time."""
    row = {
        "campaign": "Demo campaign", "topic": "Marrow River", "criterion": "ww_cc_1", "rater_kind": "human", "rater": "ext",
        "left_system": "wikipedia", "right_system": "atlas_agent", "winner_system": "atlas_agent", "rationale": "Clearer.",
        "started_at": "", "saved_at": "2025-03-01T09:05:00Z",
    }  # fmt: skip
    path = write(tmp_path / "labels.csv", [row])
    assert run("import_labels", "--campaign", "Demo campaign", str(path)).code == 0

    out = tmp_path / "out.jsonl"
    run("export_labels", "--campaign", "Demo campaign", "--out", str(out))

    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    ours = [r for r in exported if r["rater"] == "ext"]
    assert [(r["started_at"], r["saved_at"]) for r in ours] == [("", "2025-03-01T09:05:00Z")]


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_it_reads_a_file_separated_otherwise_than_by_commas(tmp_path, delimiter):
    campaign_without_rubric()
    path = write(tmp_path / "votes.csv", votes(3), delimiter=delimiter)

    result = import_labels(path)

    assert result.code == 0, result.err
    assert Label.objects.count() == 6
    if delimiter == ";":
        assert f"read {path} as semicolon-separated" in result.out


def test_it_names_a_delimiter_it_does_not_read(tmp_path):
    campaign_without_rubric()
    path = write(tmp_path / "votes.csv", votes(2), delimiter=":")

    result = import_labels(path)

    assert result.code == 1
    assert (
        "missing column(s) topic, criterion, rater, left_system, right_system, winner_system (its header seems separated by ':'"
        in result.err
    )
    assert Label.objects.count() == 0


def test_it_reports_rater_names_that_collide_after_normalisation_per_line(tmp_path):
    """Issue 22, break 7: `ｕ01` is `u01` once normalised (NFKC), and u01 exists: one report per line, nothing imported."""
    campaign_without_rubric()
    User.objects.create_user("u01")
    rows = votes(2)
    rows[0]["rater"] = rows[2]["rater"] = "ｕ01"  # fullwidth u
    rows[1]["rater"] = "ｕ02"
    rows[3]["rater"] = "u02"
    path = write(tmp_path / "votes.csv", rows)
    users = User.objects.count()

    result = import_labels(path)

    assert result.code == 1
    assert "Traceback" not in result.err and "IntegrityError" not in result.err
    for line in (2, 4):
        assert (
            f"{path}:{line}: rater 'ｕ01' is the username 'u01' once normalised (Unicode NFKC, as accounts are stored), which is an existing account's"
            in result.err
        )
    assert (
        f"{path}:3: rater 'ｕ02' is the username 'u02' once normalised (Unicode NFKC, as accounts are stored), which is another rater's of this import"
        in result.err
    )
    assert f"{path}:5:" not in result.err
    assert "3 bad row(s) (listed above); nothing was imported" in result.err
    assert (User.objects.count(), Label.objects.count(), LabelChange.objects.count()) == (users, 0, 0)


def test_it_imports_the_other_rows_when_told_to_skip_the_colliding_ones(tmp_path):
    campaign_without_rubric()
    User.objects.create_user("u01")
    rows = votes(2)
    rows[0]["rater"] = "ｕ01"

    result = import_labels(write(tmp_path / "votes.csv", rows), "--skip-bad")

    assert result.code == 2
    assert Label.objects.count() == 3
    assert not User.objects.filter(username="ｕ01").exists()
