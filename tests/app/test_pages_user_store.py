"""Every page on a store built the way a user builds one (``tests/user_store.py``: lm-eval
runs without groups, a second dataset evaluated by other models, no confidences or
labels): no exception, no error box, the store's own provenance and no demo text; and
every widget of every page round-trips through the URL. The same pages on the demo store
are the browser smoke test's and the per-page tests' (tests/app/test_page_*.py, tests/app/test_pages_demo.py)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app.py"] + [f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))]
# Page variants: a page whose data source is a control is run once per source.
VARIANTS = [(p, {}) for p in PAGES if not p.endswith(("6_Rankings.py", "7_Task_weighting.py"))] + [
    ("pages/6_Rankings.py", {"source": "published"}),
    ("pages/6_Rankings.py", {"source": "store"}),
    # Only the open tab runs (and shows its controls): the others are opened through the URL.
    ("pages/6_Rankings.py", {"source": "store", "tab": "Pairwise differences"}),
    ("pages/6_Rankings.py", {"source": "store", "tab": "Rank intervals"}),
    ("pages/6_Rankings.py", {"source": "store", "tab": "Bayesian model"}),
    ("pages/6_Rankings.py", {"source": "estimated", "dataset": "my-eval"}),
    ("pages/7_Task_weighting.py", {"wsource": "published"}),
    ("pages/7_Task_weighting.py", {"wsource": "store"}),
    ("pages/7_Task_weighting.py", {"wsource": "store", "wtab": "Interactive (plotly)"}),
    (
        "pages/7_Task_weighting.py",
        {"wsource": "store", "wcatmap": "arc_easy = reasoning\nboolq = reading\npiqa = physical"},
    ),
]
IDS = [
    f"{Path(p).stem}-{'-'.join(f'{k}={v[:12]}' for k, v in q.items()) or 'default'}"
    for p, q in VARIANTS
]
DEMO_TEXT = ("scikit", "Demo store", "handwritten digits")
# Controls that are deliberately not in the URL: a file path typed on the Data page (a shared
# link must not open files on the server), the list of store files found beside it, and an
# import format's option fields (keys "in_<format>_<option>").
NOT_IN_URL = {"open_pick", "open_path", "create_path"}
WIDGETS = (
    "selectbox",
    "radio",
    "multiselect",
    "number_input",
    "slider",
    "toggle",
    "checkbox",
    "select_slider",
)


def run(page: str, store: Path, query: dict, monkeypatch) -> AppTest:
    monkeypatch.setenv("LBE_STORE", str(store))
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def texts(at: AppTest) -> str:
    parts = []
    for kind in (
        "caption",
        "markdown",
        "title",
        "header",
        "subheader",
        "info",
        "warning",
        "success",
    ):
        parts += [str(e.value) for e in at.get(kind)]
    parts += [str(getattr(w, "label", "")) for kind in WIDGETS for w in at.get(kind)]
    parts += [str(o) for w in at.get("radio") for o in w.options]
    return "\n".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("page,query", VARIANTS, ids=IDS)
def test_page_on_a_user_store(page, query, user_store_path, monkeypatch):
    at = run(page, user_store_path, query, monkeypatch)
    ok(at)
    shown = texts(at)
    for text in DEMO_TEXT:
        assert text not in shown, f"{page} shows demo text {text!r} on a user's store"
    # Pages that read the store say which data they show, from the store's own metadata.
    if "published" not in query.values() and not page.endswith("9_Data.py"):
        assert "lm\\-eval" in shown or "my\\-eval" in shown or "lm-eval" in shown, (
            f"{page}: no provenance"
        )


def _raw_other(w):
    """Another option of a selectbox/radio as the raw value the page passed in (AppTest
    lists formatted labels): the dict behind a ``format_func=D.get``, the positions behind
    ``format_func=lambda i: names[i]``, else the labels themselves."""
    fmt = getattr(w, "format_func", None) or str
    owner = getattr(fmt, "__self__", None)
    candidates = list(owner) if isinstance(owner, dict) else list(w.options)
    if w.value is not None and not isinstance(w.value, (str, bool)):
        for o in w.options:  # numeric options (budgets, replicates) come back as text
            with contextlib.suppress(TypeError, ValueError):
                candidates.append(type(w.value)(o))
        if isinstance(w.value, int):
            candidates += list(range(len(w.options)))
    cur = fmt(w.value) if w.value is not None else None
    for raw in candidates:
        try:
            label = fmt(raw)
        except Exception:
            continue
        if label != cur and label in w.options:
            if isinstance(w.value, float) and not isinstance(raw, float):
                raw = float(raw)
            return raw
    return None


def _other_value(w):
    """A valid value different from the widget's current one, or None when it has none."""
    kind = type(w).__name__
    if kind in ("Selectbox", "Radio"):
        return _raw_other(w)
    if kind == "SelectSlider":
        others = [o for o in w.options if str(o) != str(w.value)]
        return type(w.value)(others[0]) if others else None
    if kind == "Multiselect":
        cur, opts = list(w.value), list(w.options)
        if len(cur) > 2:
            return cur[:-1]
        extra = [o for o in opts if o not in cur]
        return cur + extra[:1] if extra else None
    if kind in ("NumberInput", "Slider"):
        if isinstance(w.value, (tuple, list)):
            return None
        step = w.step or 1
        up = w.value + step
        new = up if w.max is None or up <= w.max else w.value - step
        if w.min is not None and new < w.min:
            return None
        return type(w.value)(new)
    if kind in ("Toggle", "Checkbox"):
        return not w.value
    return None


