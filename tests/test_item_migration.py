"""The item model's steps (issue 38) carry every stored row across and back: a database holding the whole
demo (its study, judges' runs, its study's imported labels and verdicts, adjudications opened on them) and
a campaign of every one-article protocol, answered and judged, is taken back to the schema before a step,
read whole, migrated forward over the step and back again.

* First step (annotate 0034, judges 0014): items' slots and the orders shown.
* Second step (annotate 0035 and 0036, judges 0015): readings become items of kind reading; pair ids
  are kept, a reading's id is not (it is found again by its campaign and article both ways).
* Third step (annotate 0037): reading assignments become assignments of reading items; an assignment's
  id is kept, a reading assignment's is not (it is found again by its item and annotator both ways).
* Fourth step (annotate 0038): answers about one article become labels with a value; a label's id is
  kept, an answer's is not (it is found again by its assignment and criterion both ways).
* Fifth step (judges 0016): a judge's unit of a reading names its item in `pair`, as a pair's does, and
  the `reading` column goes; ids are kept.
* Sixth step (annotate 0039, judges 0017): items of three to six articles (kind `group`) and orders of
  three slots or more; constraints only, so every row stays as it is, ids and all."""

import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import Campaign
from annotate.services.adjudication import adjudication_open
from annotate.services.answers import label_save, overall_save, value_save
from annotate.services.claims import assignment_claim_next, assignment_open
from annotate.services.labelling import assignment_submit
from judges.services import judge_create, judge_run_create, judge_run_execute
from tests.migration_round_trip import columns, migrate_to, rows, tables_now

BEFORE = [("annotate", "0033_step_vote_time_optional"), ("judges", "0013_step_questions")]
FIRST = [("annotate", "0034_items_and_orders"), ("judges", "0014_items_and_orders")]
SECOND = [("annotate", "0036_reading_table_dropped"), ("judges", "0015_readings_are_items")]
THIRD = [("annotate", "0037_reading_assignments_are_assignments")]
FOURTH = [("annotate", "0038_answers_are_labels"), ("judges", "0015_readings_are_items")]
FIFTH = [("annotate", "0038_answers_are_labels"), ("judges", "0016_reading_units_on_their_item")]
# One criterion per one-article protocol, and a value each accepts.
PROTOCOLS = {
    "checklist": ({"type": "checklist"}, "yes"),
    "rating": ({"type": "rating", "points": [{"value": v, "label": f"{v} of 3"} for v in (1, 2, 3)]}, "2"),
    "count": ({"type": "count", "max": 20}, "3"),
    "nominal": ({"type": "nominal", "classes": ["Supports", "Disputes", "No answer"]}, "Disputes"),
    "text": ({"type": "text"}, "The second section repeats the first."),
}


def every_protocol_campaign(tmp_path) -> Campaign:
    criteria = [{"id": f"q_{kind}", "text": f"A {kind} question about the article.", "response": response}
                for kind, (response, _) in PROTOCOLS.items()]  # fmt: skip
    rubric = tmp_path / "every.json"
    rubric.write_text(json.dumps({"name": "Every protocol", "categories": [{"id": "all", "name": "All", "criteria": criteria}]}))
    call_command("import_criteria", str(rubric), stdout=io.StringIO())
    call_command("create_campaign", "--name", "Every protocol", "--criteria", "every", "--systems", "wikipedia,atlas_agent",
                 "--benchmark", "demo", "--overlap", "2", "--annotators", "annotator1,annotator2", stdout=io.StringIO())  # fmt: skip
    campaign = Campaign.objects.get(name="Every protocol")
    clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for name in ("annotator1", "annotator2"):
        user = get_user_model().objects.get(username=name)
        work = assignment_claim_next(campaign=campaign, user=user, now=clock)
        for criterion in campaign.criterion_set.criteria.order_by("order"):
            clock += timedelta(seconds=5)
            value = PROTOCOLS[criterion.key.removeprefix("q_")][1]
            value_save(assignment=work, criterion=criterion, user=user, value=value, rationale=f"{name} read it.", now=clock)
        assignment_submit(assignment=work, user=user, now=clock)
    return campaign


