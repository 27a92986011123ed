"""Provider limits: the `Pacer` (judges/pacing.py) on a fake clock and on real threads, a real run paced
under a rate-limited fake endpoint, and the rpm/tpm/batch-price options of add_judge and the judges page."""

import sys
import threading
import time
from decimal import Decimal

import pytest
from django.db import connection
from django.urls import reverse

from judges.engine import judge_run_execute
from judges.models import Judge, JudgeCall, JudgeRun
from judges.pacing import Pacer, pacer_for
from judges.services import judge_create, judge_run_create
from tests.helpers import run

KEY_ENV = "FAKE_JUDGE_API_KEY"


class FakeTime:
    """A clock and a sleep: `sleep` moves the clock on (one worker waiting its turn), unless `frozen`
    (many workers asking at the same instant); every wait is recorded."""

    def __init__(self, *, frozen: bool = False) -> None:
        self.now = 0.0
        self.frozen = frozen
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        if not self.frozen:
            self.now += seconds


def most_in_any_window(times: list[float], window: float) -> int:
    """The most of `times` inside any window [t, t + window)."""
    times = sorted(times)
    most = start = 0
    for end, t in enumerate(times):
        while times[start] <= t - window:
            start += 1
        most = max(most, end - start + 1)
    return most


# --- the pacer on a fake clock ----------------------------------------------------------


def test_it_spaces_requests_evenly_at_the_rpm():
    fake = FakeTime()
    pacer = Pacer(rpm=120, clock=fake.clock, sleep=fake.sleep)

    starts = []
    for _ in range(5):
        pacer.acquire()
        starts.append(fake.now)

    assert starts == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert fake.waits == [0.5] * 4


def test_it_gives_no_burst_after_an_idle_spell():
    fake = FakeTime()
    pacer = Pacer(rpm=60, clock=fake.clock, sleep=fake.sleep)
    pacer.acquire()

    fake.now = 100.0  # a long pause: the next request may go at once...
    assert pacer.acquire() == 0.0
    assert pacer.acquire() == 1.0  # ... but not the one after it: no credit was saved up


def test_it_hands_workers_asking_together_one_slot_each():
    fake = FakeTime(frozen=True)
    pacer = Pacer(rpm=600, clock=fake.clock, sleep=fake.sleep)

    waits = [pacer.acquire() for _ in range(4)]

    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert fake.waits == pytest.approx([0.1, 0.2, 0.3])  # no sleep at all when the slot is now


def test_it_keeps_a_minute_under_the_rpm_plus_one():
    fake = FakeTime()
    pacer = Pacer(rpm=120, clock=fake.clock, sleep=fake.sleep)

    starts = []
    for _ in range(400):
        pacer.acquire()
        starts.append(fake.now)

    assert most_in_any_window(starts, 60.0) == 120
    assert most_in_any_window(starts, 60.0 + 1e-9) == 121  # a closed minute holds both ends


def test_it_spends_the_tpm_budget_request_by_request():
    fake = FakeTime(frozen=True)
    pacer = Pacer(tpm=6000, clock=fake.clock, sleep=fake.sleep)  # 100 tokens a second

    # 1,000 tokens take 10 s of the budget: each request starts when the earlier ones' budget is spent.
    assert [pacer.acquire(1000), pacer.acquire(1000), pacer.acquire(500), pacer.acquire(0)] == pytest.approx([0, 10, 20, 25])


def test_it_waits_for_the_tighter_of_the_two_limits():
    fake = FakeTime(frozen=True)
    pacer = Pacer(rpm=60, tpm=6000, clock=fake.clock, sleep=fake.sleep)

    assert pacer.acquire(10) == 0.0
    assert pacer.acquire(10) == pytest.approx(1.0)  # the rpm: one a second
    assert pacer.acquire(3000) == pytest.approx(2.0)  # the rpm again; its 3,000 tokens fill the budget until 32 s
    assert pacer.acquire(10) == pytest.approx(32.0)  # the tpm


def test_it_corrects_the_token_budget_with_the_reported_usage():
    fake = FakeTime(frozen=True)
    pacer = Pacer(tpm=6000, clock=fake.clock, sleep=fake.sleep)
    pacer.acquire(1000)  # budget used until 10 s

    pacer.settle(1000, 400)  # it used 400: the budget frees at 4 s
    assert pacer.acquire(100) == pytest.approx(4.0)  # until 5 s
    pacer.settle(100, 700)  # it used 700: 6 s more
    assert pacer.acquire(0) == pytest.approx(11.0)
    pacer.settle(50, 50)  # the estimate was right: nothing moves
    assert pacer.acquire(0) == pytest.approx(11.0)


