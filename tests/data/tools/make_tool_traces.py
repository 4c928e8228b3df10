"""Write traces.jsonl, gold.jsonl and expected.json: traces of an agent's tool calls that keep a model provider's
own response object, built with the providers' SDK types and dumped as the SDKs dump them (issue 36, agents and
tool calls).

    python tests/data/tools/make_tool_traces.py

Each trace keeps the model turn that made the calls under ``response`` (``model_dump(mode="json")`` of the SDK's
own object), except t8, which keeps the calls as a pipeline that logs an OpenAI chat message's calls would: a
top-level ``tool_calls`` list (``model_dump(mode="json")`` of each ``message.tool_calls`` entry) and no response.
``answer`` is the pipeline's final answer, after the tools ran (not part of the response). No model or network
is used. The versions that wrote the files are in sdk-versions.txt, next to this script.

====  =========================  ===================================================  ===============================
qid   where the calls are        predicted calls (name, parsed arguments)             gold, and what the case shows
====  =========================  ===================================================  ===============================
t1    OpenAI chat completion     get_weather {"city": "Paris", "unit": "celsius"}     the same call: an exact match
t2    OpenAI chat completion     get_weather {"city": "Tokyo"},                       the same two calls in the other
      (two parallel calls)       search_flights {"origin": "PAR", "destination":      order: every call matches, not
                                 "TYO", "date": "2026-03-01"}                         in order; "tool_match": "any_order"
t3    OpenAI chat completion     get_weather INVALID (arguments '{"city": "Par')      get_weather {"city": "Paris"}:
                                                                                      name matches, the call does not
t4    OpenAI chat completion     none (plain content)                                 get_weather {"city": "Lisbon"}:
                                                                                      a missing call
t5    OpenAI Responses           search_flights {"origin": "PAR", "destination":      the flight search only: an extra
      (two function_call items)  "NYC", "date": "2026-05-01"},                        call
                                 get_weather {"city": "New York"}
t6    Anthropic Message          get_weather {"city": "Berlin", "unit":               unit "celsius": a wrong argument
      (text, then tool_use)      "fahrenheit"}                                        value
t7    Anthropic Message          convert_currency {"amount": 100, "from": "EUR",      the calls without "amount",
      (text, two tool_use of     "to": "USD"}, convert_currency {"amount": 100,       "gold_arguments_match": "subset":
      the same tool)             "from": "EUR", "to": "JPY"}                          both match under subset
t8    top-level tool_calls       get_weather {"city": "Oslo"} twice (two call ids)    the call once: a duplicated call
      (OpenAI chat message's)                                                         (one of the two matches)
====  =========================  ===================================================  ===============================

``EXPECTED`` (written to expected.json) holds the same, derived by hand: each qid's predicted calls as
``[name, arguments]`` (``"INVALID"`` for arguments that are not valid JSON) and the tool metrics of
src/ragscore/metrics/tools.py under the item's arguments rule, worked out from their definitions (null where
undefined). The script checks the predicted calls against the SDK objects it built (their own attributes, parsed
with json.loads), never against ragscore.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anthropic.types as at
from openai.types.chat import ChatCompletion, ChatCompletionMessage, ChatCompletionMessageToolCall
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.completion_usage import CompletionUsage
from openai.types.responses import Response, ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

HERE = Path(__file__).parent
SDKS = ("openai", "anthropic", "pydantic")
CREATED = 1767225600  # 2026-01-01T00:00:00Z

PARIS_C = {"city": "Paris", "unit": "celsius"}
TOKYO = {"city": "Tokyo"}
FLIGHT_TYO = {"origin": "PAR", "destination": "TYO", "date": "2026-03-01"}
FLIGHT_NYC = {"origin": "PAR", "destination": "NYC", "date": "2026-05-01"}
NEW_YORK = {"city": "New York"}
BERLIN_F = {"city": "Berlin", "unit": "fahrenheit"}
EUR_USD = {"amount": 100, "from": "EUR", "to": "USD"}
EUR_JPY = {"amount": 100, "from": "EUR", "to": "JPY"}
OSLO = {"city": "Oslo"}
TRUNCATED = '{"city": "Par'  # a call cut off mid-arguments: not valid JSON


# --- OpenAI chat completions ------------------------------------------------------------------------

def chat_call(index: int, name: str, arguments: dict[str, Any] | str) -> ChatCompletionMessageToolCall:
    """One chat completion tool call; its arguments a JSON string, as the API sends them."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ChatCompletionMessageToolCall(id=f"call_{index:02d}", type="function",
                                         function=Function(name=name, arguments=text))


def chat_completion(qid: str, calls: list[ChatCompletionMessageToolCall], content: str | None = None
                    ) -> ChatCompletion:
    return ChatCompletion(
        id=f"chatcmpl-{qid}", object="chat.completion", created=CREATED, model="gpt-4o-mini",
        choices=[Choice(index=0, logprobs=None, finish_reason="tool_calls" if calls else "stop",
                        message=ChatCompletionMessage(role="assistant", content=content, tool_calls=calls or None))],
        usage=CompletionUsage(prompt_tokens=96, completion_tokens=24, total_tokens=120))


