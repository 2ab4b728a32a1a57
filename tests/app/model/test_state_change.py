"""An undo step kept as a difference: it gives back both states exactly and costs what the edit changed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.pieces import Feature, PieceSpec, ToolState
from app.model.state_change import StateChange


def _features(n: int, first_id: int = 1) -> tuple[Feature, ...]:
    return tuple(Feature(i, f"Line {i}", (float(i), 0.0), (PieceSpec(10_000 + i, (0.0, 0.0), (1.0, 1.0)),))
                 for i in range(first_id, first_id + n))


def _same(first: ToolState, second: ToolState) -> bool:
    """The same state down to the feature objects (a step must not rebuild features)."""
    return (len(first.features) == len(second.features)
            and all(a is b for a, b in zip(first.features, second.features))
            and first.current is second.current and first.reopened is second.reopened)


# An edit script: each entry removes, inserts, replaces or moves one feature (moves change the order).
edit_scripts = st.lists(st.tuples(st.sampled_from(["remove", "insert", "replace", "move"]),
                                  st.integers(0, 10_000), st.integers(0, 10_000)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12), edit_scripts, st.booleans(), st.booleans())
def test_a_step_undone_and_redone_gives_back_both_states_object_for_object(n, script, current_before, current_after):
    features, fresh = list(_features(n)), iter(_features(60, first_id=100))
    old_current, new_current = _features(2, first_id=500)
    old = ToolState(tuple(features), old_current if current_before else None,
                    (3, old_current) if current_before else None)
    for action, i, j in script:
        if action == "insert" or not features:
            features.insert(i % (len(features) + 1), next(fresh))
        elif action == "remove":
            features.pop(i % len(features))
        elif action == "replace":
            features[i % len(features)] = next(fresh)
        else:
            features.insert(j % len(features), features.pop(i % len(features)))
    reopened = (0, new_current) if current_after else None
    new = ToolState(tuple(features), new_current if current_after else None, reopened)
    change = StateChange.between(old, new)
    assert _same(change.undone(new), old)
    assert _same(change.redone(old), new)


def test_a_step_keeps_only_the_features_it_changed():
    features = _features(10_000)
    edited = Feature(5_000, "renamed", features[4_999].start_xy, features[4_999].pieces)
    old = ToolState(features)
    new = ToolState(features[:4_999] + (edited,) + features[5_000:])
    change = StateChange.between(old, new)
    assert change.removed == (features[4_999],) and change.added == (edited,)
    assert change.removed_at == change.added_at == (4_999,)


def test_a_merge_of_distant_lines_keeps_the_two_lines_and_the_merged_one_only():
    features = _features(1_000)
    merged = Feature(3, "merged", (0.0, 0.0))
    new = ToolState(features[:2] + (merged,) + features[3:900] + features[901:])
    change = StateChange.between(ToolState(features), new)
    assert change.removed == (features[2], features[900]) and change.added == (merged,)
    assert _same(change.undone(new), ToolState(features))


def test_a_step_that_only_moves_the_feature_in_progress_keeps_no_feature():
    features = _features(100)
    current = Feature(999, "", (0.0, 0.0))
    change = StateChange.between(ToolState(features), ToolState(features, current))
    assert change.removed == change.added == ()
    assert change.features_after() == [current] and change.features_before() == []
