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


def test_it_tells_an_annotator_without_work_so(client, alice, demo_topics):
    client.force_login(alice)
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
