"""A condense summarizer written in Python, built with componentize-py.

It targets `summarizer-world` of wit/condense.wit, as any third-party
summarizer would, and is loaded by the host like the Rust ones
(`condense compress --summarizer summarizer-python.wasm`); see README.md.

The summary is deliberately simple, deterministic and easy to tell apart from
the embedded heuristic one:

    Summary (python):
    <the previous summary's lines>
    - asked: <first line of each folded user message>
    - said: <first sentence of each folded assistant text>
    - ran 12 tool calls (Bash 7, Read 4, Edit 1)

It is cut to the token budget by whole lines: the oldest `said` lines go
first, then the oldest of the others (what the user asked matters longer than
what the assistant said), so that later folds keep adding to it.

Settings (a JSON object, `{}` for the defaults):
    prefix          the bullet put before each line this fold writes
                    (default "- ")
    max_line_chars  the longest a quoted line may be (default 200)
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import (
    Part_Text,
    Part_ToolCall,
    Role,
    SummaryRequest,
)

HEADER = "Summary (python):"
DEFAULTS = {"prefix": "- ", "max_line_chars": 200}


class Summarizer(exports.Summarizer):
    """The export: componentize-py looks for a class named after the interface."""

    def summarize(self, request: SummaryRequest) -> str:
        try:
            return summarize(request)
        except Err:
            raise
        except Exception as e:
            # An uncaught exception would trap the instance; an error result
            # lets the host name the problem and try the next summarizer.
            raise Err(f"{type(e).__name__}: {e}")


class SummarizerSettings(exports.SummarizerSettings):
    """The `summarizer-settings` export: the host checks a config's settings
    for this summarizer when it starts, with the same reader `summarize` uses."""

    def settings_schema(self) -> str:
        return json.dumps(SCHEMA)

    def validate_settings(self, settings: str) -> None:
        read_settings(settings)


SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "summarizer-python settings",
    "type": "object",
    "properties": {
        "prefix": {
            "description": "The bullet put before each line this fold writes.",
            "type": "string",
            "default": DEFAULTS["prefix"],
        },
        "max_line_chars": {
            "description": "The longest a quoted line may be.",
            "type": "integer",
            "minimum": 20,
            "default": DEFAULTS["max_line_chars"],
        },
    },
    "additionalProperties": False,
}


def summarize(request: SummaryRequest) -> str:
    settings = read_settings(request.settings)
    lines = previous_lines(request.previous_summary)
    lines += folded_lines(request.messages, settings)
    return fit(lines, request.max_tokens)


def read_settings(text: str) -> dict:
    """The settings JSON over the defaults; an unknown key or a wrong type is
    an error, so a typo does not go unnoticed."""
    try:
        given = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise Err(f"settings: not JSON: {e}")
    if not isinstance(given, dict):
        raise Err("settings: expected a JSON object")
    settings = dict(DEFAULTS)
    for key, value in given.items():
        if key not in DEFAULTS:
            raise Err(f"settings: unknown key `{key}` (known: {', '.join(DEFAULTS)})")
        # bool is an int in Python: reject it explicitly for the number.
        expected = type(DEFAULTS[key])
        if not isinstance(value, expected) or isinstance(value, bool):
            kind = "a string" if expected is str else "an integer"
            raise Err(f"settings: `{key}` must be {kind}")
        settings[key] = value
    # A line break in the bullet would split the lines a later fold reads back.
    if len((settings["prefix"] + "x").splitlines()) != 1:
        raise Err("settings: `prefix` must not break the line")
    if settings["max_line_chars"] < 20:
        raise Err("settings: `max_line_chars` must be at least 20")
    return settings


def previous_lines(previous: str) -> list:
    """The lines of the previous summary, without our header. A summary another
    summarizer wrote (an earlier one of a chain) is kept as it is."""
    lines = [line for line in previous.splitlines() if line.strip()]
    if lines and lines[0] == HEADER:
        lines = lines[1:]
    return lines


def folded_lines(messages: list, settings: dict) -> list:
    prefix, width = settings["prefix"], settings["max_line_chars"]
    lines = []
    calls = {}
    for message in messages:
        text = "\n".join(p.value for p in message.parts if isinstance(p, Part_Text))
        for part in message.parts:
            if isinstance(part, Part_ToolCall):
                calls[part.value.name] = calls.get(part.value.name, 0) + 1
        # Tool results, thinking and opaque parts are left out: this summary
        # keeps only what the user asked and what the assistant said.
        if message.role == Role.USER and (line := first_line(text)):
            lines.append(f"{prefix}asked: {clip(line, width)}")
        elif message.role == Role.ASSISTANT and (sentence := first_sentence(text)):
            lines.append(f"{prefix}said: {clip(sentence, width)}")
    if calls:
        # Most used first, ties by name: the same input gives the same bytes.
        ranked = sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))
        names = ", ".join(f"{name} {n}" for name, n in ranked[:5])
        more = ", ..." if len(ranked) > 5 else ""
        total = sum(calls.values())
        lines.append(f"{prefix}ran {total} tool call{'s' * (total != 1)} ({names}{more})")
    return lines


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    line = first_line(text)
    return SENTENCE_END.split(line, maxsplit=1)[0] if line else ""


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


# A line the assistant said, whatever bullet an earlier fold put before it.
SAID = re.compile(r"\W*said: ")


def fit(lines: list, max_tokens: int) -> str:
    """The header and the lines that fit `max_tokens`, in their order.

    The compressor cuts an over-budget summary at a character (mid-line), so
    this stays under the budget itself, by whole lines. The estimate of the
    joined text is at most the sum of each line's (rounded up) plus one token
    per newline (in `text_millis` a run's cost depends only on the class of
    the run after it, and a newline after it never costs more than the end
    of the text), which is what is counted here: each line is measured once,
    not the whole text again after each line."""
    used = tokens(HEADER)
    if used > max_tokens:
        raise Err(f"a budget of {max_tokens} tokens cannot hold even the header")
    costs = [tokens(line) + 1 for line in lines]  # + the newline before it
    used += sum(costs)
    said = [i for i, line in enumerate(lines) if SAID.match(line)]
    others = [i for i, line in enumerate(lines) if not SAID.match(line)]
    dropped = set()
    for i in said + others:
        if used <= max_tokens:
            break
        used -= costs[i]
        dropped.add(i)
    return "\n".join([HEADER] + [line for i, line in enumerate(lines) if i not in dropped])


# condense's token estimate, ported from guest/model/src/tokens.rs (read that
# for why each cost is what it is). The compressor measures the summary with
# it, and chars/4 undercounts code and punctuation, and CJK text by far. The
# port matches it on ASCII; outside ASCII, Python's `str.isalpha` accepts
# fewer characters than Rust's `char::is_alphabetic`, and the characters in
# between cost more here as symbols, so the port errs on the safe side.

LETTER, DIGIT, SPACE, NEWLINE, PUNCT, CJK, OTHER_LETTER, SYMBOL = range(8)

CJK_RANGES = (
    (0x3000, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)


def char_class(c: str) -> int:
    if c < "\x80":
        if "a" <= c <= "z" or "A" <= c <= "Z":
            return LETTER
        if "0" <= c <= "9":
            return DIGIT
        if c in " \t":
            return SPACE
        if c in "\n\r":
            return NEWLINE
        return PUNCT
    code = ord(c)
    if any(lo <= code <= hi for lo, hi in CJK_RANGES):
        return CJK
    return OTHER_LETTER if c.isalpha() else SYMBOL


def continues(run: int, nxt: int) -> bool:
    return nxt == run or {run, nxt} == {LETTER, OTHER_LETTER}


def run_cost(cls: int, length: int, humps: int, nxt: int) -> int:
    """Thousandths of a token for a run of one class followed by class `nxt`."""
    if cls == LETTER:
        pieces = humps + 1
        return pieces * 1000 + max(0, length - 6 * pieces) * 200
    if cls == DIGIT:
        return -(-length // 3) * 1000
    if cls == SPACE:
        own = 0 if length == 1 else 1000
        return own + 1000 if nxt == DIGIT else own
    if cls == NEWLINE:
        return 1000
    if cls == PUNCT:
        if length == 1 and nxt == LETTER:
            return 330
        own = max(length * 400, 1000)
        return own - 1000 if nxt == NEWLINE else own
    if cls == CJK:
        return length * 700
    if cls == OTHER_LETTER:
        return length * 250 + 300
    return min(length, 4) * 1000 + max(0, length - 4) * 200


def text_millis(text: str) -> int:
    total, i, n = 0, 0, len(text)
    if n == 0:
        return 0
    cls = char_class(text[0])
    while True:
        prev_lower = "a" <= text[i] <= "z"
        length, humps, nxt = 1, 0, None
        i += 1
        while i < n:
            c = text[i]
            k = char_class(c)
            if not continues(cls, k):
                nxt = k
                break
            if prev_lower and "A" <= c <= "Z":
                humps += 1
            prev_lower = "a" <= c <= "z"
            length += 1
            i += 1
        # The end of the text counts as whitespace: nothing merges across it.
        total += run_cost(cls, length, humps, SPACE if nxt is None else nxt)
        if nxt is None:
            return total
        cls = nxt


def tokens(text: str) -> int:
    return -(-text_millis(text) // 1000)
