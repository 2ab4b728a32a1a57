"""The tool's shortcuts at 100,000 features give what walking every feature gives: finding a line by its id, the
free "Line n" names (:class:`app.model.feature_lookup.FeatureLookup`), and the undo step's difference looked for
where the edit says it spliced the features (:func:`app.model.state_change.spliced`); over random edit sequences."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.model import editing, line_edits
from app.model.attributes import FieldDef
from app.model.feature_lookup import FeatureLookup
from app.model.pieces import Feature, ToolState
from app.model.state_change import StateChange, spliced
from app.model.tool import ExtractionTool

NAMES = ["Line 1", "Line 2", "Line 3", "Line 4", "Line 5", "Line 6", "Line 8", "Line 03", "Line \uff15", "Line 5 ",
         "line 2", "road"]


def _same_change(first: StateChange, second: StateChange) -> bool:
    """The same places and the same feature objects (a step must not keep copies)."""
    return (first.removed_at == second.removed_at and first.added_at == second.added_at
            and len(first.removed) == len(second.removed) and all(map(lambda a, b: a is b, first.removed,
                                                                      second.removed))
            and len(first.added) == len(second.added) and all(map(lambda a, b: a is b, first.added, second.added))
            and first.before == second.before and first.after == second.after)


class CheckedTool(ExtractionTool):
    """Compares, at each commit, the undo step found through the edit's splice with the one found comparing all."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.spliced_commits = 0

    def _commit(self, new_state, settings=None):
        splice = new_state.splice
        if splice is not None and splice.source is self.state.features and splice.result is new_state.features:
            self.spliced_commits += 1
        walked = StateChange.between(self.state, replace(new_state, splice=None))
        assert _same_change(StateChange.between(self.state, new_state), walked)
        super()._commit(new_state, settings)


class WalkingLookup(FeatureLookup):
    """Describes no features: the edits walk them, as before the lookup."""

    def describes(self, features) -> bool:
        return False


