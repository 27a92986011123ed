from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotate.models import Campaign
from calibration.plan.check import STATISTICS, parse_statistics
from calibration.plan.study import PlanRefused, plan_record, study_plan_freeze
from common.commands import UncheckedCommand
from common.lookups import named


class Command(UncheckedCommand):
    help = "Freeze a campaign's study plan (pre-registration) before its first label; prints the plan's SHA-256."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--planned-pairs", type=int, required=True, help="the number of pairs the analysis will rest on")
        parser.add_argument("--statistics", default=None, help=f"comma-separated, of {', '.join(STATISTICS)} (default: par,kappa)")
        parser.add_argument("--alpha", type=float, default=None, help="selective judging: the disagreement allowed on accepted items")
        parser.add_argument("--delta", type=float, default=None, help="selective judging: the chance the guarantee may fail")
        parser.add_argument("--judges", default=None, help="comma-separated judge names planned beyond those already run on the campaign")
        parser.add_argument("--by", default=None, help="the staff username recorded as freezing it (default: none, the command line)")

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        user = None
        if options["by"]:
            user = get_user_model().objects.filter(username=options["by"], is_staff=True).first()
            if user is None:
                raise CommandError(f"no staff user named '{options['by']}'")
        names = [n.strip() for n in (options["judges"] or "").split(",") if n.strip()]
        try:
            record = plan_record(
                campaign,
                planned_pairs=options["planned_pairs"],
                statistics=parse_statistics(options["statistics"]),
                alpha=options["alpha"],
                delta=options["delta"],
                judge_names=names,
            )
            plan = study_plan_freeze(campaign=campaign, user=user, record=record)
        except (ValueError, PlanRefused) as exc:
            raise CommandError(str(exc)) from exc
        judges = len(record["judges"])
        self.stdout.write(
            f"{campaign.name}: study plan frozen, SHA-256 {plan.sha256} "
            f"({record['planned_pairs']} planned pairs, {judges} judge{'s' if judges != 1 else ''}, statistics {', '.join(record['statistics'])})"
        )