# --- OpenAI Responses --------------------------------------------------------------------------------

def responses_call(index: int, name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{index:02d}", call_id=f"call_{index:02d}",
                                    name=name, arguments=json.dumps(arguments), status="completed")


def responses(qid: str, text: str, calls: list[ResponseFunctionToolCall]) -> Response:
    """A Responses object whose output is a message, then the function calls."""
    message = ResponseOutputMessage(id=f"msg_{qid}", type="message", role="assistant", status="completed",
                                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])])
    return Response(id=f"resp_{qid}", created_at=CREATED, model="gpt-5", object="response", status="completed",
                    output=[message, *calls], parallel_tool_calls=True, tool_choice="auto", tools=[])


# --- Anthropic -----------------------------------------------------------------------------------------

def anthropic_message(qid: str, text: str, calls: list[tuple[str, dict[str, Any]]]) -> at.Message:
    """A message: a text block, then one tool_use block per call (its input an object)."""
    blocks: list[Any] = [at.TextBlock(type="text", text=text, citations=None)]
    blocks += [at.ToolUseBlock(type="tool_use", id=f"toolu_{qid}_{i:02d}", name=name, input=arguments)
               for i, (name, arguments) in enumerate(calls, 1)]
    return at.Message(id=f"msg_{qid}", type="message", role="assistant", model="claude-sonnet-4-5", content=blocks,
                      stop_reason="tool_use", stop_sequence=None, usage=at.Usage(input_tokens=96, output_tokens=24))


# --- the traces ----------------------------------------------------------------------------------------

def traces() -> list[tuple[dict[str, Any], Any]]:
    """Each trace, with the SDK object (or list of objects) its calls come from."""
    t8_message = ChatCompletionMessage(role="assistant", content=None,
                                       tool_calls=[chat_call(1, "get_weather", OSLO), chat_call(2, "get_weather", OSLO)])
    made = [
        ("t1", "What is the weather in Paris, in Celsius?", "It is 18 degrees Celsius in Paris.",
         chat_completion("t1", [chat_call(1, "get_weather", PARIS_C)])),
        ("t2", "Find a flight from Paris to Tokyo on 1 March 2026, and tell me the weather in Tokyo.",
         "Flight AF276 leaves Paris at 13:20; it is 9 degrees in Tokyo.",
         chat_completion("t2", [chat_call(1, "get_weather", TOKYO), chat_call(2, "search_flights", FLIGHT_TYO)])),
        ("t3", "Is it raining in Paris?", "I could not get the weather for Paris.",
         chat_completion("t3", [chat_call(1, "get_weather", TRUNCATED)])),
        ("t4", "What is the weather in Lisbon right now?", "Lisbon is usually sunny at this time of year.",
         chat_completion("t4", [], content="Lisbon is usually sunny at this time of year.")),
        ("t5", "Find a flight from Paris to New York on 1 May 2026.", "Flight AF006 leaves Paris at 10:30.",
         responses("t5", "Let me look up the flights.",
                   [responses_call(1, "search_flights", FLIGHT_NYC), responses_call(2, "get_weather", NEW_YORK)])),
        ("t6", "What is the weather in Berlin, in Celsius?", "It is 59 degrees Fahrenheit in Berlin.",
         anthropic_message("t6", "I'll check the weather in Berlin.", [("get_weather", BERLIN_F)])),
        ("t7", "How much are 100 euros in US dollars, and in yen?", "100 EUR is 108 USD, or 16,200 JPY.",
         anthropic_message("t7", "I'll convert 100 EUR to both currencies.",
                           [("convert_currency", EUR_USD), ("convert_currency", EUR_JPY)])),
        ("t8", "What is the weather in Oslo?", "It is 4 degrees Celsius in Oslo.", t8_message.tool_calls),
    ]
    out = []
    for qid, question, answer, source in made:
        trace: dict[str, Any] = {"qid": qid, "question": question, "answer": answer}
        if isinstance(source, list):
            trace["tool_calls"] = [call.model_dump(mode="json") for call in source]
        else:
            trace["response"] = source.model_dump(mode="json")
        out.append((trace, source))
    return out