class WalkingTool(ExtractionTool):
    """The reference: every lookup walks the features, every undo step compares them all, a line reopened at its
    start is reversed among the finished features first."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lookup = WalkingLookup()

    def _commit(self, new_state, settings=None):
        super()._commit(replace(new_state, splice=None), settings)

    def reopen(self, feature_id, at_start=False):
        """As before the shortcut: the line reversed in the features, then reopened from there."""
        state, original = self.state, self.feature(feature_id)
        if at_start:
            state, outcomes = line_edits.reversed_line(state, self.outcomes, feature_id, self.new_ids)
            self.outcomes.update(outcomes)
        new_state = editing.reopened(state, feature_id)
        self._preview.paused = False
        self._commit(replace(new_state, reopened=(new_state.reopened[0], original)))


def _line(k: int) -> np.ndarray:
    return np.array([[6.0 * k, 0.0], [6.0 * k + 3, 4.0], [6.0 * k + 6, 0.0]])  # line k ends where line k + 1 starts


def _act(tool, action: str, a: int, b: int) -> None:
    features = tool.features
    some = features[a % len(features)].id if features else -1
    other = features[b % len(features)].id if features else -1
    try:
        if action in ("click", "straight"):
            tool.click((float(a % 9) * 10, float(b % 7) * 10), straight=action == "straight")
        elif action == "finish":
            tool.finish()
        elif action == "escape":
            tool.cancel()
        elif action == "rename":
            tool.rename(some, NAMES[b % len(NAMES)])
        elif action == "attributes":
            tool.set_attributes(some, {"kind": f"v{b % 3}"})
        elif action == "delete":
            tool.delete(some)
        elif action in ("reopen", "reopen_start"):
            tool.reopen(some, at_start=action == "reopen_start")
        elif action == "import":
            tool.add_features([(NAMES[(a + i) % len(NAMES)] if b % 2 else "", _line(a % 5 + i), {})
                               for i in range(1 + b % 3)])
        elif action == "split":
            tool.apply_edit(line_edits.split_line, some, 1)
        elif action == "merge":
            tool.apply_edit(line_edits.merged_lines, some, other)
        elif action == "move":
            tool.apply_edit(line_edits.moved_vertex, some, b % 3, (float(b), 1.0))
        elif action == "undo":
            tool.undo()
        elif action == "redo":
            tool.redo()
        elif action == "reload":
            tool.restore(tool.state, dict(tool.outcomes))
    except (line_edits.LineEditError, KeyError, ValueError):
        pass  # a refused edit (checked elsewhere to change nothing)


def _check_lookup(tool) -> None:
    """Every feature found where it is, a missing id refused, the free names those of a walk over the names."""
    state, lookup = tool.state, tool._lookup
    assert lookup.describes(state.features)
    for place, feature in enumerate(state.features):
        assert editing.feature_place(state, feature.id, lookup) == place
    for missing in (-1, 10**6, 2**70, "1"):
        with pytest.raises(KeyError):
            editing.feature_place(state, missing, lookup)
    assert editing.next_name(state, lookup=lookup) == editing.next_name(state)
    pending = (Feature(0, "Line 9", (0.0, 0.0)), Feature(0, f"Line {len(state.features) + 1}", (0.0, 0.0)))
    assert editing.next_name(state, pending, lookup) == editing.next_name(state, pending)
    fast, walked = editing.free_names(state, ["Line 7"], lookup), editing.free_names(state, ["Line 7"])
    assert [next(fast) for _ in range(4)] == [next(walked) for _ in range(4)]


ACTIONS = ["click", "straight", "straight", "finish", "escape", "rename", "rename", "attributes", "delete", "reopen",
           "reopen_start", "import", "import", "split", "merge", "merge", "move", "undo", "undo", "redo", "reload"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 50), st.integers(0, 50)), max_size=50))
# lines named "Line n" out of order, a new line named past them, its undo and redo
@example([("import", 3, 1), ("rename", 0, 1), ("straight", 0, 0), ("straight", 1, 1), ("finish", 0, 0),
          ("undo", 0, 0), ("rename", 1, 0), ("redo", 0, 0), ("straight", 2, 2), ("straight", 3, 3), ("finish", 0, 0)])
# a merge of lines apart in the list, in both orders, a split, a reopen and delete before the reopened place
@example([("import", 1, 0), ("import", 4, 0), ("import", 0, 0), ("merge", 2, 0), ("undo", 0, 0), ("merge", 0, 2),
          ("split", 0, 0), ("reopen", 2, 0), ("delete", 0, 0), ("straight", 5, 5), ("finish", 0, 0), ("undo", 0, 0),
          ("undo", 0, 0)])
# a line reopened at its start while another, reopened before it, is in progress (finished first: places move)
@example([("import", 0, 2), ("straight", 9, 9), ("finish", 0, 0), ("reopen", 0, 0), ("straight", 1, 1),
          ("reopen_start", 2, 0), ("straight", 3, 3), ("escape", 0, 0), ("reopen_start", 3, 0), ("finish", 0, 0)])
def test_the_shortcuts_give_what_the_walks_give(actions):
    tools = [CheckedTool(settings="S1"), WalkingTool(settings="S1")]
    for tool in tools:
        tool.set_fields((FieldDef("kind"),))
    for action, a, b in actions:
        for tool in tools:
            _act(tool, action, a, b)
        assert tools[0].state == tools[1].state  # names, places, attributes, feature in progress
        assert [f.name for f in tools[0].features] == [f.name for f in tools[1].features]
        _check_lookup(tools[0])


def test_the_usual_edits_say_where_they_spliced_the_features():
    tool = CheckedTool(settings="S1")
    tool.set_fields((FieldDef("kind"),))
    tool.add_features([("", _line(k), {}) for k in range(6)])
    tool.click((0.0, 50.0))
    tool.click((10.0, 50.0), straight=True)
    tool.finish()
    tool.rename(tool.features[2].id, "Line 9")
    tool.set_attributes(tool.features[3].id, {"kind": "a"})
    tool.delete(tool.features[1].id)
    tool.reopen(tool.features[1].id)
    tool.cancel()
    tool.apply_edit(line_edits.split_line, tool.features[0].id, 1)
    tool.apply_edit(line_edits.moved_vertex, tool.features[4].id, 1, (1.0, 1.0))
    tool.apply_edit(line_edits.merged_lines, tool.features[0].id, tool.features[1].id)
    assert tool.spliced_commits == 10  # every edit but the two clicks, which keep the features' tuple


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12), st.data())
def test_a_splice_gives_the_step_that_comparing_every_feature_gives(size, data):
    features = tuple(Feature(k, f"f{k}", (0.0, 0.0)) for k in range(size))
    old = ToolState(features)
    start = data.draw(st.integers(0, size))
    stop = data.draw(st.integers(start, size))
    # the items put in: new features among some of those replaced, kept in their order (a merge's span)
    items = [f for f in features[start:stop] if data.draw(st.booleans())]
    for k in range(data.draw(st.integers(0, 3))):
        items.insert(data.draw(st.integers(0, len(items))), Feature(100 + k, "new", (0.0, 0.0)))
    new = spliced(old, start, stop, items)
    assert new.features == features[:start] + tuple(items) + features[stop:]
    change = StateChange.between(old, new)
    assert _same_change(change, StateChange.between(old, replace(new, splice=None)))
    assert change.undone(new).features == features and change.redone(old).features == new.features


def test_a_splice_from_other_features_is_not_trusted():
    features = tuple(Feature(k, "", (0.0, 0.0)) for k in range(6))
    edited = spliced(ToolState(features[:5]), 4, 5)  # made from a state before this one
    new = replace(edited, features=edited.features[:2] + edited.features[3:])
    change = StateChange.between(ToolState(features), new)
    assert change.removed == (features[2], features[4], features[5]) and change.added == ()


@pytest.mark.parametrize("name, number", [("Line 5", 5), ("Line 0", None), ("Line 120", 120), ("Line 05", None),
                                          ("Line \uff15", None), ("Line 5 ", None), ("Line +5", None),
                                          ("line 5", None), ("Line ", None), ("Line 1_0", None), (5, None),
                                          (["Line 5"], None), ("Line " + "9" * 40, None)])
def test_the_line_number_a_name_takes(name, number):
    """Only a name exactly as f"Line {n}" writes it takes n from the names of new lines, as it did with every
    name compared (before the lookup, and as the walk does); names that are no strings take none."""
    lookup = FeatureLookup((Feature(1, name, (0.0, 0.0)), Feature(2, "other", (0.0, 0.0))))
    taken = [n for n in (1, 5, 120, 10, 9 * 10**39) if lookup.line_number_taken(n)]  # (new lines: n >= 1)
    assert taken == ([] if number is None else [number])


def test_ids_that_are_no_int64_are_found_by_walking_the_features():
    features = (Feature(2**70, "a", (0.0, 0.0)), Feature(3, "b", (0.0, 0.0)))  # (a hand-written session file)
    lookup = FeatureLookup(features)
    assert lookup.place(2**70) == 0 and lookup.place(3) == 1 and lookup.place(np.int64(3)) == 1
    with pytest.raises(KeyError):
        lookup.place(4)


@pytest.mark.parametrize("first, second", [(0, 2), (2, 0), (3, 4), (4, 3)])
def test_a_merged_line_takes_the_first_lines_place_and_the_second_leaves_its_own(first, second):
    tool = ExtractionTool(settings="S1")
    tool.add_features([("", _line(k), {}) for k in (1, 4, 0, 5, 6)])  # 1 and 0, 5 and 6 share an end
    before = tool.features
    tool.apply_edit(line_edits.merged_lines, before[first].id, before[second].id)
    kept = [f for f in before if f is not before[second]]
    assert [f.id for f in tool.features] == [f.id for f in kept]
    assert all(a is b for a, b in zip(tool.features, kept) if b is not before[first])


def test_after_an_id_that_is_no_int64_the_lookup_walks_and_still_names_lines():
    tool = ExtractionTool(settings="S1")
    tool.restore(ToolState((Feature(3, "Line 2", (0.0, 0.0)),)), {})
    tool.add_features([("", _line(1), {})])
    odd = replace(tool.features[1], id=2**80)
    tool.add_built_features([odd], {})
    tool.add_features([("", _line(2), {})])
    assert [f.name for f in tool.features] == ["Line 2", "Line 3", "Line 3", "Line 4"]
    assert tool._lookup._ids is None and [tool._lookup.place(f.id) for f in tool.features] == [0, 1, 2, 3]
    _check_lookup(tool)