def both_label_a_pair(campaign: Campaign) -> None:
    """The demo's two annotators label the first pair (both are handed it first) and disagree on some
    criteria whichever orders they are shown: annotator1 always picks the left article, annotator2 the
    left on even criteria and the right on odd ones."""
    clock = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    criteria = list(campaign.criterion_set.criteria.order_by("order"))
    for name in ("annotator1", "annotator2"):
        user = get_user_model().objects.get(username=name)
        work = assignment_claim_next(campaign=campaign, user=user, now=clock)
        assignment_open(assignment=work, now=clock)
        for i, criterion in enumerate(criteria):
            clock += timedelta(seconds=3)
            position = "1" if name == "annotator1" or i % 2 == 0 else "2"
            label_save(assignment=work, criterion=criterion, user=user, position=position, rationale=f"{name}: {i}.", now=clock)
        overall_save(assignment=work, user=user, value="1", now=clock)
        assignment_submit(assignment=work, user=user, now=clock)


@pytest.fixture
def full_database(tmp_path, llm_server, monkeypatch):
    call_command("load_demo", stdout=io.StringIO())
    call_command("add_judge", "baseline-length", "--kind", "length", stdout=io.StringIO())
    call_command(
        "run_judges", "--campaign", "Demo campaign", "--judge", "baseline-length", "--swap", stdout=io.StringIO(), stderr=io.StringIO()
    )
    demo = Campaign.objects.get(name="Demo campaign")
    both_label_a_pair(demo)
    assert adjudication_open(campaign=demo, by=get_user_model().objects.get(username="researcher"))[0] > 0
    every_protocol_campaign(tmp_path)
    monkeypatch.setenv("FAKE_JUDGE_API_KEY", "sk-test-items-0e1f")
    judge, _ = judge_create(name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env="FAKE_JUDGE_API_KEY")
    every = Campaign.objects.get(name="Every protocol")
    assert judge_run_execute(run=judge_run_create(campaign=every, judge=judge, concurrency=2)).units_done > 0
    yield
    migrate_to(None)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_first_step_and_back(full_database):
    migrate_to(BEFORE)
    old_tables, old_columns, before = everything_now()
    assert len(before["annotate_pair"]) > 0 and len(before["annotate_assignment"]) > 0 and len(before["annotate_answer"]) == 10
    assert len(before["annotate_adjudication"]) > 0 and len(before["judges_judgeunit"]) > 0

    migrate_to(FIRST)

    assert rows(old_tables, only=old_columns) == before
    slots = rows(["annotate_itemarticle"], only={"annotate_itemarticle": ["item_id", "slot", "article_id"]})["annotate_itemarticle"]
    pairs = rows(["annotate_pair"], only={"annotate_pair": ["id", "article_a_id", "article_b_id"]})["annotate_pair"]
    assert sorted(slots) == sorted([(p, 0, a) for p, a, _ in pairs] + [(p, 1, b) for p, _, b in pairs])
    for table in ("annotate_assignment", "annotate_adjudication"):
        shown = rows([table], only={table: ["a_first", "order"]})[table]
        assert {(bool(a_first), order) for a_first, order in shown} == {(True, "ab"), (False, "ba")}, table
    units = rows(["judges_judgeunit"], only={"judges_judgeunit": ["reading_id", "a_first", "order"]})["judges_judgeunit"]
    assert {(reading is None, bool(a_first), order) for reading, a_first, order in units} == {
        (True, True, "ab"), (True, False, "ba"), (False, True, "a")
    }  # fmt: skip

    migrate_to(BEFORE)

    assert_same_schema(old_tables, old_columns)
    assert rows(old_tables, only=old_columns) == before


def everything_now() -> tuple[list[str], dict[str, list[str]], dict[str, list[tuple]]]:
    """The project's tables, each one's columns, and every row: what a step must give back."""
    tables = tables_now()
    return tables, {table: columns(table) for table in tables}, rows(tables)


def assert_same_schema(old_tables: list[str], old_columns: dict[str, list[str]]) -> None:
    """The same tables and columns (a rebuilt SQLite table may list its columns in another order)."""
    assert tables_now() == old_tables
    assert {table: sorted(columns(table)) for table in old_tables} == {table: sorted(names) for table, names in old_columns.items()}


