"""A local Inspect AI task for the select/estimate round trip (offline, Inspect's mockllm).

``inspect eval rounds_task.py --model mockllm/model --sample-id "$(cat ids.txt)"`` runs the
chosen samples of its 40; the scorer marks a sample right when its number is not a multiple
of three, whatever the model answers, so the results of a run are known in advance.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate

N = 40


def known_result(i: int) -> int:
    """The result the scorer gives sample ``s<i>``."""
    return int(i % 3 != 0)


@scorer(metrics=[accuracy()])
def by_number():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=CORRECT if known_result(int(str(state.sample_id)[1:])) else INCORRECT)

    return score


@task
def toy_rounds() -> Task:
    return Task(
        dataset=[Sample(id=f"s{i}", input=f"Say {i}.", target=str(i)) for i in range(N)],
        solver=generate(),
        scorer=by_number(),
    )


def _answer(messages, tools, tool_choice, config):
    from inspect_ai.model import ModelOutput, ModelUsage

    out = ModelOutput.from_content(model="mockllm", content="an answer")
    # Usage given, so the mock model counts no tokens (which would download a tokenizer).
    out.usage = ModelUsage(input_tokens=4, output_tokens=2, total_tokens=6)
    return out


def main(ids_file: str, log_dir: str) -> None:
    """What ``inspect eval rounds_task.py --model mockllm/model --sample-id "$(cat
    ids_file)" --log-dir log_dir`` runs, with the mock model's usage set (offline)."""
    from pathlib import Path

    from inspect_ai import eval
    from inspect_ai.model import get_model

    # The command line splits --sample-id on commas and strips each id; so does this.
    ids = [s.strip() for s in Path(ids_file).read_text().strip().split(",")]
    eval(
        toy_rounds(),
        model=get_model("mockllm/model", custom_outputs=_answer),
        sample_id=ids,
        log_dir=log_dir,
        display="none",
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1], sys.argv[2])
