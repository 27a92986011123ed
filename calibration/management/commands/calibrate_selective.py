import json

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotate.models import Campaign
from calibration.cascade import selective_cascade, selective_lines
from calibration.metrics.selective import MIN_ACCEPTED
from calibration.services import abstained_pairs_send
from common.commands import UncheckedCommand
from common.lookups import named


class Command(UncheckedCommand):
    help = (
        "Calibrate judges that abstain with a guarantee (selective judging, cascades cheapest first): per judge, "
        "the confidence threshold, coverage, agreement, the guarantee in words and the cost per accepted item, "
        "checked on held-out human items."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--judges", required=True, help="judge names, comma-separated (a,b,c); the cascade is ordered by cost")
        parser.add_argument("--alpha", required=True, help="tolerated disagreement on accepted items, in (0, 1), e.g. 0.15")
        parser.add_argument("--delta", required=True, help="risk that the guarantee fails, in (0, 1), e.g. 0.1")
        parser.add_argument("--human-cost", default=None, help="USD per item labelled by humans (default: unknown)")
        parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds for the CIs (default 1000)")
        parser.add_argument(
            "--holdout",
            default="0.5",
            help="share of the pairs held out to check the thresholds: 0.5 (default) or 0 (calibrate on every labelled item, "
            "e.g. an imported calibration split; the agreement on fresh items is then not measured)",
        )
        parser.add_argument(
            "--min-accepted",
            default=str(MIN_ACCEPTED),
            help=f"the fixed sequence starts at the first threshold accepting at least this many calibration items (default {MIN_ACCEPTED})",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--send-to-humans",
            metavar="NEW_CAMPAIGN",
            default=None,
            help="then create this campaign of the pairs with an item no judge accepts (same rubric, members copied)",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects.all(), options["campaign"], create_with="create_campaign")
        send_to = options["send_to_humans"]
        if send_to is not None and Campaign.objects.filter(name=send_to.strip()).exists():
            raise CommandError(f"A campaign named '{send_to.strip()}' already exists: choose another name for --send-to-humans.")
        names = [n.strip() for n in options["judges"].split(",") if n.strip()]
        try:
            out = selective_cascade(
                campaign=campaign, judge_names=names, alpha=options["alpha"], delta=options["delta"],
                human_cost=options["human_cost"], rounds=options["rounds"], holdout=options["holdout"],
                min_accepted=options["min_accepted"],
            )  # fmt: skip
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(selective_lines(out)))
        if send_to is not None:
            try:
                sent = abstained_pairs_send(
                    campaign=campaign, name=send_to, judge_names=names, alpha=options["alpha"], delta=options["delta"], out=out
                )
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
            message = (
                f"Campaign '{sent.campaign.name}' created with {sent.n_pairs} of {sent.n_candidates} pairs "
                "(each with at least one item no judge accepts), for humans to label."
            )
            # Beside the JSON on stdout, the note goes to stderr so that the JSON stays readable.
            (self.stderr if options["format"] == "json" else self.stdout).write(message)