def test_it_leaves_the_request_spacing_alone_when_settling_without_a_tpm():
    fake = FakeTime(frozen=True)
    pacer = Pacer(rpm=60, clock=fake.clock, sleep=fake.sleep)
    pacer.acquire(1000)

    pacer.settle(1000, 10)

    assert pacer.acquire(1000) == 1.0


def test_it_never_waits_without_limits():
    def no_sleep(seconds):
        raise AssertionError(f"slept {seconds} s without a limit")

    pacer = Pacer(clock=lambda: 0.0, sleep=no_sleep)

    assert not pacer.limited
    assert [pacer.acquire(10**9) for _ in range(1000)] == [0.0] * 1000
    pacer.settle(10, 10**9)
    assert pacer.acquire() == 0.0
    assert pacer_for(None, None) is None and pacer_for(0, 0) is None
    assert pacer_for(120, None).rpm == 120 and pacer_for(None, 9000).tpm == 9000


@pytest.mark.parametrize("limits", [{"rpm": 0}, {"tpm": -1}, {"rpm": 10, "tpm": 0}])
def test_it_refuses_a_limit_that_is_not_positive(limits):
    with pytest.raises(ValueError, match="must be positive"):
        Pacer(**limits)


# --- the pacer on real threads ----------------------------------------------------------


def run_threads(threads: int, work) -> float:
    """Starts `threads` threads on `work` together; the seconds until the last one ends."""
    barrier = threading.Barrier(threads)

    def worker() -> None:
        barrier.wait()
        work()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    began = time.monotonic()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.monotonic() - began


def test_it_never_gives_two_threads_the_same_slot():
    """8 threads x 1,000 requests asking at one frozen instant, the interpreter switching threads every
    microsecond: each must get a slot of its own, one spacing after another. Without the pacer's lock
    two threads read the same slot in about half of these rounds (try it), so eight rounds catch it."""
    spacing = 60 / 12_000  # both limits allow a request of 100 tokens every 5 ms
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(8):
            pacer = Pacer(rpm=12_000, tpm=1_200_000, clock=lambda: 0.0, sleep=lambda seconds: None)
            waits: list[float] = []
            lock = threading.Lock()

            def acquire_many() -> None:
                mine = [pacer.acquire(100) for _ in range(1000)]
                with lock:
                    waits.extend(mine)

            run_threads(8, acquire_many)

            waits.sort()
            assert len(waits) == 8000 and waits[0] == 0.0
            assert min(later - earlier for earlier, later in zip(waits, waits[1:])) >= spacing - 1e-9
    finally:
        sys.setswitchinterval(switching)


def test_it_keeps_real_threads_under_the_rate_over_any_window():
    """8 threads x 25 requests on the real clock, sleeping for real. Each acquire's slot is the time the
    pacer read (inside its lock) plus the wait it returned."""
    rpm, threads, each = 12_000, 8, 25  # a slot every 5 ms: 200 requests in about a second
    spacing = 60 / rpm
    seen = threading.local()

    def clock() -> float:
        seen.now = time.monotonic()
        return seen.now

    pacer = Pacer(rpm=rpm, clock=clock)
    slots: list[float] = []
    lock = threading.Lock()

    def acquire_some() -> None:
        for _ in range(each):
            waited = pacer.acquire()
            with lock:
                slots.append(seen.now + waited)

    elapsed = run_threads(threads, acquire_some)

    assert len(slots) == threads * each
    slots.sort()
    assert min(later - earlier for earlier, later in zip(slots, slots[1:])) >= spacing - 1e-9
    assert most_in_any_window(slots, 0.1) <= round(0.1 / spacing) + 1  # never above the rate over any window
    assert elapsed >= (threads * each - 1) * spacing  # and the threads did wait for their slots


# --- a real run against a rate-limited endpoint --------------------------------------------


@pytest.fixture
def endpoint_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-pacing-4e7a")


def fake_judge(server, name: str, **options) -> Judge:
    return judge_create(name=name, base_url=server.base_url, api_key_env=KEY_ENV, input_price="0", output_price="10", **options)[0]


