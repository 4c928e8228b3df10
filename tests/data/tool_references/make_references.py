"""Regenerate tests/data/tool_references/: ragas' and deepeval's tool-call metrics on the same calls (issue 36).

Run: python tests/data/tool_references/make_references.py  (needs ragas and deepeval: pip install -e '.[ragas]'
deepeval). Writes cases.json and versions.txt next to this script, or into the directory given as its one argument.

The cases: EDGE_CASES (hand-picked, each named for what it shows) and RANDOM_CASES random ones (seed SEED) over
four tool names and a small pool of argument objects: duplicated, dropped, extra, reordered, renamed calls and
changed arguments, empty predicted lists and empty gold lists. A call is {"name": ..., "arguments": ...}, its
arguments as parsed JSON. Each library is given the calls as they are: ragas a ``ToolCall(name, args)`` per call
(the predicted calls in one ``AIMessage`` after a ``HumanMessage``, the gold calls as ``reference_tool_calls``),
deepeval a ``ToolCall(name, input_parameters)`` per call in an ``LLMTestCase``'s ``tools_called`` and
``expected_tools``. Recorded for each case, each metric's value as the library returns it (CONFIGURATIONS names
them), or {"error": type, "message": ...} when the library raises.

No model and no network: every metric here is computed in code. deepeval's ToolCorrectnessMetric builds an
OpenAI model when it is given none (and raises without OPENAI_API_KEY), though it only asks a model when
``available_tools`` is given: it is given NoModel, which raises if it is ever called. ragas' usage tracking and
deepeval's telemetry, .env loading and update check are turned off before either is imported, and every socket
connection or name lookup raises (and is reported at the end) so that a network call fails the run.
"""

from __future__ import annotations

import json
import os
import platform
import random
import socket
import sys
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["RAGAS_DO_NOT_TRACK"] = "true"
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
os.environ["DEEPEVAL_DISABLE_DOTENV"] = "1"
os.environ["DEEPEVAL_UPDATE_WARNING_OPT_IN"] = "0"

NETWORK_CALLS: list[str] = []


def _no_network(*args: Any, **kwargs: Any) -> Any:
    NETWORK_CALLS.append(repr(args)[:200])
    raise RuntimeError(f"make_references.py: a network call was attempted: {args!r}")


socket.socket.connect = _no_network
socket.socket.connect_ex = _no_network
socket.create_connection = _no_network
socket.getaddrinfo = _no_network

from deepeval.metrics import ToolCorrectnessMetric  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCallParams  # noqa: E402
from deepeval.test_case import ToolCall as DeepevalCall  # noqa: E402
from ragas.dataset_schema import MultiTurnSample  # noqa: E402
from ragas.messages import AIMessage, HumanMessage  # noqa: E402
from ragas.messages import ToolCall as RagasCall  # noqa: E402
from ragas.metrics._tool_call_accuracy import ToolCallAccuracy as LegacyToolCallAccuracy  # noqa: E402
from ragas.metrics._tool_call_f1 import ToolCallF1 as LegacyToolCallF1  # noqa: E402
from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1  # noqa: E402

HERE = Path(__file__).resolve().parent
SEED = 36
RANDOM_CASES = 300
NAMES = ["search", "fetch", "calc", "email"]
# Argument objects the random calls draw from: distinct values, one key more, 3 and 3.0, a string "3".
ARGUMENTS: list[dict[str, Any]] = [{}, {"q": "paris"}, {"q": "berlin"}, {"q": "paris", "k": 3}, {"k": 3},
                                   {"k": 3.0}, {"k": "3"}, {"q": "rome", "lang": "it"}]
INPUT = [ToolCallParams.INPUT_PARAMETERS]

# What each recorded value is. The deepeval ones are ToolCorrectnessMetric(...) with these options (the defaults
# otherwise: threshold=0.5, strict_mode=False, no available_tools) and a model that is never called.
CONFIGURATIONS: dict[str, str] = {
    "ragas.ToolCallF1": "ragas.metrics.collections.ToolCallF1(): F1 over the sets of (name, args)",
    "ragas.ToolCallF1.names": "the same with every call's args replaced by {}: F1 over the sets of names",
    "ragas.ToolCallAccuracy": "ragas.metrics.collections.ToolCallAccuracy() (strict_order=True)",
    "ragas.ToolCallAccuracy.any_order": "ragas.metrics.collections.ToolCallAccuracy(strict_order=False)",
    "deepeval.names": "ToolCorrectnessMetric(): names, any order",
    "deepeval.names.ordering": "ToolCorrectnessMetric(should_consider_ordering=True): names, weighted LCS",
    "deepeval.names.exact": "ToolCorrectnessMetric(should_exact_match=True): names, position by position",
    "deepeval.input": "ToolCorrectnessMetric(evaluation_params=[ToolCallParams.INPUT_PARAMETERS])",
    "deepeval.input.ordering": "ToolCorrectnessMetric(evaluation_params=[INPUT_PARAMETERS], "
                               "should_consider_ordering=True)",
    "deepeval.input.exact": "ToolCorrectnessMetric(evaluation_params=[INPUT_PARAMETERS], should_exact_match=True)",
}
DEEPEVAL_OPTIONS: dict[str, dict[str, Any]] = {
    "deepeval.names": {},
    "deepeval.names.ordering": {"should_consider_ordering": True},
    "deepeval.names.exact": {"should_exact_match": True},
    "deepeval.input": {"evaluation_params": INPUT},
    "deepeval.input.ordering": {"evaluation_params": INPUT, "should_consider_ordering": True},
    "deepeval.input.exact": {"evaluation_params": INPUT, "should_exact_match": True},
}


