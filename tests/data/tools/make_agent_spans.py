"""Write the execute_tool spans two OpenTelemetry instrumentations of the OpenAI Agents SDK (openai-agents) record
for one agent run that calls tools (issue 36, agents and tool calls), with content capture on.

The agent has one ``@function_tool``, get_weather(city, unit="celsius"), and runs on the SDK's
OpenAIChatCompletionsModel, whose client talks to a fake server on 127.0.0.1; no network is used. The SDK's own
trace processor (which sends traces to OpenAI's platform) is removed before the run. The model's first answer is
two parallel calls of get_weather: {"city": "Paris", "unit": "celsius"} and one whose arguments are not valid JSON
(``{"city": "Tok``, cut off; the SDK then reports the tool as failed); its second, once the tools' results are sent,
is the final answer. The two instrumentations are the same Python module (opentelemetry.instrumentation.
openai_agents), so each mode runs in its own environment:

    # opentelemetry-instrumentation-openai-agents-v2 (OpenTelemetry's), OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only
    python tests/data/tools/make_agent_spans.py otel        # -> execute-tool-spans.json, execute-tool-versions.txt
    # opentelemetry-instrumentation-openai-agents (Traceloop's OpenLLMetry), TRACELOOP_TRACE_CONTENT=true
    python tests/data/tools/make_agent_spans.py traceloop   # -> execute-tool-spans-traceloop.json, execute-tool-traceloop-versions.txt

The spans are written by the SDK's ConsoleSpanExporter (each span's to_json(), indented, in the order they
ended), as tests/data/genai/make_spans.py writes them. The versions each mode ran with are written next to them.
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
    "otel": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    "traceloop": {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"},
}
INSTRUMENTATION = {"otel": "opentelemetry-instrumentation-openai-agents-v2",
                   "traceloop": "opentelemetry-instrumentation-openai-agents"}
OUTPUT = {"otel": "execute-tool", "traceloop": "execute-tool-traceloop"}
SPANS = {"otel": "execute-tool-spans.json", "traceloop": "execute-tool-spans-traceloop.json"}
PACKAGES = ("opentelemetry-sdk", "openai-agents", "openai", "opentelemetry-instrumentation",
            "opentelemetry-semantic-conventions")

QUESTION = "What is the weather in Paris and in Tokyo?"
CALLS = [
    {"id": "call_01", "type": "function",
     "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}},
    {"id": "call_02", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tok'}},
]
ANSWER = "It is 18 degrees Celsius in Paris; I could not get the weather in Tokyo."


class _Fake(BaseHTTPRequestHandler):
    """Answers with the two calls, then (once the tools' results are sent) with the final answer."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if any(m.get("role") == "tool" for m in request["messages"]):
            message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
        else:
            message = {"role": "assistant", "content": None, "tool_calls": CALLS}
        body = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 60, "completion_tokens": 30, "total_tokens": 90}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def main(mode: str, out: Path) -> None:
    os.environ.update(MODES[mode])  # before the instrumentation reads them
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    try:
        version(INSTRUMENTATION[mode])
    except PackageNotFoundError:
        raise SystemExit(f"the {mode} mode runs with {INSTRUMENTATION[mode]} installed") from None

    @function_tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """The current weather in a city."""
        return json.dumps({"city": city, "temperature": 18, "unit": unit})

    server = HTTPServer(("127.0.0.1", 0), _Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with (out / SPANS[mode]).open("w", encoding="utf-8") as stream:
            set_trace_processors([])  # the SDK's own processor, which exports to OpenAI's platform: none here
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=stream)))
            OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
            client = AsyncOpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="fake", timeout=10,
                                 max_retries=0)
            agent = Agent(name="Weather agent", instructions="Answer with the tools.", tools=[get_weather],
                          model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client))
            result = Runner.run_sync(agent, QUESTION)
            assert result.final_output == ANSWER, result.final_output
            OpenAIAgentsInstrumentor().uninstrument()
            provider.shutdown()
    finally:
        server.shutdown()
    packages = (INSTRUMENTATION[mode], *PACKAGES) + (("opentelemetry-util-genai",) if mode == "otel" else (
        "opentelemetry-semantic-conventions-ai",))
    (out / f"{OUTPUT[mode]}-versions.txt").write_text(
        "".join(f"{name}=={version(name)}\n" for name in packages)
        + "".join(f"# {key}={value}\n" for key, value in MODES[mode].items()), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        raise SystemExit(f"usage: make_agent_spans.py {{{','.join(MODES)}}} [OUT_DIR]")
    main(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) > 2 else HERE)
