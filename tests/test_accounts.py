"""Accounts for a lab: the service, the create_accounts command, the /accounts/new/ page, and the set-password links."""

from datetime import datetime, timedelta
from urllib.parse import urlparse

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotate.accounts import accounts_create, entries_from_text
from annotate.selectors import can_annotate
from tests.helpers import run

pytestmark = pytest.mark.django_db

BASE = "https://annotate.lab.example"
HTMX = {"HTTP_HX_REQUEST": "true"}


def usernames() -> set[str]:
    return set(User.objects.values_list("username", flat=True))


# --- the service ---------------------------------------------------------------------


def test_it_creates_accounts_from_usernames_and_addresses():
    accounts = accounts_create(entries=["dora", "carol@uni.edu", " ed , ed@Uni.EDU ", "José,jose@uni.edu"], base_url=BASE + "/")
    assert [(a.user.username, a.user.email, a.created) for a in accounts] == [
        ("dora", "", True),
        ("carol", "carol@uni.edu", True),
        ("ed", "ed@uni.edu", True),
        ("José", "jose@uni.edu", True),
    ]
    for account in accounts:
        account.user.refresh_from_db()
        assert not account.user.has_usable_password()
        assert not account.user.is_staff
        assert account.link.startswith(BASE + "/accounts/reset/") and account.link.endswith("/")


def test_it_derives_free_usernames_and_never_takes_one_asked_for(django_user_model):
    django_user_model.objects.create_user("carol")
    accounts = accounts_create(entries=["Carol.O'Neil@uni.edu", "carol@uni.edu", "carol@other.edu", "carol2"], base_url=BASE)
    assert [a.user.username for a in accounts] == ["carol.oneil", "carol3", "carol4", "carol2"]


def test_it_reads_entries_one_per_line_without_comments():
    assert entries_from_text("# the lab\n\n alice \r\nbob@uni.edu\n  # later\n") == ["alice", "bob@uni.edu"]


def test_it_writes_nothing_when_any_entry_is_bad(alice, django_user_model):
    django_user_model.objects.create_user("gus", email="gus@uni.edu")
    before = usernames()
    with pytest.raises(ValidationError) as raised:
        accounts_create(
            entries=[
                "fine",
                "bad name",
                "carol@",
                "a,b@uni.edu,c",
                "Alice",
                "gus,other@uni.edu",
                "hal,gus@uni.edu",
                "ivy",
                "ivy,ivy@uni.edu",
            ],
            base_url=BASE,
        )
    messages = raised.value.messages
    assert len(messages) == 7, messages
    assert messages[0].startswith("bad name: Enter a valid username.")
    assert messages[1] == "carol@: 'carol@' is not a valid e-mail address"
    assert messages[2].startswith("a,b@uni.edu,c: write one account per line")
    assert "an account 'alice' exists" in messages[3]
    assert "another e-mail address (gus@uni.edu)" in messages[4]
    assert "belongs to the account 'gus'" in messages[5]
    assert "'ivy' is also asked for by 'ivy'" in messages[6]
    assert usernames() == before


def test_it_needs_the_site_address_for_links():
    with pytest.raises(ValidationError) as raised:
        accounts_create(entries=["dora"])
    assert "PUBLIC_BASE_URL" in raised.value.messages[0]
    with pytest.raises(ValidationError):
        accounts_create(entries=["dora"], base_url="annotate.lab.example")
    assert not User.objects.filter(username="dora").exists()


def test_it_gives_existing_accounts_a_link_only_when_asked(alice):
    again = accounts_create(entries=["alice", "alice"], base_url=BASE)
    assert [(a.user, a.created, a.link) for a in again] == [(alice, False, "")]
    reissued = accounts_create(entries=["alice,alice@uni.edu"], base_url=BASE, reissue=True)
    assert reissued[0].link.startswith(BASE)
    alice.refresh_from_db()
    assert alice.email == "alice@uni.edu" and alice.check_password("alice-password")
    # Known by her address now, she is found by it.
    assert accounts_create(entries=["ALICE@uni.edu"], base_url=BASE)[0].user == alice


def test_it_lets_only_a_superuser_reissue_a_staff_link(rachel, django_user_model):
    with pytest.raises(ValidationError) as raised:
        accounts_create(entries=["rachel"], reissue=True, base_url=BASE, by=rachel)
    assert raised.value.messages == ["rachel: only a superuser may issue a link for a staff account"]
    root = django_user_model.objects.create_superuser("root", password="root-password")
    assert accounts_create(entries=["rachel"], reissue=True, base_url=BASE, by=root)[0].link
    assert accounts_create(entries=["rachel"], reissue=True, base_url=BASE)[0].link  # the command line


def test_it_adds_the_accounts_to_a_campaign(campaign, alice, oscar):
    accounts = accounts_create(entries=["dora", "oscar"], campaign=campaign, base_url=BASE)
    dora = accounts[0].user
    assert set(campaign.annotators.all()) == {alice, campaign.annotators.get(username="bob"), dora, oscar}
    assert can_annotate(campaign, dora) and can_annotate(campaign, oscar)


# --- the links -------------------------------------------------------------------------


def set_password(client, link: str, password: str):
    """Follows a link as its owner would: the token moves to the session, then the form."""
    response = client.get(urlparse(link).path)
    if response.status_code != 302:
        return response
    form_url = response["Location"]
    assert client.get(form_url).status_code == 200
    return client.post(form_url, {"new_password1": password, "new_password2": password})