def assert_unchanged(before: dict[str, list[tuple]], old_columns: dict[str, list[str]], *, besides: set[str]) -> None:
    """Every table but `besides` holds the rows it held, in the columns it had."""
    for table in set(before) - besides:
        assert rows([table], only={table: old_columns[table]})[table] == before[table], table


def _by_key(tables, names, *, table: str, key: tuple[str, ...], columns: dict[str, str]) -> dict[str, list[tuple]]:
    """The rows with every id of `table`'s rows (in `columns`: the column of each table holding one)
    replaced by that row's `key` columns, and sorted again: a row copied back gets a new id, the rest
    of every row must be the same."""
    own = names[table]
    key_of = {row[own.index("id")]: tuple(row[own.index(c)] for c in key) for row in tables[table]}
    out = dict(tables)
    for name, column in columns.items():
        at = names[name].index(column)
        out[name] = sorted(
            (tuple(key_of[v] if i == at and v is not None else v for i, v in enumerate(row)) for row in tables[name]), key=repr
        )
    return out


def _by_reading_key(tables, names):
    """Reading ids by the reading's (campaign, article)."""
    columns = {"annotate_reading": "id", "annotate_readingassignment": "reading_id", "judges_judgeunit": "reading_id"}
    return _by_key(tables, names, table="annotate_reading", key=("campaign_id", "article_id"), columns=columns)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_readings_becoming_items_and_back(full_database):
    migrate_to(FIRST)
    old_tables, old_columns, before = everything_now()
    readings = rows(["annotate_reading"], only={"annotate_reading": ["id", "campaign_id", "topic_id", "article_id", "order"]})
    assert len(readings["annotate_reading"]) > 0 and len(before["annotate_readingassignment"]) > 0
    assert any(row[old_columns["judges_judgeunit"].index("reading_id")] is not None for row in before["judges_judgeunit"])
    reading_of = {pk: (campaign, article) for pk, campaign, _, article, _ in readings["annotate_reading"]}
    slot_columns = {"annotate_itemarticle": ["id", "item_id", "slot", "article_id"]}
    slots_before = rows(["annotate_itemarticle"], only=slot_columns)["annotate_itemarticle"]

    migrate_to(SECOND)

    assert "annotate_reading" not in tables_now() and "annotate_pair" not in tables_now()
    pair_columns = old_columns["annotate_pair"]
    items = rows(["annotate_item"], only={"annotate_item": pair_columns})["annotate_item"]
    kind = pair_columns.index("kind")
    assert sorted((row[: len(pair_columns)] for row in items if row[kind] == "pair"), key=repr) == before["annotate_pair"]
    reading_items = rows(
        ["annotate_item"], only={"annotate_item": ["id", "kind", "campaign_id", "topic_id", "article_a_id", "article_b_id", "order"]}
    )["annotate_item"]
    item_of = {}
    for pk, item_kind, campaign, topic, article, article_b, order in reading_items:
        if item_kind == "reading":
            assert article_b is None
            item_of[(campaign, article)] = (pk, topic, order)
    assert sorted((c, t, a, o) for _, c, t, a, o in readings["annotate_reading"]) == sorted(
        (c, t, a, o) for (c, a), (_, t, o) in item_of.items()
    )
    slots_after = rows(["annotate_itemarticle"], only=slot_columns)["annotate_itemarticle"]
    reading_slots = {(pk, 0, article) for (_, article), (pk, _, _) in item_of.items()}
    # A pair's slots are as they were; each reading item has its one slot, and nothing else is new.
    assert sorted([row for row in slots_after if row[1:] not in reading_slots], key=repr) == slots_before
    assert {row[1:] for row in slots_after} >= reading_slots and len(slots_after) == len(slots_before) + len(reading_slots)
    # Each reading assignment and judge's unit now names the item of its reading; every other column is the same.
    for table in ("annotate_readingassignment", "judges_judgeunit"):
        names = old_columns[table]
        at = names.index("reading_id")
        moved = [tuple(item_of[reading_of[v]][0] if i == at and v is not None else v for i, v in enumerate(row)) for row in before[table]]
        assert rows([table], only={table: names})[table] == sorted(moved, key=repr), table
    changed = {"annotate_pair", "annotate_reading", "annotate_readingassignment", "judges_judgeunit", "annotate_itemarticle"}
    assert_unchanged(before, old_columns, besides=changed)

    migrate_to(FIRST)

    assert_same_schema(old_tables, old_columns)
    after = rows(old_tables, only=old_columns)
    assert after["annotate_pair"] == before["annotate_pair"]
    assert _by_reading_key(after, old_columns) == _by_reading_key(before, old_columns)


