"""A stub of an OpenAI-compatible chat completions endpoint for the judge's tests: a real HTTP server on 127.0.0.1.

Each request body is checked with the ``openai`` SDK's own request type (``CompletionCreateParamsNonStreaming``,
through pydantic), and each reply is built as the SDK's ``ChatCompletion`` and written with its JSON: what a
real endpoint answers, not a shape copied from documentation. ``script`` decides each reply from the request:
a score to answer (the reply's text is ``{"score": ...}``), or one of the failures a real endpoint gives.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import TypeAdapter

_REQUEST = TypeAdapter(CompletionCreateParamsNonStreaming)


@dataclass
class Answer:
    """What the server does with one request: a status, headers, a body (bytes), after a delay."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(text: str, model: str, usage: tuple[int, int] = (12, 3)) -> bytes:
    """A chat completion with ``text`` as the SDK writes it."""
    reply = ChatCompletion.model_validate({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1764320000, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    })
    return reply.model_dump_json().encode()


def error(status: int, message: str) -> Answer:
    """An error reply as OpenAI's API writes one."""
    return Answer(status, json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode(),
                  {"Content-Type": "application/json"})


Script = Callable[[dict[str, Any], int], Answer]  # (request body, the request's number from 1) -> the answer


def scored(rule: Callable[[str], object]) -> Script:
    """Answer every request with ``{"score": rule(prompt)}``."""
    def script(body: dict[str, Any], number: int) -> Answer:
        prompt = body["messages"][0]["content"]
        return Answer(200, completion(json.dumps({"score": rule(prompt)}), body["model"] + "-2026-01-01"),
                      {"Content-Type": "application/json"})
    return script


class JudgeServer:
    """The stub server, in a thread; ``requests`` holds every request's body and headers, in order."""

    def __init__(self, script: Script, port: int = 0) -> None:
        self.script = script
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                assert self.path == "/v1/chat/completions", self.path
                _REQUEST.validate_python(body)  # what the SDK would send: the right keys and types
                with server.lock:
                    server.requests.append((body, dict(self.headers)))
                    number = len(server.requests)
                answer = server.script(body, number)
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