def sdk_calls(source: Any) -> list[list[Any]]:
    """The calls an SDK object holds, read with the SDK's own attributes: [name, arguments or "INVALID"]."""
    def parsed(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return "INVALID"

    if isinstance(source, ChatCompletion):
        return sdk_calls(source.choices[0].message.tool_calls or [])
    if isinstance(source, list):  # a chat message's tool_calls
        return [[c.function.name, parsed(c.function.arguments)] for c in source]
    if isinstance(source, Response):
        return [[i.name, parsed(i.arguments)] for i in source.output if isinstance(i, ResponseFunctionToolCall)]
    return [[b.name, b.input] for b in source.content if isinstance(b, at.ToolUseBlock)]


# --- gold, and what each case shows (by hand) ---------------------------------------------------------------

def gold_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


GOLD: dict[str, dict[str, Any]] = {
    "t1": {"gold_claim_substr": ["18 degrees"], "gold_tool_calls": [gold_call("get_weather", PARIS_C)]},
    "t2": {"gold_claim_substr": ["AF276"], "tool_match": "any_order",
           "gold_tool_calls": [gold_call("search_flights", FLIGHT_TYO), gold_call("get_weather", TOKYO)]},
    "t3": {"gold_claim_substr": ["raining"], "gold_tool_calls": [gold_call("get_weather", {"city": "Paris"})]},
    "t4": {"gold_claim_substr": ["sunny"], "gold_tool_calls": [gold_call("get_weather", {"city": "Lisbon"})]},
    "t5": {"gold_claim_substr": ["AF006"], "gold_tool_calls": [gold_call("search_flights", FLIGHT_NYC)]},
    "t6": {"gold_claim_substr": ["Berlin"],
           "gold_tool_calls": [gold_call("get_weather", {"city": "Berlin", "unit": "celsius"})]},
    "t7": {"gold_claim_substr": ["108 USD"], "gold_arguments_match": "subset",
           "gold_tool_calls": [gold_call("convert_currency", {"from": "EUR", "to": "USD"}),
                               gold_call("convert_currency", {"from": "EUR", "to": "JPY"})]},
    "t8": {"gold_claim_substr": ["4 degrees"], "gold_tool_calls": [gold_call("get_weather", OSLO)]},
}

METRICS = ("tool_name_precision", "tool_name_recall", "tool_name_f1", "tool_call_precision", "tool_call_recall",
           "trajectory_exact_match", "trajectory_in_order_match", "trajectory_any_order_match",
           "tool_args_invalid_rate")


def values(*row: float | None) -> dict[str, float | None]:
    return dict(zip(METRICS, row, strict=True))


# Worked out by hand from the definitions (matched names and calls each paired once; None where undefined).
EXPECTED: dict[str, dict[str, Any]] = {
    "t1": {"shows": "exact match", "predicted": [["get_weather", PARIS_C]],
           "values": values(1, 1, 1, 1, 1, 1, 1, 1, 0)},
    "t2": {"shows": "calls in another order (parallel calls); the item asks any_order",
           "predicted": [["get_weather", TOKYO], ["search_flights", FLIGHT_TYO]],
           "values": values(1, 1, 1, 1, 1, 0, 0, 1, 0)},
    "t3": {"shows": "arguments not valid JSON: the name matches, the call does not",
           "predicted": [["get_weather", "INVALID"]], "values": values(1, 1, 1, 0, 0, 0, 0, 0, 1)},
    "t4": {"shows": "missing call (no tool call, plain content)", "predicted": [],
           "values": values(None, 0, 0, None, 0, 0, 0, 0, None)},
    "t5": {"shows": "extra call", "predicted": [["search_flights", FLIGHT_NYC], ["get_weather", NEW_YORK]],
           "values": values(1 / 2, 1, 2 / 3, 1 / 2, 1, 0, 1, 1, 0)},
    "t6": {"shows": "wrong argument value (unit)", "predicted": [["get_weather", BERLIN_F]],
           "values": values(1, 1, 1, 0, 0, 0, 0, 0, 0)},
    "t7": {"shows": "gold arguments a subset of the predicted keys, matched under subset (under exact: no call "
                    "matches, tool_call_precision and recall 0, every trajectory 0)",
           "predicted": [["convert_currency", EUR_USD], ["convert_currency", EUR_JPY]],
           "values": values(1, 1, 1, 1, 1, 1, 1, 1, 0)},
    "t8": {"shows": "duplicated call: the same call twice, gold once; one of the two matches",
           "predicted": [["get_weather", OSLO], ["get_weather", OSLO]],
           "values": values(1 / 2, 1, 2 / 3, 1 / 2, 1, 0, 1, 1, 0)},
}


def build() -> dict[str, str]:
    """The files' texts, by name."""
    made = traces()
    assert [t["qid"] for t, _ in made] == list(GOLD) == list(EXPECTED)
    for trace, source in made:
        assert sdk_calls(source) == EXPECTED[trace["qid"]]["predicted"], trace["qid"]
    gold = [{"qid": t["qid"], "question": t["question"], "answerable": True, **GOLD[t["qid"]]} for t, _ in made]
    return {
        "traces.jsonl": "".join(json.dumps(t, ensure_ascii=False) + "\n" for t, _ in made),
        "gold.jsonl": "".join(json.dumps(g, ensure_ascii=False) + "\n" for g in gold),
        "expected.json": json.dumps(EXPECTED, indent=1) + "\n",
        "sdk-versions.txt": "".join(f"{name}=={version(name)}\n" for name in SDKS),
    }


def main(out: Path = HERE) -> None:
    for name, text in build().items():
        (out / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
