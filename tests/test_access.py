"""Who may reach each URL: one walk over every URL of the architecture map (tests/architecture_map.py).

Each route is asked, with the right method, by an anonymous visitor, an annotator of the campaign
who owns the assignment (alice), an outsider (oscar) and staff (rachel); then with a method it
refuses (405), and with ids that name nothing. The expected answers are written out below by hand,
one row per route, and `test_the_table_has_a_row_for_every_url` fails for a URL without a row, so
a new URL cannot go unguarded.

A cell is a status code, or LOGIN: a redirect to the login page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotate.models import Adjudication, ArticleStep, Criterion, Reading, ReadingAssignment, Span
from annotate.services.claims import assignment_claim_next
from annotate.services.items import readings_save
from judges.services import judge_create, judge_run_create
from tests.architecture_map import _patterns

pytestmark = pytest.mark.django_db

LOGIN = "login"
KINDS = ("anonymous", "annotator", "outsider", "staff")
MISSING_ID = 999_999_999


@dataclass(frozen=True)
class Route:
    method: str
    expected: tuple  # one cell per kind of user, in the order of KINDS
    wrong: str | None  # a method the route answers with 405 (asked by the last kind that gets in)
    missing: int | str | None = None  # the answer when every id of the URL names nothing (same user)
    data: dict = field(default_factory=dict)
    arguments: dict = field(default_factory=dict)  # URL arguments of this route only


# Shorthands for the most common rows.
def staff_page(missing: int | None = 404, *, method: str = "get", wrong: str = "post", ok: int = 200, data=None, arguments=None) -> Route:
    """A researchers' page: anonymous visitors log in first, annotators and outsiders are refused."""
    return Route(method, (LOGIN, 403, 403, ok), wrong, missing, data or {}, arguments or {})


def staff_api(missing: int | None = 404, *, method: str = "get", wrong: str = "post", ok: int = 200) -> Route:
    """A researchers' API route: everybody else is refused with 403 (DRF, session or token)."""
    return Route(method, (403, 403, 403, ok), wrong, missing)


def own_work(ok: int, *, method: str = "post", wrong: str = "get", data=None) -> Route:
    """A page of one assignment: only its annotator gets in; an unknown assignment is refused like somebody else's."""
    return Route(method, (LOGIN, ok, 403, 403), wrong, 403, data or {})


def own_work_api(ok: int, *, method: str, wrong: str, data=None) -> Route:
    return Route(method, (403, ok, 403, 403), wrong, 403, data or {})


RATIONALE = {"position": "1", "rationale": "Better sourced and clearer."}
ANSWER = {"value": "yes", "rationale": "It opens with a summary."}
READING = {"assignment_id": "@reading_id", "criterion_key": "@reading_criterion"}

