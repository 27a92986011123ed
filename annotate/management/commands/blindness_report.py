import dataclasses
import json

from django.core.management.base import CommandError

from annotate.blindness_adjudication import adjudicator_exposure
from annotate.blindness_format import report_markdown
from annotate.blindness_selectors import campaign_blindness
from annotate.gold_selectors import gold_separability
from annotate.models import Campaign
from common.commands import UncheckedCommand
from common.lookups import named


class Command(UncheckedCommand):
    help = (
        "Blindness audit of a campaign before launch: per system, how its displayed articles differ from the "
        "reference on surface features, and how well a classifier on those features guesses the reference."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument(
            "--format",
            choices=["md", "json"],
            default="md",
            help="md: readable tables (default); json: for scripts",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help="seed of the bootstrap behind the confidence intervals",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        if campaign.labels_only:
            raise CommandError(f"'{campaign.name}' is a labels-only campaign: its articles have no texts, so there are no looks to audit.")
        report = campaign_blindness(campaign=campaign, seed=options["seed"])
        adjudicators = adjudicator_exposure(campaign=campaign)
        gold = gold_separability(campaign=campaign)
        if options["format"] == "json":
            kinds = [{**dataclasses.asdict(kind), "separable": kind.separable} for kind in gold]
            self.stdout.write(
                json.dumps(
                    {"campaign": campaign.name, **report.as_dict(), "adjudicator_view": adjudicators.as_dict(), "gold_separability": kinds},
                    indent=2,
                    ensure_ascii=False,
                )
            )
        else:
            self.stdout.write(report_markdown(report, title=campaign.name), ending="")
            self.stdout.write(adjudicators.markdown())
            self.stdout.write(gold_markdown(gold))


def gold_markdown(kinds) -> str:
    """Per kind of gold pair, how well a word 5-gram overlap classifier sets it apart from the other pairs."""
    lines = ["\n## Gold pairs against the other pairs\n"]
    if not kinds:
        return lines[0] + "\nNo gold pairs in this campaign.\n"
    lines.append("")
    lines += [f"- {kind.kind}: {kind.text}" for kind in kinds]
    return "\n".join(lines) + "\n"
