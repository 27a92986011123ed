"""The `<id:...>` path converter: a database id of at most 18 digits.

Django's `<int:...>` takes any number of digits, so /work/99999999999999999999999/
reached the database, where PostgreSQL's bigint ends at 19 digits. Eighteen
digits stay below that limit and far above any id this project will issue; a
longer number matches no URL and is a 404. Importing this module registers the
converter (once: Django refuses a second registration under one name).
"""

from django.urls import register_converter


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
