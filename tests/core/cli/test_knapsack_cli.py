"""``linesnap knapsack``: solve, batch, generate; one-line errors."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app.cli import main as linesnap
from core.cli.knapsack import main
from core.knapsack.generators import pisinger
from core.knapsack.io import KnapsackInstance, read_instances, write_json
from core.knapsack.problems import KP1, KP2, MCKP
from tests.knapsack_reference import brute_mckp
from tests.shared_data import shared_file


@pytest.fixture(scope="module", autouse=True)
def knapsack_solvers_in_the_cache():
    """On a cold numba cache (a fresh install) the CLI first says on stderr that it compiles the solvers; compile
    them before these tests (as an earlier test file does when the suite runs in one process), so that they read
    the CLI's output whichever process and order runs them.  The notice has tests of its own below."""
    from core import warmup

    warmup.compile_knapsack_kernels()


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def kp1_file(tmp_path):
    path = tmp_path / "kp1.json"
    write_json(path, KnapsackInstance("toy", KP1([60, 100, 120], [10, 20, 30], 50), 220))
    return path


def test_solve_prints_optimum_items_time_backend(capsys, kp1_file):
    code, out, err = _run(capsys, "solve", str(kp1_file), "--backend", "cpu")
    assert code == 0 and err == ""
    first, second = out.splitlines()
    assert first.startswith("toy: optimum 220 (known optimum 220); ") and first.endswith(" ms on cpu (dp)")
    assert second == "  2 items chosen, weight 50 of 50 (0 left): 1 2"


def test_a_known_optimum_that_differs_is_flagged(capsys, tmp_path):
    path = tmp_path / "wrong.json"
    write_json(path, KnapsackInstance("toy", KP1([60, 100, 120], [10, 20, 30], 50), 99))
    code, out, err = _run(capsys, "solve", str(path), "--backend", "cpu")
    assert code == 0 and out.startswith("toy: optimum 220 (DIFFERS from the file's known optimum 99); ")
    assert "warning" in err and "differs from the known optimum 99" in err


def test_solve_json(capsys, kp1_file):
    code, out, _ = _run(capsys, "solve", str(kp1_file), "--backend", "cpu", "--json")
    data = json.loads(out)
    assert code == 0 and data["count"] == 1
    (row,) = data["instances"]
    assert (row["value"], row["selected"], row["backend"], row["problem"]) == (220, [1, 2], "cpu", "kp1")
    assert row["file"] == str(kp1_file) and row["time_ms"] >= 0


def test_solve_as_subset_sum(capsys, kp1_file):
    code, out, _ = _run(capsys, "solve", str(kp1_file), "--problem", "subset-sum", "--backend", "cpu", "--json")
    assert code == 0
    assert json.loads(out)["instances"][0]["value"] == 50  # weights 20 + 30


def test_solve_real_pisinger_file(capsys):
    path = shared_file("knapsack/pisinger/large_scale/knapPI_2_200_1000_1")
    code, out, _ = _run(capsys, "solve", str(path), "--backend", "cpu")
    assert code == 0
    assert out.startswith("knapPI_2_200_1000_1: optimum 1634 (known optimum 1634)")


def test_batch_of_msb_files(capsys):
    files = sorted(shared_file("knapsack/msb630").glob("*.ins2D"))[:5]
    code, out, _ = _run(capsys, "batch", *map(str, files), "--backend", "cpu", "--json")
    data = json.loads(out)
    assert code == 0 and data["count"] == 5
    assert {row["problem"] for row in data["instances"]} == {"kp2"}
    assert data["instances"][0]["value"] == 330651  # OPP_2D_20_1s_10I_0W (checked against OR-Tools)


