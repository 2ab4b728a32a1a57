"""Knapsack-family problems and their solution, validated once at construction.

Arrays are read-only int64 copies of the caller's data.  Construction raises
:class:`ValueError` for negative or non-integer numbers, empty inputs, wrong
shapes and lengths, and an MCKP that no choice of one item per class fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core import validation

__all__ = [
    "KP1",
    "KP2",
    "MCKP",
    "KnapsackSolution",
    "MemoryBudgetError",
    "PROBLEM_KINDS",
    "SolverResult",
    "SubsetSum",
    "TimeLimitError",
    "chosen_text",
    "exact_int",
    "load_text",
    "problem_kind",
    "used_capacity",
    "weights_gcd",
]

#: Sums of profits and weights stay below this, so that no solver overflows int64.
MAX_TOTAL = 2**62
#: A KP1 whose profits sum to this or more may lose a unit of a bound where two items' float64 efficiencies
#: round alike or out of order (a bound from a misordered pair errs by up to 2^-52 of the profits' sum).
HUGE_PROFITS = 2**50

#: The names by which readers, writers and the command line refer to problem types.
PROBLEM_KINDS = ("kp1", "kp2", "subset-sum", "mckp")


class MemoryBudgetError(ValueError):
    """A solver would need more memory than its budget allows."""

    def __init__(self, what: str, needed_bytes: int, budget_bytes: int):
        self.needed_bytes = int(needed_bytes)
        self.budget_bytes = int(budget_bytes)
        super().__init__(
            f"{what} needs {self.needed_bytes:,} bytes but the memory budget is "
            f"{self.budget_bytes:,} bytes; raise memory_budget_bytes or shrink the instance"
        )


class TimeLimitError(ValueError):
    """A solver ran past its time limit (``time_limit_s``) and stopped; ``what``, ``limit_s``, ``reached`` say where.

    A ValueError like :class:`MemoryBudgetError`: the request, not the program, is
    at fault, and the answer is to ask for less or allow more.
    """

    def __init__(self, what: str, limit_s: float, reached: str = ""):
        self.what, self.limit_s, self.reached = what, float(limit_s), reached
        done = f" after {reached}" if reached else ""
        super().__init__(
            f"{what} stopped at the time limit of {self.limit_s:g} s{done}; "
            f"raise time_limit_s (None: no limit) or shrink the instance"
        )


def _int_array(values, name: str) -> np.ndarray:
    """A read-only 1-D int64 copy of ``values``; ValueError unless non-negative integers."""
    try:
        arr = np.array(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D sequence of non-negative integers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype == object and all(isinstance(v, int) and not isinstance(v, bool) for v in arr):
        raise ValueError(f"{name} values must be below 2**62")  # Python ints too large for int64
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integers; got dtype {arr.dtype}")
    if not isinstance(values, np.ndarray) and any(isinstance(v, (bool, np.bool_)) for v in values):
        raise ValueError(f"{name} must hold integers; got a boolean")  # ([True, 6, 3] read as [1, 6, 3])
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integers; got non-integral values")
        if np.any(np.abs(arr) >= MAX_TOTAL):
            raise ValueError(f"{name} values must be below 2**62")
    elif arr.dtype == np.uint64 and np.any(arr >= MAX_TOTAL):
        raise ValueError(f"{name} values must be below 2**62")
    out = arr.astype(np.int64)
    if np.any(out < 0):
        raise ValueError(f"{name} must be non-negative; got {int(out.min())} at index {int(np.argmin(out))}")
    if _exact_sum(out) >= MAX_TOTAL:
        raise ValueError(f"the sum of {name} must be below 2**62")
    out.setflags(write=False)
    return out


def _exact_sum(arr: np.ndarray) -> int:
    """Sum of an int64 array as a Python int (no wrap-around)."""
    return sum(arr.tolist())


def exact_int(value, name: str, low: int | None = None, high: int | None = None, *,
              integral_floats: bool = False, expected: str | None = None) -> int:
    """``value`` as a Python int: :func:`core.validation.integer` with the knapsack API's ValueError.

    Python and numpy integers pass, bools never.

    Parameters
    ----------
    value : object
    name : str
        For the message ``"{name} must be {expected}; got {value!r}"``.
    low, high : int, optional
        Inclusive bounds.
    integral_floats : bool
        Accept finite floats with an integral value (JSON and numpy give ``5.0``).
    expected : str, optional
        The message's description; by default built from the bounds.

    Raises
    ------
    ValueError
        For anything else, or an integer out of bounds.
    """
    if expected is None:
        bounds = {(False, False): "", (True, False): f" >= {low}", (False, True): f" <= {high}"}
        expected = "an integer" + bounds.get((low is not None, high is not None), f" in [{low}, {high}]")
    try:
        return validation.integer(value, name, low, high, whole_floats=integral_floats)
    except (TypeError, ValueError):  # the knapsack API documents ValueError, with its own wording
        raise ValueError(f"{name} must be {expected}; got {value!r}") from None


def _capacity(value, name: str) -> int:
    """A capacity: an integer in [0, 2**62) (integral floats accepted); ValueError otherwise."""
    out = exact_int(value, name, integral_floats=True, expected="a non-negative integer")
    if not 0 <= out < MAX_TOTAL:
        raise ValueError(f"{name} must be in [0, 2**62); got {out}")
    return out


def _same_length(**arrays: np.ndarray) -> None:
    lengths = {name: len(arr) for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"item arrays must have equal lengths; {described}")


def _read_only(value):
    """``value`` with its arrays (also those in tuples, an MCKP's classes) made read-only."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, tuple):
        return tuple(_read_only(v) for v in value)
    return value


class _ReadOnlyArrays:
    """A problem unpickled (or deep-copied) keeps its arrays read-only, as constructed.

    numpy restores arrays writable, and the compiled solvers see a writable
    array as another type: in the knapsack panel's worker, whose problems come
    through a pipe, the first solve of each kind loaded a second compiled
    version of its functions (37-61 ms for a 0.1 ms solve of 200 items).
    """

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, _read_only(value))