def test_it_lets_a_link_set_the_password_once(client):
    link = accounts_create(entries=["dora"], base_url=BASE)[0].link
    done = set_password(client, link, "a long enough secret")
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert b"Password set" in client.get(done["Location"]).content
    logged_in = client.post(reverse("login"), {"username": "dora", "password": "a long enough secret"})
    assert logged_in.status_code == 302 and logged_in["Location"] == reverse("home")
    client.logout()

    again = set_password(client, link, "another long secret")
    assert again.status_code == 200 and b"This link no longer works" in again.content
    assert User.objects.get(username="dora").check_password("a long enough secret")


def test_it_refuses_a_link_past_the_timeout(client, monkeypatch):
    link = accounts_create(entries=["dora"], base_url=BASE)[0].link
    later = datetime.now() + timedelta(seconds=django_settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(default_token_generator, "_now", lambda: later)
    response = client.get(urlparse(link).path)
    assert response.status_code == 200 and b"This link no longer works" in response.content


def test_it_applies_the_password_rules_on_the_link(client):
    link = accounts_create(entries=["dora"], base_url=BASE)[0].link
    response = set_password(client, link, "short")
    assert response.status_code == 200 and b"too short" in response.content
    assert not User.objects.get(username="dora").has_usable_password()


# --- the command ---------------------------------------------------------------------


def test_it_prints_a_line_per_account(campaign):
    result = run("create_accounts", "dora", "carol@uni.edu", "Zoë", "--campaign", "Pilot", "--base-url", BASE)
    assert result.code == 0, result.err
    lines = [line.split("\t") for line in result.out.splitlines()]
    assert [line[:2] for line in lines] == [["dora", ""], ["carol", "carol@uni.edu"], ["Zoë", ""]]
    assert all(line[2].startswith(BASE + "/accounts/reset/") for line in lines)
    assert "3 account(s) created, 0 existing, all on campaign 'Pilot'" in result.err and "3 days" in result.err
    assert campaign.annotators.filter(username__in=["dora", "carol", "Zoë"]).count() == 3


def test_it_reads_a_file_and_reissues_on_request(tmp_path, alice, settings):
    settings.PUBLIC_BASE_URL = BASE
    accounts = tmp_path / "accounts.txt"
    accounts.write_text("# first cohort\nalice\n\ncarol@uni.edu\n", encoding="utf-8")
    result = run("create_accounts", "--file", str(accounts))
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == "alice\t\t(existing account: no new link; use --reissue for one)"
    assert result.out.splitlines()[1].startswith("carol\tcarol@uni.edu\t" + BASE)
    reissued = run("create_accounts", "--file", str(accounts), "--reissue")
    assert [line.split("\t")[2][: len(BASE)] for line in reissued.out.splitlines()] == [BASE, BASE]


def test_it_exits_2_and_creates_nothing_for_bad_entries():
    result = run("create_accounts", "dora", "not valid!", "x,y,z", "--base-url", BASE)
    assert result.code == 2
    assert "not valid!: Enter a valid username." in result.err and "x,y,z: write one account per line" in result.err
    assert "no account was created" in result.err
    assert not User.objects.exists()


def test_it_reports_a_missing_campaign_or_address(settings):
    settings.PUBLIC_BASE_URL = ""
    assert run("create_accounts", "dora", "--campaign", "Nope", "--base-url", BASE).code == 1
    missing = run("create_accounts", "dora")
    assert missing.code == 2 and "--base-url" in missing.err
    assert run("create_accounts").code == 1
    assert not User.objects.exists()


# --- the page ------------------------------------------------------------------------


def test_it_shows_the_page_to_staff_only(client, alice, rachel):
    # Who may open the page at all: tests/test_access.py.
    url = reverse("accounts-new")
    client.force_login(alice)
    assert client.post(url, {"entries": "dora"}).status_code == 403
    client.force_login(rachel)
    page = client.get(url)
    assert page.status_code == 200 and b"New accounts" in page.content and b"3 days" in page.content
    assert not User.objects.filter(username="dora").exists()
    assert reverse("accounts-new").encode() in client.get(reverse("campaign-list")).content  # the staff navigation


def test_it_creates_accounts_and_shows_their_links_once(client, rachel, campaign):
    client.force_login(rachel)
    response = client.post(reverse("accounts-new"), {"entries": "dora\n# a note\ncarol@uni.edu\n", "campaign": campaign.pk})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>New accounts</h1>" in html and "2 accounts" in html and "Pilot" in html
    assert html.count("http://testserver/accounts/reset/") == 4  # table and plain-text block
    assert "carol\tcarol@uni.edu\thttp://testserver/accounts/reset/" in html
    assert response["Cache-Control"] == "no-store"
    assert campaign.annotators.filter(username__in=["dora", "carol"]).count() == 2


def test_it_builds_links_on_the_public_address_when_set(client, rachel, settings):
    settings.PUBLIC_BASE_URL = BASE
    client.force_login(rachel)
    response = client.post(reverse("accounts-new"), {"entries": "dora"})
    assert (BASE + "/accounts/reset/").encode() in response.content and b"testserver/accounts" not in response.content


def test_it_answers_htmx_with_the_result_only(client, rachel):
    client.force_login(rachel)
    response = client.post(reverse("accounts-new"), {"entries": "dora"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section id="result"')
    assert "<html" not in html and "http://testserver/accounts/reset/" in html


def test_it_answers_422_and_creates_nothing_for_bad_entries(client, rachel):
    client.force_login(rachel)
    for headers in ({}, HTMX):
        response = client.post(reverse("accounts-new"), {"entries": "dora\nbad name\n"}, **headers)
        assert response.status_code == 422
        assert b"Nothing was created" in response.content and b"bad name: Enter a valid username." in response.content
        assert (b"<h1>New accounts</h1>" in response.content) == (not headers)
    empty = client.post(reverse("accounts-new"), {"entries": ""})
    assert empty.status_code == 422 and b"This field is required" in empty.content
    assert not User.objects.filter(username="dora").exists()