ROUTES = {
    # Django's own pages and the OpenAPI schema: open to all.
    "/accounts/login/": Route("get", (200, 200, 200, 200), "delete"),
    "/accounts/logout/": Route("post", (302, 302, 302, 302), "get"),
    # A valid set-password link (bob's) goes on to its form, whatever the method: Django's view checks the link first.
    "/accounts/reset/<uidb64>/<token>/": Route("get", (302, 302, 302, 302), None),
    "/accounts/reset/done/": Route("get", (200, 200, 200, 200), "delete"),
    "/api/schema/": Route("get", (200, 200, 200, 200), "post"),
    "/api/schema/docs/": Route("get", (200, 200, 200, 200), "post"),
    # The JSON API: anonymous callers are refused with 403, never 401 (session authentication comes first).
    "/api/campaigns/<id:campaign_id>/calibration/": staff_api(),
    "/api/campaigns/": Route("get", (403, 200, 200, 200), "post"),
    "/api/campaigns/<id:campaign_id>/": Route("get", (403, 200, 403, 200), "delete", 404),
    "/api/campaigns/<id:campaign_id>/claim/": Route("post", (403, 200, 403, 403), "get", 404),
    "/api/assignments/": Route("get", (403, 200, 200, 200), "post"),
    "/api/assignments/<id:assignment_id>/": own_work_api(200, method="get", wrong="post"),
    "/api/assignments/<id:assignment_id>/labels/<str:criterion_key>/": own_work_api(200, method="put", wrong="get", data=RATIONALE),
    "/api/assignments/<id:assignment_id>/overall/": own_work_api(400, method="put", wrong="get", data={"overall": "1"}),
    "/api/assignments/<id:assignment_id>/submit/": own_work_api(400, method="post", wrong="get"),
    "/api/campaigns/<id:campaign_id>/labels/": staff_api(),
    "/api/campaigns/<id:campaign_id>/plan/": staff_api(),
    # Judges: researchers only.
    "/judges/": staff_page(None, wrong="delete"),
    "/judges/<id:judge_id>/test/": staff_page(method="post", wrong="get", ok=302),
    "/judges/campaign/<id:campaign_id>/": staff_page(),
    "/judges/campaign/<id:campaign_id>/start/": staff_page(method="post", wrong="get", ok=422),
    "/judges/runs/<id:run_id>/stop/": staff_page(method="post", wrong="get", ok=302),
    "/judges/runs/<id:run_id>/resume/": staff_page(method="post", wrong="get", ok=302),
    # Calibration: researchers only.
    "/calibration/campaign/<id:campaign_id>/": staff_page(),
    "/calibration/campaign/<id:campaign_id>/report.<str:fmt>": staff_page(),
    # Without htmx, the job's status sends the browser back to the dashboard.
    "/calibration/campaign/<id:campaign_id>/report-status/": staff_page(ok=302, wrong="delete"),
    "/calibration/campaign/<id:campaign_id>/plan/": staff_page(),
    "/calibration/campaign/<id:campaign_id>/table/<slug:key>/": staff_page(),
    "/calibration/campaign/<id:campaign_id>/cascade/": staff_page(),
    # 400: the world's judge has no confidences, so no cascade can be calibrated to send from.
    "/calibration/campaign/<id:campaign_id>/cascade/send/": staff_page(method="post", wrong="get", ok=400, data={"name": "abstained"}),
    "/calibration/campaign/<id:campaign_id>/attention/": staff_page(),
    "/calibration/campaign/<id:campaign_id>/gold/": staff_page(),
    # GET shows the frozen plan (or that none is), POST freezes it (tests/test_study_plan.py).
    "/calibration/campaign/<id:campaign_id>/study-plan/": staff_page(wrong="delete"),
    # 400: alice has claimed a pair, but bob (the name sent) has no work in the campaign yet.
    "/calibration/campaign/<id:campaign_id>/gold/lift/": staff_page(method="post", wrong="get", ok=400, data={"annotator": "bob"}),
    "/calibration/campaign/<id:campaign_id>/gold/accept-separable/": staff_page(method="post", wrong="get", ok=302, data={"accept": "on"}),
    "/calibration/campaign/<id:campaign_id>/labels.<str:fmt>": staff_page(arguments={"fmt": "csv"}),
    "/calibration/campaign/<id:campaign_id>/labels/upload/": staff_page(wrong="delete"),
    # Annotate: the home page for anyone signed in, the catalogue and campaigns for researchers.
    "/": Route("get", (LOGIN, 200, 200, 302), "post"),  # staff go on to the campaigns
    "/topics/": staff_page(None),
    "/topics/<id:topic_id>/": staff_page(),
    "/topics/<id:topic_id>/removed/<str:system_key>/": staff_page(),
    # Uploads: 400 when the form comes without a file (tests/test_uploads.py sends files).
    "/uploads/": staff_page(None),
    "/uploads/benchmark/": staff_page(None, method="post", wrong="get", ok=400),
    "/uploads/rubric/": staff_page(None, method="post", wrong="get", ok=400),
    "/campaigns/": staff_page(None),
    "/campaigns/new/": staff_page(None, wrong="delete"),
    "/campaigns/<id:campaign_id>/": staff_page(),
    # POST: 400, the access walk sends no values (tests/test_campaign_settings.py sends them).
    "/campaigns/<id:campaign_id>/settings/": staff_page(wrong="delete"),
    "/campaigns/<id:campaign_id>/toggle/": staff_page(method="post", wrong="get", ok=302),
    "/campaigns/<id:campaign_id>/pairs/<id:pair_id>/void/": staff_page(method="post", wrong="get", ok=302),
    # 409: alice has claimed a pair, so what annotators see can no longer change.
    "/campaigns/<id:campaign_id>/emphasis/": staff_page(method="post", wrong="get", ok=409, data={"neutral_emphasis": "1"}),
    "/campaigns/<id:campaign_id>/epsilon/": staff_page(method="post", wrong="get", ok=302, data={"epsilon": "0.15", "reason": "skilled"}),
    "/campaigns/<id:campaign_id>/next/": Route("post", (LOGIN, 302, 403, 403), "get", 404),
    "/campaigns/<id:campaign_id>/members/": staff_page(),
    "/campaigns/<id:campaign_id>/members/add/": staff_page(method="post", wrong="get", ok=422),
    "/campaigns/<id:campaign_id>/members/<id:user_id>/remove/": staff_page(method="post", wrong="get"),  # asks to confirm
    "/campaigns/<id:campaign_id>/blindness/": staff_page(),
    # Adjudication: staff manage it; an item's page is its campaign's adjudicators' only (tests/test_adjudication.py
    # asks them), so none of these gets in.
    "/campaigns/<id:campaign_id>/adjudication/": staff_page(),
    "/campaigns/<id:campaign_id>/adjudication/open/": staff_page(method="post", wrong="get", ok=302),
    "/campaigns/<id:campaign_id>/adjudicators/": staff_page(method="post", wrong="get", ok=422),
    "/campaigns/<id:campaign_id>/adjudication/split/": staff_page(method="post", wrong="get", ok=302, data={"by_topic": "on"}),
    "/adjudicate/<id:adjudication_id>/": Route("get", (LOGIN, 403, 403, 403), None),
    "/accounts/new/": staff_page(None, wrong="delete"),
    # One assignment's pages: its annotator only.
    "/work/<id:assignment_id>/": own_work(200, method="get", wrong="post"),
    "/work/<id:assignment_id>/criteria/<str:criterion_key>/": own_work(302, data=RATIONALE),
    "/work/<id:assignment_id>/overall/": own_work(422, data={"overall": "1"}),
    "/work/<id:assignment_id>/submit/": own_work(422),
    "/work/<id:assignment_id>/spans/": own_work(422),
    "/work/<id:assignment_id>/flag/": own_work(422),
    # The guess question of a submitted pair: this campaign does not ask it, so its annotator gets 404 (test_guess_question has the rest).
    "/work/<id:assignment_id>/guess/": Route("get", (LOGIN, 404, 403, 403), "put", 403),
    "/work/<id:assignment_id>/spans/<id:span_id>/delete/": own_work(302),
    # A vote on a step: this campaign does not show steps, so its annotator is told so (test_campaign_steps has the rest).
    "/work/<id:assignment_id>/steps/<id:step_id>/vote/": own_work(422, data={"vote": "up"}),
    # The single-article page and its API: alice's reading (names starting with @ are the world's other ids).
    "/reading/<id:assignment_id>/": replace(own_work(200, method="get", wrong="post"), arguments=READING),
    "/reading/<id:assignment_id>/criteria/<str:criterion_key>/": replace(own_work(302, data=ANSWER), arguments=READING),
    "/reading/<id:assignment_id>/submit/": replace(own_work(422), arguments=READING),
    "/api/readings/<id:assignment_id>/": replace(own_work_api(200, method="get", wrong="post"), arguments=READING),
    "/api/readings/<id:assignment_id>/answers/<str:criterion_key>/": replace(
        own_work_api(200, method="put", wrong="get", data=ANSWER), arguments=READING
    ),
    "/api/readings/<id:assignment_id>/submit/": replace(own_work_api(400, method="post", wrong="get"), arguments=READING),
}


