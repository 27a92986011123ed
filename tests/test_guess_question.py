"""The guess question: after a pair is submitted, which article the annotator thinks is the reference."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotate.models import Assignment
from annotate.services.campaigns import campaign_create
from annotate.services.guesses import assignment_guess_save, guess_locked
from tests.helpers import run
from tests.test_export_labels import claim, finish, read_csv
from tests.test_import_labels import exported, rename_campaign

pytestmark = pytest.mark.django_db


def submitted(campaign, username: str, *, a_first: bool) -> Assignment:
    assignment = claim(campaign, username, a_first=a_first)
    finish(assignment, overall="1")
    assignment.refresh_from_db()
    return assignment


def test_it_is_on_in_the_demo_and_off_by_default(demo_campaign, catalogue):
    assert demo_campaign.guess_question and demo_campaign.reference_name == "Wikipedia"
    plain = campaign_create(name="Plain", criterion_set=demo_campaign.criterion_set, systems=["wikipedia", "atlas_agent"], benchmark="demo")
    assert not plain.guess_question


@pytest.mark.parametrize("a_first", [True, False])
def test_it_stores_the_guess_by_side_and_shows_it_by_position(demo_campaign, a_first):
    assignment = submitted(demo_campaign, "annotator1", a_first=a_first)

    assignment_guess_save(assignment=assignment, user=assignment.annotator, answer="first")

    assignment.refresh_from_db()
    assert assignment.guess == ("a" if a_first else "b")
    assert assignment.guessed_at is not None
    assert assignment.labels.exclude(winner="").count() == 39  # the labels stay as they were


def test_it_takes_dont_know_and_leaves_a_missing_answer_missing(demo_campaign):
    answered = submitted(demo_campaign, "annotator1", a_first=True)
    skipped = submitted(demo_campaign, "annotator2", a_first=True)

    assignment_guess_save(assignment=answered, user=answered.annotator, answer="unknown")

    answered.refresh_from_db()
    skipped.refresh_from_db()
    assert (answered.guess, skipped.guess) == ("unknown", "")


def test_it_can_be_changed_until_the_next_claim(demo_campaign, client):
    assignment = submitted(demo_campaign, "annotator1", a_first=True)
    client.force_login(assignment.annotator)
    url = reverse("assignment-guess", args=[assignment.pk])
    assert client.post(url, {"guess": "first"}).status_code == 302
    assert client.post(url, {"guess": "second"}).status_code == 302
    assignment.refresh_from_db()
    assert assignment.guess == "b"
    assert not guess_locked(assignment)

    assert client.post(reverse("claim-next", args=[demo_campaign.pk])).status_code == 302

    response = client.post(url, {"guess": "first"})
    assert response.status_code == 409
    assert "claimed another item" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.guess == "b"
    assert "disabled" in client.get(url).content.decode()


def test_it_asks_after_a_submission_and_never_blocks_the_next_pair(demo_campaign, client):
    assignment = claim(demo_campaign, "annotator1", a_first=True)
    criteria = demo_campaign.criterion_set.criteria.order_by("order")
    client.force_login(assignment.annotator)
    for criterion in criteria:
        client.post(reverse("label-save", args=[assignment.pk, criterion.key]), {"position": "1", "rationale": "A clear lead paragraph."})
    client.post(reverse("overall-save", args=[assignment.pk]), {"overall": "1"})

    response = client.post(reverse("submit", args=[assignment.pk]))

    assert response.status_code == 302
    assert response.url == reverse("assignment-guess", args=[assignment.pk])
    page = client.get(response.url)
    assert page.status_code == 200
    assert "Which article do you think is the Wikipedia article?" in page.content.decode()
    following = client.post(reverse("claim-next", args=[demo_campaign.pk]))
    assert following.status_code == 302 and "/work/" in following.url
    assignment.refresh_from_db()
    assert assignment.guess == ""


def test_it_goes_straight_to_the_next_pair_when_the_campaign_does_not_ask(demo_campaign, client):
    demo_campaign.guess_question = False
    demo_campaign.save(update_fields=["guess_question"])
    assignment = submitted(demo_campaign, "annotator1", a_first=True)
    client.force_login(assignment.annotator)

    assert client.get(reverse("assignment-guess", args=[assignment.pk])).status_code == 404
    with pytest.raises(Exception, match="does not ask"):
        assignment_guess_save(assignment=assignment, user=assignment.annotator, answer="first")


def test_it_refuses_bad_answers_unsubmitted_work_and_other_people(demo_campaign, client):
    assignment = submitted(demo_campaign, "annotator1", a_first=True)
    url = reverse("assignment-guess", args=[assignment.pk])
    assert client.get(url).status_code == 302  # anonymous: to the login page
    client.force_login(User.objects.get(username="annotator2"))
    assert client.get(url).status_code == 403
    assert client.post(url, {"guess": "first"}).status_code == 403
    client.force_login(assignment.annotator)
    assert client.put(url).status_code == 405
    response = client.post(url, {"guess": "wikipedia"})
    assert response.status_code == 400
    assert "Choose Article 1, Article 2 or Don&#x27;t know" in response.content.decode()
    open_one = claim(demo_campaign, "annotator1", a_first=True)
    response = client.post(reverse("assignment-guess", args=[open_one.pk]), {"guess": "first"})
    assert response.status_code == 400
    assert "once the pair is submitted" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.guess == ""


def _visible(html: str) -> str:
    # The page without what differs from request to request for reasons nobody sees: tokens and ids.
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    html = re.sub(r'"X-CSRFToken": "[^"]+"', "", html)
    html = re.sub(r'nonce="[^"]+"', "", html)
    return re.sub(r"/work/\d+/", "/work/N/", html)


def test_it_reads_the_same_whichever_order_and_system_the_pair_had(demo_campaign, client):
    """Blindness: the question's page is word for word the same for every pair, whatever was shown where."""
    pages = []
    for username, a_first in (("annotator1", True), ("annotator2", False)):
        assignment = submitted(demo_campaign, username, a_first=a_first)
        client.force_login(assignment.annotator)
        html = client.get(reverse("assignment-guess", args=[assignment.pk])).content.decode()
        pages.append(_visible(html).replace(username, "USER"))
        assert assignment.pair.topic.title not in html
        for system in (assignment.pair.article_a.system.key, assignment.pair.article_b.system.key):
            assert system not in html
    assert pages[0] == pages[1]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_it_round_trips_guesses_through_export_and_import(demo_campaign, tmp_path, fmt):
    answers = {}
    for username, a_first, answer in (("annotator1", True, "first"), ("annotator2", False, "first"), ("annotator1", False, "")):
        assignment = submitted(demo_campaign, username, a_first=a_first)
        if answer:
            assignment_guess_save(assignment=assignment, user=assignment.annotator, answer=answer)
        answers[assignment.pk] = answer
    third = submitted(demo_campaign, "annotator2", a_first=True)
    assignment_guess_save(assignment=third, user=third.annotator, answer="unknown")
    source = tmp_path / f"x.{fmt}"
    assert run("export_labels", "--campaign", "Demo campaign", "--out", str(source)).code == 0
    copy = campaign_create(
        name="Copy",
        criterion_set=demo_campaign.criterion_set,
        systems=["wikipedia", "atlas_agent", "quill_researcher"],
        overlap=2,
        ask_overall=True,
        benchmark="demo",
        neutral_emphasis=demo_campaign.neutral_emphasis,
    )
    for path in (source, tmp_path / f"x.overall.{fmt}", tmp_path / f"x.spans.{fmt}"):
        rename_campaign(path, "Copy")

    result = run("import_labels", "--campaign", "Copy", str(source))

    assert result.code == 0, result.err
    stored = {
        (a.pair.topic_id, a.pair.article_b_id, a.annotator.username): a.guess
        for a in Assignment.objects.filter(pair__campaign=copy).select_related("pair", "annotator")
    }
    original = {
        (a.pair.topic_id, a.pair.article_b_id, a.annotator.username): a.guess
        for a in Assignment.objects.filter(pair__campaign=demo_campaign).select_related("pair", "annotator")
    }
    assert stored == original
    assert sorted(stored.values()) == ["", "a", "b", "unknown"]
    again = tmp_path / f"y.{fmt}"
    assert run("export_labels", "--campaign", "Copy", "--out", str(again)).code == 0
    assert exported(again) == exported(source)
    if fmt == "csv":
        guesses = {row["guess"] for row in read_csv(source)}
        assert guesses == {"first", "unknown", ""}


