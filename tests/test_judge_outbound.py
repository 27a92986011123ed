"""Where a judge may connect (judges/outbound.py): loopback, private, link-local (cloud metadata) and
other non-public addresses are refused unless JUDGE_ALLOW_ADDRESSES lists them, and the check is
made on the address each connection reaches, with real sockets, not on the URL's text."""

import ipaddress
import socket

import httpcore2
import pytest

from judges.models import Judge, JudgeCall, JudgeRun
from judges.outbound import GuardedBackend, address_refusal
from judges.services import judge_run_create, judge_run_execute

pytestmark = pytest.mark.django_db

KEY_ENV = "FAKE_JUDGE_API_KEY"
SECRET = "sk-test-outbound-91f0"
LOOPBACK = [ipaddress.ip_network("127.0.0.1/32")]


@pytest.mark.parametrize(
    "address, kind",
    [
        ("127.0.0.1", "loopback"),
        ("127.0.1.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4 written as IPv6 is still loopback
        ("169.254.169.254", "link-local"),  # the cloud metadata service
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.9", "private"),
        ("192.168.1.1", "private"),
        ("fd00:ec2::254", "private"),
        ("100.64.0.1", "not a public address"),  # shared address space (carrier NAT)
        ("0.0.0.0", "unspecified"),
        ("224.0.0.251", "multicast"),
        # IPv6 forms that carry an IPv4 address are judged by it (issue 35):
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of the metadata service
        ("64:ff9b::c0a8:101", "private"),  # NAT64 of 192.168.1.1
        ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("::10.0.0.1", "private"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo, client 127.0.0.1 (bits inverted)
    ],
)
def test_it_refuses_every_address_that_is_not_public(address, kind):
    refusal = address_refusal(address, [])

    assert kind in refusal and "JUDGE_ALLOW_ADDRESSES" in refusal


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808"])
def test_it_lets_public_addresses_through(address):
    assert address_refusal(address, []) == ""


def test_it_lets_through_only_the_addresses_listed():
    allowed = [ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8")]

    assert address_refusal("127.0.0.1", allowed) == "" and address_refusal("10.9.9.9", allowed) == ""
    assert "loopback" in address_refusal("127.0.0.2", allowed)
    assert "loopback" in address_refusal("::1", allowed)  # another family, another address
    assert "private" in address_refusal("192.168.0.1", allowed)


@pytest.fixture
def listener():
    """A real TCP socket listening on 127.0.0.1, to see whether anything connected to it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.settimeout(0.3)
    yield sock
    sock.close()


def connected(sock) -> bool:
    try:
        peer, _ = sock.accept()
    except TimeoutError:
        return False
    peer.close()
    return True


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", socket.gethostname()])
def test_it_refuses_a_connection_to_loopback_by_address_or_by_name(listener, host):
    infos = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    if not any(ipaddress.ip_address(a).is_loopback for a in infos):
        pytest.skip(f"{host} does not resolve to a loopback address here")
    port = listener.getsockname()[1]

    with pytest.raises(httpcore2.ConnectError, match="refused by the outbound policy.*loopback"):
        GuardedBackend(allowed=[]).connect_tcp(host, port, timeout=2)

    assert not connected(listener)
    stream = GuardedBackend(allowed=LOOPBACK).connect_tcp(host, port, timeout=2)  # explicitly allowed: it connects
    assert connected(listener)
    stream.close()


def test_it_refuses_the_metadata_address_without_touching_the_network():
    with pytest.raises(httpcore2.ConnectError, match="169.254.169.254 is a link-local address"):
        GuardedBackend(allowed=LOOPBACK).connect_tcp("169.254.169.254", 80, timeout=0.5)


def stored_judge(base_url: str) -> Judge:
    """A judge as a staff user could once save it: its base URL is checked only when connections are made."""
    return Judge.objects.create(name="probe", kind=Judge.Kind.LLM, model="fake-judge", base_url=base_url, api_key_env=KEY_ENV)


@pytest.mark.parametrize(
    "host, checked_when",
    [
        ("127.0.0.1", "the run starts"),  # the URL's text already shows it
        ("localhost", "the run starts"),
        ("127.1", "it connects"),  # no IP address to the eye, 127.0.0.1 to the resolver
        (socket.gethostname(), "it connects"),  # a host name this machine resolves to itself
    ],
)
def test_it_never_sends_the_key_to_the_loopback_server_unless_allowed(campaign, llm_server, monkeypatch, settings, host, checked_when):
    """The break: the server sent its API keys to any listener, this app's own port included."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    if not any(ipaddress.ip_address(i[4][0]).is_loopback for i in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)):
        pytest.skip(f"{host} does not resolve to a loopback address here")
    settings.JUDGE_BASE_URL_HOSTS = ["*"]
    settings.JUDGE_ALLOW_ADDRESSES = []
    judge = stored_judge(llm_server.base_url.replace("127.0.0.1", host))

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert run.status == JudgeRun.Status.FAILED and "loopback" in run.message
    if checked_when == "it connects":
        assert run.message.startswith("Could not connect to the endpoint: connection error: refused by the outbound policy")
    else:
        assert run.message.startswith("Not run, nothing was sent")
    assert llm_server.requests == [] and llm_server.authorizations == []
    assert not JudgeCall.objects.filter(status=JudgeCall.Status.SENT).exists()  # nothing possibly billed
    assert SECRET not in run.message


def test_it_reaches_the_loopback_server_once_allowed(campaign, llm_server, monkeypatch, settings):
    monkeypatch.setenv(KEY_ENV, SECRET)
    settings.JUDGE_ALLOW_ADDRESSES = LOOPBACK
    judge = stored_judge(llm_server.base_url)

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert run.status == JudgeRun.Status.FINISHED, run.message
    assert set(llm_server.authorizations) == {f"Bearer {SECRET}"}


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1:5432", "127.0.0.1:6379", "[::1]:8000", "169.254.169.254:80", "10.0.0.1:80", "[64:ff9b::7f00:1]:5432", "[::127.0.0.1]:80"],
)
def test_it_refuses_internal_services_at_save_time_too(susan, settings, address):
    settings.JUDGE_BASE_URL_HOSTS = ["*"]
    settings.JUDGE_ALLOW_ADDRESSES = []
    from django.core.exceptions import ValidationError

    from judges.services import judge_create

    with pytest.raises(ValidationError) as refused:
        judge_create(name="probe", model="m", base_url=f"http://{address}/v1", api_key_env=KEY_ENV, by=susan)

    assert "JUDGE_ALLOW_ADDRESSES" in " ".join(refused.value.messages)
    assert not Judge.objects.exists()


def test_it_refuses_internal_services_at_run_time(campaign, monkeypatch, settings, listener):
    """Even a superuser's judge: a database or cache port on this machine is never reached."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    settings.JUDGE_ALLOW_ADDRESSES = []
    judge = stored_judge(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")

    run = judge_run_execute(run=judge_run_create(campaign=campaign, judge=judge, limit=1))

    assert run.status == JudgeRun.Status.FAILED and "loopback" in run.message
    assert not connected(listener)
