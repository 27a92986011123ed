from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.gold import DEGRADATIONS
from annotate.gold_selectors import gold_separability
from annotate.models import Campaign
from annotate.services.gold import PER_DEGRADATION_MAX, gold_pairs_make, gold_settled_make
from common.lookups import named


class Command(BaseCommand):
    help = (
        "Add known-answer (gold) pairs to a campaign: copies of its reference articles degraded on purpose "
        f"({', '.join(DEGRADATIONS)}), each paired with its original, which must win on the criteria the "
        "damage targets. Claims mix them in silently at the campaign's gold rate (create_campaign --gold-rate)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument(
            "--per-degradation",
            type=int,
            default=2,
            metavar="N",
            help=f"gold pairs per degradation, on different topics (1 to {PER_DEGRADATION_MAX}; default 2)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the choice of articles and of each degradation (default 0)")
        parser.add_argument(
            "--settled-from",
            metavar="CAMPAIGN",
            help="instead of degraded copies: known-answer pairs from another campaign's settled items "
            "(unanimous annotators, or an adjudicated answer), which look like every other pair",
        )
        parser.add_argument("--settled-limit", type=int, default=20, metavar="N", help="settled pairs to add at most (default 20)")

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        try:
            if options["settled_from"]:
                source = named(Campaign.objects, options["settled_from"], create_with="create_campaign")
                summary = gold_settled_make(campaign=campaign, source=source, limit=options["settled_limit"])
            else:
                summary = gold_pairs_make(campaign=campaign, per_degradation=options["per_degradation"], seed=options["seed"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        for reason in summary.skipped:
            self.stderr.write(f"skipped: {reason}")
        made = ", ".join(f"{kind} {n}" for kind, n in summary.made.items()) or "none"
        rate = (
            f"claims give one at the campaign's gold rate, {campaign.gold_rate:g}"
            if campaign.gold_rate
            else "the campaign's gold rate is 0: claims give none until it is set"
        )
        self.stdout.write(f"campaign '{campaign.name}': {summary.total} gold pair(s) added ({made}); {rate}")
        for kind in gold_separability(campaign=campaign):
            drives = "drives the pause rule" if not kind.separable or campaign.gold_accept_separable else "does not drive the pause rule"
            self.stdout.write(f"  {kind.kind}: {kind.text}; {drives}")
        if not summary.total and not campaign.pairs.filter(gold__isnull=False).exists():
            raise CommandError("No gold pair could be made: see the reasons above.")
