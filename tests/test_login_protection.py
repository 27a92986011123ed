"""Passwords a set-password link accepts, throttling per address across usernames, and a way in for a user locked out by somebody else."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotate.accounts import accounts_create
from tests.test_accounts import BASE, set_password

pytestmark = pytest.mark.django_db

SPRAYER = "203.0.113.9"


@pytest.fixture
def limits(settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_IP_FAILURE_LIMIT = 30
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    return settings


def log_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


# --- the password rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    "password, message",
    [
        ("12345678", "This password is entirely numeric."),
        ("12345678", "This password is too common."),
        ("password", "This password is too common."),
        ("dorothea-ward", "The password is too similar to the username."),
        ("short", "This password is too short. It must contain at least 8 characters."),
    ],
)
def test_it_refuses_weak_passwords_on_a_set_password_link_and_says_why(client, password, message):
    link = accounts_create(entries=["dorothea-ward"], base_url=BASE)[0].link
    response = set_password(client, link, password)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.get(username="dorothea-ward").has_usable_password()
    assert "_auth_user_id" not in client.session


def test_it_shows_the_rules_before_anybody_types(client):
    link = accounts_create(entries=["dora"], base_url=BASE)[0].link
    form = client.get(client.get(link.removeprefix(BASE))["Location"]).content.decode()
    for rule in (
        "can’t be too similar to your other personal information",
        "at least 8 characters",
        "can’t be a commonly used password",
        "can’t be entirely numeric",
    ):
        assert rule in form


def test_it_takes_a_good_password_and_logs_its_owner_in(client):
    link = accounts_create(entries=["dora"], base_url=BASE)[0].link
    done = set_password(client, link, "quiet harbour lanterns")
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert client.session["_auth_user_id"] == str(User.objects.get(username="dora").pk)
    assert "you are logged in as <strong>dora</strong>" in client.get(done["Location"]).content.decode()


# --- throttling per address, across usernames -----------------------------------------------


def test_it_stops_120_failed_logins_over_30_usernames_from_one_address(limits, alice):
    """The issue's attack: 4 wrong passwords each for 30 usernames, from one address."""
    sprayer = Client(REMOTE_ADDR=SPRAYER)
    statuses = [log_in(sprayer, f"user{n:02d}", f"guess-{round_}").status_code for round_ in range(4) for n in range(30)]
    assert statuses[:29] == [200] * 29  # no username reached its own limit of 5
    assert set(statuses[29:]) == {429}
    locked = log_in(sprayer, "alice", "alice-password")
    assert locked.status_code == 429 and "_auth_user_id" not in sprayer.session
    assert "Too many logins failed from this address" in locked.content.decode()
    # Another address is not concerned.
    assert log_in(Client(REMOTE_ADDR="198.51.100.20"), "alice", "alice-password").status_code == 302


def test_it_keeps_the_address_count_when_the_sprayer_logs_in_between_guesses(limits, alice, bob):
    """A success clears the failures of its own username only, never the address's tally."""
    sprayer = Client(REMOTE_ADDR=SPRAYER)
    for n in range(29):
        assert log_in(sprayer, f"user{n:02d}", "guess").status_code == 200
        if n % 10 == 0:
            assert log_in(sprayer, "bob", "bob-password").status_code == 302
            sprayer.logout()
    assert log_in(sprayer, "user99", "guess").status_code == 429


def test_it_forgets_failures_older_than_the_cool_off(limits, alice):
    sprayer = Client(REMOTE_ADDR=SPRAYER)
    for n in range(29):
        log_in(sprayer, f"user{n:02d}", "guess")
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.first().attempt_time - timedelta(minutes=16))
    assert log_in(sprayer, "user50", "guess").status_code == 200
    assert log_in(sprayer, "alice", "alice-password").status_code == 302


# --- a way in for the victim ------------------------------------------------------------------


def test_it_lets_a_user_locked_out_by_somebody_else_in_through_a_set_password_link(limits, alice):
    """Somebody behind alice's address locks her name, then the whole address; her link still logs her in and clears her lock."""
    shared = Client(REMOTE_ADDR=SPRAYER)
    for _ in range(5):
        log_in(shared, "alice", "not-her-password")
    assert log_in(shared, "alice", "alice-password").status_code == 429
    link = accounts_create(entries=["alice"], reissue=True, base_url=BASE)[0].link

    victim = Client(REMOTE_ADDR=SPRAYER)
    done = set_password(victim, link, "quiet harbour lanterns")
    assert done.status_code == 302
    assert victim.session["_auth_user_id"] == str(alice.pk)
    assert not AccessAttempt.objects.filter(username="alice").exists()
    victim.logout()
    assert log_in(victim, "alice", "quiet harbour lanterns").status_code == 302


def test_it_logs_the_link_owner_in_even_while_the_whole_address_is_locked(limits, alice):
    shared = Client(REMOTE_ADDR=SPRAYER)
    for n in range(30):
        log_in(shared, f"user{n:02d}", "guess")
    assert log_in(shared, "alice", "alice-password").status_code == 429
    link = accounts_create(entries=["alice"], reissue=True, base_url=BASE)[0].link

    victim = Client(REMOTE_ADDR=SPRAYER)
    assert set_password(victim, link, "quiet harbour lanterns").status_code == 302
    assert victim.session["_auth_user_id"] == str(alice.pk)
    assert victim.get(reverse("home")).status_code == 200
