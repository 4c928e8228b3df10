"""Write spans.json: what opentelemetry-instrumentation-openai-v2 records for one chat completion
per question, with content capture off (its default), written by the SDK's ConsoleSpanExporter
(each span's to_json(), indented). The OpenAI client talks to a fake server on 127.0.0.1 that
answers every request with the same completion; no network is used.

    python tests/data/genai/make_spans.py tests/data/genai/spans.json

Written with opentelemetry-sdk 1.45.2, opentelemetry-instrumentation-openai-v2 2.3b0, openai
3.57.0 and wrapt 1.17 (2.4b0 needs a newer opentelemetry-util-genai than PyPI gave; 2.3b0 fails
on wrapt 2): see versions.txt, which this script writes next to the spans.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib.metadata import version
from pathlib import Path

from openai import OpenAI
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

QUESTIONS = ("What is the refund window?", "Who founded the company?")
COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "30 days."}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
}


class _Fake(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(COMPLETION).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def main(out: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with out.open("w", encoding="utf-8") as stream:
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=stream)))
            OpenAIInstrumentor().instrument(tracer_provider=provider)
            client = OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="fake", timeout=10,
                            max_retries=0)
            for question in QUESTIONS:
                client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
            provider.shutdown()
    finally:
        server.shutdown()
    packages = ("opentelemetry-sdk", "opentelemetry-instrumentation-openai-v2", "openai", "wrapt")
    (out.parent / "versions.txt").write_text("".join(f"{name}=={version(name)}\n" for name in packages),
                                             encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
