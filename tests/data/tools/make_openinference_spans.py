"""Write openinference-tool-spans.json: what openinference-instrumentation-langchain records for tool calls in
langchain-core (issue 36, agents and tool calls). No model and no network are used.

Four runs, each its own trace:

1. a ``@tool``-decorated function invoked with two arguments, ``get_weather.invoke({"city": "Paris", "unit":
   "celsius"})``: one TOOL span;
2. the same tool invoked with one argument, ``get_weather.invoke({"city": "Berlin"})``: one TOOL span (its
   input.value is the bare value, not a JSON object: the instrumentor writes a one-key input as its value);
3. the same tool invoked with a ToolCall, as an agent invokes it (``{"name", "args", "id", "type": "tool_call"}``),
   which returns a ToolMessage: one TOOL span;
4. a chat model (langchain-core's FakeMessagesListChatModel, which has no bind_tools: no tool definitions are
   sent) answering with an AIMessage that holds two tool calls: one LLM span, whose output message carries them.

The spans are written by the SDK's ConsoleSpanExporter (each span's to_json(), indented, in the order they ended),
as tests/data/genai/make_spans.py writes them. The versions are written to openinference-versions.txt next to
this script.

    python tests/data/tools/make_openinference_spans.py
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).parent
PACKAGES = ("openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "langchain-core", "opentelemetry-sdk")


def main(out: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    @tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """The current weather in a city."""
        return f"18 degrees {unit} in {city}"

    calls = [{"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}, "id": "call_01"},
             {"name": "get_weather", "args": {"city": "Tokyo"}, "id": "call_02"}]
    model = FakeMessagesListChatModel(responses=[AIMessage(content="", tool_calls=calls)])

    with (out / "openinference-tool-spans.json").open("w", encoding="utf-8") as stream:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=stream)))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        get_weather.invoke({"city": "Paris", "unit": "celsius"})
        get_weather.invoke({"city": "Berlin"})
        get_weather.invoke({"name": "get_weather", "args": {"city": "Tokyo", "unit": "celsius"}, "id": "call_03",
                            "type": "tool_call"})
        model.invoke("What is the weather in Paris and in Tokyo?")
        LangChainInstrumentor().uninstrument()
        provider.shutdown()
    (out / "openinference-versions.txt").write_text("".join(f"{name}=={version(name)}\n" for name in PACKAGES),
                                                    encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
