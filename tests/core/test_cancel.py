"""core.cancel: a running extraction stops when another thread cancels it.

The kernels are checked directly (a set flag skips their work), the flag read
is checked to happen afresh inside a loop, and a long extraction on a worker
thread is stopped end to end.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from numba import njit, prange

from core.cancel import Cancelled, CancelToken, check, flag_of
from core.extraction import extract
from core.extraction.scores import _score_pairs
from core.parallel import cancel_requested
from core.polyline import PolylineProblem, prepare, solve_prepared
from core.polyline import mitm as polyline_mitm

RNG_SEED = 7


def random_problem(m=4, d=24, max_turn_deg=45.0):
    rng = np.random.default_rng(RNG_SEED)
    return PolylineProblem(
        rng.random(d, dtype=np.float32), rng.random((m - 1, d, d), dtype=np.float32),
        rng.random(d, dtype=np.float32), np.linspace(-4.0, 4.0, d), 3.0, max_turn_deg,
    )


def cancelled_token():
    token = CancelToken()
    token.cancel()
    return token


def test_token_and_check():
    token = CancelToken()
    assert not token.cancelled
    check(token)
    check(None)
    token.cancel()
    token.cancel()  # idempotent
    assert token.cancelled and "cancelled=True" in repr(token)
    with pytest.raises(Cancelled):
        check(token)
    assert not flag_of(None)[0]


def test_a_wrong_token_type_is_refused_before_any_work():
    with pytest.raises(TypeError, match="CancelToken"):
        extract(np.zeros((64, 64), np.float32), (10, 10), (50, 50), cancel=True)


@pytest.mark.parametrize("method", ["window", "mitm", "brute"])
def test_cancelled_solvers_raise(method):
    prepared = prepare(random_problem())
    solve_prepared(prepared, method, "cpu", cancel=CancelToken())  # a live token changes nothing
    with pytest.raises(Cancelled):
        solve_prepared(prepared, method, "cpu", cancel=cancelled_token())


def test_an_uncancelled_token_gives_the_same_solution():
    prepared = prepare(random_problem(d=40))
    for method in ("window", "mitm"):
        plain = solve_prepared(prepared, method, "cpu")
        with_token = solve_prepared(prepared, method, "cpu", cancel=CancelToken())
        assert with_token.score == plain.score
        np.testing.assert_array_equal(with_token.indices, plain.indices)


def test_a_cancelled_extraction_raises():
    image = np.random.default_rng(RNG_SEED).random((80, 80)).astype(np.float32)
    extract(image, (10, 40), (70, 40), backend="cpu", cancel=CancelToken())
    with pytest.raises(Cancelled):
        extract(image, (10, 40), (70, 40), backend="cpu", cancel=cancelled_token())


def test_the_scoring_kernel_skips_every_link_once_cancelled():
    gx = np.ones((16, 16), np.float32)
    points = np.array([[2.0, 2.0], [2.0, 8.0], [10.0, 2.0], [10.0, 8.0]])
    stages = np.array([[0, 2, 2, 2]], dtype=np.int64)
    args = (gx, gx, 0.0, 0.0, 1.0, points, np.zeros(len(points), np.bool_), 0.0, stages, 0, 0.0, 0, 0)
    out = np.full(4, np.nan, np.float32)
    _score_pairs(*args, out, CancelToken().flag)
    assert np.isfinite(out).all()
    out[:] = np.nan
    _score_pairs(*args, out, cancelled_token().flag)
    assert np.isnan(out).all()  # not one link was scored


def test_the_mitm_stages_skip_their_blocks_once_cancelled():
    prepared = prepare(random_problem(m=3, d=20))
    values = prepared.first.astype(np.float64)
    table = prepared.table(1)
    for flag, computed in ((CancelToken().flag, True), (cancelled_token().flag, False)):
        out, arg = np.full(table.shape, np.nan), np.full(table.shape, -7, np.int32)
        polyline_mitm._scan_stage(values, table, *prepared.ranges32[0], out, arg, flag)
        assert (arg != -7).all() == computed and (arg == -7).all() != computed
        out, arg = np.full(table.shape, np.nan), np.full(table.shape, -7, np.int32)
        polyline_mitm._scan_backward_stage(prepared.last.astype(np.float64), prepared.table(2),
                                          *prepared.ranges32[2], out, arg, flag)
        assert (arg != -7).all() == computed and (arg == -7).all() != computed


@njit(nogil=True, parallel=True)
def _work_until_cancelled(flag, out):
    for i in prange(out.size):
        if cancel_requested(flag):
            continue
        total = 0.0
        for k in range(500):
            total += math.sin(0.001 * k + i)
        out[i] = total


def test_the_flag_is_read_afresh_inside_a_running_parallel_loop():
    # A plain flag[0] in this loop is read once, before it (LLVM hoists it out
    # of numba's parallel loop), and all of ``out`` is computed (6 s here).
    token = CancelToken()
    _work_until_cancelled(token.flag, np.zeros(4))  # compile first
    out = np.full(2_000_000, np.nan)
    threading.Timer(0.05, token.cancel).start()
    _work_until_cancelled(token.flag, out)
    assert np.isnan(out).sum() > out.size // 2


def test_a_long_extraction_stops_soon_after_it_is_cancelled():
    # Scoring 18 stages of 1024 x 1024 links takes 6 s on 2 cores, 12 s on one;
    # cancelled after 0.2 s it stops within a link's worth of work per thread.
    image = np.random.default_rng(RNG_SEED).random((300, 300)).astype(np.float32)
    settings = dict(points=1024, nodes=20, half_width_px=40.0, backend="cpu", mode="ribbon")
    extract(image, (30, 150), (270, 150), **dict(settings, points=33, half_width_px=4.0))  # compiles
    token = CancelToken()
    timer = threading.Timer(0.2, token.cancel)
    began = time.perf_counter()
    timer.start()
    with pytest.raises(Cancelled):
        extract(image, (30, 150), (270, 150), cancel=token, **settings)
    timer.join()
    assert time.perf_counter() - began < 3.0
