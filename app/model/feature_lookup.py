"""The finished features by id, and the names "Line n" taken, for one tuple of features (no Qt).

At 100,000 features, finding a feature by id compared the ids one by one up to
it (1-3 ms, several times an edit), and naming a new line "Line n" built the
set of every feature's name (about 12 ms a finish).  The tool keeps a
:class:`FeatureLookup` of its finished features and moves it to each new tuple
by the features the edit took out and put in (:meth:`FeatureLookup.follow`):
the ids are an int64 array in the features' order, so a lookup or a move is
one vectorised pass (some 20 microseconds at 100,000), and the names a count
of the features bearing each name (counted when a line is first named, in C:
a few ms at 100,000, not paid by every restore), so that "Line n" is taken
exactly where a feature is named so.  The edits of
:mod:`app.model.editing` take it as ``lookup`` and use it only for the tuple it
describes; any other tuple (a state an edit made on its way, a worker's) is
walked as before (:func:`place_by_walk`).
"""

from __future__ import annotations

import collections
import operator

import numpy as np

__all__ = ["FeatureLookup", "place_by_walk"]

_INT64 = np.iinfo(np.int64)
def place_by_walk(features: tuple, feature_id) -> int:
    """The index of the feature with this id in ``features``, comparing the ids in turn (KeyError when none).

    The ids are compared in C (1-2 ms for 100,000 features); ``tuple.index`` of
    the feature compared every feature before it field by field (15-30 ms).
    """
    try:
        return operator.indexOf(map(operator.attrgetter("id"), features), feature_id)
    except ValueError:
        raise KeyError(f"no feature with id {feature_id}") from None


def _name_counts(features) -> collections.Counter:
    """How many of ``features`` bear each name (names that are no strings, from a hand-written file, left out)."""
    names = map(operator.attrgetter("name"), features)
    try:
        return collections.Counter(names)
    except TypeError:  # (an unhashable name)
        return collections.Counter(name for name in map(operator.attrgetter("name"), features)
                                   if isinstance(name, str))


def _is_int64(value) -> bool:
    return type(value) is int and _INT64.min <= value <= _INT64.max


def _id_array(ids: list) -> np.ndarray | None:
    """``ids`` as int64; None where one is not an int64 (a hand-written session file): those are found by a walk,
    with Python's equality."""
    if not set(map(type, ids)) <= {int}:
        return None
    try:
        return np.array(ids, dtype=np.int64)
    except OverflowError:
        return None


class FeatureLookup:
    """Where each feature of :attr:`features` is, by id, and which names "Line n" they take.

    Parameters
    ----------
    features : tuple of Feature
        The finished features described (ids unique).
    """

    def __init__(self, features: tuple = ()):
        self._rebuild(features)

    def _rebuild(self, features: tuple) -> None:
        self.features = features
        self._ids = _id_array(list(map(operator.attrgetter("id"), features)))
        self._names: collections.Counter | None = None  # counted when first asked

    def describes(self, features: tuple) -> bool:
        """Whether this lookup is that of ``features`` (the same tuple object)."""
        return features is self.features

    def place(self, feature_id) -> int:
        """The index of the feature with id ``feature_id`` in :attr:`features` (KeyError when there is none)."""
        if isinstance(feature_id, np.integer):
            feature_id = int(feature_id)
        if self._ids is None or not _is_int64(feature_id):
            return place_by_walk(self.features, feature_id)
        hits = np.flatnonzero(self._ids == feature_id)
        if not len(hits):
            raise KeyError(f"no feature with id {feature_id}")
        return int(hits[0])

    def line_number_taken(self, number: int) -> bool:
        """Whether a feature of :attr:`features` is named ``f"Line {number}"``."""
        if self._names is None:  # (every name counted in C: a Python call per name to find the numbers of
            self._names = _name_counts(self.features)  # the names "Line n" took 35 ms at 100,000 features)
        return f"Line {number}" in self._names

    def follow(self, edit, features: tuple) -> None:
        """Describe ``features``, made from :attr:`features` by ``edit``; None (a restore): every feature is read.

        ``edit`` has the places and features taken out and put in
        (``taken_at``, ``taken``, ``put_at``, ``put``, ascending places), as
        :class:`app.model.tool_requests.FeatureEdit`, and its ``old`` features
        should be :attr:`features` (else every feature is read).
        """
        if edit is None or edit.old is not self.features:
            self._rebuild(features)
            return
        self._ids, self.features = self._ids_after(edit), features
        self._count_names(edit.taken, -1)
        self._count_names(edit.put, 1)

    def _ids_after(self, edit) -> np.ndarray | None:
        if self._ids is None:
            return None
        put_ids = _id_array(list(map(operator.attrgetter("id"), edit.put)))  # (checked in C: an import of 50,000
        if put_ids is None:  # lines spent 48 ms of the GUI thread on a Python check per id)
            return None  # (found by a walk until the next restore)
        ids = np.delete(self._ids, edit.taken_at) if edit.taken_at else self._ids
        if len(put_ids):  # each put in before the features kept that follow it: at its place less those put before
            ids = np.insert(ids, np.subtract(edit.put_at, np.arange(len(put_ids))), put_ids)  # it
        return ids

    def _count_names(self, features, step: int) -> None:
        counts = self._names
        if counts is None:
            return
        for name in _name_counts(features).elements():
            counts[name] += step
            if not counts[name]:
                del counts[name]
