from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from common.names import NAME_RULE
from judges.check import judge_check
from judges.models import Judge
from judges.services import judge_build, judge_create


def price(value: str) -> Decimal:
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ValueError(value) from None


class Command(BaseCommand):
    help = (
        "Add a judge: an OpenAI-compatible model (the API key is read at run time from the environment "
        "variable named by --api-key-env, never stored) or an offline baseline (--kind length|words-to-watch|random)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help=f"a short name such as gpt-4.1: {NAME_RULE}")
        parser.add_argument("--kind", choices=[k for k in Judge.Kind.values if k != Judge.Kind.IMPORTED], default=Judge.Kind.LLM)
        parser.add_argument("--model", default="", help="the model id the endpoint expects")
        parser.add_argument(
            "--endpoint",
            default="",
            help="one of the endpoints configured on the server (JUDGE_ENDPOINTS, e.g. openai): gives the base URL and the key variable",
        )
        parser.add_argument("--base-url", default="", help="e.g. https://api.openai.com/v1 (its host must be in JUDGE_BASE_URL_HOSTS)")
        parser.add_argument(
            "--api-key-env",
            default="",
            help="NAME of the environment variable that holds the key (not the key): ends in _API_KEY, e.g. OPENAI_API_KEY, "
            "or is listed in the JUDGE_API_KEY_ENVS setting",
        )
        parser.add_argument("--input-price", type=price, help="USD per million prompt tokens (without both prices, costs are unknown)")
        parser.add_argument("--output-price", type=price, help="USD per million completion tokens")
        parser.add_argument("--cached-input-price", type=price, help="USD per million cached prompt tokens (default: the input price)")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=4096)
        parser.add_argument("--timeout", type=float, help="seconds to wait for one answer (default 120)")
        parser.add_argument("--max-attempts", type=int, help="attempts when the answer is unreadable (default 3)")
        parser.add_argument(
            "--rpm", type=int, help="requests per minute the provider allows: runs space their requests out under it (default: no limit)"
        )
        parser.add_argument(
            "--tpm",
            type=int,
            help="tokens per minute (prompt + completion) the provider allows, paced on estimated tokens (default: no limit)",
        )
        parser.add_argument(
            "--batch-input-price", type=price, help="USD per million prompt tokens in batch runs (default: half the input price)"
        )
        parser.add_argument(
            "--batch-output-price", type=price, help="USD per million completion tokens in batch runs (default: half the output price)"
        )
        parser.add_argument("--per-criterion", action="store_true", help="one call per criterion instead of one per category")
        parser.add_argument("--no-structured-output", action="store_true", help="do not send a JSON schema (response_format)")
        parser.add_argument(
            "--confidence",
            default="none",
            help="each verdict's confidence: none (default), logprobs (token probabilities, where the endpoint gives them) "
            "or samples:N (N calls per unit and order, each billed; the share agreeing; give a temperature above 0)",
        )
        parser.add_argument("--update", action="store_true", help="change the judge if the name already exists")
        parser.add_argument(
            "--check",
            action="store_true",
            help="first test the connection with one minimal call (URL, key, model, schema); save nothing unless it works",
        )

    def handle(self, *args, **options):
        arguments = self.service_arguments(options)
        try:
            if options["check"]:
                result = judge_check(judge=judge_build(**arguments))
                if not result.ok:
                    raise CommandError(f"Connection test failed; the judge was not saved. {result.message}")
                self.stdout.write(result.message)
            judge, created = judge_create(**arguments)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.report(judge, created)

    def service_arguments(self, options) -> dict:
        return dict(
            name=options["name"],
            kind=options["kind"],
            model=options["model"],
            endpoint=options["endpoint"],
            base_url=options["base_url"],
            api_key_env=options["api_key_env"],
            input_price=options["input_price"],
            output_price=options["output_price"],
            cached_input_price=options["cached_input_price"],
            temperature=options["temperature"],
            max_tokens=options["max_tokens"],
            timeout_seconds=options["timeout"],
            max_attempts=options["max_attempts"],
            rpm=options["rpm"],
            tpm=options["tpm"],
            batch_input_price=options["batch_input_price"],
            batch_output_price=options["batch_output_price"],
            per_criterion=options["per_criterion"],
            confidence=options["confidence"],
            structured_output=not options["no_structured_output"],
            update=options["update"],
        )

    def report(self, judge: Judge, created: bool) -> None:
        verb = "added" if created else "updated"
        if judge.kind == Judge.Kind.LLM:
            prices = (
                f"${judge.input_price}/M in, ${judge.output_price}/M out"
                if judge.costs_known
                else "no prices, so its costs are unknown (give --input-price and --output-price)"
            )
            self.stdout.write(
                f"Judge '{judge.name}' {verb}: {judge.model} at {judge.base_url}, {judge.get_mode_display().lower()}; "
                f"{prices}. The key is read from ${judge.api_key_env} when a run starts."
            )
            limits = [f"{value} {label}" for value, label in ((judge.rpm, "requests"), (judge.tpm, "tokens")) if value]
            if limits:
                self.stdout.write(f"Runs are paced under {' and '.join(limits)} per minute.")
            if judge.confidence != "none":
                self.stdout.write(f"Each verdict carries a confidence ({judge.confidence}).")
        else:
            self.stdout.write(f"Judge '{judge.name}' {verb}: {judge.get_kind_display()}, {judge.get_mode_display().lower()}.")
