"""Seeded instance generators of the literature (formulas in ../shared/data/knapsack's README).

- :func:`pisinger`: Pisinger's classic KP1 classes (genhard.c): weights
  ``U[1, R]``; profits uncorrelated ``U[1, R]``, weakly correlated
  ``w + U[-R/10, R/10]`` (at least 1), strongly correlated ``w + R/10``,
  inverse strongly correlated (``p = U[1, R]``, ``w = p + R/10``), almost
  strongly correlated ``w + R/10 + U[-R/500, R/500]``, subset sum ``p = w``;
  capacity of instance ``v`` of a series of ``S``: ``v * sum(w) // (S + 1)``.
- :func:`pisinger_hard`: Pisinger's (2005) hard classes 11-16: spanner
  instances ``span(2, 10)`` over uncorrelated (11), weakly (12) and strongly
  (13) correlated items (two spanner items drawn as in the classic classes,
  their weights and profits divided by ``m = 10`` rounded up; every item is a
  spanner item times ``U[1, m]``), multiple strongly correlated
  ``mstr(3R/10, 2R/10, 6)`` (14: ``p = w + 3R/10`` when 6 divides ``w``, else
  ``w + 2R/10``), profit ceiling ``pceil(3)`` (15: ``p = 3 ceil(w / 3)``) and
  circle ``circle(2/3)`` (16: ``p = floor(2/3 sqrt(4R^2 - (w - 2R)^2))``); capacity
  ``max(v * sum(w) // (S + 1), max(w))`` (the rule of the published class-11 file).
- :func:`jooken`: Jooken, Leyman and De Causmaecker's (2022) hard instances:
  ``g - 1`` groups of ``(1 - f) n / (g - 1)`` items whose profit and weight are
  both ``c / 2^i + eps c + U[1, s]`` (group ``i``), and ``f n`` small items with
  profit and weight ``U[1, s]`` (read off their published instances).
- :func:`curtis`: Curtis's subset-sum benchmarks Half, P and Uniform (no subset
  hits their capacity exactly).
- :func:`suri`: Suri et al.'s MCKP sets 1-5, uncorrelated values and weights
  ``U[1, 10000]``, 10 to 1024 items per class.
- :func:`pisinger_mckp`: Pisinger's (1995, mcknap) MCKP classes: uncorrelated
  (``w, p = U[1, R]``), weakly correlated (``p = w + U[-10, 10]``, at least 1) and
  strongly correlated (a class's items are the prefix sums of ``(w, w + 10)``,
  ``w = U[1, R]`` sorted by weight); capacity ``sum_k (min w + max w) // 2``.

``U[a, b]`` is uniform over the integers ``a..b``; every generator takes a
``seed`` and gives the same instance for the same arguments.
"""

from __future__ import annotations

import numpy as np

from core.knapsack.problems import KP1, MCKP, SubsetSum, exact_int
from core.memory import check_allocation

__all__ = ["CURTIS_KINDS", "MCKP_KINDS", "PISINGER_HARD_CLASSES", "PISINGER_KINDS", "SURI_SETS", "curtis", "jooken",
           "pisinger", "pisinger_hard", "pisinger_mckp", "suri"]

PISINGER_KINDS = ("uncorrelated", "weakly", "strongly", "inverse-strongly", "almost-strongly", "subset-sum")
CURTIS_KINDS = ("half", "p", "uniform")
MCKP_KINDS = ("uncorrelated", "weakly", "strongly")
#: Pisinger's hard classes by number.
PISINGER_HARD_CLASSES = {11: "uncorrelated spanner", 12: "weakly correlated spanner",
                         13: "strongly correlated spanner", 14: "multiple strongly correlated",
                         15: "profit ceiling", 16: "circle"}
_SPANNER_ITEMS, _SPANNER_MULTIPLIER = 2, 10
#: (classes, capacity) of Suri et al.'s sets 1..5.
SURI_SETS = {1: (5, 12665), 2: (10, 15700), 3: (20, 94280), 4: (50, 390500), 5: (100, 303500)}
SURI_VALUE_RANGE = (1, 10000)
SURI_CLASS_SIZES = (10, 1024)


#: Most items one generated instance may have: beyond, writing its JSON alone takes minutes.
MAX_GENERATED_ITEMS = 10**7
#: Bytes per generated item at the peak (int64 draws, their Python lists and the JSON text).
_BYTES_PER_GENERATED_ITEM = 160

#: Largest coefficient range R: numpy draws 1..R as int64, and sums must stay below 2**62.
MAX_COEFFICIENT_RANGE = 2**62


def _check_size(items: int, what: str) -> None:
    """Refuse, before drawing anything, an instance beyond :data:`MAX_GENERATED_ITEMS` or the memory budget."""
    if items > MAX_GENERATED_ITEMS:
        raise ValueError(f"{what} asks for {items:,} items; at most {MAX_GENERATED_ITEMS:,} can be generated "
                         "(solving more would take hours anyway): ask for fewer")
    check_allocation(items * _BYTES_PER_GENERATED_ITEM, f"generating {items:,} items", advice="ask for fewer items")


