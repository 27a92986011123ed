"""In a real browser: the judges page's "Test connection" button tests a saved judge through htmx
and shows what works, or what to fix, in its row; the page stays where it was."""

import pytest

from judges.services import judge_create
from tests.test_browser import CHROMIUM, browser, live_demo, log_in, page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
IDLE = "() => window.__inflight === 0"
KEY_ENV = "FAKE_JUDGE_API_KEY"


def test_it_tests_a_judges_connection_in_its_row(page, live_demo, llm_server, monkeypatch):  # noqa: F811
    monkeypatch.setenv(KEY_ENV, "sk-test-browser-6c1d")
    judge, _ = judge_create(name="fake-gpt", model="fake-judge", base_url=llm_server.base_url, api_key_env=KEY_ENV)
    log_in(page, "researcher", "demo-researcher")
    page.goto("/judges/")
    url = page.url
    cell = page.locator(f"#check-{judge.pk}")

    cell.get_by_role("button", name="Test connection").click()
    page.wait_for_function(IDLE)

    cell.get_by_role("status").get_by_text("Connected:").wait_for()
    assert "the model 'fake-judge' answered in" in cell.inner_text() and page.url == url
    llm_server.models = {"another-model"}
    cell.get_by_role("button", name="Test again").click()
    page.wait_for_function(IDLE)
    cell.get_by_role("status").get_by_text("Model: the endpoint does not serve the model 'fake-judge'").wait_for()
    assert len(llm_server.requests) == 2
