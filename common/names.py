"""The one naming rule for system keys and judge names, and the reference system's key.

Names enter by many paths (importers, commands, forms, services, model fields); every
one checks them with `name_problem`. Pure: no Django.
"""

import re

REFERENCE_SYSTEM = "wikipedia"

# A system key or a judge name, as real model names are spelled (`pythia-6.9b`,
# `cerebras-gpt-6.7B`, `gpt-3.5-turbo`). ASCII letters and digits, '-', '_' and '.'
# keep a name safe in a URL path segment, an HTML id, a file name and a CSV cell
# (no leading '-', '=', '+' or '@'); the first character and the rules on '.'
# mean a name is never '.', '..', hidden, or a path trick. No ':' either, which
# `calibration.selectors.HUMAN_PREFIX` relies on.
NAME_MAX_LENGTH = 100
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
NAME_RULE = (
    f"1 to {NAME_MAX_LENGTH} characters among ASCII letters, digits, '-', '_' and '.', "
    "starting with a letter or digit, with no '..' and not ending in '.'"
)


def name_problem(text: object, *, what: str = "name") -> str | None:
    """None when `text` is a valid system key or judge name, else the message naming the rule.

    `what` starts the message ("system", "judge name"): "system 'a b' must be 1 to 100 ...".
    """
    if isinstance(text, str) and NAME.fullmatch(text) and ".." not in text and not text.endswith("."):
        return None
    # Control characters, NULs and lone surrogates are spelled as escapes, so the message prints and stores.
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))
    return f"{what} '{shown}' must be {NAME_RULE}"
