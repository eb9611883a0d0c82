"""Regular expressions a log supplies, run with a time limit (docs/verify-any-log.md#shiviz--govector-logs).

A ShiViz log's first line may carry its record regex and its second the delimiter between
executions; ``--regex`` gives one too. A regex can backtrack without end (``(?<host>(a|aa)+)b``
against a line of a's takes longer than the universe), so one from outside runs on the ``regex``
module with a time limit per match (``limits.REGEX_MATCH_SECONDS``) and for the whole log
(``limits.REGEX_BASE_SECONDS`` plus ``limits.REGEX_RECORD_SECONDS`` per record read): beyond it
the log is refused, naming the line. Why ``regex`` and not RE2, which never backtracks: it reads
every regex Python's ``re`` reads, back-references included (``\\k<name>``, which ShiViz's
JavaScript regexes may use), so no log read before is refused now. GoVector's own regex, which
mutexlab writes and knows to be linear from one start, keeps Python's faster ``re`` (a time limit
costs about 9 µs a match). A record is matched where it must start (``match``), not searched for
(``search`` tries every place of a line: a time quadratic in its length).
"""

from __future__ import annotations

import re
import time
from typing import Any

import regex

from .. import limits
from ..trace import TraceError


class LogRegex:
    """A compiled regex (``re`` when ``trusted``, else ``regex``) whose ``search`` keeps to the
    limits; TraceError (``source:line``) beyond them."""

    def __init__(self, python: str, flags: int, trusted: bool, shown: str, label: str) -> None:
        self.trusted = trusted
        self.label = label  # whose regex: "the log's regex", "--regex", "the log's delimiter"
        self.compiled: Any = re.compile(python, flags) if trusted else regex.compile(python, flags)
        self.pattern = python
        self.shown = shown  # as the log or --regex wrote it
        self.groupindex = self.compiled.groupindex
        self.spent = 0.0
        self.matches = 0

    def search(self, text: str, where: str) -> Any:
        return self._limited(self.compiled.search, text, where)

    def match(self, text: str, pos: int, where: str) -> Any:
        """The match that starts at ``pos``, if any, within the same limits: what ``search`` finds
        when no match starts earlier, at the cost of one start, not one per place of the text."""
        return self._limited(self.compiled.match, text, where, pos)

    def _limited(self, call: Any, text: str, where: str, *pos: int) -> Any:
        if self.trusted:
            return call(text, *pos)
        self.matches += 1
        allowed = limits.REGEX_BASE_SECONDS + limits.REGEX_RECORD_SECONDS * self.matches - self.spent
        timeout = min(limits.REGEX_MATCH_SECONDS, allowed)
        start = time.perf_counter()
        try:
            if timeout <= 0:
                raise TimeoutError
            return call(text, *pos, timeout=timeout)
        except TimeoutError:
            raise TraceError(
                f"{where}: {self.label} {quoted(self.shown[:80])} took more than {timeout:.2g} s on this line "
                f"(the limit of one match is {limits.REGEX_MATCH_SECONDS:g} s, of all "
                f"{limits.REGEX_BASE_SECONDS:g} s plus {limits.REGEX_RECORD_SECONDS * 1e6:g} µs a record): "
                "a regex that backtracks without end?"
            ) from None
        finally:
            self.spent += time.perf_counter() - start


def quoted(regex: str) -> str:
    """``regex`` between quotes as the user wrote it (``'\\S+'``, not Python's ``'\\\\S+'``, which
    would read as another regex), or Python's form when it holds what cannot be shown (a newline)."""
    return f"'{regex}'" if regex.isprintable() else repr(regex)


def compile_log_regex(
    python: str, flags: int, trusted: bool, shown: str, label: str = "the log's regex"
) -> LogRegex:
    """``python`` compiled (``re.error`` and ``regex.error`` both raise ``ValueError``); ``shown``:
    the regex as the log (or ``--regex``) wrote it, ``label`` whose it is, for errors."""
    try:
        return LogRegex(python, flags, trusted, shown, label)
    except (re.error, regex.error) as exc:
        raise ValueError(str(exc)) from None