def test_batch_text(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_json(a, KP2([5, 4, 3], [2, 3, 1], [3, 1, 2], 4, 4))
    write_json(b, [KP1([3], [1], 1), KP1([3, 4], [1, 1], 1)])
    code, out, _ = _run(capsys, "batch", str(a), str(b), "--backend", "cpu")
    assert code == 0
    assert out.splitlines()[-1].startswith("3 instances solved in ")
    assert "a: optimum 7;" in out and "b-1: optimum 4;" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "pisinger", "--type", "weakly", "-n", "30", "--seed", "3"],
        ["generate", "curtis", "--type", "p", "-n", "12"],
        ["generate", "pisinger-hard", "--class", "16", "-n", "40", "--range", "1000000"],
        ["generate", "jooken", "-n", "50", "--capacity", "10000000000", "--groups", "4"],
        ["generate", "suri", "--set", "2", "--items-per-class", "12"],
    ],
)
def test_generate_writes_json_that_solves(capsys, tmp_path, argv):
    out_path = tmp_path / "gen.json"
    code, out, _ = _run(capsys, *argv, "-o", str(out_path))
    assert code == 0 and out.startswith("wrote ")
    (instance,) = read_instances(out_path)
    assert instance.name.startswith(argv[1])
    code, out, _ = _run(capsys, "solve", str(out_path), "--backend", "cpu")
    assert code == 0 and "optimum" in out


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["solve", "/no/such/file.json"], 1, "/no/such/file.json: no such file"),
        (["solve"], 2, "the following arguments are required: file"),
        (["solve", "x.json", "--backend", "tpu"], 2, "invalid choice: 'tpu'"),
        (["frobnicate"], 2, "invalid choice"),
        (["generate", "suri", "--set", "9", "-o", "x.json"], 2, "invalid choice: 9"),
        (["generate", "pisinger", "-n", "0", "-o", "x.json"], 1, "n must be an integer >= 1"),
        (["solve", "x.json", "--memory-budget", "0"], 2,
         "argument --memory-budget: expected a positive number of bytes"),
        (["batch", "x.json", "--memory-budget", "-5"], 2,
         "argument --memory-budget: expected a positive number of bytes"),
        (["solve", "x.json", "--memory-budget", str(10**23)], 2, "a positive number of bytes below 2^63"),
    ],
)
def test_errors_are_one_line(capsys, argv, code, message):
    got, out, err = _run(capsys, *argv)
    assert got == code and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("linesnap: error: ")
    assert message in err


@pytest.mark.parametrize(
    "args, message, api_name",
    [
        (["pisinger", "--range", "5"], "--range must be an integer in [10, ", "coefficient_range"),
        (["pisinger-hard", "--range", "2000000000000"], "--range must be an integer in [10, 1099511627776]; got ",
         "coefficient_range"),
        (["jooken", "--last-fraction", "2"], "--last-fraction must be in (0, 1]; got 2.0", "last_fraction"),
        (["suri", "--items-per-class", "0"], "--items-per-class must be an integer >= 1; got 0", "items_per_class"),
        (["suri", "--items-per-class", "1000000000"], "--items-per-class 1000000000 in 100 classes asks for ",
         "items_per_class"),
        (["curtis", "-n", "0"], "error: -n must be an integer >= 1; got 0", None),
        (["pisinger", "--items", "1000000000"], "error: -n 1000000000 asks for 1,000,000,000 items", None),
    ],
)
def test_generator_errors_name_the_commands_flags(capsys, tmp_path, args, message, api_name):
    out = tmp_path / "g.json"
    code, stdout, err = _run(capsys, "generate", *args, "-o", str(out))
    assert code == 1 and stdout == "" and len(err.splitlines()) == 1
    assert message in err and (api_name is None or api_name not in err), err
    assert not out.exists()


def test_wrong_problem_for_file(capsys, tmp_path):
    path = tmp_path / "k.json"
    write_json(path, KP2([1], [1], [1], 1, 1))
    code, _, err = _run(capsys, "solve", str(path), "--problem", "kp1")
    assert code == 1 and "holds kp2 instances; --problem kp1 does not apply" in err


def test_memory_budget_refusal_is_one_line(capsys, tmp_path):
    path = tmp_path / "big.json"
    write_json(path, pisinger("strongly", 400, 10**6, 50, 100, seed=0))  # neither the DP nor the state lists fit
    code, _, err = _run(capsys, "solve", str(path), "--backend", "cpu", "--memory-budget", "1000")
    assert code == 1 and "memory budget is 1,000 bytes" in err and len(err.splitlines()) == 1
    assert "raise --memory-budget" in err  # the flag, not the API's keyword
    # capacities near int64's range (weights without a common factor): no DP fits, the MCKP state lists solve it
    huge = tmp_path / "huge.json"
    classes = [([5, 1, 3], [0, 2**59 + 1, 2**60 + 3]), ([1, 7, 4], [0, 2**59, 2**60 + 7]),
               ([2, 9, 6], [0, 3**37, 2**60 + 11])]
    write_json(huge, MCKP(classes, 2**61 + 5))
    code, out, err = _run(capsys, "solve", str(huge), "--backend", "cpu", "--json")
    (row,) = json.loads(out)["instances"]
    assert code == 0 and (row["value"], row["method"]) == (brute_mckp(classes, 2**61 + 5), "states")


