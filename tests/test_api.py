"""The JSON API under /api/: who may see what, the claim/label/submit flow, and the blind presentation."""

import json

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Assignment, Campaign, CriterionSet, Label, System
from annotate.services import criterion_set_import
from annotate.services.campaigns import campaign_create, campaign_set_open
from annotate.services.labelling import assignment_missing
from annotate.sources import CategoryRecord, CriterionRecord, RubricRecord
from protocols.pairwise import side_of
from tests.helpers import HUMAN_LABEL_HEADER

pytestmark = pytest.mark.django_db

SYSTEMS = ["wikipedia", "atlas_agent", "quill_researcher"]
REASON = "The first article explains this more clearly."


@pytest.fixture
def api_campaign(demo_campaign, alice, bob):
    """Alice and Bob's campaign: 4 topics x 2 pairs against the reference, two annotators per pair."""
    return campaign_create(
        name="API campaign",
        criterion_set=CriterionSet.objects.get(key="wiki_writing"),
        systems=SYSTEMS,
        overlap=2,
        annotators=[alice, bob],
    )


def client_for(user=None, **kwargs) -> APIClient:
    client = APIClient(**kwargs)
    if user is not None:
        client.force_login(user)
    return client


def claim(client: APIClient, campaign: Campaign) -> dict:
    response = client.post(reverse("api:campaign-claim", args=[campaign.pk]))
    assert response.status_code in (200, 201), response.content
    return response.json()


def label_url(assignment_id: int, key: str) -> str:
    return reverse("api:label-save", args=[assignment_id, key])


def fill_every_criterion(client: APIClient, assignment_id: int, position: str = "1") -> None:
    for row in client.get(reverse("api:assignment-detail", args=[assignment_id])).json()["criteria"]:
        response = client.put(label_url(assignment_id, row["key"]), {"position": position, "rationale": REASON}, format="json")
        assert response.status_code == 200, response.content


# --- who may call what ------------------------------------------------------------------