def _keyed(at: AppTest) -> dict:
    out = {}
    for kind in WIDGETS:
        for w in at.get(kind):
            if w.key and not w.key.startswith(("$$", "in_")) and w.key not in NOT_IN_URL:
                out[w.key] = w
    return out


@pytest.mark.slow
@pytest.mark.parametrize("page,query", VARIANTS, ids=IDS)
def test_every_widget_round_trips_through_the_url(page, query, user_store_path, monkeypatch):
    at = run(page, user_store_path, query, monkeypatch)
    ok(at)
    # Change every control the query does not pin (a pinned one chooses the variant), then
    # open a fresh session with only the resulting URL: every control must come back.
    changed = []
    for key, w in _keyed(at).items():
        if key.split(":")[0] in query:
            continue
        new = _other_value(w)
        if new is not None:
            w.set_value(new)
            changed.append(key)
    if not changed:
        pytest.skip(f"{page} has no control in this variant")
    at.run()
    ok(at)
    before = {k: w.value for k, w in _keyed(at).items()}
    url = dict(at.query_params.items())
    again = run(page, user_store_path, url, monkeypatch)
    ok(again)
    after = {k: w.value for k, w in _keyed(again).items()}
    lost = {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
    assert not lost, f"{page}: controls not restored from the URL {url}: {lost}"


def test_glossary_explains_the_terms_the_pages_use(user_store_path, monkeypatch):
    from ui.glossary import TERMS

    at = run("app.py", user_store_path, {}, monkeypatch)
    ok(at)
    text = "\n".join(m.value for m in at.sidebar.markdown)
    for term in (
        "insert_M",
        "insert_D",
        "E_agg",
        "κ (kappa)",
        "n′ (budget)",
        "MAE",
        "ε (epsilon)",
        "R-hat / ESS",
    ):
        assert term in TERMS and f"**{term}**" in text, term


def test_headline_figures_at_the_budget_the_user_picks(user_store_path, monkeypatch):
    at = run(
        "pages/1_Budget_explorer.py",
        user_store_path,
        {"budgets": "8,16,32", "hb": "16"},
        monkeypatch,
    )
    ok(at)
    labels = {m.label: m.value for m in at.metric}
    assert "MAE at n′=16" in labels
    n = int(labels["samples n"].replace(",", ""))
    assert labels["n / n′ (the paper's figure)"] == f"{n / 16:.1f}×"
    assert labels["equivalent random budget"].endswith(" items")


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory):
    """A store just created on the Data page: no dataset yet."""
    from lifelong_core.store import Store

    path = tmp_path_factory.mktemp("empty") / "new.duckdb"
    Store.create(path).close()
    return path


@pytest.mark.parametrize("page,query", VARIANTS, ids=IDS)
def test_page_on_a_store_just_created(page, query, empty_store, monkeypatch):
    at = run(page, empty_store, {k: v for k, v in query.items() if k != "wcatmap"}, monkeypatch)
    ok(at)
