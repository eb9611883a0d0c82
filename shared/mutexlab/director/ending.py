"""What a node's standard error says as it ends: the error named above a stack (``HEADLINE``),
a launcher that could not run the command (``COULD_NOT_RUN``, ``LAUNCHER``: the program never
ran), and the script an interpreter was given (``SCRIPT``)."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable

# A line of standard error that names the error above a stack printed below it: JavaScript's
# ``TypeError: …`` (and ``Error [ERR_…]: …``), Java's ``Exception in thread "main" java.lang.…``,
# a Rust or Go panic, C++'s uncaught exception, an Erlang escript's ``escript: exception error: …``
# (above its ``in function``/``in call from`` lines). The last three lines alone would be stack frames.
HEADLINE = re.compile(
    r"(?:Exception in thread \S+ |Uncaught )?(?:[\w$]+\.)*[\w$]*(?:Error|Exception)(?: \[[^\]]*\])?(?::|$)"
    r"|thread '[^']*'.* panicked at|panic: |terminate called after throwing"
    r"|(?:escript: )?exception (?:error|exit|throw):"
)
# What a launcher writes as its last line when it could not run a command: setpriv's "failed to
# execute", a shell's "not found" (dash) / "command not found" (bash) / "Permission denied" / "bad
# interpreter" / "cannot execute", env's "No such file or directory". A status 126 or 127 said
# otherwise (an escript's uncaught exception exits 127 too) is the program's own end: it ran.
COULD_NOT_RUN = re.compile(
    r"failed to execute|not found|No such file or directory|Permission denied|cannot execute"
    r"|Exec format error|bad interpreter",
    re.IGNORECASE,
)
# The same line in the user's language (bash, env and setpriv are translated: "Befehl nicht
# gefunden"): a launcher names itself first, which no translation changes.
LAUNCHER = re.compile(r"(?:\S*/)?(?:setpriv|env|sh|bash|dash|zsh|ksh|busybox): ")
# An argument naming a script for an interpreter to run (no spaces: ``sh -c 'a; ./b.sh'`` is code)
SCRIPT = re.compile(
    r"[^\s-][^\s]*\.(?:py|js|mjs|cjs|ts|pl|rb|lua|tcl|escript|erl|exs|sh|bash|java|awk|jq|php|R|jl)"
)


def script_of(argv: list[str]) -> str | None:
    """The script an interpreter is given: its first argument with a script's suffix, else None."""
    return next((a for a in argv[1:] if SCRIPT.fullmatch(a)), None)


def last_lines(err_tail: bytes) -> str:
    """The last three lines of ``err_tail`` (at most 300 characters), after the line naming the
    error when one above them does (``HEADLINE``), or ""."""
    lines = [line.strip() for line in err_tail.decode("utf-8", "replace").splitlines()]
    kept = [line for line in lines if line]
    said = " | ".join(kept[-3:])
    headline = next((line for line in reversed(kept[:-3]) if HEADLINE.match(line)), None)
    if headline is None:
        return said if len(said) <= 300 else "…" + said[-299:]  # its end says most
    head = headline if len(headline) <= 150 else headline[:149] + "…"
    room = 300 - len(head) - len(" | … | ")
    return f"{head} | … | " + (said if len(said) <= room else "…" + said[-(room - 1) :])


def never_ran(err_tail: bytes) -> bool:
    """Whether a node that ended 126 or 127 before writing anything never ran, by ``err_tail``:
    it says nothing, or its last line is a launcher's that could not run a command
    (``COULD_NOT_RUN``; in another language, ``LAUNCHER``) and no line names an error of a program
    that ran (``HEADLINE``: an escript's uncaught exception exits 127, its stack below ``escript:
    exception error:``)."""
    # by newlines alone: env names a `#!` line's `perl\r` with its \r, which is no line's end
    lines = [line.strip() for line in err_tail.decode("utf-8", "replace").split("\n")]
    kept = [line for line in lines if line]
    if not kept:
        return True
    last = kept[-1]
    said = COULD_NOT_RUN.search(last) is not None or LAUNCHER.match(last) is not None
    return said and not any(HEADLINE.match(line) for line in kept)


def how_ended(code: int) -> str:
    """How a process that ended with status ``code`` (a signal's negative) ended, in words."""

    def name(number: int) -> str:
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"

    if code < 0:
        return f"was killed by signal {-code} ({name(-code)})"
    if 128 < code < 128 + 65:  # as a shell (or mutexlab's MPI adapter) reports a killed program
        return f"exited with status {code} (128 + {code - 128}: killed by {name(code - 128)})"
    return f"exited with status {code}"


def missing_script(argv: list[str], err_tail: Callable[[], bytes]) -> str | None:
    """The script an interpreter was given (its first argument with a script's suffix) when no
    such file exists and its standard error (``err_tail()``, read only then) names it (python3's
    "can't open file", node's "Cannot find module", perl's "Can't open perl script"), else None."""
    script = script_of(argv)
    if script is None or os.path.exists(script):
        return None
    return script if os.path.basename(script).encode() in err_tail() else None
