"""Shared fixtures and the cast of users.

- alice: an annotator; she labels pairs and must never learn which system wrote what.
- bob: a second annotator; alice must not see his work, nor he hers.
- rachel: a researcher (staff); she runs campaigns and sees everything.
- oscar: an outsider with an account but no role in any campaign.
"""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SAMPLE = REPO.parent / "shared" / "wlc-sample"


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password")


@pytest.fixture
def rachel(django_user_model):
    return django_user_model.objects.create_user("rachel", password="rachel-password", is_staff=True)


@pytest.fixture
def oscar(django_user_model):
    return django_user_model.objects.create_user("oscar", password="oscar-password")


@pytest.fixture
def sample_path():
    if not (SAMPLE / "data").is_dir():
        pytest.skip("../shared/wlc-sample is not present")
    return SAMPLE