def test_it_refuses_an_unknown_guess_and_two_guesses_for_one_assignment(demo_campaign, tmp_path):
    from tests.test_import_labels import label_row, write_csv

    rows = [
        label_row(criterion="ww_cc_1", guess="first"),
        label_row(criterion="ww_cc_2", guess="second"),
        label_row(topic="Marrow River", rater="other_rater", guess="maybe"),
    ]
    path = write_csv(tmp_path / "labels.csv", rows, (*label_row().keys(), "guess"))

    result = run("import_labels", "--campaign", "Demo campaign", str(path))

    assert result.code != 0
    assert "guess differs from line 2" in result.err
    assert "guess must be one of first, second, unknown or empty, not 'maybe'" in result.err
    assert not Assignment.objects.filter(pair__campaign=demo_campaign).exists()


def test_it_needs_a_name_for_the_reference_and_is_refused_for_labels_only_campaigns(demo_campaign):
    from django.core.exceptions import ValidationError

    options = {"criterion_set": demo_campaign.criterion_set, "systems": ["wikipedia", "atlas_agent"], "benchmark": "demo"}
    with pytest.raises(ValidationError, match="needs a name for the reference"):
        campaign_create(name="Unnamed", guess_question=True, reference_name="  ", **options)
    named = campaign_create(name="Named", guess_question=True, reference_name="  Encyclopaedia   Britannica ", **options)
    assert named.reference_name == "Encyclopaedia Britannica"
    with pytest.raises(ValidationError, match="guess question"):
        campaign_create(name="Imported", criterion_set=None, labels_only=True, guess_question=True)
