"""The ``linesnap`` command: ``extract``, ``refine`` and ``knapsack`` run headless; anything else opens the window.

Each branch imports what it runs, so that the headless commands never load Qt
and neither loads the other's solvers.
"""

from __future__ import annotations

import sys

USAGE = """\
usage: linesnap [IMAGE] [--screenshot OUT.png]     open the desktop application
       linesnap extract IMAGE --start X,Y --end X,Y [options]   (linesnap extract -h)
       linesnap refine LINES IMAGE... -o OUT [options]             (linesnap refine -h)
       linesnap knapsack {solve,batch,generate} ...             (linesnap knapsack -h)
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``linesnap`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except BrokenPipeError:  # linesnap extract ... | head
        from core.cli.pipes import stdout_closed

        return stdout_closed()
    except KeyboardInterrupt:  # Ctrl+C before a command's own handling (loading its modules, starting)
        print("\nlinesnap: interrupted", file=sys.stderr)
        return 130


def _dispatch(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE, end="")
        return 0
    if argv[:1] == ["extract"]:
        from core.cli.extract import extract_main

        return extract_main(argv[1:])
    if argv[:1] == ["refine"]:
        from core.cli.refine import refine_main

        return refine_main(argv[1:])
    if argv[:1] == ["knapsack"]:
        from core.cli.knapsack import main as knapsack_main

        return knapsack_main(argv[1:])
    if argv and _looks_like_a_command(argv[0]):
        print(f"linesnap: error: unknown command {argv[0]!r}: use extract, refine or knapsack, or give an image "
              f"file to open\n{USAGE}", end="", file=sys.stderr)
        return 2
    from app.main import run_gui

    return run_gui(argv)


def _looks_like_a_command(word: str) -> bool:
    """A first word that is no option, no file and has no file extension: a mistyped command (``Extract``,
    ``knapsak``), which would otherwise open the window on an image of that name."""
    from pathlib import Path

    return not word.startswith("-") and not Path(word).suffix and not Path(word).exists()


if __name__ == "__main__":
    sys.exit(main())