def _rng(seed):
    """numpy's generator for a seed that is a non-negative integer (numpy's own message names no argument)."""
    return np.random.default_rng(exact_int(seed, "seed", 0))


def pisinger(kind: str, n: int, coefficient_range: int = 1000, instance: int = 1, series: int = 100,
             seed: int = 0) -> KP1:
    """One of Pisinger's classic KP1 instances.

    Parameters
    ----------
    kind : {"uncorrelated", "weakly", "strongly", "inverse-strongly", "almost-strongly", "subset-sum"}
    n : int
        Number of items, >= 1.
    coefficient_range : int
        ``R``: weights (and profits) drawn from ``1..R``; >= 10.
    instance, series : int
        ``v`` and ``S`` of the capacity ``v * sum(w) // (S + 1)``; ``1 <= v <= S``.
    seed : int
    """
    if kind not in PISINGER_KINDS:
        raise ValueError(f"kind must be one of {', '.join(PISINGER_KINDS)}; got {kind!r}")
    n = exact_int(n, "n", 1)
    _check_size(n, f"n = {n}")
    r = exact_int(coefficient_range, "coefficient_range", 10, MAX_COEFFICIENT_RANGE)
    series = exact_int(series, "series", 1)
    instance = exact_int(instance, "instance", 1)
    if instance > series:
        raise ValueError(f"instance must be in [1, series={series}]; got {instance}")
    rng = _rng(seed)
    w = rng.integers(1, r + 1, n)
    if kind == "uncorrelated":
        p = rng.integers(1, r + 1, n)
    elif kind == "weakly":
        p = np.maximum(w + rng.integers(-(r // 10), r // 10 + 1, n), 1)
    elif kind == "strongly":
        p = w + r // 10
    elif kind == "inverse-strongly":
        p = rng.integers(1, r + 1, n)
        w = p + r // 10
    elif kind == "almost-strongly":
        p = w + r // 10 + rng.integers(-(r // 500), r // 500 + 1, n)
    else:
        p = w.copy()
    return KP1(p, w, instance * int(w.sum()) // (series + 1))


def pisinger_hard(klass: int, n: int, coefficient_range: int = 1000, instance: int = 1, series: int = 100,
                  seed: int = 0) -> KP1:
    """One instance of Pisinger's hard classes 11-16 (formulas in the module docstring).

    Parameters
    ----------
    klass : int
        11..16, see :data:`PISINGER_HARD_CLASSES`.
    n, coefficient_range, instance, series, seed
        As for :func:`pisinger`.
    """
    if klass not in PISINGER_HARD_CLASSES:
        raise ValueError(f"klass must be one of {sorted(PISINGER_HARD_CLASSES)}; got {klass!r}")
    n = exact_int(n, "n", 1)
    r = exact_int(coefficient_range, "coefficient_range", 10, 2**40)  # circle squares 4R^2 in int64
    series = exact_int(series, "series", 1)
    instance = exact_int(instance, "instance", 1, series)
    rng = _rng(seed)
    if klass <= 13:
        p, w = _spanner(rng, ("uncorrelated", "weakly", "strongly")[klass - 11], n, r)
    else:
        w = rng.integers(1, r + 1, n)
        if klass == 14:
            p = np.where(w % 6 == 0, w + 3 * r // 10, w + 2 * r // 10)
        elif klass == 15:
            p = 3 * -(-w // 3)
        else:
            p = np.floor(2 / 3 * np.sqrt(4.0 * r * r - (w - 2.0 * r) ** 2)).astype(np.int64)
    capacity = max(instance * int(w.sum()) // (series + 1), int(w.max()))
    return KP1(p, w, capacity)


def _spanner(rng, kind, n, r):
    """Items that are multiples ``a (p_k, w_k)``, ``a ~ U[1, m]``, of a few spanner items."""
    base = pisinger(kind, _SPANNER_ITEMS, r, seed=int(rng.integers(2**62)))
    m = _SPANNER_MULTIPLIER
    bp, bw = -(-base.profits // m), -(-base.weights // m)
    pick = rng.integers(0, _SPANNER_ITEMS, n)
    times = rng.integers(1, m + 1, n)
    return times * bp[pick], times * bw[pick]


def jooken(n: int, capacity: int, groups: int, last_fraction: float, epsilon: float, spread: int,
           seed: int = 0) -> KP1:
    """One of Jooken, Leyman and De Causmaecker's (2022) hard instances.

    Parameters
    ----------
    n : int
        Items, >= 1.
    capacity : int
        ``c``, >= 2.
    groups : int
        ``g`` >= 2: ``g - 1`` groups of large items and one of small items.
    last_fraction : float
        ``f`` in (0, 1]: share of the small items.
    epsilon : float
        ``eps`` in [0, 1]: share of the capacity added to every large item.
    spread : int
        ``s`` >= 1: profits and weights get ``U[1, s]`` on top.
    seed : int
    """
    n = exact_int(n, "n", 1)
    capacity = exact_int(capacity, "capacity", 2, 2**52)
    groups = exact_int(groups, "groups", 2, 60)
    spread = exact_int(spread, "spread", 1, 2**40)
    if not 0 < last_fraction <= 1:
        raise ValueError(f"last_fraction must be in (0, 1]; got {last_fraction!r}")
    if not 0 <= epsilon <= 1:
        raise ValueError(f"epsilon must be in [0, 1]; got {epsilon!r}")
    rng = _rng(seed)
    per_group = int(round(n * (1 - last_fraction))) // (groups - 1)
    bases = [capacity // 2**i + int(epsilon * capacity) for i in range(1, groups) for _ in range(per_group)]
    bases += [0] * (n - len(bases))
    bases = np.array(bases, np.int64)
    return KP1(bases + rng.integers(1, spread + 1, n), bases + rng.integers(1, spread + 1, n), capacity)


def curtis(kind: str, n: int, seed: int = 0) -> SubsetSum:
    """One of Curtis's (2013) subset-sum benchmark instances.

    ``half``: ``w = 10 k``, ``k ~ U[1, 10^5]``, ``c = (sum(w) // 20) * 10 + 5``;
    ``p``: even ``w ~ U[2, 10^6]``, ``c = n 10^6 // 8``, plus 1 if even;
    ``uniform``: ``c = 10^6 + 1``, even ``w ~ U[2, c - 1]``.
    """
    if kind not in CURTIS_KINDS:
        raise ValueError(f"kind must be one of {', '.join(CURTIS_KINDS)}; got {kind!r}")
    n = exact_int(n, "n", 1)
    _check_size(n, f"n = {n}")
    rng = _rng(seed)
    if kind == "half":
        w = 10 * rng.integers(1, 10**5 + 1, n)
        return SubsetSum(w, int(w.sum()) // 20 * 10 + 5)
    w = 2 * rng.integers(1, 5 * 10**5 + 1, n)
    if kind == "p":
        c = n * 10**6 // 8
        return SubsetSum(w, c + 1 if c % 2 == 0 else c)
    return SubsetSum(w, 10**6 + 1)


def suri(set_number: int, seed: int = 0, items_per_class: int | None = None) -> MCKP:
    """One instance of Suri et al.'s MCKP set ``set_number`` (1..5).

    Parameters
    ----------
    set_number : int
        Selects (classes, capacity) from :data:`SURI_SETS`.
    seed : int
    items_per_class : int, optional
        Items in every class; default a uniform draw from 10..1024 per class.
    """
    if set_number not in SURI_SETS:
        raise ValueError(f"set_number must be one of {sorted(SURI_SETS)}; got {set_number!r}")
    m, capacity = SURI_SETS[set_number]
    rng = _rng(seed)
    if items_per_class is None:
        sizes = rng.integers(SURI_CLASS_SIZES[0], SURI_CLASS_SIZES[1] + 1, m)
    else:
        per_class = exact_int(items_per_class, "items_per_class", 1)
        _check_size(m * per_class, f"items_per_class = {per_class} in {m} classes")
        sizes = np.full(m, per_class)
    low, high = SURI_VALUE_RANGE
    classes = [(rng.integers(low, high + 1, k), rng.integers(low, high + 1, k)) for k in sizes]
    return MCKP(classes, capacity)


def pisinger_mckp(kind: str, n_classes: int, items_per_class: int, coefficient_range: int = 1000,
                  seed: int = 0) -> MCKP:
    """One MCKP of Pisinger's mcknap classes (module docstring); ``kind`` one of :data:`MCKP_KINDS`."""
    if kind not in MCKP_KINDS:
        raise ValueError(f"kind must be one of {', '.join(MCKP_KINDS)}; got {kind!r}")
    m = exact_int(n_classes, "n_classes", 1)
    k = exact_int(items_per_class, "items_per_class", 1)
    r = exact_int(coefficient_range, "coefficient_range", 11, MAX_COEFFICIENT_RANGE // max(k, 1))
    _check_size(m * k, f"{m} classes of {k} items")
    rng = _rng(seed)
    classes = []
    for _ in range(m):
        w = rng.integers(1, r + 1, k)
        if kind == "uncorrelated":
            p = rng.integers(1, r + 1, k)
        elif kind == "weakly":
            p = np.maximum(w + rng.integers(-10, 11, k), 1)
        else:
            w = np.cumsum(np.sort(w))
            p = w + 10 * np.arange(1, k + 1)
        classes.append((p, w))
    capacity = sum(int(w.min()) + int(w.max()) for _, w in classes) // 2
    return MCKP(classes, capacity)