def _by_work_key(tables, names):
    """Reading assignment ids (their own, an answer's and an audit row's) by its (item, annotator)."""
    columns = {"annotate_readingassignment": "id", "annotate_answer": "assignment_id", "annotate_labelchange": "reading_assignment_id"}
    return _by_key(tables, names, table="annotate_readingassignment", key=("reading_id", "annotator_id"), columns=columns)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_reading_assignments_becoming_assignments_and_back(full_database):
    migrate_to(SECOND)
    old_tables, old_columns, before = everything_now()
    work = old_columns["annotate_readingassignment"]
    assert len(before["annotate_readingassignment"]) > 0 and len(before["annotate_answer"]) == 10
    changes = old_columns["annotate_labelchange"]
    reading_changes = [row for row in before["annotate_labelchange"] if row[changes.index("reading_assignment_id")] is not None]
    assert reading_changes and len(reading_changes) < len(before["annotate_labelchange"])
    key_of = {
        row[work.index("id")]: (row[work.index("reading_id")], row[work.index("annotator_id")])
        for row in before["annotate_readingassignment"]
    }

    migrate_to(THIRD)

    assert "annotate_readingassignment" not in tables_now()
    names = old_columns["annotate_assignment"]
    after = rows(["annotate_assignment"], only={"annotate_assignment": names})["annotate_assignment"]
    item_kind = dict(rows(["annotate_item"], only={"annotate_item": ["id", "kind"]})["annotate_item"])
    on_pairs = [row for row in after if item_kind[row[names.index("pair_id")]] == "pair"]
    copies = [dict(zip(names, row)) for row in after if item_kind[row[names.index("pair_id")]] == "reading"]
    assert on_pairs == before["annotate_assignment"]  # the pairs' work, ids and all
    # Each reading assignment once, on its item, shown alone; its times and status as they were.
    copy_of = {(c["pair_id"], c["annotator_id"]): c for c in copies}
    assert len(copy_of) == len(copies) == len(key_of)
    for row in before["annotate_readingassignment"]:
        old = dict(zip(work, row))
        copy = copy_of[old["reading_id"], old["annotator_id"]]
        assert {f: copy[f] for f in ("status", "claimed_at", "first_opened_at", "last_activity_at", "submitted_at")} == {
            f: old[f] for f in ("status", "claimed_at", "first_opened_at", "last_activity_at", "submitted_at")
        }
        assert (bool(copy["a_first"]), copy["order"], bool(copy["order_known"]), copy["overall"], copy["guess"], copy["repeat_of_id"]) == (
            True, "a", True, "", "", None
        )  # fmt: skip
    new_id = {old: copy_of[key]["id"] for old, key in key_of.items()}
    answers = old_columns["annotate_answer"]
    at = answers.index("assignment_id")
    moved = sorted((tuple(new_id[v] if i == at else v for i, v in enumerate(row)) for row in before["annotate_answer"]), key=repr)
    assert rows(["annotate_answer"], only={"annotate_answer": answers})["annotate_answer"] == moved
    # An audit row of a reading's work now names the copy in `assignment`; the others are as they were.
    kept = [c for c in changes if c != "reading_assignment_id"]
    one, two = changes.index("assignment_id"), changes.index("reading_assignment_id")
    expected = sorted(
        (
            tuple(new_id[row[two]] if c == "assignment_id" and row[two] is not None else row[changes.index(c)] for c in kept)
            for row in before["annotate_labelchange"]
        ),
        key=repr,
    )
    assert rows(["annotate_labelchange"], only={"annotate_labelchange": kept})["annotate_labelchange"] == expected
    assert all(row[one] is None for row in reading_changes)
    assert_unchanged(
        before, old_columns, besides={"annotate_readingassignment", "annotate_assignment", "annotate_answer", "annotate_labelchange"}
    )

    migrate_to(SECOND)

    assert_same_schema(old_tables, old_columns)
    back = rows(old_tables, only=old_columns)
    assert back["annotate_assignment"] == before["annotate_assignment"]
    assert _by_work_key(back, old_columns) == _by_work_key(before, old_columns)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_answers_becoming_labels_and_back(full_database):
    migrate_to(THIRD)
    old_tables, old_columns, before = everything_now()
    answers, labels = old_columns["annotate_answer"], old_columns["annotate_label"]
    assert len(before["annotate_answer"]) == 10 and len(before["annotate_label"]) > 0

    migrate_to(FOURTH)

    assert "annotate_answer" not in tables_now()
    with_value = labels + ["value"]
    after = [dict(zip(with_value, row)) for row in rows(["annotate_label"], only={"annotate_label": with_value})["annotate_label"]]
    old_ids = {row[labels.index("id")] for row in before["annotate_label"]}
    # The pairs' labels, ids and all, with an empty value; then each answer once, with no winner.
    assert sorted((tuple(row[c] for c in labels) for row in after if row["id"] in old_ids), key=repr) == before["annotate_label"]
    assert all(row["value"] == "" for row in after if row["id"] in old_ids)
    fields = ("assignment_id", "criterion_id", "value", "rationale", "created_at", "saved_at")
    copies = [row for row in after if row["id"] not in old_ids]
    assert sorted((tuple(row[f] for f in fields) for row in copies), key=repr) == sorted(
        (tuple(row[answers.index(f)] for f in fields) for row in before["annotate_answer"]), key=repr
    )
    assert {(row["winner"], bool(row["cannot_judge"]), row["acceptable"] in ("[]", [])) for row in copies} == {("", False, True)}
    assert_unchanged(before, old_columns, besides={"annotate_answer", "annotate_label"})

    migrate_to(THIRD)

    assert_same_schema(old_tables, old_columns)
    back = rows(old_tables, only=old_columns)
    without_id = [c for c in answers if c != "id"]
    assert rows(["annotate_answer"], only={"annotate_answer": without_id}) == {
        "annotate_answer": sorted((tuple(row[answers.index(c)] for c in without_id) for row in before["annotate_answer"]), key=repr)
    }
    for table in set(old_tables) - {"annotate_answer"}:
        assert back[table] == before[table], table


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_reading_units_naming_their_item_and_back(full_database):
    migrate_to(FOURTH)
    old_tables, old_columns, before = everything_now()
    units = old_columns["judges_judgeunit"]
    pair, reading = units.index("pair_id"), units.index("reading_id")
    assert any(row[reading] is not None for row in before["judges_judgeunit"])

    migrate_to(None)

    kept = [c for c in units if c != "reading_id"]
    moved = sorted(
        (
            tuple(row[reading] if c == "pair_id" and row[reading] is not None else row[units.index(c)] for c in kept)
            for row in before["judges_judgeunit"]
        ),
        key=repr,
    )
    assert rows(["judges_judgeunit"], only={"judges_judgeunit": kept})["judges_judgeunit"] == moved
    assert all(row[pair] is None for row in before["judges_judgeunit"] if row[reading] is not None)
    assert_unchanged(before, old_columns, besides={"judges_judgeunit"})

    migrate_to(FOURTH)

    assert_same_schema(old_tables, old_columns)
    assert rows(old_tables, only=old_columns) == before


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_row_through_the_groups_arriving_and_back(full_database):
    migrate_to(FIFTH)
    old_tables, old_columns, before = everything_now()
    assert before["annotate_item"] and before["judges_judgeunit"] and before["annotate_label"]

    migrate_to(None)

    assert_same_schema(old_tables, old_columns)
    assert rows(old_tables, only=old_columns) == before

    migrate_to(FIFTH)

    assert_same_schema(old_tables, old_columns)
    assert rows(old_tables, only=old_columns) == before