def test_allocation_failures_are_one_line(capsys, monkeypatch, tmp_path):
    import core.knapsack.generators as generators

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 7.28 TiB")

    monkeypatch.setattr(generators, "pisinger", no_memory)
    code, _, err = _run(capsys, "generate", "pisinger", "-n", "1000000000000", "-o", str(tmp_path / "x.json"))
    assert code == 1 and err == "linesnap: error: not enough memory: Unable to allocate 7.28 TiB\n"


def test_help_and_dispatch_through_linesnap(capsys, kp1_file):
    assert main(["-h"]) == 0
    assert "solve" in capsys.readouterr().out
    assert linesnap(["knapsack", "solve", str(kp1_file), "--backend", "cpu"]) == 0
    assert "optimum 220" in capsys.readouterr().out


def test_generate_onto_a_folder_is_a_one_line_error_naming_it(capsys, tmp_path):
    code, out, err = _run(capsys, "generate", "pisinger", "-n", "5", "-o", str(tmp_path))
    assert code == 1 and out == ""
    assert err.startswith("linesnap: error: ") and str(tmp_path) in err and ".tmp" not in err
    assert err.count("\n") == 1 and list(tmp_path.iterdir()) == []
    missing = tmp_path / "missing"
    code, out, err = _run(capsys, "generate", "pisinger", "-n", "5", "-o", str(missing / "g.json"))
    assert code == 1 and out == "" and err == f"linesnap: error: output folder {missing} does not exist\n"


def test_generate_refuses_an_output_of_another_format_and_a_misread_file_is_one_short_line(capsys, tmp_path):
    out = tmp_path / "g.csv"
    code, _, err = _run(capsys, "generate", "pisinger", "-n", "5", "-o", str(out))
    assert code == 1 and "generate writes LineSnap's JSON instances; name a .json file" in err and not out.exists()
    assert _run(capsys, "generate", "pisinger", "-n", "3000", "-o", str(tmp_path / "g.json"))[0] == 0
    out.write_text((tmp_path / "g.json").read_text())  # JSON under .csv: read as Pisinger's CSV, and refused
    code, _, err = _run(capsys, "solve", str(out))
    assert code == 1 and err.count("\n") == 1 and len(err) < 300  # (it quoted the whole file as a block name)


@pytest.mark.parametrize("args", [["pisinger", "-n", "1000000000"], ["curtis", "-n", "1000000000"],
                                  ["suri", "--items-per-class", "1000000000"]])
