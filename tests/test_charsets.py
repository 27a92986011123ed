"""Request data declared in a charset other than UTF-8: a 400 that says so, on every route, anonymous login included; never a 500."""

import io
import wsgiref.util

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.middleware import charset_problem
from annotate.models import Label
from annotate.services.claims import assignment_claim_next

pytestmark = pytest.mark.django_db

REFUSED = [
    "latin-1",
    "ISO-8859-1",
    "utf-16",
    "utf-32",
    "cp500",
    "shift_jis",
    "utf-7",
    "base64",
    "rot13",
    "zlib",
    "hex",
    "nonsense",
    "x" * 300,
]
READ_AS_UTF8 = ["utf-8", "UTF-8", "UTF8", "utf_8", "us-ascii", '"utf-8"']
LOGIN_FORM = "username=alice&password=alice-password"
MULTIPART = (
    b'--edge\r\nContent-Disposition: form-data; name="username"\r\n\r\nalice\r\n'
    b'--edge\r\nContent-Disposition: form-data; name="password"\r\n\r\nalice-password\r\n--edge--\r\n'
)


def anonymous() -> Client:
    client = Client()
    client.raise_request_exception = False  # a 500 is what we look for, not a test error
    return client


@pytest.mark.parametrize("charset", REFUSED)
def test_it_refuses_a_login_form_in_another_charset_with_a_message(alice, charset):
    client = anonymous()
    response = client.generic(
        "POST", reverse("login"), LOGIN_FORM.encode(), content_type=f"application/x-www-form-urlencoded; charset={charset}"
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "UTF-8" in page and "character set" in page and "<h1>Not saved</h1>" in page
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("charset", ["base64", "latin-1", "nonsense"])
def test_it_refuses_multipart_forms_and_query_strings_alike(alice, charset):
    multipart = anonymous().generic(
        "POST", reverse("login"), MULTIPART, content_type=f"multipart/form-data; boundary=edge; charset={charset}"
    )
    assert multipart.status_code == 400
    assert b"reads request data as UTF-8 only" in multipart.content or b"not one this site knows" in multipart.content
    if charset != "base64":
        # The test client builds its own request; base64 with a query string goes through the site's (test below).
        query = anonymous().get(reverse("login") + "?next=/", CONTENT_TYPE=f"text/plain; charset={charset}")
        assert query.status_code == 400


@pytest.mark.parametrize("charset", READ_AS_UTF8)
def test_it_reads_utf8_under_any_of_its_names(alice, charset):
    client = anonymous()
    response = client.generic(
        "POST", reverse("login"), LOGIN_FORM.encode(), content_type=f"application/x-www-form-urlencoded; charset={charset}"
    )
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(alice.pk)


def test_it_answers_the_api_in_json_and_htmx_in_text(campaign, alice):
    work = assignment_claim_next(campaign=campaign, user=alice)
    api = APIClient()
    api.force_login(alice)
    url = reverse("api:label-save", args=[work.pk, "ww_cc_1"])
    body = '{"position": "1", "rationale": "Café prose"}'
    refused = api.generic("PUT", url, body.encode("latin-1"), content_type="application/json; charset=latin-1")
    assert refused.status_code == 400
    assert refused.json() == {"detail": charset_problem("latin-1")}
    assert not Label.objects.filter(assignment=work).exists()
    accepted = api.generic("PUT", url, body.encode(), content_type="application/json; charset=UTF8")
    assert accepted.status_code == 200 and Label.objects.get(assignment=work).rationale == "Café prose"

    page = Client()
    page.force_login(alice)
    htmx = page.generic(
        "POST", reverse("label-save", args=[work.pk, "ww_cc_1"]), "rationale=Caf%E9".encode(),
        content_type="application/x-www-form-urlencoded; charset=windows-1252", HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert htmx.status_code == 400 and htmx["Content-Type"] == "text/plain; charset=utf-8"
    assert htmx.content.decode() == charset_problem("windows-1252")
    assert Label.objects.get(assignment=work).rationale == "Café prose"


def served(method: str, path: str, query: str, content_type: str, body: bytes = b"") -> tuple[str, bytes]:
    """One request through config.wsgi.application, as gunicorn makes it."""
    from config.wsgi import application

    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
    }  # fmt: skip
    wsgiref.util.setup_testing_defaults(environ)
    status = []
    chunks = application(environ, lambda line, headers, exc_info=None: status.append(line))
    return status[0], b"".join(chunks)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_it_refuses_a_codec_that_is_no_text_encoding_before_django_fails_on_it(alice, method):
    """`charset=base64` with a query string fails while Django builds the request, before any middleware."""
    status, body = served(method, "/accounts/login/", "next=/", "application/x-www-form-urlencoded; charset=base64", LOGIN_FORM.encode())
    assert status.startswith("400"), status
    assert b"reads request data as UTF-8 only" in body


def test_it_names_the_problem_in_plain_words():
    assert charset_problem("utf-8") is None and charset_problem("ASCII") is None
    assert "'latin-1'" in charset_problem("latin-1") and "UTF-8 only" in charset_problem("latin-1")
    assert "not one this site knows" in charset_problem("klingon")
    assert len(charset_problem("é" * 500)) < 200