def test_it_accepts_a_token_and_refuses_a_wrong_one(api_campaign, alice):
    token = Token.objects.create(user=alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get(reverse("api:campaign-list"))
    assert response.status_code == 200
    assert [row["name"] for row in response.json()] == ["API campaign"]
    # Token requests carry no cookie to forge, so they need no CSRF token.
    assert client.post(reverse("api:campaign-claim", args=[api_campaign.pk])).status_code == 201

    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get(reverse("api:campaign-list"))
    # 403, not 401: session authentication comes first, and it sends no WWW-Authenticate challenge.
    assert response.status_code == 403
    assert response.json() == {"detail": "Invalid token."}


def test_it_refuses_a_session_post_without_a_csrf_token(api_campaign, alice):
    client = client_for(alice, enforce_csrf_checks=True)
    url = reverse("api:campaign-claim", args=[api_campaign.pk])
    response = client.post(url)
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not Assignment.objects.exists()

    client.get(reverse("login"))
    response = client.post(url, HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert response.status_code == 201


def test_it_shows_annotators_only_their_open_campaigns(api_campaign, alice, oscar):
    closed = campaign_create(
        name="Closed campaign", criterion_set=api_campaign.criterion_set, systems=SYSTEMS, annotators=[alice], topics=1
    )
    campaign_set_open(campaign=closed, is_open=False)
    client = client_for(alice)
    rows = client.get(reverse("api:campaign-list")).json()
    assert [row["name"] for row in rows] == ["API campaign"]
    assert rows[0]["mine"] == {"submitted": 0, "active_assignment": None, "active_reading": None}
    assert "reference_system" not in rows[0] and "annotators" not in rows[0]

    detail = client.get(reverse("api:campaign-detail", args=[api_campaign.pk]))
    assert detail.status_code == 200 and detail.json()["name"] == "API campaign"
    demo = Campaign.objects.get(name="Demo campaign")
    assert client.get(reverse("api:campaign-detail", args=[demo.pk])).status_code == 403
    assert client.get(reverse("api:campaign-detail", args=[closed.pk])).status_code == 403
    assert client.get(reverse("api:campaign-detail", args=[999999])).status_code == 404

    outsider = client_for(oscar)
    assert outsider.get(reverse("api:campaign-list")).json() == []
    assert outsider.get(reverse("api:campaign-detail", args=[api_campaign.pk])).status_code == 403


def test_it_lists_every_campaign_with_settings_and_counts_for_staff(api_campaign, alice, rachel):
    assignment_id = claim(client_for(alice), api_campaign)["id"]
    fill_every_criterion(client_for(alice), assignment_id)
    assert client_for(alice).post(reverse("api:assignment-submit", args=[assignment_id])).status_code == 200

    staff = client_for(rachel)
    rows = {row["name"]: row for row in staff.get(reverse("api:campaign-list")).json()}
    assert set(rows) == {"API campaign", "Demo campaign"}
    mine = rows["API campaign"]
    assert mine["reference_system"] == "wikipedia"
    assert mine["criterion_set"] == {"key": "wiki_writing", "version": 1}
    assert mine["annotators"] == ["alice", "bob"]
    assert (mine["overlap"], mine["allow_tie"], mine["is_open"]) == (2, False, True)
    assert mine["counts"] == {"pairs": 8, "needed": 16, "submitted": 1}

    detail = staff.get(reverse("api:campaign-detail", args=[api_campaign.pk])).json()
    progress = detail["progress"]
    assert (progress["needed"], progress["submitted"]) == (16, 1)
    assert len(progress["pairs"]) == 8
    assert {pair["system_a"] for pair in progress["pairs"]} == {"wikipedia"}
    assert {c["labels"] for c in progress["criteria"]} == {1}
    assert [row["username"] for row in progress["annotators"]] == ["alice"]
    assert progress["annotators"][0]["labels"] == 39


def test_it_counts_each_annotators_assignments_once(api_campaign, alice, rachel):
    assignment_id = claim(client_for(alice), api_campaign)["id"]
    fill_every_criterion(client_for(alice), assignment_id)
    client_for(alice).post(reverse("api:assignment-submit", args=[assignment_id]))
    progress = client_for(rachel).get(reverse("api:campaign-detail", args=[api_campaign.pk])).json()["progress"]
    assert progress["annotators"][0]["submitted"] == 1


def test_it_exports_the_labels_to_staff_only(api_campaign, alice, bob, rachel):
    url = reverse("api:campaign-labels", args=[api_campaign.pk])
    assert client_for(bob).get(url).status_code == 403  # an annotator of the campaign too (the rest: tests/test_access.py)

    client = client_for(alice)
    assignment_id = claim(client, api_campaign)["id"]
    fill_every_criterion(client, assignment_id, position="2")
    client.post(reverse("api:assignment-submit", args=[assignment_id]))

    response = client_for(rachel).get(url)
    assert response.status_code == 200
    rows = json.loads(b"".join(response.streaming_content))
    assert len(rows) == 39
    assignment = Assignment.objects.select_related("pair__article_a__system", "pair__article_b__system").get(pk=assignment_id)
    a, b = assignment.pair.article_a.system.key, assignment.pair.article_b.system.key
    left, right = (a, b) if assignment.a_first else (b, a)
    first = rows[0]
    assert set(first) == set(HUMAN_LABEL_HEADER)
    assert (first["campaign"], first["rater_kind"], first["rater"]) == ("API campaign", "human", "alice")
    assert first["started_at"].endswith("Z") and first["rationale"] == REASON
    assert {(row["left_system"], row["right_system"], row["winner_system"]) for row in rows} == {(left, right, right)}
    assert [row["criterion"] for row in rows][:2] == ["ww_cc_1", "ww_cc_2"]


# --- the annotator's flow -----------------------------------------------------------------


@pytest.mark.parametrize("a_first", [True, False])
def test_it_claims_saves_and_submits_by_position(api_campaign, alice, rachel, a_first):
    client = client_for(alice)
    response = client.post(reverse("api:campaign-claim", args=[api_campaign.pk]))
    assert response.status_code == 201
    claimed = response.json()
    assert (claimed["status"], claimed["campaign"]["name"]) == ("active", "API campaign")
    again = client.post(reverse("api:campaign-claim", args=[api_campaign.pk]))
    assert again.status_code == 200 and again.json()["id"] == claimed["id"]
    # The side is drawn at random on claim; fix it so both mappings are checked.
    Assignment.objects.filter(pk=claimed["id"]).update(a_first=a_first, order="ab" if a_first else "ba")
    assignment = Assignment.objects.select_related("pair__article_a", "pair__article_b").get(pk=claimed["id"])

    page = client.get(reverse("api:assignment-detail", args=[assignment.pk])).json()
    left, right = (assignment.pair.article_a, assignment.pair.article_b)
    if not a_first:
        left, right = right, left
    assert [column["position"] for column in page["articles"]] == ["1", "2"]
    assert page["articles"][0]["html"] == left.html.replace(' id="sec-', ' id="a1-sec-')
    assert page["articles"][1]["html"] == right.html.replace(' id="sec-', ' id="a2-sec-')
    assert page["topic"] == assignment.pair.topic.title
    assert page["progress"] == {"done": 0, "total": 39}
    assert page["overall"] is None
    assert set(page["criteria"][0]) == {"key", "category", "text", "position", "rationale", "saved_at"}
    assert page["criteria"][0]["category"] == "well_written"
    assert Assignment.objects.get(pk=assignment.pk).first_opened_at is not None

    response = client.put(label_url(assignment.pk, "ww_cc_1"), {"position": "1", "rationale": REASON}, format="json")
    assert response.status_code == 200
    row = response.json()
    assert (row["key"], row["position"], row["rationale"]) == ("ww_cc_1", "1", REASON)
    assert row["saved_at"]
    assert Label.objects.get(assignment=assignment, criterion__key="ww_cc_1").winner == ("a" if a_first else "b")

    # PATCH with only a rationale keeps the choice.
    response = client.patch(label_url(assignment.pk, "ww_cc_1"), {"rationale": "Shorter and clearer sentences."}, format="json")
    assert response.json()["position"] == "1"
    response = client.patch(label_url(assignment.pk, "ww_cc_2"), {"position": "2"}, format="json")
    assert response.json()["position"] == "2"
    assert Label.objects.get(assignment=assignment, criterion__key="ww_cc_2").winner == ("b" if a_first else "a")

    fill_every_criterion(client, assignment.pk)
    response = client.post(reverse("api:assignment-submit", args=[assignment.pk]))
    assert response.status_code == 200
    assert response.json()["status"] == "submitted"
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    expected = "a" if a_first else "b"
    assert set(Label.objects.filter(assignment=assignment).values_list("winner", flat=True)) == {expected}

    mine = client.get(reverse("api:assignment-list")).json()
    assert mine["count"] == 1
    assert mine["results"][0]["progress"] == {"done": 39, "total": 39}


def test_it_refuses_to_submit_and_lists_what_is_missing(api_campaign, alice):
    client = client_for(alice)
    assignment_id = claim(client, api_campaign)["id"]
    client.put(label_url(assignment_id, "ww_cc_1"), {"position": "1", "rationale": "Short"}, format="json")
    response = client.post(reverse("api:assignment-submit", args=[assignment_id]))
    assert response.status_code == 400
    missing = response.json()["missing"]
    assert missing == assignment_missing(assignment=Assignment.objects.get(pk=assignment_id))
    assert missing[0] == "ww_cc_1: write a rationale of at least 10 characters (5 so far)"
    assert "ww_cc_2: choose a winner" in missing
    assert len(missing) == 1 + 38 * 2
    assert Assignment.objects.get(pk=assignment_id).status == Assignment.Status.ACTIVE


def test_it_asks_for_the_overall_preference_when_the_campaign_does(demo_campaign, alice):
    asks = campaign_create(
        name="Overall campaign", criterion_set=demo_campaign.criterion_set, systems=SYSTEMS, annotators=[alice], ask_overall=True
    )
    client = client_for(alice)
    assignment_id = claim(client, asks)["id"]
    fill_every_criterion(client, assignment_id)
    response = client.post(reverse("api:assignment-submit", args=[assignment_id]))
    assert response.json() == {"missing": ["overall: choose which article is better overall"]}

    url = reverse("api:overall-save", args=[assignment_id])
    assert client.put(url, {"overall": "left"}, format="json").status_code == 400
    assert client.put(url, {"overall": "2"}, format="json").json() == {"overall": "2"}
    assert client.get(reverse("api:assignment-detail", args=[assignment_id])).json()["overall"] == "2"
    assert client.post(reverse("api:assignment-submit", args=[assignment_id])).status_code == 200


def test_it_explains_refused_labels(api_campaign, alice):
    client = client_for(alice)
    assignment_id = claim(client, api_campaign)["id"]
    url = label_url(assignment_id, "ww_cc_1")
    response = client.put(url, {"position": "left"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"errors": ["Choose Article 1, Article 2."]}
    response = client.put(url, {"position": "tie"}, format="json")
    assert response.json() == {"errors": ["This campaign does not allow ties: choose Article 1 or Article 2."]}
    response = client.put(url, {"position": None}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0].startswith("position: ")
    assert client.put(label_url(assignment_id, "no_such_criterion"), {"position": "1"}, format="json").status_code == 404
    assert not Label.objects.exists()


def test_it_takes_cannot_judge_and_a_set_where_the_campaign_allows_them(api_campaign, alice):
    client = client_for(alice)
    assignment_id = claim(client, api_campaign)["id"]
    url = label_url(assignment_id, "ww_cc_1")
    refused = client.put(url, {"position": "1", "acceptable": ["2"]}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"errors": ["This campaign does not ask for every acceptable verdict."]}
    Campaign.objects.filter(pk=api_campaign.pk).update(accept_sets=True, allow_cannot_judge=True)
    response = client.put(url, {"position": "1", "rationale": "Clearer lead.", "acceptable": ["2"]}, format="json")
    assert response.status_code == 200, response.json()
    assert Label.objects.get().acceptable == [side_of("2", Assignment.objects.get(pk=assignment_id).a_first)]
    response = client.put(url, {"position": "cannot_judge"}, format="json")
    assert response.status_code == 200
    assert response.json()["position"] == "cannot_judge"
    label = Label.objects.get()
    assert (label.winner, label.cannot_judge, label.acceptable) == ("", True, [])


def test_it_refuses_changes_once_the_campaign_is_closed(api_campaign, alice):
    client = client_for(alice)
    assignment_id = claim(client, api_campaign)["id"]
    campaign_set_open(campaign=api_campaign, is_open=False)
    response = client.post(reverse("api:assignment-submit", args=[assignment_id]))
    assert response.status_code == 400
    assert response.json() == {"errors": ["This campaign is closed; its answers can no longer be changed."]}
    assert client.put(label_url(assignment_id, "ww_cc_1"), {"position": "1"}, format="json").status_code == 400


def test_it_answers_204_when_nothing_is_left_and_403_to_others(demo_campaign, alice, bob, rachel, oscar):
    single = campaign_create(
        name="One pair", criterion_set=demo_campaign.criterion_set, systems=["wikipedia", "atlas_agent"], topics=1, annotators=[alice, bob]
    )
    assert client_for(alice).post(reverse("api:campaign-claim", args=[single.pk])).status_code == 201
    assert client_for(bob).post(reverse("api:campaign-claim", args=[single.pk])).status_code == 204
    assert client_for(rachel).post(reverse("api:campaign-claim", args=[single.pk])).status_code == 403
    assert client_for(oscar).post(reverse("api:campaign-claim", args=[single.pk])).status_code == 403
    campaign_set_open(campaign=single, is_open=False)
    assert client_for(oscar).post(reverse("api:campaign-claim", args=[single.pk])).status_code == 403
    closed = client_for(alice).post(reverse("api:campaign-claim", args=[single.pk]))
    assert closed.status_code == 409 and closed.json()["detail"].startswith("This campaign is closed")

    # Staff who are listed annotators may work like anyone else.
    with_staff = campaign_create(name="Staff pair", criterion_set=demo_campaign.criterion_set, systems=SYSTEMS, annotators=[rachel])
    assert client_for(rachel).post(reverse("api:campaign-claim", args=[with_staff.pk])).status_code == 201


def test_it_keeps_each_annotators_work_to_themselves(api_campaign, alice, bob, rachel):
    alices = claim(client_for(alice), api_campaign)["id"]
    bobs = claim(client_for(bob), api_campaign)["id"]
    for user in (bob, rachel):
        client = client_for(user)
        assert client.get(reverse("api:assignment-detail", args=[alices])).status_code == 403
        assert client.put(label_url(alices, "ww_cc_1"), {"position": "1"}, format="json").status_code == 403
        assert client.patch(reverse("api:overall-save", args=[alices]), {"overall": "1"}, format="json").status_code == 403
        assert client.post(reverse("api:assignment-submit", args=[alices])).status_code == 403
    assert not Label.objects.exists()
    assert [row["id"] for row in client_for(alice).get(reverse("api:assignment-list")).json()["results"]] == [alices]
    assert [row["id"] for row in client_for(bob).get(reverse("api:assignment-list")).json()["results"]] == [bobs]
    assert client_for(rachel).get(reverse("api:assignment-list")).json()["results"] == []
    assert Assignment.objects.get(pk=alices).first_opened_at is None


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_it_never_tells_annotators_which_system_wrote_what(api_campaign, alice):
    client = client_for(alice)
    bodies = [client.get(reverse("api:campaign-list")), client.get(reverse("api:campaign-detail", args=[api_campaign.pk]))]
    claimed = client.post(reverse("api:campaign-claim", args=[api_campaign.pk]))
    assignment_id = claimed.json()["id"]
    bodies += [claimed, client.get(reverse("api:assignment-detail", args=[assignment_id]))]
    bodies.append(client.put(label_url(assignment_id, "ww_cc_1"), {"position": "1", "rationale": REASON}, format="json"))
    bodies.append(client.post(reverse("api:assignment-submit", args=[assignment_id])))
    fill_every_criterion(client, assignment_id)
    bodies += [client.post(reverse("api:assignment-submit", args=[assignment_id])), client.get(reverse("api:assignment-list"))]
    bodies += [client.get(reverse("api:assignment-detail", args=[assignment_id]))]

    # The rubric fixture never names a system in a criterion (only in its description, which is not sent).
    forbidden = set(SYSTEMS) | set(System.objects.values_list("name", flat=True))
    assert forbidden >= {"Wikipedia", "Atlas Agent", "Quill Researcher"}
    for response in bodies:
        assert response.status_code in (200, 201, 400), response.content
        text = response.content.decode().lower()
        for word in forbidden:
            assert word.lower() not in text, (response.request["PATH_INFO"], word)
        keys = _keys(response.json())
        # `order` and slots name the sides (slot a is the reference): a viewer sees positions only.
        sides = {"a_first", "order", "slot", "slots", "article_a", "article_b"}
        assert not keys & {"system", "system_a", "system_b", "source", "reference_system", *sides}
        assert not [key for key in keys if "system" in key or "article_id" in key or key == "url"]
    page = bodies[-1].json()
    assert [set(column) for column in page["articles"]] == [{"position", "html", "toc"}] * 2
    assert _ids(page) == {assignment_id, api_campaign.pk}


def _ids(value) -> set[int]:
    """Every value of an "id" key: only the assignment's and the campaign's, never an article's."""
    if isinstance(value, dict):
        return ({value["id"]} if "id" in value else set()) | {i for item in value.values() for i in _ids(item)}
    if isinstance(value, list):
        return {i for item in value for i in _ids(item)}
    return set()


def _tiny_rubric() -> CriterionSet:
    criteria = [CriterionRecord(key=f"t_{i}", text=f"Tiny criterion {i}.") for i in range(3)]
    rubric = RubricRecord(key="tiny", name="Tiny", description="", categories=[CategoryRecord("all", "All", "", criteria)])
    return criterion_set_import(rubric=rubric)[0]


def test_it_reads_an_assignment_in_constant_queries(demo_campaign, alice, django_assert_max_num_queries):
    tiny = campaign_create(name="Tiny campaign", criterion_set=_tiny_rubric(), systems=SYSTEMS, annotators=[alice])
    big = campaign_create(name="Big campaign", criterion_set=demo_campaign.criterion_set, systems=SYSTEMS, annotators=[alice])
    client = client_for(alice)
    for campaign, total in [(tiny, 3), (big, 39)]:
        assignment_id = claim(client, campaign)["id"]
        url = reverse("api:assignment-detail", args=[assignment_id])
        # Session, user, assignment, first-open stamp, labels, criteria, spans.
        with django_assert_max_num_queries(7):
            first = client.get(url)
        assert first.json()["progress"] == {"done": 0, "total": total}
        fill_every_criterion(client, assignment_id)
        with django_assert_max_num_queries(6):
            again = client.get(url)
        assert again.json()["progress"] == {"done": total, "total": total}


@pytest.mark.django_db
def test_it_answers_a_browser_with_json_not_the_browsable_pages(client, alice, campaign):
    # DRF's browsable pages carry inline styles the Content-Security-Policy blocks (issue 35): JSON only outside DEBUG.
    client.force_login(alice)
    response = client.get("/api/campaigns/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert "style=" not in response.content.decode()