def the_map() -> list[str]:
    """Every URL of the architecture map, as docs/architecture.md spells it (the admin's aside)."""
    return [f"/{route}" for route, _ in _patterns(get_resolver().url_patterns) if not route.startswith("admin/")]


@pytest.fixture
def world(campaign, alice, oscar, rachel, bob):
    """One campaign (alice and bob annotate it), alice's assignment with a span, a judge and its run."""
    assignment = assignment_claim_next(campaign=campaign, user=alice)
    span = Span.objects.create(
        assignment=assignment, article=assignment.pair.article_a, start=0, end=1, quote="x", polarity=1, created_at=assignment.claimed_at
    )
    judge, _ = judge_create(name="longer", kind="length")
    run = judge_run_create(campaign=campaign, judge=judge)
    criterion = campaign.criterion_set.criteria.order_by("order").first()
    item = Adjudication.objects.create(
        campaign=campaign,
        pair=assignment.pair,
        criterion=criterion,
        kind="split",
        a_first=True,
        order="ab",
        opened_by=rachel,
        opened_at=span.created_at,
    )
    # A one-article criterion in the rubric, and alice's reading of the pair's first article.
    checklist = Criterion.objects.create(
        criterion_set=criterion.criterion_set,
        category=criterion.category,
        key="ck_access",
        text="Does it open with a summary?",
        order=999,
        response={"type": "checklist", "allow_na": False},
    )
    (reading,) = readings_save([Reading(campaign=campaign, topic=assignment.pair.topic, article_a=assignment.pair.article_a)])
    mine = ReadingAssignment.objects.create(
        pair=reading, annotator=alice, a_first=True, order="a", claimed_at=span.created_at, last_activity_at=span.created_at
    )
    return {
        "users": {"anonymous": None, "annotator": alice, "outsider": oscar, "staff": rachel},
        "arguments": {
            "campaign_id": campaign.pk,
            "assignment_id": assignment.pk,
            "pair_id": assignment.pair_id,
            "criterion_key": criterion.key,
            "topic_id": assignment.pair.topic_id,
            "system_key": "atlas_agent",
            "judge_id": judge.pk,
            "run_id": run.pk,
            "user_id": bob.pk,
            "span_id": span.pk,
            "step_id": ArticleStep.objects.create(
                article=assignment.pair.article_a, order=0, kind="plan", raw_content="Plan.", content="Plan.", html="<p>Plan.</p>"
            ).pk,
            "adjudication_id": item.pk,
            "reading_id": mine.pk,
            "reading_criterion": checklist.key,
            "fmt": "json",
            "key": "judges",
            # bob's: logging alice in would change her last login, which her link's token hashes.
            "uidb64": urlsafe_base64_encode(force_bytes(bob.pk)),
            "token": default_token_generator.make_token(bob),
        },
    }


