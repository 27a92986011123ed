import re

import pytest
from django.test import Client
from django.urls import reverse

from annotate.answers import shorten
from annotate.models import Article, Assignment, Criterion, Label, LabelChange, System
from annotate.services.answers import label_save
from annotate.services.campaigns import campaign_create
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(campaign, alice):
    return assignment_claim_next(campaign=campaign, user=alice)


def page(client, assignment):
    return client.get(reverse("assignment", args=[assignment.pk]))


def leaks(html: str) -> list[str]:
    """Everything in an annotator-facing response that could name a source."""
    found = []
    for system in System.objects.all():
        for word in {system.key, system.name}:
            if re.search(rf"\b{re.escape(word)}\b", html):
                found.append(word)
    for article in Article.objects.all():
        if article.source and article.source in html:
            found.append(article.source)
    for hint in ("http://", "https://", "www.", "example.org", 'href="/topics'):
        if hint in html:
            found.append(hint)
    return found


def test_it_shows_no_trace_of_which_system_wrote_which(client, alice, work):
    client.force_login(alice)
    response = page(client, work)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="column-label">Article 1<') == 1
    assert html.count('class="column-label">Article 2<') == 1
    assert leaks(html) == []


def test_it_keeps_every_annotator_facing_response_blind(client, alice, work, campaign):
    from annotate.rendering import plain_text

    client.force_login(alice)
    criterion = campaign.criterion_set.criteria.first()
    left = work.pair.article_a if work.a_first else work.pair.article_b
    quote = plain_text(left.html)[:12]
    label_url = reverse("label-save", args=[work.pk, criterion.key])
    # Successes and refusals alike: a refusal page or fragment must not leak either.
    responses = [
        (200, client.get(reverse("home"))),
        (200, client.post(label_url, {"position": "1", "rationale": "clearer prose"}, HTTP_HX_REQUEST="true")),
        (422, client.post(label_url, {"position": "tie"}, HTTP_HX_REQUEST="true")),  # a strict campaign: no ties
        (422, client.post(reverse("submit", args=[work.pk]))),  # 38 criteria still unanswered
        (
            200,
            client.post(
                reverse("span-add", args=[work.pk]),
                {"position": "1", "start": "0", "end": "12", "quote": quote, "polarity": "1"},
                HTTP_HX_REQUEST="true",
            ),
        ),
        (
            422,
            client.post(
                reverse("span-add", args=[work.pk]),
                {"position": "1", "start": "0", "end": "3", "quote": "zzz", "polarity": "1"},
                HTTP_HX_REQUEST="true",
            ),
        ),
        (200, page(client, work)),
    ]
    assert [response.status_code for _, response in responses] == [status for status, _ in responses]
    assert work.spans.get().quote == quote
    assert 'class="save-status saved"' in responses[1][1].content.decode()
    assert "does not allow ties" in responses[2][1].content.decode()
    assert "Not submitted yet. 38 questions still need an answer:" in responses[3][1].content.decode()
    assert quote in responses[4][1].content.decode() and quote in responses[6][1].content.decode()
    for _, response in responses:
        assert leaks(response.content.decode()) == []


def test_it_puts_the_drawn_article_on_the_left(client, alice, work):
    client.force_login(alice)
    for a_first in (True, False):
        Assignment.objects.filter(pk=work.pk).update(a_first=a_first, order="ab" if a_first else "ba")
        html = page(client, work).content.decode()
        left = work.pair.article_a if a_first else work.pair.article_b
        first_words = left.html[left.html.index("<p>") + 3 :][:60]
        assert html.index(first_words) < html.index('class="column-label">Article 2<')


def test_it_forbids_other_peoples_work(client, bob, rachel, oscar, work):
    for user in (bob, rachel, oscar):
        client.force_login(user)
        assert page(client, work).status_code == 403
        criterion = Criterion.objects.filter(criterion_set=work.pair.campaign.criterion_set).first()
        assert client.post(reverse("label-save", args=[work.pk, criterion.key]), {"position": "1"}).status_code == 403
        assert client.post(reverse("submit", args=[work.pk])).status_code == 403
    assert not Label.objects.exists()


