"""What every knapsack instance reader shares: the instance record, the format error, numbered lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.knapsack.problems import MAX_TOTAL

__all__ = ["KnapsackFormatError", "KnapsackInstance", "NumberedLines", "build_problem"]


class KnapsackFormatError(ValueError):
    """An instance file that cannot be read: missing, malformed or of an unknown format."""


@dataclass(frozen=True, eq=False)
class KnapsackInstance:
    """A named problem with what its file knows of the solution.

    Attributes
    ----------
    name : str
    problem : KP1, KP2, SubsetSum or MCKP
    optimum : int or None
        The known optimal value.
    known_choice : (k,) int64 ndarray or None
        Sorted indices of an optimal choice of items, when the file lists one.
    """

    name: str
    problem: object
    optimum: int | None = None
    known_choice: np.ndarray | None = None


class NumberedLines:
    """Numbered lines of a text file, for error messages that name file and line."""

    def __init__(self, path: Path):
        self.path = path
        try:
            # utf-8-sig: files saved by Windows editors begin with a byte-order mark
            self.lines = path.read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise KnapsackFormatError(f"{path}: cannot read: {exc}") from None

    def error(self, number: int, message: str) -> KnapsackFormatError:
        return KnapsackFormatError(f"{self.path}:{number}: {message}")

    def check_nothing_after(self, last: int, what: str) -> None:
        """Only blank lines may follow line ``last``; else an error naming the first that does not, and
        ``what`` (what the file said it holds)."""
        extra = next((k + 1 for k in range(last, len(self.lines)) if self.lines[k].strip()), None)
        if extra is not None:
            raise self.error(extra, f"{what}, but more lines follow")

    def ints(self, number: int, count: int | None = None, sep: str | None = None) -> list[int]:
        """The integers of line ``number`` (1-based)."""
        if number > len(self.lines):
            raise self.error(number, "unexpected end of file")
        fields = self.lines[number - 1].strip().split(sep)
        try:
            values = [int(f) for f in fields if f.strip()]
        except ValueError:
            raise self.error(number, f"expected integers, got {self.lines[number - 1].strip()!r}") from None
        if count is not None and len(values) != count:
            raise self.error(number, f"expected {count} integers, got {len(values)}")
        self.check_int64(number, values)
        return values

    def check_in_range(self, numbers, values, what: str) -> None:
        """Refuse, naming its line (``numbers``: each row's line number, or one for all), the first value of
        ``values`` (a row of several values each: an item's) outside [0, 2**62): before a problem's own check,
        which knows item indices only (or a profit the file never held, such as a 2DPackLib item's area), and
        would take a profit past 2**62 for a sum past it, on the instance's first line."""
        values = np.asarray(values)
        rows = values.reshape(len(values), -1)
        outside = np.flatnonzero(((rows < 0) | (rows >= MAX_TOTAL)).any(axis=1))
        if len(outside):
            k = int(outside[0])
            number = numbers if isinstance(numbers, int) else numbers[k]
            if rows[k].min() < 0:
                raise self.error(number, f"{what} must be non-negative; got {int(rows[k].min())}")
            raise self.error(number, f"{what} must be below 2**62; got {int(rows[k].max())}")

    def check_int64(self, number: int, values) -> None:
        """Refuse, naming line ``number``, integers that numpy's int64 cannot hold (it would raise OverflowError)."""
        for value in values:
            if not -(2**63) <= value < 2**63:
                raise self.error(number, f"{value} does not fit in a 64-bit integer")


def build_problem(lines: NumberedLines, number: int, make):
    """Construct a problem, turning its validation error into one that names the line."""
    try:
        return make()
    except ValueError as exc:
        raise lines.error(number, str(exc)) from None
