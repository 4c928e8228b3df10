"""Write what opentelemetry-instrumentation-openai-v2 records for chat completions that call tools, with content
capture on (issue 36, agents and tool calls). The OpenAI client talks to a fake server on 127.0.0.1; no network is
used. One agent turn makes two requests: the first is answered with two parallel tool calls (get_weather, its
arguments pretty-printed JSON with newlines as models sometimes write them, and search_flights, compact), the
second, which sends back the assistant's calls and the two tool results, with the final answer. A third request,
another question, is answered with one call whose arguments are not valid JSON (cut off: ``{"city": "Tok``).

Two modes, each run in its own environment (the instrumentor reads its environment variables when it
instruments, and the two versions do not install together):

    # opentelemetry-instrumentation-openai-v2 2.3b0 (as in tests/data/genai/), its own conventions (v1.30.0):
    python tests/data/tools/make_genai_spans.py legacy
    # -> genai-spans.json, genai-logs.json, genai-versions.txt
    # OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. The spans carry no message content: the
    # messages and the tool calls are log records (the Logs API's events: gen_ai.user.message,
    # gen_ai.assistant.message, gen_ai.tool.message, gen_ai.choice), written by the SDK's ConsoleLogRecordExporter.

    # opentelemetry-instrumentation-openai-v2 2.4b0 with opentelemetry-util-genai 1.1b0 (1.2b0 and later lack
    # the util.genai.instruments module 2.4b0 imports), the latest experimental conventions:
    python tests/data/tools/make_genai_spans.py latest
    # -> genai-latest-spans.json, genai-latest-versions.txt
    # OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
    # span_only: the messages are the span attributes gen_ai.input.messages and gen_ai.output.messages.

Spans are written by the SDK's ConsoleSpanExporter (each span's to_json(), indented, one after another), as
tests/data/genai/make_spans.py writes them; log records by ConsoleLogRecordExporter (each record's to_json(),
indented). The versions each mode ran with are written next to its files.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
MODES: dict[str, dict[str, str]] = {
    "legacy": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "latest": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
}
PREFIX = {"legacy": "genai", "latest": "genai-latest"}
PACKAGES = {  # what each mode's instrumentor runs on (2.3b0 does not use opentelemetry-util-genai)
    "legacy": ("opentelemetry-sdk", "opentelemetry-instrumentation-openai-v2", "opentelemetry-instrumentation",
               "opentelemetry-semantic-conventions", "openai", "wrapt"),
    "latest": ("opentelemetry-sdk", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
               "opentelemetry-instrumentation", "opentelemetry-semantic-conventions", "openai", "wrapt", "httpx"),
}

QUESTION = "What is the weather in Paris, and is there a flight from Paris to Tokyo on 1 March 2026?"
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The current weather in a city.",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string"}, "unit": {"type": "string"}},
                                          "required": ["city"]}}},
    {"type": "function", "function": {"name": "search_flights", "description": "Flights between two airports.",
                                      "parameters": {"type": "object", "properties": {
                                          "origin": {"type": "string"}, "destination": {"type": "string"},
                                          "date": {"type": "string"}},
                                          "required": ["origin", "destination", "date"]}}},
]
CALLS = [
    {"id": "call_01", "type": "function", "function": {
        "name": "get_weather", "arguments": json.dumps({"city": "Paris", "unit": "celsius"}, indent=2)}},
    {"id": "call_02", "type": "function", "function": {
        "name": "search_flights", "arguments": json.dumps({"origin": "PAR", "destination": "TYO",
                                                           "date": "2026-03-01"})}},
]
TRUNCATED_QUESTION = "Is it raining in Tokyo?"
TRUNCATED_CALL = {"id": "call_03", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tok'}}
RESULTS = {"call_01": '{"temperature": 18, "unit": "celsius"}', "call_02": '{"flights": ["AF276 13:20"]}'}
ANSWER = "It is 18 degrees Celsius in Paris; flight AF276 leaves for Tokyo at 13:20 on 1 March."


def completion(n: int, message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
            "usage": {"prompt_tokens": 80 + 40 * n, "completion_tokens": 30, "total_tokens": 110 + 40 * n}}


class _Fake(BaseHTTPRequestHandler):
    """Answers a request with the two tool calls, with the final answer once the tools' results are sent, or (the
    other question) with the call cut off."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if any(m.get("role") == "tool" for m in request["messages"]):
            body = completion(2, {"role": "assistant", "content": ANSWER}, "stop")
        elif request["messages"][-1]["content"] == TRUNCATED_QUESTION:
            body = completion(3, {"role": "assistant", "content": None, "tool_calls": [TRUNCATED_CALL]}, "tool_calls")
        else:
            body = completion(1, {"role": "assistant", "content": None, "tool_calls": CALLS}, "tool_calls")
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main(mode: str, out: Path) -> None:
    os.environ.update(MODES[mode])  # before the instrumentation reads them
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    expected = {"legacy": "2.3b0", "latest": "2.4b0"}[mode]
    if installed("opentelemetry-instrumentation-openai-v2") != expected:
        raise SystemExit(f"the {mode} mode runs with opentelemetry-instrumentation-openai-v2=={expected}")
    server = HTTPServer(("127.0.0.1", 0), _Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spans_path, logs_path = out / f"{PREFIX[mode]}-spans.json", out / f"{PREFIX[mode]}-logs.json"
    try:
        with spans_path.open("w", encoding="utf-8") as spans, logs_path.open("w", encoding="utf-8") as logs:
            tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
            tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=spans)))
            logger_provider.add_log_record_processor(SimpleLogRecordProcessor(ConsoleLogRecordExporter(out=logs)))
            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
            client = OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="fake", timeout=10,
                            max_retries=0)
            messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
            first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
            calls = first.choices[0].message.tool_calls or []
            messages.append({"role": "assistant", "content": None,
                             "tool_calls": [call.model_dump(mode="json") for call in calls]})
            messages += [{"role": "tool", "tool_call_id": call.id, "content": RESULTS[call.id]} for call in calls]
            client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
            client.chat.completions.create(model="gpt-4o-mini", tools=TOOLS,
                                           messages=[{"role": "user", "content": TRUNCATED_QUESTION}])
            OpenAIInstrumentor().uninstrument()
            tracer_provider.shutdown()
            logger_provider.shutdown()
    finally:
        server.shutdown()
    if not logs_path.stat().st_size:
        logs_path.unlink()  # nothing was logged (the latest mode's span_only writes no log record)
    (out / f"{PREFIX[mode]}-versions.txt").write_text(
        "".join(f"{name}=={installed(name)}\n" for name in PACKAGES[mode]) + "".join(
            f"# {key}={value}\n" for key, value in MODES[mode].items()), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        raise SystemExit(f"usage: make_genai_spans.py {{{','.join(MODES)}}} [OUT_DIR]")
    main(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) > 2 else HERE)
