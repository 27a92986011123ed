import pytest
from django.urls import reverse

from annotate.models import Topic
from tests.conftest import FIXTURES
from tests.helpers import run

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_topics():
    assert run("import_articles", str(FIXTURES / "demo" / "articles.jsonl"), "--benchmark", "demo").code == 0
    return Topic.objects.order_by("title")


def test_it_sends_anonymous_visitors_to_log_in(client, demo_topics):
    for url in [reverse("home"), reverse("topic-list"), reverse("topic-compare", args=[demo_topics[0].pk])]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_it_forbids_the_catalogue_to_annotators(client, alice, demo_topics):
    client.force_login(alice)
    assert client.get(reverse("topic-list")).status_code == 403
    assert client.get(reverse("topic-compare", args=[demo_topics[0].pk])).status_code == 403
    home = client.get(reverse("home"))
    assert home.status_code == 200
    assert b"No annotation work is assigned to you yet" in home.content


def test_it_lists_topics_for_researchers(client, rachel, demo_topics, django_assert_max_num_queries):
    client.force_login(rachel)
    assert client.get(reverse("home")).status_code == 302
    with django_assert_max_num_queries(4):
        response = client.get(reverse("topic-list"))
    assert response.status_code == 200
    for topic in demo_topics:
        assert topic.title.encode() in response.content


def test_it_shows_two_articles_side_by_side(client, rachel, demo_topics):
    client.force_login(rachel)
    topic = demo_topics[0]
    response = client.get(reverse("topic-compare", args=[topic.pk]), {"left": "wikipedia", "right": "quill_researcher"})
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<section class="column">') == 2
    assert page.index("Wikipedia") < page.index("Quill Researcher")
    assert 'id="sec-1"' in page
    assert "example.org" not in page


def test_it_refuses_writes_on_read_only_pages(client, rachel, demo_topics):
    client.force_login(rachel)
    assert client.post(reverse("topic-list")).status_code == 405
    assert client.post(reverse("topic-compare", args=[demo_topics[0].pk])).status_code == 405


def test_it_answers_404_for_an_unknown_topic(client, rachel):
    client.force_login(rachel)
    assert client.get(reverse("topic-compare", args=[999])).status_code == 404
