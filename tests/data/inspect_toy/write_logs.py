"""Write small Inspect AI logs offline (``python write_logs.py``; logs go to $INSPECT_LOG_DIR).

One tiny task is run by Inspect's ``mockllm/model`` with scripted answers (a mock model
that answers the even questions right), scored three ways: ``match`` (C/I), a 0/1 scorer
and a partial-credit scorer (0.5), each in its own log. Token usage is set on the scripted
outputs so the mock model needs no tokenizer download.
"""

from __future__ import annotations

import os

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, match, scorer
from inspect_ai.solver import TaskState, generate

QUESTIONS = [Sample(id=f"q{i}", input=f"What is {i} + {i}?", target=str(2 * i)) for i in range(8)]


def answer(messages, tools, tool_choice, config) -> ModelOutput:
    i = int(str(messages[-1].content).split()[2])
    out = ModelOutput.from_content(model="mockllm", content=str(2 * i if i % 2 == 0 else 2 * i + 1))
    out.usage = ModelUsage(input_tokens=8, output_tokens=2, total_tokens=10)
    return out


@scorer(metrics=[accuracy()])
def zero_one():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=float(state.output.completion.strip() == target.text))

    return score


@scorer(metrics=[accuracy()])
def partial():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=0.5 if state.output.completion.strip() != target.text else 1.0)

    return score


def main() -> None:
    model = get_model("mockllm/model", custom_outputs=answer)
    for name, sc in (
        ("toy_match", match()),
        ("toy_binary", zero_one()),
        ("toy_partial", partial()),
    ):
        eval(
            Task(dataset=QUESTIONS, solver=generate(), scorer=sc, name=name),
            model=model,
            log_dir=os.environ["INSPECT_LOG_DIR"],
            display="none",
        )


if __name__ == "__main__":
    main()