def test_it_saves_one_criterion_by_htmx_and_maps_the_position(client, alice, work):
    client.force_login(alice)
    for a_first, position, winner in [(True, "1", "a"), (True, "2", "b"), (False, "1", "b"), (False, "2", "a")]:
        Assignment.objects.filter(pk=work.pk).update(a_first=a_first, order="ab" if a_first else "ba")
        response = client.post(
            reverse("label-save", args=[work.pk, "ww_cc_1"]),
            {"position": position, "rationale": f"r {a_first} {position}"},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200
        assert b"Saved" in response.content
        assert b'id="progress" hx-swap-oob="true">1 / 39' in response.content
        assert Label.objects.get(criterion__key="ww_cc_1").winner == winner


def test_it_saves_without_javascript_and_comes_back_to_the_criterion(client, alice, work):
    client.force_login(alice)
    response = client.post(reverse("label-save", args=[work.pk, "ww_ls_2"]), {"position": "2", "rationale": "a longer lead"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/work/{work.pk}/#c-ww_ls_2")
    html = page(client, work).content.decode()
    form = html[html.index('id="c-ww_ls_2"') :]
    form = form[: form.index("</form>")]
    assert 'value="2" checked' in form
    assert "a longer lead</textarea>" in form


def test_it_refuses_a_tie_in_a_strict_campaign(client, alice, work):
    client.force_login(alice)
    response = client.post(reverse("label-save", args=[work.pk, "ww_cc_1"]), {"position": "tie"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert b"does not allow ties" in response.content
    assert not Label.objects.exists()


def test_it_enforces_csrf_on_htmx_posts(alice, work):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(reverse("label-save", args=[work.pk, "ww_cc_1"]), {"position": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    assert not Label.objects.exists()
    client.get(reverse("assignment", args=[work.pk]))
    token = client.cookies["csrftoken"].value
    ok = client.post(reverse("label-save", args=[work.pk, "ww_cc_1"]), {"position": "1"}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200


def test_it_refuses_submit_in_strict_mode_with_exactly_what_is_missing(client, alice, work):
    client.force_login(alice)
    for criterion in Criterion.objects.filter(criterion_set=work.pair.campaign.criterion_set).exclude(key__in=["n_3", "bc_2"]):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose")
    label_save(assignment=work, criterion=Criterion.objects.get(key="bc_2"), user=alice, position="2", rationale="no")
    response = client.post(reverse("submit", args=[work.pk]))
    assert response.status_code == 422
    html = response.content.decode()
    # One line per criterion, named by its text (shortened) and linking to it; no criterion ids.
    gaps = re.findall(r'<li><a href="#(c-[\w-]+)" data-jump="\1">“([^”]+)”</a>: ([^<]+)</li>', html)
    bc_2, n_3 = (Criterion.objects.get(criterion_set=work.pair.campaign.criterion_set, key=key) for key in ("bc_2", "n_3"))
    assert gaps == [
        ("c-bc_2", shorten(bc_2.text), "write a rationale of at least 5 characters (2 so far)"),
        ("c-n_3", shorten(n_3.text), "choose a winner; write a rationale of at least 5 characters (0 so far)"),
    ]
    assert "Not submitted yet. 2 questions still need an answer:" in html
    assert "bc_2:" not in html and "n_3:" not in html
    # ...and again next to each criterion.
    form = html[html.index('id="c-n_3"') :]
    form = form[: form.index("</form>")]
    assert (
        '<p class="criterion-problem" role="alert">Missing: choose a winner; write a rationale of at least 5 characters (0 so far).</p>'
        in form
    )
    assert html.count('class="criterion-problem"') == 2
    work.refresh_from_db()
    assert work.status == Assignment.Status.ACTIVE


def test_it_submits_then_opens_the_next_pair_and_keeps_an_audit_of_amendments(client, alice, work):
    client.force_login(alice)
    for criterion in Criterion.objects.filter(criterion_set=work.pair.campaign.criterion_set):
        label_save(assignment=work, criterion=criterion, user=alice, position="1", rationale="fine prose")
    response = client.post(reverse("submit", args=[work.pk]))
    assert response.status_code == 302
    following = Assignment.objects.get(annotator=alice, status=Assignment.Status.ACTIVE)
    assert response["Location"] == reverse("assignment", args=[following.pk])
    work.refresh_from_db()
    assert work.status == Assignment.Status.SUBMITTED and work.submitted_at

    client.post(reverse("label-save", args=[work.pk, "n_1"]), {"position": "2", "rationale": "second thoughts"}, HTTP_HX_REQUEST="true")
    changes = LabelChange.objects.filter(assignment=work, criterion__key="n_1").order_by("id")
    expected_old_winner = "a" if work.a_first else "b"
    assert [(c.field, c.old_value, c.new_value, c.changed_by) for c in changes][-2:] == [
        ("winner", expected_old_winner, "b" if work.a_first else "a", alice),
        ("rationale", "fine prose", "second thoughts", alice),
    ]
    assert LabelChange.objects.filter(assignment=work, field="status", new_value="submitted").exists()


def test_it_records_time_on_task(client, alice, work):
    client.force_login(alice)
    page(client, work)
    work.refresh_from_db()
    opened = work.first_opened_at
    assert opened is not None
    page(client, work)
    work.refresh_from_db()
    assert work.first_opened_at == opened
    client.post(reverse("label-save", args=[work.pk, "ww_cc_1"]), {"position": "1"}, HTTP_HX_REQUEST="true")
    label = Label.objects.get()
    assert label.saved_at >= opened
    assert LabelChange.objects.get().changed_at == label.saved_at


def test_it_stores_span_feedback_by_offsets_into_the_displayed_text(client, alice, work):
    from annotate.rendering import plain_text

    client.force_login(alice)
    left = work.pair.article_a if work.a_first else work.pair.article_b
    text = plain_text(left.html)
    start = text.index(" ") + 1
    quote = text[start : start + 20]
    response = client.post(
        reverse("span-add", args=[work.pk]),
        {"position": "1", "start": start, "end": start + 20, "quote": quote, "polarity": "-1", "comment": "vague"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    span = work.spans.get()
    assert (span.article, span.start, span.end, span.quote, span.polarity, span.comment) == (left, start, start + 20, quote, -1, "vague")
    assert "vague" in response.content.decode()
    wrong = client.post(
        reverse("span-add", args=[work.pk]),
        {"position": "2", "start": start, "end": start + 20, "quote": "not there", "polarity": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert wrong.status_code == 422
    assert work.spans.count() == 1


def test_it_renders_the_page_in_constant_queries(client, alice, catalogue, campaign, django_assert_num_queries):
    client.force_login(alice)
    big = assignment_claim_next(campaign=campaign, user=alice)
    for criterion in Criterion.objects.filter(criterion_set=catalogue)[:10]:
        label_save(assignment=big, criterion=criterion, user=alice, position="1", rationale="ok ok ok")
    page(client, big)  # the first open writes the time stamp
    # 39 criteria, 10 labels: session, user, assignment, labels, criteria, spans, the stored section map.
    with django_assert_num_queries(7):
        page(client, big)
    from annotate.services import criterion_set_import
    from annotate.sources import CategoryRecord, CriterionRecord, RubricRecord

    small_set, _ = criterion_set_import(
        rubric=RubricRecord(
            "tiny", "Tiny", "", [CategoryRecord("c", "C", "", [CriterionRecord("x1", "One"), CriterionRecord("x2", "Two")])]
        )
    )
    small = campaign_create(name="Small", criterion_set=small_set, systems=["wikipedia", "quill_researcher"], topics=1, annotators=[alice])
    assignment = assignment_claim_next(campaign=small, user=alice)
    page(client, assignment)
    with django_assert_num_queries(7):
        page(client, assignment)


def test_it_says_not_submitted_when_a_closed_campaign_refuses_the_submission(client, alice, work):
    from annotate.services.campaigns import campaign_set_open

    campaign_set_open(campaign=work.pair.campaign, is_open=False)
    client.force_login(alice)
    response = client.post(reverse("submit", args=[work.pk]))
    assert response.status_code == 422
    html = response.content.decode()
    assert "<p>Not submitted:</p>" in html and "This campaign is closed" in html
    assert 'class="criterion-problem"' not in html  # nothing to fill in: no list of missing answers