def call(name: str, arguments: Any = None) -> dict[str, Any]:
    return {"name": name, "arguments": {} if arguments is None else arguments}


S, F, C = "search", "fetch", "calc"
PARIS, BERLIN = {"q": "paris"}, {"q": "berlin"}
# id: (predicted calls, gold calls)
EDGE_CASES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "duplicate-predicted-of-one-gold": ([call(S, PARIS)] * 3, [call(S, PARIS)]),
    "duplicate-gold-one-predicted": ([call(S, PARIS)], [call(S, PARIS)] * 2),
    "duplicates-on-both-sides": ([call(S, PARIS)] * 2, [call(S, PARIS)] * 2),
    "same-name-other-arguments-twice": ([call(S, PARIS), call(S, BERLIN)], [call(S, {"q": "rome"})] * 2),
    "same-name-same-arguments-twice": ([call(S, PARIS)] * 2, [call(S, {"q": "rome"})] * 2),
    "both-empty": ([], []),
    "predicted-empty": ([], [call(S, PARIS)]),
    "gold-empty": ([call(S, PARIS)], []),
    "reordered": ([call(F), call(S, PARIS)], [call(S, PARIS), call(F)]),
    "retry-then-next": ([call(S, PARIS), call(S, PARIS), call(F)], [call(S, PARIS), call(F)]),
    "extra-call-between": ([call(S, PARIS), call(C, {"x": 1}), call(F)], [call(S, PARIS), call(F)]),
    "two-swapped-of-three": ([call(S), call(C), call(F)], [call(S), call(F), call(C)]),
    "lcs-is-not-subsequence": ([call(F), call(S), call(C), call(F)], [call(S), call(F), call(C)]),
    "int-and-float": ([call(C, {"x": 3.0})], [call(C, {"x": 3})]),
    "true-and-1": ([call(C, {"x": True})], [call(C, {"x": 1})]),
    "string-and-number": ([call(C, {"x": "3"})], [call(C, {"x": 3})]),
    "null-value": ([call(S, {"q": None})], [call(S, {"q": None})]),
    "key-order": ([call(S, {"k": 3, "q": "paris"})], [call(S, {"q": "paris", "k": 3})]),
    "nested-key-order": ([call(S, {"f": {"b": 2, "a": 1}})], [call(S, {"f": {"a": 1, "b": 2}})]),
    "list-order": ([call(S, {"ids": [2, 1]})], [call(S, {"ids": [1, 2]})]),
    "extra-argument-key": ([call(S, {"q": "paris", "k": 3})], [call(S, PARIS)]),
    "gold-without-arguments": ([call(S, PARIS)], [call(S)]),
    "one-argument-of-two-wrong": ([call(S, {"q": "paris", "k": 5})], [call(S, {"q": "paris", "k": 3})]),
    "any-order-sort-pairs-wrongly": ([call(S, {"a": 1, "q": "paris"}), call(S, BERLIN)],
                                     [call(S, PARIS), call(S, BERLIN)]),
    "arguments-not-an-object": ([call(S, ["paris"])], [call(S, ["paris"])]),
}


def random_cases(rng: random.Random, count: int) -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """``count`` (id, predicted, gold): gold of 0-4 random calls, predicted made from it by random edits."""
    def any_call() -> dict[str, Any]:
        return call(rng.choice(NAMES), dict(rng.choice(ARGUMENTS)))

    cases = []
    for number in range(count):
        gold = [any_call() for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4]))]
        predicted = [dict(c) for c in gold]
        if rng.random() < 0.08:
            predicted = []
        elif rng.random() < 0.08:
            predicted = [any_call() for _ in range(rng.randint(1, 4))]
        else:
            for _ in range(rng.choice([0, 1, 1, 2, 3])):
                edit = rng.choice(["duplicate", "drop", "extra", "swap", "shuffle", "rename", "arguments"])
                if edit == "extra" or not predicted:
                    predicted.insert(rng.randint(0, len(predicted)), any_call())
                elif edit == "duplicate":
                    predicted.insert(rng.randint(0, len(predicted)), dict(rng.choice(predicted)))
                elif edit == "drop":
                    predicted.pop(rng.randrange(len(predicted)))
                elif edit == "swap" and len(predicted) > 1:
                    i = rng.randrange(len(predicted) - 1)
                    predicted[i], predicted[i + 1] = predicted[i + 1], predicted[i]
                elif edit == "shuffle":
                    rng.shuffle(predicted)
                elif edit == "rename":
                    i = rng.randrange(len(predicted))
                    predicted[i] = call(rng.choice(NAMES), predicted[i]["arguments"])
                else:
                    i = rng.randrange(len(predicted))
                    predicted[i] = call(predicted[i]["name"], dict(rng.choice(ARGUMENTS)))
        cases.append((f"random-{number:03d}", predicted, gold))
    return cases


