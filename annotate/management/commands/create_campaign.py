import shlex
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

import protocols
from annotate.kinds import rubric_group_size
from annotate.models import Item
from annotate.selectors import campaign_design, criterion_set_latest
from annotate.services.alt_epsilon import campaign_set_alt_epsilon, epsilon_problem
from annotate.services.campaigns import campaign_create
from common.names import REFERENCE_SYSTEM


def topics_arg(value: str) -> int | None:
    if value == "all":
        return None
    try:
        number = int(value)
    except ValueError:
        raise CommandError(f"--topics takes a number or 'all', not {value!r}") from None
    return number


class Command(BaseCommand):
    help = (
        "Create an annotation campaign and its pairs; with --labels-only, an empty campaign for imported "
        "verdicts without texts (import_labels brings its pairs), never offered to annotators."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--protocol", default=protocols.DEFAULT, help=f"the annotation protocol, one of: {', '.join(protocols.NAMES)}")
        parser.add_argument(
            "--criteria",
            help="criterion set key (latest version), or KEY:VERSION; with --labels-only it may be left out: "
            "the campaign then takes its criteria from the labels it imports",
        )
        parser.add_argument(
            "--systems",
            help="comma-separated system keys, e.g. wikipedia,gemini_3_pro (required, except with --labels-only)",
        )
        parser.add_argument("--topics", default="all", help="how many topics (in title order), or 'all'")
        parser.add_argument("--overlap", type=int, default=1, help="distinct annotators per pair")
        parser.add_argument("--pairs", choices=["reference", "all"], default="reference")
        parser.add_argument(
            "--reference",
            help=f"the reference system (default {REFERENCE_SYSTEM}; with --labels-only, none unless given)",
        )
        parser.add_argument("--allow-tie", action="store_true")
        parser.add_argument("--no-rationale", action="store_true", help="do not require a rationale per criterion")
        parser.add_argument("--rationale-min-length", type=int, default=10)
        parser.add_argument(
            "--allow-cannot-judge",
            action="store_true",
            help="offer “Cannot judge” as an answer per criterion (counted apart from ties, left out of every statistic)",
        )
        parser.add_argument(
            "--accept-sets",
            action="store_true",
            help="let annotators also mark every other verdict they find acceptable (the report reads single choices and sets)",
        )
        parser.add_argument(
            "--evidence",
            choices=["none", "every", "winners"],
            default="none",
            help="ask for a passage marked as evidence on every criterion, on every winner that is not a tie, or not at all",
        )
        parser.add_argument("--overall", action="store_true", help="also ask which article is better overall")
        parser.add_argument("--instructions", type=Path, help="a markdown file shown to annotators")
        parser.add_argument("--annotators", default="", help="comma-separated usernames (default: every non-staff user)")
        parser.add_argument("--claim-timeout", type=int, default=120, help="minutes before an untouched claim returns to the pool")
        parser.add_argument("--benchmark", help="only topics of this benchmark")
        parser.add_argument(
            "--no-repeats", action="store_true", help="never give an annotator two pairs of one topic (slots may stay empty)"
        )
        parser.add_argument(
            "--topic-back-to-back",
            action="store_true",
            help="give a topic's one-article view and its pairwise view one after the other (default: never back to back)",
        )
        parser.add_argument(
            "--neutral-emphasis",
            action="store_true",
            help="show bold and italic as plain text on both sides (recorded on the campaign and in every export)",
        )
        parser.add_argument(
            "--neutral-headings",
            action="store_true",
            help="show headings in sentence case without numbering, levels renumbered from the top, on both sides (recorded like --neutral-emphasis)",
        )
        parser.add_argument(
            "--show-steps",
            action="store_true",
            help="show each side's agent steps beside its article (refused unless every article of every pair has steps)",
        )
        parser.add_argument(
            "--step-votes",
            choices=["optional", "every"],
            default="optional",
            help="with --show-steps: votes on steps are optional (default), or every step needs one before a pair is submitted",
        )
        parser.add_argument(
            "--guess-question",
            action="store_true",
            help="after each pair is submitted, ask which article the annotator thinks is the reference (never required)",
        )
        parser.add_argument(
            "--reference-name",
            default="Wikipedia",
            help="what the guess question calls the reference (default: Wikipedia)",
        )
        parser.add_argument(
            "--calibration-pairs",
            type=int,
            default=0,
            metavar="N",
            help="the first N pairs (on different topics) are labelled by every annotator before any other pair (default 0: none)",
        )
        parser.add_argument(
            "--epsilon",
            type=float,
            help="the alt-test's epsilon, in (0, 1), with --epsilon-reason (the authors suggest 0.2 experts, 0.15 skilled, 0.1 crowd); "
            "none by default: the report then gives no alt-test verdict",
        )
        parser.add_argument("--epsilon-reason", help="why this epsilon fits these annotators (recorded and stated in the report)")
        parser.add_argument(
            "--gold-rate",
            type=float,
            default=0.0,
            metavar="SHARE",
            help="share of claims (0 to 1) that silently give a known-answer pair made by make_gold (default 0: none)",
        )
        parser.add_argument(
            "--gold-pause-below",
            type=float,
            metavar="ACCURACY",
            help="pause an annotator's new claims when their gold accuracy is clearly below this (default: never)",
        )
        parser.add_argument(
            "--gold-pause-after",
            type=int,
            default=5,
            metavar="N",
            help="gold pairs an annotator must have submitted before the pause rule applies (default 5)",
        )
        parser.add_argument(
            "--repeat-rate",
            type=float,
            default=0.0,
            metavar="SHARE",
            help="share of each annotator's submitted pairs (0 to 1) they meet again later in the other order, a swapped "
            "repeat for their position consistency (default 0: none; not the same as --no-repeats, which is about topics)",
        )
        parser.add_argument(
            "--repeat-gap",
            type=int,
            default=5,
            metavar="N",
            help="a swapped repeat comes only after the annotator has submitted N other pairs since the original (default 5)",
        )
        parser.add_argument(
            "--sampling",
            default="uniform",
            help="which pairs humans label: uniform (every pair, the default) or active (the pairs sample_pairs admits)",
        )
        parser.add_argument(
            "--sampling-burn-in", type=int, default=0, metavar="N", help="active sampling: the first N pairs get the uniform rate"
        )
        parser.add_argument(
            "--sampling-uniform-share",
            type=float,
            default=0.2,
            metavar="SHARE",
            help="active sampling: share of the budget spread evenly (default 0.2)",
        )
        parser.add_argument(
            "--sampling-budget", type=int, metavar="PAIRS", help="active sampling: the expected number of pairs humans label"
        )
        parser.add_argument("--human-cost", type=str, metavar="AMOUNT", help="what a human label of one pair costs (for the planner)")
        parser.add_argument(
            "--labels-only",
            action="store_true",
            help="for imported verdicts without article texts: no pairs until import_labels, never offered "
            "to annotators; refuses the options about systems, topics and annotators",
        )

    def handle(self, *args, **options):
        criterion_set = None
        if options["criteria"] is None:
            if not options["labels_only"]:
                raise CommandError("--criteria is required (except with --labels-only, whose labels may bring their criteria).")
        else:
            key, _, version = options["criteria"].partition(":")
            if version:
                from annotate.models import CriterionSet

                criterion_set = CriterionSet.objects.filter(key=key, version=version).first() if version.isdigit() else None
            else:
                criterion_set = criterion_set_latest(key=key)
            if criterion_set is None:
                raise CommandError(f"No criterion set '{options['criteria']}'. Import one with import_criteria or import_wlc.")
        if options["systems"] is None and not options["labels_only"]:
            raise CommandError("--systems is required (except with --labels-only).")
        names = [n.strip() for n in options["annotators"].split(",") if n.strip()]
        users = list(get_user_model().objects.filter(username__in=names))
        unknown = sorted(set(names) - {u.username for u in users})
        if unknown:
            raise CommandError(f"Unknown annotator(s): {', '.join(unknown)}")
        if problem := epsilon_problem(options["epsilon"], options["epsilon_reason"]):
            raise CommandError(f"--epsilon: {problem}.")
        instructions = ""
        if options["instructions"]:
            try:
                instructions = options["instructions"].read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{options['instructions']}: cannot be read ({exc})") from exc
        human_cost = None
        if options["human_cost"] is not None:
            try:
                human_cost = Decimal(options["human_cost"])
            except InvalidOperation as exc:
                raise CommandError(f"--human-cost: '{options['human_cost']}' is not an amount.") from exc
        try:
            campaign = campaign_create(
                name=options["name"],
                criterion_set=criterion_set,
                systems=(options["systems"] or "").split(","),
                topics=topics_arg(options["topics"]),
                overlap=options["overlap"],
                pair_mode=options["pairs"],
                allow_tie=options["allow_tie"],
                rationale_required=not options["no_rationale"],
                rationale_min_length=options["rationale_min_length"],
                evidence_required=options["evidence"],
                allow_cannot_judge=options["allow_cannot_judge"],
                accept_sets=options["accept_sets"],
                ask_overall=options["overall"],
                instructions=instructions,
                annotators=users,
                reference=options["reference"],
                claim_timeout_minutes=options["claim_timeout"],
                benchmark=options["benchmark"],
                forbid_repeats=options["no_repeats"],
                topic_back_to_back=options["topic_back_to_back"],
                neutral_emphasis=options["neutral_emphasis"],
                neutral_headings=options["neutral_headings"],
                show_steps=options["show_steps"],
                step_votes=options["step_votes"],
                guess_question=options["guess_question"],
                reference_name=options["reference_name"],
                labels_only=options["labels_only"],
                calibration_pairs=options["calibration_pairs"],
                protocol=options["protocol"],
                gold_rate=options["gold_rate"],
                gold_pause_below=options["gold_pause_below"],
                gold_pause_after=options["gold_pause_after"],
                repeat_rate=options["repeat_rate"],
                repeat_gap=options["repeat_gap"],
                sampling=options["sampling"],
                sampling_burn_in=options["sampling_burn_in"],
                sampling_uniform_share=options["sampling_uniform_share"],
                human_cost_per_pair=human_cost,
                sampling_budget=options["sampling_budget"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if options["epsilon"] is not None:
            campaign_set_alt_epsilon(campaign=campaign, epsilon=options["epsilon"], reason=options["epsilon_reason"])
        if campaign.labels_only:
            reference = campaign.reference_system.key if campaign.reference_system else "none"
            criteria = (
                f"criteria {campaign.criterion_set} ({campaign.criterion_set.criteria.count()} criteria)"
                if criterion_set
                else f"criteria from its labels (rubric {campaign.criterion_set}, empty until the first import)"
            )
            self.stdout.write(
                f"campaign '{campaign.name}': labels only (no texts, never offered to annotators), "
                f"{criteria}, reference system: {reference}; "
                f"import its labels with: manage.py import_labels --campaign {shlex.quote(campaign.name)} FILE"
            )
            return
        pairs = campaign.pairs.count()
        design = campaign_design(campaign=campaign)
        calibration = (
            f", the first {campaign.calibration_pairs} for every one of the {design.annotators} annotator(s)"
            if campaign.calibration_pairs
            else ""
        )
        self.stdout.write(
            f"campaign '{campaign.name}': {pairs} pairs, overlap {campaign.overlap}{calibration} "
            f"({design.slots} assignments), criteria {criterion_set} ({criterion_set.criteria.count()} criteria)"
            + (", neutral emphasis" if campaign.neutral_emphasis else "")
            + (", neutral headings" if campaign.neutral_headings else "")
            + (f", guess question ({campaign.reference_name})" if campaign.guess_question else "")
            + (f", alt-test epsilon {campaign.alt_epsilon:g}" if campaign.alt_epsilon is not None else "")
            + (f", {readings} one-article readings (overlap {campaign.overlap})" if (readings := campaign.readings.count()) else "")
            + (
                f", {groups} groups of {size} articles (overlap {campaign.overlap})"
                if (groups := campaign.items.filter(kind=Item.Kind.GROUP).count())
                and (size := rubric_group_size(criterion_set_id=campaign.criterion_set_id))
                else ""
            )
        )
        warning = design.warning(forbid_repeats=campaign.forbid_repeats)
        if warning:
            self.stderr.write(f"warning: {warning}")
