import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from calibration.selective_report import estimate_text as _pct
from calibration.selective_report import selective_cascade
from calibration.selective_report import usd_text as _usd
from calibration.services import abstained_pairs_send
from common.lookups import named


def selective_lines(out: dict) -> list[str]:
    """The cascade in words, one judge after another (cheapest first)."""
    lines = [
        f"Selective judging on '{out['campaign']}': α = {out['alpha']:g}, δ = {out['delta']:g}.",
        f"Guarantee sought: {out['guarantee_words']}.",
        f"Items (pair, criterion) with a human majority: {out['n_items']}; calibration {out['n_calibration']}, "
        f"held out {out['n_heldout']} ({out['split_rule']}).",
    ]
    for i, stage in enumerate(out["stages"], 1):
        lam = "none (abstains on every item)" if stage["threshold"] is None else f"{stage['threshold']:.4g}"
        lines += [
            f"{i}. {stage['judge']}: λ̂ = {lam}; asked about {stage['n_reaching']} calibration items, accepts {stage['n_accepted']}",
            f"   coverage {_pct(stage['coverage'])}; agreement on accepted items {_pct(stage['agreement'])}",
            f"   {stage['guarantee']}",
            f"   cost per accepted item: {_usd(stage['cost_per_accepted'])} (per item asked: {_usd(stage['cost_per_item'])})",
        ]
        hold = stage["holdout"]
        if hold is not None:
            lines.append(
                f"   held out: accepts {hold['n_accepted']} of {hold['n']}; agreement {_pct(hold['agreement'])} beside 1 − α = {hold['target']:g}"
            )
    lines.append(f"Humans: {out['n_to_humans']} calibration items no judge accepts ({out['human_share']:.1%}) go to humans.")
    lines.append(f"Cascade: agreement on judge-accepted items {_pct(out['agreement'])}. {out['cascade_guarantee']}")
    if out["cost"] is None:
        lines.append("Cost: unknown (a judge has no prices, or no --human-cost was given).")
    else:
        lines.append(
            f"Cost on the calibration items: {_usd(out['cost'])} against {_usd(out['all_human_cost'])} all-human (saving {out['saving']:.1%})."
        )
    hold = out["holdout"]
    if hold is not None:
        lines.append(
            f"Held-out check: the cascade accepts {hold['n_accepted']} of {hold['n']} items, agreement {_pct(hold['agreement'])} "
            f"beside 1 − α = {hold['target']:g}; {hold['n_to_humans']} go to humans."
        )
    return lines


class Command(BaseCommand):
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
                human_cost=options["human_cost"], rounds=options["rounds"],
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
