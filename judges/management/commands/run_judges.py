import time
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotate.models import Campaign
from common.lookups import named
from judges.batch import open_batches_summary
from judges.engine import judge_run_execute
from judges.models import Judge, JudgeBatch, JudgeCall, JudgeRun
from judges.selectors import campaign_judges_named, run_estimate, unanswered_calls
from judges.services import judge_run_create
from judges.serving import endpoint_defaults, judge_concurrency_warning


def usd(value: Decimal | None, places: int = 8) -> str:
    """Dollars, or "cost unknown" (a judge without prices): never $0 for what is not known."""
    return "cost unknown" if value is None else f"${value:.{places}f}"


def money(value: str) -> Decimal:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(value) from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(value)
    return amount


class Progress:
    """Units, errors, tokens and dollars on stderr: one line updated in place on a terminal, else a line per ~10%."""

    def __init__(self, stream, name: str) -> None:
        self.stream = stream
        self.name = name
        self.tty = stream.isatty()
        self.plain = lambda text: text  # progress is not an error: no red on a terminal
        self.next_tenth = 1
        self.shown = 0.0
        self.batches = ""  # what the provider holds, for batch runs

    def batch_line(self, run: JudgeRun) -> bool:
        """For a batch run, whether what the provider holds changed since the last line."""
        if not run.batch:
            return False
        batches = open_batches_summary(run)
        changed, self.batches = batches != self.batches, batches
        return changed

    def line(self, run: JudgeRun) -> str:
        total = run.units_total or 1
        finished = run.units_done + run.errors
        width = 24
        filled = round(width * finished / total)
        return (
            f"{self.name} [{'#' * filled}{'.' * (width - filled)}] {finished}/{run.units_total} units, "
            f"{run.errors} errors, {run.prompt_tokens + run.completion_tokens:,} tokens, {usd(run.cost_usd, 4)}"
            + (f"; {self.batches}" if self.batches else "")
        )

    def __call__(self, run: JudgeRun) -> None:
        finished = run.units_done + run.errors
        if self.batch_line(run) and not self.tty:
            # A batch run waits on the provider for long stretches: a line each time its batches move on.
            self.stream.write(self.line(run), style_func=self.plain)
            self.stream.flush()
            return
        if self.tty:
            now = time.monotonic()
            if now - self.shown >= 0.1 or finished >= run.units_total:
                self.shown = now
                self.stream.write("\r\033[K" + self.line(run), style_func=self.plain, ending="")
                self.stream.flush()
            return
        if run.units_total and finished * 10 >= self.next_tenth * run.units_total:
            self.next_tenth = finished * 10 // run.units_total + 1
            self.stream.write(self.line(run), style_func=self.plain)
            self.stream.flush()

    def end(self) -> None:
        if self.tty:
            self.stream.write("", style_func=self.plain)