class NoModel(DeepEvalBaseLLM):
    """The model ToolCorrectnessMetric is given so that it builds none: it must never be asked."""

    def __init__(self) -> None:
        pass

    def load_model(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("make_references.py: deepeval tried to load a model")

    def generate(self, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("make_references.py: deepeval asked a model")

    async def a_generate(self, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("make_references.py: deepeval asked a model")

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return "none (make_references.py)"


def error(e: Exception) -> dict[str, str]:
    """An exception as cases.json records it (pydantic's closing link to its docs, which names its version, cut)."""
    message = "\n".join(line for line in str(e).splitlines() if "errors.pydantic.dev" not in line)
    return {"error": type(e).__name__, "message": message}


def ragas_values(predicted: list[dict[str, Any]], gold: list[dict[str, Any]]) -> dict[str, Any]:
    """ragas' four values; the legacy classes (ragas.metrics._tool_call_*) must give the same ones."""
    values: dict[str, Any] = {}
    metrics = {"ragas.ToolCallF1": (ToolCallF1(), LegacyToolCallF1(), False),
               "ragas.ToolCallF1.names": (ToolCallF1(), LegacyToolCallF1(), True),
               "ragas.ToolCallAccuracy": (ToolCallAccuracy(), LegacyToolCallAccuracy(), False),
               "ragas.ToolCallAccuracy.any_order": (ToolCallAccuracy(strict_order=False),
                                                    LegacyToolCallAccuracy(strict_order=False), False)}
    for key, (metric, legacy, names_only) in metrics.items():
        try:
            calls = [RagasCall(name=c["name"], args={} if names_only else c["arguments"]) for c in predicted]
            reference = [RagasCall(name=c["name"], args={} if names_only else c["arguments"]) for c in gold]
            messages = [HumanMessage(content="question"), AIMessage(content="", tool_calls=calls)]
            value = metric.score(user_input=messages, reference_tool_calls=reference).value
            old = legacy.multi_turn_score(MultiTurnSample(user_input=messages, reference_tool_calls=reference))
            assert old == value, (key, predicted, gold, value, old)
            values[key] = value
        except AssertionError:
            raise
        except Exception as e:
            values[key] = error(e)
    return values


def deepeval_values(predicted: list[dict[str, Any]], gold: list[dict[str, Any]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, options in DEEPEVAL_OPTIONS.items():
        try:
            test_case = LLMTestCase(
                input="question", actual_output="",
                tools_called=[DeepevalCall(name=c["name"], input_parameters=c["arguments"]) for c in predicted],
                expected_tools=[DeepevalCall(name=c["name"], input_parameters=c["arguments"]) for c in gold])
            metric = ToolCorrectnessMetric(model=NoModel(), async_mode=False, **options)
            values[key] = metric.measure(test_case, _show_indicator=False)
        except Exception as e:
            values[key] = error(e)
    return values


def versions() -> str:
    packages = ["ragas", "langchain-community", "langchain-core", "deepeval", "pydantic"]
    return "".join(f"{p}=={version(p)}\n" for p in packages) + f"python=={platform.python_version()}\n"


def outputs() -> dict[str, Any]:
    """cases.json's content."""
    cases = [(name, predicted, gold) for name, (predicted, gold) in EDGE_CASES.items()]
    cases += random_cases(random.Random(SEED), RANDOM_CASES)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ragas warns on each length mismatch
        for name, predicted, gold in cases:
            rows.append({"id": name, "predicted": predicted, "gold": gold,
                         **ragas_values(predicted, gold), **deepeval_values(predicted, gold)})
    if NETWORK_CALLS:
        raise SystemExit(f"make_references.py: network calls were attempted: {NETWORK_CALLS}")
    return {
        "generator": "tests/data/tool_references/make_references.py ("
                     + ", ".join(versions().strip().replace("==", " ").splitlines()) + ")",
        "seed": SEED,
        "configurations": CONFIGURATIONS,
        "cases": rows,
    }


def dump(document: dict[str, Any]) -> str:
    """JSON with one case a line."""
    head = {k: v for k, v in document.items() if k != "cases"}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    lines = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in document["cases"])
    return f'{text},\n "cases": [\n{lines}\n ]\n}}\n'


def main(argv: list[str]) -> None:
    """Write cases.json and versions.txt (here, or into the directory given)."""
    target = Path(argv[0]) if argv else HERE
    target.mkdir(parents=True, exist_ok=True)
    document = outputs()
    assert json.loads(dump(document)) == document
    (target / "cases.json").write_text(dump(document), "utf-8")
    (target / "versions.txt").write_text(versions(), "utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
