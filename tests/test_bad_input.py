"""No 500 from any input: NUL, lone surrogates, undecodable bytes, absurd nesting, huge ids, bad JSON.

Each is a 4xx with a message on every path (htmx, a form posted without
JavaScript, the JSON API), and a refused save leaves the stored label as it was.
PostgreSQL is where most of these used to fail (it stores no NUL and checks
integer ranges), so run this file on both databases.
"""

import json
from urllib.parse import urlencode

import pytest
from django.urls import Resolver404, resolve, reverse
from rest_framework.test import APIClient

from annotate.models import Campaign, Criterion, Label, LabelChange, Span, System
from annotate.services.answers import label_save
from annotate.services.claims import assignment_claim_next
from common.storable import MAX_JSON_DEPTH, first_unstorable, form_problem, json_problem, text_problem

KEY = "ww_cc_1"
GOOD = "The first article is clearer."
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def work(campaign, alice):
    """Alice's assignment with one saved answer, so that a refused save has something to leave alone."""
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    criterion = Criterion.objects.get(criterion_set=campaign.criterion_set, key=KEY)
    label_save(assignment=assignment, criterion=criterion, user=alice, position="1", rationale=GOOD)
    return assignment


@pytest.fixture
def api(alice):
    client = APIClient()
    client.force_login(alice)
    return client


def save_url(work) -> str:
    return reverse("label-save", args=[work.pk, KEY])


def api_url(work) -> str:
    return reverse("api:label-save", args=[work.pk, KEY])


def assert_unchanged(work) -> None:
    label = Label.objects.get(assignment=work, criterion__key=KEY)
    assert label.rationale == GOOD
    assert LabelChange.objects.filter(assignment=work, field="rationale").count() == 1


# --- the pure checks ------------------------------------------------------------------


def test_it_names_what_a_database_cannot_store():
    assert text_problem("plain text, café, 日本") is None
    assert "NUL" in text_problem("a\x00b")
    assert "U+D800" in text_problem("a\ud800b")
    assert form_problem(b"position=1&rationale=caf%C3%A9+au+lait") is None
    assert form_problem(b"position=1&rationale=a%00b")[0] == "rationale"
    assert "not valid UTF-8" in form_problem(b"rationale=a%FFb")[1]
    assert "not valid UTF-8" in form_problem(b"rationale=a%ED%A0%80b")[1]  # a surrogate spelled in UTF-8 bytes


def test_it_finds_the_first_unstorable_character_in_any_text():
    for text, index in [
        ("plain ascii", None),
        ("café 日本 \U0001f600", None),
        ("ab\x00", 2),
        ("é\udcff x", 1),  # a lone surrogate in non-ASCII text
        ("\udfff", 0),
        ("日本\ud800\x00", 2),  # the first of both kinds
        ("日\x00本\ud800", 1),
    ]:
        assert first_unstorable(text) == index, text


