"""Opens an adjudication queue of the items where a campaign's annotators disagree."""

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from annotate.services.adjudication import KINDS, adjudication_open, criteria_named
from common.lookups import named


class Command(BaseCommand):
    help = "Open adjudication items where annotators disagree (all, or by criterion and kind of disagreement)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="The campaign's name.")
        parser.add_argument("--criteria", default="", help="Criterion keys, separated by commas (default: every criterion).")
        parser.add_argument("--kind", choices=KINDS, default="all", help="split (A against B), tie-vs-win, or all (default).")
        parser.add_argument("--by", default="", help="The staff account recorded as opening them (default: the first superuser).")

    def handle(self, *args, **options):
        campaign = named(Campaign.objects.all(), options["campaign"])
        by = User.objects.filter(username=options["by"]).first() if options["by"] else None
        by = (
            by or User.objects.filter(is_superuser=True).order_by("pk").first() or User.objects.filter(is_staff=True).order_by("pk").first()
        )
        if by is None:
            raise CommandError("No staff account to record as opening the items: create one, or name one with --by.")
        keys = [key.strip() for key in options["criteria"].split(",") if key.strip()]
        try:
            criteria = criteria_named(campaign=campaign, keys=keys) if keys else None
            opened, there = adjudication_open(campaign=campaign, by=by, criteria=criteria, kind=options["kind"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"{campaign.name}: {opened} item(s) opened for adjudication, {there} already in the queue.")
