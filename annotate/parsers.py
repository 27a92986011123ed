"""DRF's JSON parser with the checks forms get from annotate.middleware.

A body nested deeper than MAX_JSON_DEPTH, or holding a NUL or a lone surrogate
(the JSON escapes \\u0000 and \\ud800 are valid JSON) in any key or value, is a
400 naming the problem instead of a RecursionError or a database error.
"""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from common.storable import MAX_JSON_DEPTH, json_problem


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            # json's C scanner gives up far below 50,000 levels; the walk below bounds the rest.
            raise ParseError(f"JSON parse error - the body nests deeper than {MAX_JSON_DEPTH} levels.") from None
        problem = json_problem(data)
        if problem:
            raise ParseError(f"JSON refused - {problem}.")
        return data