def test_generators_refuse_absurd_sizes_at_once(tmp_path, capsys, args):
    out = tmp_path / "g.json"
    assert main(["generate", *args, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("linesnap: error: ") and "at most 10,000,000 can be generated" in err
    assert len(err.splitlines()) == 1 and not out.exists()


def test_a_reader_that_stops_early_is_no_error(kp1_file):
    # ``linesnap knapsack solve ... --json | head``: the pipe is closed before LineSnap writes
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "app.cli", "knapsack", "solve", str(kp1_file), "--backend",
                                "cpu", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0
    assert err == ""


def test_a_hard_solve_past_the_time_limit_is_one_error_line(capsys, tmp_path):
    from core.knapsack.generators import jooken

    path = tmp_path / "jooken.json"
    write_json(path, KnapsackInstance("hard", jooken(400, 10**8, 10, 0.1, 0.01, 100, seed=1), None))
    code, out, err = _run(capsys, "solve", str(path), "--backend", "cpu", "--time-limit", "0.5")
    assert code == 1 and out == ""
    assert err.startswith("linesnap: error: KP1 by state lists (") and err.count("\n") == 1
    assert "stopped at the time limit of 0.5 s after" in err and "raise --time-limit (none: no limit)" in err


@pytest.mark.parametrize("bad", ["0", "-3", "soon", "inf"])
def test_a_bad_time_limit_is_a_usage_error(capsys, kp1_file, bad):
    code, _, err = _run(capsys, "solve", str(kp1_file), "--time-limit", bad)
    assert code == 2 and err.startswith("linesnap: error: argument --time-limit: expected a positive number")


def test_time_limit_none_lifts_the_limit(capsys, kp1_file):
    code, out, _ = _run(capsys, "batch", str(kp1_file), "--backend", "cpu", "--time-limit", "none")
    assert code == 0 and out.startswith("toy: optimum 220")


@pytest.mark.parametrize("command", ["solve", "batch"])
def test_a_cold_cache_is_compiled_before_the_time_limit_starts(capsys, monkeypatch, kp1_file, command):
    # after an install the first solve compiles for minutes: a time limit must not count that
    from core import warmup
    from core.knapsack import limits

    under_a_limit = []
    monkeypatch.setattr(warmup, "knapsack_cache_is_cold", lambda: True)
    monkeypatch.setattr(warmup, "compile_knapsack_kernels", lambda *kinds: under_a_limit.append(limits.armed()))
    code, out, err = _run(capsys, command, str(kp1_file), "--backend", "cpu")
    assert code == 0 and "220" in out
    assert under_a_limit == [False]
    assert "compiling the knapsack solvers first" in err and "the time limit starts after it" in err


@pytest.mark.parametrize("command", ["solve", "batch"])
def test_a_filled_cache_is_loaded_for_the_files_kinds_before_the_time_limit_starts(capsys, monkeypatch, kp1_file,
                                                                                   command):
    # loading the compiled solvers takes a first solve about a second: a time limit must not count it either
    from core import warmup
    from core.knapsack import limits

    loaded = []
    monkeypatch.setattr(warmup, "knapsack_cache_is_cold", lambda: False)
    monkeypatch.setattr(warmup, "compile_knapsack_kernels", lambda *kinds: loaded.append((kinds, limits.armed())))
    code, out, err = _run(capsys, command, str(kp1_file), "--backend", "cpu")
    assert code == 0 and "220" in out and "compiling" not in err
    assert loaded == [((("kp1",),), False)]


def test_no_time_limit_loads_the_solvers_before_the_times_too(capsys, monkeypatch, kp1_file):
    # without a limit the solvers were loaded inside the first solve: its time read 300 ms for a 0.1 ms solve
    from core import warmup

    compiled = []
    monkeypatch.setattr(warmup, "knapsack_cache_is_cold", lambda: True)
    monkeypatch.setattr(warmup, "compile_knapsack_kernels", lambda *kinds: compiled.append(kinds))
    code, _, err = _run(capsys, "solve", str(kp1_file), "--backend", "cpu", "--time-limit", "none")
    assert code == 0 and compiled == [(("kp1",),)] and "compiling the knapsack solvers first" in err


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), "in compiled code", "deep in compiled code"])
def test_ctrl_c_is_one_line_and_status_130(capsys, monkeypatch, kp1_file, interrupt):
    import core.knapsack

    def wrapped(depth):  # numba reports an interrupt inside a compiled call as SystemError, in nested calls several
        if depth == 0:
            raise KeyboardInterrupt
        try:
            wrapped(depth - 1)
        except BaseException:
            raise SystemError("CPUDispatcher(<function expand_core>) returned a result with an exception set")

    def stopped(*args, **kwargs):
        if isinstance(interrupt, str):
            wrapped(4 if interrupt.startswith("deep") else 1)
        raise interrupt

    monkeypatch.setattr(core.knapsack, "solve", stopped)
    code, out, err = _run(capsys, "solve", str(kp1_file), "--backend", "cpu", "--time-limit", "none")
    assert code == 130 and out == "" and err.strip() == "linesnap: interrupted"


def test_a_system_error_of_its_own_is_not_taken_for_an_interrupt(monkeypatch, kp1_file):
    import core.knapsack

    def broken(*args, **kwargs):
        raise SystemError("something else")

    monkeypatch.setattr(core.knapsack, "solve", broken)
    with pytest.raises(SystemError):
        main(["solve", str(kp1_file), "--backend", "cpu", "--time-limit", "none"])