@dataclass(frozen=True, eq=False)
class KP1(_ReadOnlyArrays):
    """0-1 knapsack: choose items of largest total profit within one capacity.

    Parameters
    ----------
    profits, weights : (n,) array_like of non-negative integers
    capacity : int, >= 0
    """

    profits: np.ndarray
    weights: np.ndarray
    capacity: int

    def __post_init__(self):
        object.__setattr__(self, "profits", _int_array(self.profits, "profits"))
        object.__setattr__(self, "weights", _int_array(self.weights, "weights"))
        object.__setattr__(self, "capacity", _capacity(self.capacity, "capacity"))
        _same_length(profits=self.profits, weights=self.weights)
        # profits so large that float64 efficiencies p / w rounded alike may cost a bound a unit (kp1.solve_kp1)
        object.__setattr__(self, "huge", int(self.profits.sum()) >= HUGE_PROFITS)

    @property
    def n_items(self) -> int:
        return len(self.profits)


@dataclass(frozen=True, eq=False)
class KP2(_ReadOnlyArrays):
    """Two-constraint 0-1 knapsack: both weight sums must respect their capacity.

    Parameters
    ----------
    profits, weights1, weights2 : (n,) array_like of non-negative integers
    capacity1, capacity2 : int, >= 0
    """

    profits: np.ndarray
    weights1: np.ndarray
    weights2: np.ndarray
    capacity1: int
    capacity2: int

    def __post_init__(self):
        for name in ("profits", "weights1", "weights2"):
            object.__setattr__(self, name, _int_array(getattr(self, name), name))
        for name in ("capacity1", "capacity2"):
            object.__setattr__(self, name, _capacity(getattr(self, name), name))
        _same_length(profits=self.profits, weights1=self.weights1, weights2=self.weights2)

    @property
    def n_items(self) -> int:
        return len(self.profits)


@dataclass(frozen=True, eq=False)
class SubsetSum(_ReadOnlyArrays):
    """Subset sum: the largest total weight of a subset that does not exceed the capacity.

    Parameters
    ----------
    weights : (n,) array_like of non-negative integers
    capacity : int, >= 0
    """

    weights: np.ndarray
    capacity: int

    def __post_init__(self):
        object.__setattr__(self, "weights", _int_array(self.weights, "weights"))
        object.__setattr__(self, "capacity", _capacity(self.capacity, "capacity"))

    @property
    def n_items(self) -> int:
        return len(self.weights)


@dataclass(frozen=True, eq=False)
class MCKP(_ReadOnlyArrays):
    """Multiple-choice knapsack: exactly one item from every class, one capacity.

    Parameters
    ----------
    classes : sequence of (profits, weights) pairs
        One pair of equal-length non-empty integer arrays per class, stored as
        read-only int64 arrays.
    capacity : int, >= 0
    """

    classes: tuple
    capacity: int

    def __post_init__(self):
        object.__setattr__(self, "capacity", _capacity(self.capacity, "capacity"))
        object.__setattr__(self, "classes", _validated_classes(self.classes))
        if self.min_weight > self.capacity:
            raise ValueError(
                f"MCKP is infeasible: the lightest item of every class weigh {self.min_weight} "
                f"together, more than the capacity {self.capacity}"
            )

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def min_weight(self) -> int:
        """Total weight of the lightest item of every class."""
        return sum(int(w.min()) for _, w in self.classes)


