from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from calibration.sampling import MIN_FIT, sample_pairs
from common.lookups import named


class Command(BaseCommand):
    help = (
        "Active sampling: give every eligible pair of the campaign without an admission its inclusion probability "
        "and one draw (burn-in pairs the uniform rate, later ones a probability from the judges' predicted error). "
        "Stored once, never redrawn; the claims hand out only the admitted pairs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--seed", type=int, help="seed of the draws (default: fresh randomness)")

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        try:
            run = sample_pairs(campaign=campaign, seed=options["seed"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"campaign '{campaign.name}': {run.burn_in} burn-in and {run.active} active admissions written, "
            f"{run.admitted} admitted; {run.waiting} pairs wait"
        )
        if run.model_version:
            self.stdout.write(f"  error model: {run.model_version}")
        elif run.waiting:
            self.stdout.write(
                f"  active pairs wait for judge verdicts and {MIN_FIT} labelled pairs to fit the error model (now {run.fit_n})"
            )