def url_of(route: str, arguments: dict) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(arguments[m.group(1)]), route)


def ask(route: str, user, method: str, arguments: dict, data: dict):
    client = Client()
    if user is not None:
        client.force_login(user)
    url = url_of(route, arguments)
    if method in ("put", "patch"):
        return getattr(client, method)(url, json.dumps(data), content_type="application/json")
    return getattr(client, method)(url, data)


def check(response, expected):
    if expected == LOGIN:
        assert response.status_code == 302 and response.url.startswith(reverse("login")), (response.status_code, response.get("Location"))
    else:
        assert response.status_code == expected, (response.status_code, response.content[:300])


CASES = [(route, kind) for route in ROUTES for kind in (*KINDS, "wrong method", "ids that name nothing")]


def _applies(route: str, kind: str) -> bool:
    row = ROUTES[route]
    if kind == "wrong method":
        return row.wrong is not None
    if kind == "ids that name nothing":
        return row.missing is not None
    return True


@pytest.mark.parametrize(("route", "kind"), [case for case in CASES if _applies(*case)], ids=lambda value: value)
def test_it_answers_every_url_as_the_table_says(route, kind, world):
    row = ROUTES[route]
    given = {name: world["arguments"][value[1:]] if str(value).startswith("@") else value for name, value in row.arguments.items()}
    users, arguments = world["users"], {**world["arguments"], **given}
    # The 405 and the missing ids are asked by the last kind of user the route lets in.
    allowed = ([k for k, cell in zip(KINDS, row.expected) if cell not in (LOGIN, 403)] or [None])[-1]
    if kind in KINDS:
        check(ask(route, users[kind], row.method, arguments, row.data), row.expected[KINDS.index(kind)])
    elif kind == "wrong method":
        check(ask(route, users[allowed], row.wrong, arguments, row.data), 405)
    else:
        nothing = {name: (MISSING_ID if name.endswith("_id") else value) for name, value in arguments.items()}
        check(ask(route, users[allowed], row.method, nothing, row.data), row.missing)


def test_the_table_has_a_row_for_every_url():
    assert sorted(ROUTES) == sorted(the_map())
