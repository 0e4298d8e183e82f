"""What the command line and the app share: the rules between the engine and a front end.

A rule written here is obeyed by every page and every command that uses it, so it is
written once. Each module takes a store (or plain tables) and returns plain
results; none imports streamlit or plotly, and none touches DuckDB except through the
store's public methods.

- :mod:`~lifelong_core.workflows.selection`: which models count in a score (real, not
  estimated; evaluated on every chosen sample) and the matrix they form.
- :mod:`~lifelong_core.workflows.sortsets`: Sort sets (random or earliest released) and
  release order.
- :mod:`~lifelong_core.workflows.budgets`: the budgets offered and the checks on them.
- :mod:`~lifelong_core.workflows.sweeps`: a Sort & Search sweep on a selection and the
  tables read off it (rank agreement, ranks, family correlation).
- :mod:`~lifelong_core.workflows.item_choice`: a new model's cache, the method fitted on
  it and the items it should run.
- :mod:`~lifelong_core.workflows.new_model`: what a new model's results (typed in, a CSV,
  an lm-eval run, Inspect logs) say: the one estimate, its rank, the row to store.
- :mod:`~lifelong_core.workflows.arrivals`: a new model's CSV round trip and the
  new-sample flow (which models to run, reading their results back, the estimates).
- :mod:`~lifelong_core.workflows.adaptive`: the adaptive new-model flow (rounds until the
  95% interval is narrow enough; simulated on a stored model or a round trip for a real one).
- :mod:`~lifelong_core.workflows.design`: the design study (Sort-set size, Sort method,
  sampling).
- :mod:`~lifelong_core.workflows.stream`: the stream study (release-order replay, the
  cost/error grid of configurations and its Pareto front).
- :mod:`~lifelong_core.workflows.teaching`: the small slice and one-step walkthrough.
- :mod:`~lifelong_core.workflows.rankings`: counts estimated by Sort & Search for the
  newest models.
- :mod:`~lifelong_core.workflows.large`: a store beyond the dense-read limit: packed
  reads, sweeps on a seeded sample of scored models, bounded dense blocks.
- :mod:`~lifelong_core.workflows.lifelong_state`: refreshing and reading the lifelong
  state kept in the store (Sort state, ``mirt`` parameters), stale or not.

Submodules are imported by name (``from lifelong_core.workflows import sweeps``); this
package imports none of them, so a front end pays only for what it uses.
"""
