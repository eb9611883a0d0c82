"""The ``mutexlab`` command's entry point: ``python -m mutexlab`` and the console script.

``cli`` (and through it most of mutexlab) is imported inside the guard: a Ctrl-C while the modules
are still being imported (a second or more on a loaded machine) exits 130 with one line, as one
during the command does (``cli.main``) — never a traceback. Nothing exists yet to be left behind."""

import sys

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped


def main(argv: list[str] | None = None) -> int:
    try:
        from .cli import main as run_command

        return run_command(argv)
    except KeyboardInterrupt:  # start-up: cli.main answers any later one itself
        print("interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
