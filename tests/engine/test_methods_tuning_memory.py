"""The default estimator's cross-validated choice is remembered per cache, and remembering
changes how long a fit takes, never what it gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.methods import auto, tuning_memory
from lifelong_core.methods.auto import AutoEstimator, AutoTuning, tune_auto

ROOT = Path(__file__).resolve().parents[2]


def _cache(seed: int = 0, m: int = 12, n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((m, n)) < np.linspace(0.9, 0.1, n)).astype(np.uint8)


def _order(A: np.ndarray) -> np.ndarray:
    return np.argsort(-A.sum(0), kind="stable")


@pytest.fixture
def memory(tmp_path, monkeypatch):
    """An empty memory in a folder of this test, and a count of real cross-validations."""
    folder = tmp_path / "auto-tuning"
    monkeypatch.setenv("LBE_TUNING_CACHE", str(folder))
    tuning_memory.forget()
    calls: list[tuple] = []
    real = auto.tune_auto
    monkeypatch.setattr(auto, "tune_auto", lambda A, **kw: calls.append(A.shape) or real(A, **kw))
    yield folder, calls
    tuning_memory.forget()


def _fit(A: np.ndarray, seed: int = 0) -> AutoEstimator:
    return AutoEstimator(seed=seed, memory="user").fit(A, _order(A))


def test_a_remembered_choice_is_the_choice_itself(memory):
    folder, calls = memory
    A = _cache()
    first = _fit(A).tuning_
    assert first == tune_auto(
        A, seed=0, candidates=auto.FIT_CANDIDATES
    )  # the memory changes nothing
    calls.clear()
    second = _fit(A).tuning_
    assert calls == [] and second == first
    # Estimates from a remembered choice are those of a fresh fit.
    cols = np.arange(0, 300, 5)
    fresh = AutoEstimator(seed=0, tuning=tune_auto(A, seed=0, candidates=auto.FIT_CANDIDATES)).fit(
        A, _order(A)
    )
    a, b = _fit(A).estimate(cols, A[0, cols]), fresh.estimate(cols, A[0, cols])
    assert (a.acc, a.lo, a.hi) == (b.acc, b.lo, b.hi)
    assert len(list(folder.glob("*.json"))) == 1


def test_another_process_reads_the_choice_from_disk(memory):
    folder, _calls = memory
    A = _cache()
    chosen = _fit(A).tuning_
    np.save(folder / "cache.npy", A)
    code = (
        "import json, sys, numpy as np\n"
        "from lifelong_core.methods import auto\n"
        "calls = []\n"
        "real = auto.tune_auto\n"
        "auto.tune_auto = lambda A, **kw: calls.append(1) or real(A, **kw)\n"
        f"A = np.load({str(folder / 'cache.npy')!r})\n"
        "est = auto.AutoEstimator(memory='user').fit(A, np.argsort(-A.sum(0), kind='stable'))\n"
        "print(json.dumps([len(calls), est.tuning_.to_record()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    n_calls, record = json.loads(out)
    assert n_calls == 0
    assert AutoTuning.from_record(record) == chosen


def test_a_changed_cache_seed_or_candidate_set_is_cross_validated_afresh(memory):
    _folder, calls = memory
    A = _cache()
    _fit(A)
    B = A.copy()
    B[3, 150] ^= 1  # one result differs
    _fit(B)
    _fit(A, seed=1)
    _fit(_cache(m=13))  # one model more
    assert len(calls) == 4
    settings = [auto.CV_ITERS, list(auto.FIT_CANDIDATES)]
    keys = {
        tuning_memory.key(A, 0, settings),
        tuning_memory.key(B, 0, settings),
        tuning_memory.key(A, 1, settings),
        tuning_memory.key(A, 0, [auto.CV_ITERS, ["threshold", "mirt"]]),
    }
    assert len(keys) == 4


def test_a_damaged_file_is_cross_validated_again_and_rewritten(memory):
    folder, calls = memory
    A = _cache()
    chosen = _fit(A).tuning_
    (path,) = folder.glob("*.json")
    path.write_text('{"auto_k": 3, "auto_rid')
    tuning_memory.forget()
    calls.clear()
    assert _fit(A).tuning_ == chosen and len(calls) == 1
    assert AutoTuning.from_record(json.loads(path.read_text())) == chosen


def test_an_unwritable_folder_keeps_the_choice_in_memory(memory, tmp_path, monkeypatch):
    _folder, calls = memory
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LBE_TUNING_CACHE", str(blocker / "auto-tuning"))
    A = _cache()
    chosen = _fit(A).tuning_
    assert _fit(A).tuning_ == chosen and len(calls) == 1


def test_an_empty_setting_turns_remembering_off(memory, monkeypatch):
    _folder, calls = memory
    monkeypatch.setenv("LBE_TUNING_CACHE", "")
    A = _cache()
    _fit(A)
    _fit(A)
    assert len(calls) == 2 and tuning_memory.folder() is None


def test_the_default_folder_is_in_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("LBE_TUNING_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tuning_memory.folder() == tmp_path / "lbe" / "auto-tuning"


def test_packed_fits_remember_their_own_choice(memory):
    from lifelong_core.bits import pack_rows

    _folder, calls = memory
    A = _cache()
    P = pack_rows(A)
    first = AutoEstimator(memory="user").fit_packed(P, A.shape[1], _order(A)).tuning_
    again = AutoEstimator(memory="user").fit_packed(P, A.shape[1], _order(A)).tuning_
    assert again == first and len(calls) == 1
    assert not first.uses("copy-nearest")


def test_the_estimators_code_is_part_of_the_key(monkeypatch):
    A = _cache()
    settings = [auto.CV_ITERS, list(auto.FIT_CANDIDATES)]
    before = tuning_memory.key(A, 0, settings)
    # Every module named in CODE is found and read.
    assert len(tuning_memory._code_digest()) == 32
    monkeypatch.setattr(tuning_memory, "_code_digest", lambda: "another version of the code")
    assert tuning_memory.key(A, 0, settings) != before


def test_threads_share_the_memory_safely(memory):
    from concurrent.futures import ThreadPoolExecutor

    _folder, _calls = memory
    caches = [_cache(seed=s, m=6, n=80) for s in range(4)]
    expected = [tune_auto(A, seed=0, candidates=auto.FIT_CANDIDATES) for A in caches]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: _fit(caches[i % 4]).tuning_, range(32)))
    assert got == [expected[i % 4] for i in range(32)]


def test_the_class_remembers_only_in_the_memory_it_is_given(memory, tmp_path):
    """No hidden state: the class alone writes nothing; the registered name ``auto``
    stands for the user's memory; a memory of one's own keeps its own choices."""
    from lifelong_core.methods import get_method
    from lifelong_core.methods.tuning_memory import TuningMemory

    folder, calls = memory
    A = _cache(3)
    AutoEstimator().fit(A)
    AutoEstimator().fit(A)
    assert len(calls) == 2 and not folder.exists()
    assert repr(get_method("auto")) == "AutoEstimator(memory='user')"
    get_method("auto").fit(A)
    assert len(calls) == 3 and len(list(folder.glob("*.json"))) == 1
    own = TuningMemory(tmp_path / "mine")
    AutoEstimator(memory=own).fit(A)
    AutoEstimator(memory=own).fit(A)
    assert len(calls) == 4 and len(list((tmp_path / "mine").glob("*.json"))) == 1
    in_memory = TuningMemory()
    AutoEstimator(memory=in_memory).fit(A)
    AutoEstimator(memory=in_memory).fit(A)
    assert len(calls) == 5