@pytest.mark.parametrize("word", ["knapsak", "Extract"])
def test_a_mistyped_command_is_a_usage_error_not_the_window(capsys, word):
    assert linesnap([word, "solve", "x"]) == 2
    err = capsys.readouterr().err
    assert f"unknown command {word!r}" in err and "usage: linesnap" in err


def test_ctrl_c_before_a_commands_own_handling_is_one_line_and_status_130(capsys, monkeypatch):
    import app.cli

    def loading(argv):
        raise KeyboardInterrupt  # as while a command's modules load

    monkeypatch.setattr(app.cli, "_dispatch", loading)
    assert linesnap(["refine", "x"]) == 130
    assert capsys.readouterr().err.strip() == "linesnap: interrupted"


@pytest.mark.skipif(not hasattr(__import__("signal"), "set_wakeup_fd") or sys.platform == "win32",
                    reason="POSIX signals")
def test_ctrl_c_ends_a_long_solve_at_once(tmp_path):
    # the compiled loops never saw Python's signal: a 13 s solve ran on 10 s after Ctrl+C
    import signal
    import subprocess

    rng = np.random.default_rng(1)  # KP2 state lists of about 9 s here within a 200 MB budget
    w1, w2 = rng.integers(1, 10**6, 1000), rng.integers(1, 10**6, 1000)
    problem = KP2((w1 + w2) // 2 + rng.integers(1, 10**4, 1000), w1, w2, int(w1.sum()) // 2, int(w2.sum()) // 2)
    path = tmp_path / "long.json"
    write_json(path, [KnapsackInstance("long", problem, None)])
    # Ctrl+C as in a terminal: a test run started in the background of a shell without job control (as in
    # `(pytest &)`) ignores SIGINT, and the child would inherit that, rightly leaving the key to its parent
    start = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); from app.cli import main"
    command = [sys.executable, "-c", f"{start}; sys.exit(main())", "knapsack", "solve",
               str(path), "--backend", "cpu", "--memory-budget", "200000000", "--time-limit"]
    root = Path(__file__).resolve().parents[3]
    # first under a short limit: the solvers compiled (a cold cache) or loaded before the timed run
    assert subprocess.run(command + ["0.5"], capture_output=True, cwd=root, timeout=600).returncode == 1
    process = subprocess.Popen(command + ["none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=root)
    time.sleep(3.0)  # loaded, solving
    assert process.poll() is None
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.strip() == "linesnap: interrupted", err
    assert time.perf_counter() - sent < 3.0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_raises_the_flags_the_compiled_loops_poll(monkeypatch):
    # Python's handler runs only between the compiled calls, so a solve in one ran on to its end
    import os
    import signal
    import threading

    from core.cli.knapsack import _ctrl_c_stops_the_solve
    from core.knapsack import limits

    monkeypatch.setattr(limits._watchdog, "interrupted", False)  # (restored after: later solves run on)
    heard = []  # Python's handler, which a thread busy in a compiled call would reach only after it
    old = signal.signal(signal.SIGINT, lambda *_: heard.append(True))
    try:
        with _ctrl_c_stops_the_solve(), limits.time_limit(3600.0):
            flag = limits.stop_flag()
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
            deadline = time.monotonic() + 10
            while not flag[0] and time.monotonic() < deadline:  # a compiled loop's poll, as it sees the flag
                time.sleep(0.001)
            assert flag[0] == 1 and limits.interrupted()
    finally:
        signal.signal(signal.SIGINT, old)
    assert heard == [True]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_still_unread_when_the_solve_ends_says_interrupted(monkeypatch):
    # a Ctrl+C just before the solve ended on its own: the reading thread was told to stop before it read the
    # key's byte, and the solve's own result or error was reported (status 1 for a budget outgrown)
    import os
    import signal

    from core.cli.knapsack import _ctrl_c_stops_the_solve
    from core.knapsack import limits

    monkeypatch.setattr(limits._watchdog, "interrupted", False)  # (restored after: later solves run on)
    for _ in range(20):
        limits._watchdog.interrupted = False
        with _ctrl_c_stops_the_solve() as stops:
            os.write(stops._write, bytes([signal.SIGINT]))  # what Python's C handler writes, unread yet
        assert limits.interrupted()