def test_it_bounds_json_nesting_without_recursing():
    assert json_problem(json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)) is None
    assert "deeper than" in json_problem(json.loads("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)))
    deep: list = []
    for _ in range(100_000):  # far past Python's recursion limit
        deep = [deep]
    assert "deeper than" in json_problem(deep)
    assert json_problem(deep, max_depth=None) is None
    assert json_problem({"a": [{"b\x00": 1}]}).startswith("a[0].b\\x00 contains a NUL")


# --- NUL in a rationale -----------------------------------------------------------------


def test_it_refuses_a_nul_saved_by_htmx(client, alice, work):
    client.force_login(alice)
    body = urlencode({"position": "2", "rationale": "bad\x00text"})
    response = client.post(save_url(work), body, content_type=FORM, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert "The field 'rationale' contains a NUL character (U+0000)" in response.content.decode()
    assert_unchanged(work)
    assert LabelChange.objects.filter(assignment=work, field="winner").count() == 1  # nor the choice sent with it


@pytest.mark.parametrize("encoding", ["urlencoded", "multipart"])
def test_it_refuses_a_nul_saved_without_javascript(client, alice, work, encoding):
    client.force_login(alice)
    data = {"position": "1", "rationale": "bad\x00text"}
    if encoding == "urlencoded":
        response = client.post(save_url(work), urlencode(data), content_type=FORM)
    else:
        response = client.post(save_url(work), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "<h1>Not saved</h1>" in html
    assert "The field &#x27;rationale&#x27; contains a NUL character (U+0000)" in html
    assert "Back button" in html
    assert_unchanged(work)


def test_it_refuses_a_nul_put_to_the_api(api, work):
    response = api.put(api_url(work), {"position": "1", "rationale": "bad\x00text"}, format="json")
    assert response.status_code == 400
    assert "rationale contains a NUL character (U+0000)" in response.json()["detail"]
    assert_unchanged(work)


def test_it_refuses_a_nul_in_an_api_form_body(api, work):
    response = api.put(api_url(work), urlencode({"rationale": "bad\x00text"}), content_type=FORM)
    assert response.status_code == 400
    assert "The field 'rationale' contains a NUL character" in response.json()["detail"]
    assert_unchanged(work)


# --- lone surrogates and undecodable bytes ------------------------------------------------


def test_it_refuses_a_lone_surrogate_escaped_in_api_json(api, work):
    response = api.put(api_url(work), '{"rationale": "bad \\ud800 text"}', content_type="application/json")
    assert response.status_code == 400
    assert "rationale contains a lone surrogate (U+D800)" in response.json()["detail"]
    assert_unchanged(work)


def test_it_refuses_a_lone_surrogate_in_a_key_of_api_json(api, work):
    response = api.put(api_url(work), '{"rationale": "fine", "\\udfff": 1}', content_type="application/json")
    assert response.status_code == 400
    assert "lone surrogate (U+DFFF)" in response.json()["detail"]
    assert_unchanged(work)


def test_it_refuses_bytes_that_are_not_utf8_in_api_json(api, work):
    response = api.put(api_url(work), b'{"rationale": "bad \xed\xa0\x80 text"}', content_type="application/json")
    assert response.status_code == 400
    assert "utf-8" in response.json()["detail"].lower()
    assert_unchanged(work)


@pytest.mark.parametrize("spelled", ["%ED%A0%80", "%FF"], ids=["surrogate", "latin-1"])
def test_it_refuses_undecodable_form_fields(client, alice, work, spelled):
    client.force_login(alice)
    body = f"position=1&rationale=bad+{spelled}+text"
    htmx = client.post(save_url(work), body, content_type=FORM, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 400
    assert "The field 'rationale' contains bytes that are not valid UTF-8" in htmx.content.decode()
    plain = client.post(save_url(work), body, content_type=FORM)
    assert plain.status_code == 400
    assert_unchanged(work)


def test_it_refuses_a_nul_in_the_query_string_and_the_path(client, api, rachel, work):
    client.force_login(rachel)
    dashboard = reverse("calibration-dashboard", args=[work.pair.campaign.pk])
    response = client.get(dashboard + "?criterion=a%00b")
    assert response.status_code == 400
    assert "The query parameter &#x27;criterion&#x27; contains a NUL character" in response.content.decode()
    assert client.get(dashboard + "?judge=%FF").status_code == 400
    assert client.get(dashboard + "?criterion=caf%C3%A9").status_code == 200

    listing = api.get(reverse("api:assignment-list") + "?page=%00")
    assert listing.status_code == 400 and "NUL" in listing.json()["detail"]
    # The test client percent-decodes the path as a WSGI server does.
    assert client.get(f"/work/{work.pk}/criteria/ww%00cc/").status_code == 400


# --- JSON -------------------------------------------------------------------------------


def test_it_refuses_json_nested_50000_deep(api, work):
    body = '{"rationale": ' + "[" * 50_000 + "]" * 50_000 + "}"
    response = api.put(api_url(work), body, content_type="application/json")
    assert response.status_code == 400
    assert "deeper than" in response.json()["detail"]
    assert_unchanged(work)


def test_it_refuses_json_nested_past_the_limit_that_python_still_parses(api, work):
    depth = 500
    response = api.put(api_url(work), '{"extra": ' + "[" * depth + "]" * depth + "}", content_type="application/json")
    assert response.status_code == 400
    assert f"nests deeper than {MAX_JSON_DEPTH} levels" in response.json()["detail"]


def test_it_accepts_json_nested_within_the_limit(api, work):
    body = {"rationale": "Nested extras are ignored.", "extra": json.loads("[" * 10 + "]" * 10)}
    response = api.put(api_url(work), body, format="json")
    assert response.status_code == 200
    assert Label.objects.get(assignment=work, criterion__key=KEY).rationale == "Nested extras are ignored."


@pytest.mark.parametrize("body", ['{"rationale": "unfinished', "{'rationale': 'single quotes'}", '{"rationale": NaN}'])
def test_it_refuses_bad_json(api, work, body):
    response = api.put(api_url(work), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] or response.json()["errors"]
    assert_unchanged(work)


# --- huge numbers -----------------------------------------------------------------------


HUGE = "99999999999999999999999"


def test_it_answers_404_for_huge_ids_in_urls(client, api, alice, rachel, work):
    campaign = work.pair.campaign
    client.force_login(alice)
    assert client.get(f"/work/{HUGE}/").status_code == 404
    assert client.post(f"/work/{HUGE}/criteria/{KEY}/", {"position": "1"}).status_code == 404
    assert client.post(f"/work/{work.pk}/spans/{HUGE}/delete/").status_code == 404
    assert client.post(f"/campaigns/{HUGE}/next/").status_code == 404
    assert api.get(f"/api/assignments/{10**30}/").status_code == 404
    assert api.put(f"/api/assignments/{10**30}/labels/{KEY}/", {"position": "1"}, format="json").status_code == 404
    assert api.post(f"/api/campaigns/{10**30}/claim/").status_code == 404
    # 18 digits pass the converter and reach the database, which finds nothing (not hers: 403, as for anybody else's).
    assert client.get(f"/work/{'9' * 18}/").status_code == 403
    assert api.get(f"/api/campaigns/{'9' * 18}/").status_code == 404
    client.force_login(rachel)
    for url in (
        f"/campaigns/{HUGE}/",
        f"/topics/{HUGE}/",
        f"/judges/campaign/{HUGE}/",
        f"/calibration/campaign/{HUGE}/",
        f"/api/campaigns/{HUGE}/calibration/",
    ):
        assert client.get(url).status_code == 404, url
    assert client.get(f"/campaigns/{campaign.pk}/").status_code == 200


def test_it_matches_no_url_for_an_id_of_19_digits():
    assert resolve(f"/work/{'9' * 18}/").kwargs == {"assignment_id": 10**18 - 1}
    for url in (
        f"/work/{'1' * 19}/",
        f"/api/assignments/{'1' * 19}/",
        f"/calibration/campaign/{'1' * 19}/",
        f"/judges/campaign/{'1' * 19}/",
    ):
        with pytest.raises(Resolver404):
            resolve(url)


@pytest.mark.parametrize("position", [10**30, 1e300, -(10**30)])
def test_it_refuses_a_huge_number_in_an_api_body(api, work, position):
    response = api.put(api_url(work), {"position": position, "rationale": "A number instead of a side."}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]
    assert_unchanged(work)


def test_it_refuses_a_number_too_long_to_parse(api, work):
    response = api.put(api_url(work), '{"position": ' + "9" * 5000 + "}", content_type="application/json")
    assert response.status_code == 400
    assert_unchanged(work)


def test_it_refuses_huge_span_offsets(client, alice, work):
    client.force_login(alice)
    data = {"position": "1", "start": HUGE, "end": HUGE + "9", "quote": "x", "polarity": "1"}
    response = client.post(reverse("span-add", args=[work.pk]), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert not Span.objects.exists()


def test_it_refuses_a_huge_number_in_a_staff_form(client, rachel, catalogue, alice):
    """Whatever the form's own bounds, the database's range never turns into a 500."""
    client.force_login(rachel)
    systems = System.objects.filter(key__in=["wikipedia", "quill_researcher"])
    response = client.post(
        reverse("campaign-new"),
        {
            "name": "Forever",
            "criterion_set": catalogue.pk,
            "systems": [s.pk for s in systems],
            "overlap": "1",
            "pair_mode": "reference",
            "rationale_min_length": "10",
            "annotators": [alice.pk],
            "claim_timeout_minutes": str(10**30),
        },
    )
    assert 400 <= response.status_code < 500
    assert not Campaign.objects.filter(name="Forever").exists()