class Command(BaseCommand):
    help = (
        "Run judges on a campaign's pairs (and readings, for one-article criteria), resuming where earlier runs stopped. The budget covers all the "
        "judges named, run one after the other; progress goes to stderr, a summary with the exact cost to stdout."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--judge", required=True, action="append", help="judge name (repeat for several)")
        parser.add_argument(
            "--concurrency", type=int,
            help="requests in flight at once (default: 4 on a hosted endpoint, 1 on this machine's own server; judges/serving.py)",
        )  # fmt: skip
        parser.add_argument("--budget-usd", type=money, help="stop before spending more than this, in USD")
        parser.add_argument(
            "--swap", action="store_true", help="judge both orders of every pair (default: one order drawn per pair and category)"
        )
        parser.add_argument("--limit", type=int, help="only the first N pairs of the campaign (and the readings of their articles)")
        parser.add_argument("--seed", type=int, default=0, help="draws the order shown to the judge (default 0)")
        parser.add_argument(
            "--batch",
            action="store_true",
            help="send LLM judges' units through the provider's Batch API (OpenAI, Azure and compatible): billed at the batch prices, "
            "answered within 24 h; a killed or stopped run resumes by polling its batches, never submitting them again",
        )
        parser.add_argument(
            "--guess",
            action="store_true",
            help="also ask each LLM judge the guess question (which article is the reference?) about each pair holding the reference, "
            "in each order shown: one more short call per pair and order, in a conversation of its own, billed and budgeted like the others",
        )
        parser.add_argument(
            "--steps",
            action="store_true",
            help="also ask each LLM judge to vote up or down on each of the agents' steps (a campaign that shows steps): one call "
            "per step, with the task and the steps before it, billed and budgeted like the others",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="estimate tokens and cost (synchronous and batch); send and write nothing"
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        if campaign.labels_only:
            # Before anything else, the dry run included: its estimates would be built on empty texts.
            raise CommandError(
                f"'{campaign.name}' is a labels-only campaign: its articles have no texts for a judge to read. "
                "Import the judges' verdicts with import_labels instead."
            )
        names = list(dict.fromkeys(options["judge"]))
        judges = campaign_judges_named(campaign=campaign, names=names)
        missing = [n for n in names if n not in judges]
        if missing:
            raise CommandError(f"No judge named {', '.join(repr(n) for n in missing)}; add it with add_judge.")
        plan = {"swap": options["swap"], "limit": options["limit"], "seed": options["seed"]}
        if options["guess"]:
            plan["guess"] = True
        if options["steps"]:
            if not campaign.show_steps:
                raise CommandError(f"'{campaign.name}' does not show the agents' steps: there are no steps to vote on (--steps).")
            plan["steps"] = True
        if options["dry_run"]:
            self.dry_run(campaign, [judges[n] for n in names], plan)
            return
        budget = options["budget_usd"]
        spent = Decimal(0)
        failed = []
        for name in names:
            judge = judges[name]
            left = None if budget is None else budget - spent
            if left is not None and left <= 0:
                self.stdout.write(f"{name}: not started, the budget of ${budget} is spent.")
                continue
            try:
                # Baselines cost nothing and are judged offline: --batch is for the LLM judges named with them.
                batch = options["batch"] and judge.kind == Judge.Kind.LLM
                concurrency = options["concurrency"] or (
                    endpoint_defaults(judge.base_url).concurrency if judge.kind == Judge.Kind.LLM else 4
                )
                if judge.kind == Judge.Kind.LLM and not batch:
                    self.warn_if_over_slots(judge, concurrency)
                # Likewise --guess and --steps: baselines cannot answer a question.
                llm = judge.kind == Judge.Kind.LLM
                asked = {**plan, "guess": plan.get("guess", False) and llm, "steps": plan.get("steps", False) and llm}
                run = judge_run_create(campaign=campaign, judge=judge, concurrency=concurrency, budget_usd=left, batch=batch, **asked)
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
            progress = Progress(self.stderr, name)
            try:
                run = judge_run_execute(run=run, progress=progress)
            finally:
                progress.end()
            spent += run.cost_usd or 0  # a budget is refused to judges without prices
            self.summary(run)
            if run.status == JudgeRun.Status.FAILED:
                failed.append(f"{name}: {run.message}")
        if budget is not None:
            self.stdout.write(f"total: ${spent:.8f} of the ${budget} budget")
        if failed:
            raise CommandError(f"run(s) failed: {' '.join(failed)}")

    def warn_if_over_slots(self, judge: Judge, concurrency: int) -> None:
        """Before the run starts: a warning when it would keep more requests in flight than the
        server serves at once (judges/serving.py); nothing when the server does not say."""
        if warning := judge_concurrency_warning(judge=judge, concurrency=concurrency):
            self.stderr.write(f"{judge.name}: warning: {warning}")

    def summary(self, run: JudgeRun) -> None:
        pending = run.units_total - run.units_done - run.errors
        from_cache = run.judge_calls.filter(from_cache=True).count()
        cost = "cost unknown (the judge has no prices)" if run.cost_usd is None else f"cost ${run.cost_usd:.8f}"
        self.stdout.write(
            f"{run.judge.name}: {run.get_status_display().lower()} (run #{run.pk}) — {run.units_done}/{run.units_total} units done, "
            f"{run.errors} in error, {pending} pending; {run.calls} calls ({from_cache} from the cache); "
            f"tokens: {run.prompt_tokens} prompt ({run.cached_tokens} cached), {run.completion_tokens} completion; {cost}"
        )
        if run.batch:
            through = run.judge_calls.filter(batch__isnull=False, status=JudgeCall.Status.COMPLETED)
            batches = through.values("batch").distinct().count()
            costs = list(through.values_list("cost_usd", flat=True))
            cost = None if None in costs else sum(costs, Decimal(0))
            waiting = JudgeBatch.objects.filter(judge=run.judge, run__campaign=run.campaign).exclude(status=JudgeBatch.Status.READ).count()
            self.stdout.write(
                f"  Batch API: {through.count()} calls answered through {batches} batch(es), {usd(cost)} at the batch prices; "
                f"{waiting} batch(es) still at the provider"
            )
        if run.message:
            self.stdout.write(f"  {run.message}")
        unanswered, reserved = unanswered_calls(judge=run.judge, campaign=run.campaign)
        if unanswered:
            bound = f"up to ${reserved:.8f}" if reserved is not None else "at a cost unknown (the judge has no prices)"
            self.stdout.write(
                f"  possibly billed: {unanswered} call{'s' if unanswered != 1 else ''} sent with no answer recorded "
                f"(a run was killed with them in flight), {bound} on top of the recorded cost"
            )

    def dry_run(self, campaign: Campaign, judges: list[Judge], plan: dict) -> None:
        total: Decimal | None = Decimal(0)
        batch_total: Decimal | None = Decimal(0)
        for judge in judges:
            estimate = run_estimate(campaign=campaign, judge=judge, **plan)
            total = None if total is None or estimate.cost_usd is None else total + estimate.cost_usd
            batch_total = None if batch_total is None or estimate.batch_cost_usd is None else batch_total + estimate.batch_cost_usd
            if judge.kind != Judge.Kind.LLM:
                self.stdout.write(f"{judge.name}: {estimate.units_pending} of {estimate.units_total} units to judge offline; cost $0")
                continue
            self.stdout.write(
                f"{judge.name}: {estimate.units_pending} of {estimate.units_total} units to judge, {estimate.requests} requests "
                f"({estimate.cached} answered from the cache); estimated {estimate.prompt_tokens} prompt + "
                f"{estimate.completion_tokens} completion tokens, {usd(estimate.cost_usd, 4)} synchronous, "
                f"{usd(estimate.batch_cost_usd, 4)} with --batch" + ("" if judge.costs_known else " (the judge has no prices)")
            )
        self.stdout.write(
            f"estimated total: {usd(total, 4)} synchronous, {usd(batch_total, 4)} with --batch (dry run: nothing was sent or written)"
        )