@pytest.mark.django_db
def test_it_paces_a_run_under_the_rpm_where_an_unpaced_run_meets_429s(campaign, llm_server, endpoint_key):
    # The endpoint allows 20 requests in any trailing second (1,200 a minute) and refuses the 21st.
    # The paced judge sends one every 60 / 960 = 62.5 ms, so 21 requests in a row span 20 x 62.5 ms
    # = 1.25 s: 0.25 s more than the window, a margin for the jitter of threads waking and requests
    # travelling. Unpaced, 8 workers send the run's 48 requests (8 pairs x 3 categories x 2 orders)
    # in well under a second, so the 21st arrives inside the window. About 3 s each.
    llm_server.rate_limit = (20, 1.0)
    paced = fake_judge(llm_server, "paced", model="fake-judge-paced", rpm=960)

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=paced, swap=True, concurrency=8))

    assert run.status == JudgeRun.Status.FINISHED, run.message
    # On a loaded machine a keep-alive connection can drop and its unit is sent again; such a retry
    # is stored with its error and is never a 429. Pacing is judged by the 429s alone.
    retried = list(JudgeCall.objects.filter(run=run, valid=False).values_list("http_status", "error"))
    assert (run.units_done, run.errors, run.calls) == (48, 0, 48 + len(retried)), retried
    assert all(status != 429 for status, _ in retried), retried
    assert (run.rate_limited, llm_server.rate_limited) == (0, 0)
    assert run.paced_ms > 0
    assert llm_server.arrivals[-1] - llm_server.arrivals[0] >= 47 * 0.0625 - 0.05  # it was held to the rpm
    assert JudgeRun.objects.get(pk=run.pk).rate_limited == 0 and JudgeRun.objects.get(pk=run.pk).paced_ms == run.paced_ms

    # A different model, so that nothing is answered from the cache: the same run without the rpm.
    unpaced = fake_judge(llm_server, "unpaced", model="fake-judge-unpaced")
    again = judge_run_execute(run=judge_run_create(campaign=campaign, judge=unpaced, swap=True, concurrency=8))

    assert again.status == JudgeRun.Status.FINISHED, again.message
    assert again.units_done == 48 and again.paced_ms == 0
    assert again.rate_limited > 0 and again.rate_limited == llm_server.rate_limited  # backed off and retried
    others = JudgeCall.objects.filter(run=again, valid=False).exclude(http_status=429).count()
    assert again.calls == 48 + again.rate_limited + others


@pytest.mark.django_db(transaction=True)
def test_it_stops_a_paced_run_without_waiting_for_the_pacer(campaign, llm_server, endpoint_key):
    """rpm 12 = one request every 5 s: Stop must not wait for the workers' turns, and nothing is sent
    after it (the rows written ahead for the requests that never left are dropped)."""
    slow = fake_judge(llm_server, "slow.paced", model="fake-judge-slow", rpm=12)
    run = judge_run_create(campaign=campaign, judge=slow, concurrency=4)
    stopped_at = []

    def stop():
        time.sleep(1.0)
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.STOPPING)
        stopped_at.append(time.monotonic())
        connection.close()

    stopper = threading.Thread(target=stop)
    stopper.start()
    run = judge_run_execute(run=run)
    returned = time.monotonic()
    stopper.join()

    assert run.status == JudgeRun.Status.STOPPED
    assert returned - stopped_at[0] < 2.0  # the status poll (0.5 s) and a batch write, not 4 turns of 5 s
    assert [a for a in llm_server.arrivals if a > stopped_at[0]] == []
    assert len(llm_server.requests) == 1 and run.units_done == 1
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()


# --- add_judge ----------------------------------------------------------------------------


def add_judge(server, *extra: str):
    return run(
        "add_judge",
        "limited",
        "--model",
        "fake-judge",
        "--base-url",
        server.base_url,
        "--api-key-env",
        KEY_ENV,
        "--input-price",
        "2.5",
        "--output-price",
        "10",
        *extra,
    )


