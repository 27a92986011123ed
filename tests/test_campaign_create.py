import pytest
from django.core.exceptions import ValidationError

import protocols
from annotate.models import Campaign, Pair
from annotate.services.campaigns import campaign_create
from tests.helpers import run

pytestmark = pytest.mark.django_db


def test_it_pairs_the_reference_with_each_other_system(campaign):
    pairs = Pair.objects.filter(campaign=campaign).select_related("article_a__system", "article_b__system")
    assert pairs.count() == 8
    assert {p.article_a.system.key for p in pairs} == {"wikipedia"}
    assert sorted({p.article_b.system.key for p in pairs}) == ["atlas_agent", "quill_researcher"]


def test_it_pairs_every_two_systems_on_request(catalogue):
    campaign = campaign_create(
        name="All", criterion_set=catalogue, systems=["wikipedia", "atlas_agent", "quill_researcher"], pair_mode="all", topics=2
    )
    assert campaign.pairs.count() == 2 * 3


def test_it_refuses_bad_settings_with_every_reason(catalogue, alice):
    with pytest.raises(ValidationError) as caught:
        campaign_create(name=" ", criterion_set=catalogue, systems=["wikipedia", "nobody"], overlap=2, annotators=[alice])
    messages = caught.value.messages
    assert "A campaign needs a name." in messages
    assert "Unknown system(s): nobody." in messages
    assert "Overlap 2 needs at least 2 annotators; 1 given." in messages
    assert Campaign.objects.count() == 0


def test_it_creates_a_campaign_from_the_command_line(catalogue, alice, bob):
    result = run(
        "create_campaign",
        "--name",
        "Cli",
        "--criteria",
        "wiki_writing",
        "--systems",
        "wikipedia,atlas_agent",
        "--topics",
        "3",
        "--overlap",
        "2",
        "--allow-tie",
        "--annotators",
        "alice,bob",
        "--overall",
    )
    assert result.code == 0, result.err
    assert "campaign 'Cli': 3 pairs, overlap 2 (6 assignments)" in result.out
    campaign = Campaign.objects.get(name="Cli")
    assert campaign.allow_tie and campaign.ask_overall and campaign.rationale_required
    assert set(campaign.annotators.values_list("username", flat=True)) == {"alice", "bob"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--criteria", "nope"], "No criterion set 'nope'"),
        (["--topics", "many"], "--topics takes a number or 'all'"),
        (["--annotators", "alice,zed"], "Unknown annotator(s): zed"),
        (["--systems", "wikipedia"], "Choose at least two systems."),
        (["--protocol", "no-such"], "The protocol 'no-such' is not one of: pairwise"),
    ],
)
def test_it_explains_what_is_wrong_on_the_command_line(catalogue, alice, args, message):
    base = {"--name": "Bad", "--criteria": "wiki_writing", "--systems": "wikipedia,atlas_agent"}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    flat = [item for pair in base.items() for item in pair] + [a for a in args if a not in base and a not in base.values()]
    result = run("create_campaign", *flat)
    assert result.code == 1
    assert message in result.err
    assert not Campaign.objects.filter(name="Bad").exists()


def test_it_makes_every_campaign_pairwise_unless_told_otherwise(catalogue):
    campaign = campaign_create(name="Default", criterion_set=catalogue, systems=["wikipedia", "atlas_agent"], topics=1)
    labels_only = campaign_create(name="Imported", criterion_set=None, labels_only=True)
    assert (campaign.protocol, labels_only.protocol) == ("pairwise", "pairwise")


@pytest.mark.parametrize("labels_only", [False, True])
def test_it_refuses_a_protocol_that_does_not_exist(catalogue, labels_only):
    systems = [] if labels_only else ["wikipedia", "atlas_agent"]
    with pytest.raises(ValidationError) as caught:
        campaign_create(name="Rated", criterion_set=catalogue, systems=systems, labels_only=labels_only, protocol="no-such")
    assert caught.value.messages == [f"The protocol 'no-such' is not one of: {', '.join(protocols.NAMES)}."]
    assert Campaign.objects.count() == 0


def test_it_refuses_a_stored_protocol_that_does_not_exist_on_full_clean(campaign):
    campaign.protocol = "no-such"
    with pytest.raises(ValidationError) as caught:
        campaign.full_clean()
    assert caught.value.message_dict["protocol"] == [f"protocol 'no-such' is not one of: {', '.join(protocols.NAMES)}"]