def _validated_classes(classes) -> tuple:
    if isinstance(classes, np.ndarray) and classes.ndim != 3:
        raise ValueError("classes must be a sequence of (profits, weights) pairs; "
                         f"got an array of shape {classes.shape}")
    try:
        pairs = list(classes)
    except TypeError:
        raise ValueError("classes must be a sequence of (profits, weights) pairs") from None
    if not pairs:
        raise ValueError("classes must not be empty")
    out = []
    for k, pair in enumerate(pairs):
        try:
            profits, weights = pair
        except (TypeError, ValueError):
            raise ValueError(f"classes[{k}] must be a (profits, weights) pair") from None
        p = _int_array(profits, f"classes[{k}] profits")
        w = _int_array(weights, f"classes[{k}] weights")
        if len(p) != len(w):
            raise ValueError(f"classes[{k}] has {len(p)} profits but {len(w)} weights")
        out.append((p, w))
    totals = [sum(int(p.max()) for p, _ in out), sum(int(w.max()) for _, w in out)]
    if max(totals) >= MAX_TOTAL:
        raise ValueError("the sums over classes of the largest profit and weight must be below 2**62")
    return tuple(out)


@dataclass(frozen=True, eq=False)
class KnapsackSolution:
    """An optimal solution and how it was found.

    Attributes
    ----------
    value : int
        The optimum: total profit (KP1, KP2, MCKP) or total weight (subset sum).
    selected : (k,) int64 ndarray
        Sorted indices of the chosen items; for MCKP (m,): the chosen item's
        index within each class.
    backend : {"cpu", "gpu"}
    method : str
        The algorithm that ran (e.g. ``"dp"``, ``"dp-divide-conquer"``, ``"bitset"``).
    time_ms : float
        Wall time of the solver call (for a batch, of the whole batch).
    """

    value: int
    selected: np.ndarray
    backend: str
    method: str
    time_ms: float = field(default=0.0)


class SolverResult(NamedTuple):
    """What every CPU and GPU solver returns: ``value``, ``selected`` and ``method`` as in :class:`KnapsackSolution`."""

    value: int
    selected: np.ndarray
    method: str


def weights_gcd(weights: np.ndarray) -> int:
    """The gcd of the weights (1 when there are none or all are 0), which every solver divides out."""
    return int(np.gcd.reduce(weights)) if len(weights) and weights.any() else 1


def problem_kind(problem) -> str:
    """The name of a problem's type (one of :data:`PROBLEM_KINDS`); TypeError otherwise."""
    try:
        return _KINDS[type(problem)]
    except KeyError:
        raise TypeError(
            f"problem must be a KP1, KP2, SubsetSum or MCKP; got {type(problem).__name__}"
        ) from None


#: :func:`problem_kind`'s answers.
_KINDS = {KP1: "kp1", KP2: "kp2", SubsetSum: "subset-sum", MCKP: "mckp"}


def chosen_text(problem, selected) -> str:
    """The chosen items in a few words: ``"3 items chosen, weight 924 of 970 (46 left)"`` (an MCKP: "item chosen
    in each class, ..."), as the command line and the knapsack panel say it."""
    count = len(selected)
    what = ("item chosen in each class" if problem_kind(problem) == "mckp"
            else f"{count} item{'' if count == 1 else 's'} chosen")
    return f"{what}, {load_text(problem, selected)}"


def load_text(problem, selected) -> str:
    """How much of the capacity the chosen items take: ``"weight 995 of 1,000 (5 left)"``; a KP2 both
    constraints (``"weights 90 of 100 (10 left) and 40 of 40 (0 left)"``)."""
    used, capacity = used_capacity(problem, selected)
    parts = [f"{u:,} of {c:,} ({c - u:,} left)" for u, c in zip(used, capacity)]
    return ("weights " if len(parts) > 1 else "weight ") + " and ".join(parts)


def used_capacity(problem, selected) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The weight a solution's ``selected`` items take and the capacity, per constraint (two for a KP2; an MCKP's
    ``selected`` holds one item per class)."""
    selected = np.asarray(selected, np.int64)
    kind = problem_kind(problem)
    if kind == "mckp":
        return (sum(int(w[j]) for (_, w), j in zip(problem.classes, selected)),), (int(problem.capacity),)
    if kind == "kp2":
        return ((int(problem.weights1[selected].sum()), int(problem.weights2[selected].sum())),
                (int(problem.capacity1), int(problem.capacity2)))
    return (int(problem.weights[selected].sum()),), (int(problem.capacity),)