@pytest.mark.django_db
def test_it_adds_a_judge_with_limits_and_batch_prices(llm_server):
    result = add_judge(llm_server, "--rpm", "120", "--tpm", "30000", "--batch-input-price", "1.25", "--batch-output-price", "5")

    assert result.code == 0, result.err
    assert "Runs are paced under 120 requests and 30000 tokens per minute." in result.out
    judge = Judge.objects.get(name="limited")
    assert (judge.rpm, judge.tpm, judge.batch_input_price, judge.batch_output_price) == (120, 30000, Decimal("1.25"), Decimal(5))

    updated = add_judge(llm_server, "--rpm", "60", "--update")
    assert updated.code == 0, updated.err
    assert "paced under 60 requests per minute." in updated.out
    judge.refresh_from_db()
    # An update sets every option again: what is left out goes back to its default (no limit, half price).
    assert (judge.rpm, judge.tpm, judge.batch_input_price, judge.batch_output_price) == (60, None, None, None)


@pytest.mark.django_db
def test_it_adds_a_judge_without_limits_by_default(llm_server):
    result = add_judge(llm_server)

    assert result.code == 0, result.err
    assert "paced" not in result.out
    judge = Judge.objects.get(name="limited")
    assert (judge.rpm, judge.tpm, judge.batch_input_price, judge.batch_output_price) == (None, None, None, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args, message",
    [
        (["--rpm", "0"], "The rpm must be a whole number from 1 to"),
        (["--tpm", "-5"], "The tpm must be a whole number from 1 to"),
        (["--rpm", "2147483648"], "The rpm must be a whole number from 1 to 2147483647"),
        (["--rpm", "many"], "invalid int value: 'many'"),
        (["--tpm", "1.5"], "invalid int value: '1.5'"),
        (["--batch-input-price", "-1"], "The batch input price must be zero or more"),
        (["--batch-output-price", "NaN"], "The batch output price must be zero or more"),
        (["--batch-output-price", "cheap"], "invalid price value: 'cheap'"),
    ],
)
def test_it_refuses_bad_limits_and_batch_prices(llm_server, args, message):
    result = add_judge(llm_server, *args)

    assert result.code == 1 and message in result.err, result.err
    assert not Judge.objects.exists()


# --- the judges page ----------------------------------------------------------------------


def judge_form(server, **fields) -> dict:
    return {
        "name": "web-limited",
        "kind": "llm",
        "model": "fake-judge",
        "base_url": server.base_url,
        "api_key_env": "WEB_JUDGE_API_KEY",
        "input_price": "0.4",
        "output_price": "1.6",
        "temperature": "0",
        "max_tokens": "3000",
        "structured_output": "on",
        **fields,
    }


@pytest.mark.django_db
def test_it_offers_the_limits_and_batch_prices_on_the_judges_page(client, rachel):
    client.force_login(rachel)

    response = client.get(reverse("judge-list"))

    assert response.status_code == 200
    page = response.content.decode()
    for name in ("rpm", "tpm", "batch_input_price", "batch_output_price"):
        assert f'name="{name}"' in page
    assert "Requests per minute" in page and "Tokens per minute" in page
    assert "Empty: half the input price." in page and "Empty: half the output price." in page


@pytest.mark.django_db
def test_it_adds_a_judge_with_limits_and_batch_prices_from_the_form(client, susan, llm_server):
    client.force_login(susan)  # a superuser: she gives the base URL herself

    response = client.post(
        reverse("judge-list"), judge_form(llm_server, rpm="500", tpm="200000", batch_input_price="0.2", batch_output_price="0.8")
    )

    assert response.status_code == 302 and response.url == reverse("judge-list")
    judge = Judge.objects.get(name="web-limited")
    assert (judge.rpm, judge.tpm, judge.batch_input_price, judge.batch_output_price) == (500, 200000, Decimal("0.2"), Decimal("0.8"))

    cleared = client.post(
        reverse("judge-list"), judge_form(llm_server, rpm="", tpm="", batch_input_price="", batch_output_price="", update="on")
    )
    assert cleared.status_code == 302
    judge.refresh_from_db()
    assert (judge.rpm, judge.tpm, judge.batch_input_price, judge.batch_output_price) == (None, None, None, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("rpm", "0", "Ensure this value is greater than or equal to 1."),
        ("tpm", "lots", "Enter a whole number."),
        ("batch_input_price", "-0.1", "Ensure this value is greater than or equal to 0."),
        ("batch_output_price", "free", "Enter a number."),
        ("rpm", "2147483648", "The rpm must be a whole number from 1 to 2147483647"),
    ],
)
def test_it_refuses_bad_limits_and_batch_prices_from_the_form(client, susan, llm_server, field, value, message):
    client.force_login(susan)

    response = client.post(reverse("judge-list"), judge_form(llm_server, **{field: value}))

    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Judge.objects.exists()
