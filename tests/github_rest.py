"""A stand-in for the GitHub REST API's issue comments, for the Action's comment step: a real HTTP server on 127.0.0.1.

It keeps the comments in memory and speaks the three endpoints the step uses, as GitHub answers them:

- ``GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=N&page=P``: a page of comments, oldest
  first, with a ``Link`` header whose ``next``, ``last``, ``first`` and ``prev`` entries name pages by the
  repository's id (``/repositories/{id}/issues/...``), as GitHub writes them; those addresses are served too;
- ``POST /repos/{owner}/{repo}/issues/{number}/comments`` with ``{"body": ...}``: 201 and the new comment;
- ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` with ``{"body": ...}``: 200 and the comment.

Each request must carry ``Authorization: Bearer TOKEN``, ``Accept: application/vnd.github+json``,
``X-GitHub-Api-Version: 2022-11-28`` and a User-Agent, or it is answered 401, 415, 400 or 403 as GitHub
answers; a body over 65,536 characters is a 422. ``page_size`` caps ``per_page`` (GitHub caps it at 100;
the tests use 2, so that a few comments make several pages). ``fail`` answers requests of a method
(or ``"*"``, any) with a status instead, each entry once, in order: a 403 of a read-only token, a 404,
a 503, a rate limit's 403 with ``X-RateLimit-Remaining: 0``.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 65_536
MESSAGES = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    422: "Validation Failed",
    500: "Internal Server Error",
    502: "Server Error",
    503: "Service Unavailable",
}


@dataclass
class Failure:
    """An error answer: the status, the API's message (GitHub's for the status by default), headers."""

    status: int
    message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """A request the server answered: method, path with query, headers (by lower-case name), JSON body, status."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0


class RestServer:
    """The comments of one repository's issues and pull requests, and what was asked of them."""

    def __init__(self, token: str, *, repository: str = "octo-org/rag-app", repository_id: int = 1296269,
                 prefix: str = "", page_size: int = 100) -> None:
        self.token = token
        self.repository = repository
        self.repository_id = repository_id
        self.prefix = prefix  # "/api/v3" stands for GitHub Enterprise Server
        self.page_size = page_size
        self.comments: dict[int, list[dict[str, Any]]] = {}  # issue number -> comments, oldest first
        self.fail: dict[str, list[Failure]] = {}
        self.requests: list[Seen] = []
        self._next_id = 1_000_000_001
        self._lock = threading.Lock()
        self.url = ""
        self.link_base: str | None = None  # the address the Link header's entries use (by default this server's)

    # --- state -----------------------------------------------------------------------------

    def add(self, number: int, body: str, login: str = "octocat", kind: str = "User") -> dict[str, Any]:
        """A comment on issue or pull request ``number``, as one written earlier by ``login``."""
        comment_id = self._next_id
        self._next_id += 1
        base = f"https://github.com/{self.repository}"
        comment = {
            "id": comment_id,
            "node_id": f"IC_kwDO{comment_id}",
            "url": f"{self.url}{self.prefix}/repos/{self.repository}/issues/comments/{comment_id}",
            "html_url": f"{base}/pull/{number}#issuecomment-{comment_id}",
            "issue_url": f"{self.url}{self.prefix}/repos/{self.repository}/issues/{number}",
            "body": body,
            "user": {"login": login, "id": 1 if kind == "User" else 41898282, "type": kind, "site_admin": False},
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "author_association": "MEMBER" if kind == "User" else "NONE",
        }
        self.comments.setdefault(number, []).append(comment)
        return comment

    def bodies(self, number: int) -> list[str]:
        return [comment["body"] for comment in self.comments.get(number, [])]

    def writes(self) -> list[Seen]:
        return [seen for seen in self.requests if seen.method != "GET"]

    # --- answers -----------------------------------------------------------------------------

    def answer(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON body, headers) for one request."""
        for key in (method, "*"):
            if self.fail.get(key):
                failure = self.fail[key].pop(0)
                return failure.status, self._error(failure.status, failure.message), failure.headers
        lowered = headers  # by lower-case name
        if lowered.get("authorization") != f"Bearer {self.token}":
            return 401, self._error(401), {}
        if not lowered.get("user-agent"):
            return 403, self._error(403, "Request forbidden by administrative rules. Please make sure your "
                                         "request has a User-Agent header"), {}
        if lowered.get("accept") != "application/vnd.github+json":
            return 415, self._error(415, "Unsupported 'Accept' header"), {}
        if lowered.get("x-github-api-version") != "2022-11-28":
            return 400, self._error(400, "Unsupported API version"), {}
        parts = urllib.parse.urlsplit(target)
        path, query = parts.path, urllib.parse.parse_qs(parts.query)
        if not path.startswith(self.prefix + "/"):
            return 404, self._error(404), {}
        path = path[len(self.prefix):]
        repo = re.escape(self.repository)
        if method == "GET" and (match := re.fullmatch(rf"/repos/{repo}/issues/(\d+)/comments", path)
                                or re.fullmatch(rf"/repositories/{self.repository_id}/issues/(\d+)/comments", path)):
            return self._page(int(match.group(1)), query)
        if method == "POST" and (match := re.fullmatch(rf"/repos/{repo}/issues/(\d+)/comments", path)):
            body = self._body(raw)
            if isinstance(body, tuple):
                return body
            return 201, self.add(int(match.group(1)), body, "github-actions[bot]", "Bot"), {}
        if method == "PATCH" and (match := re.fullmatch(rf"/repos/{repo}/issues/comments/(\d+)", path)):
            body = self._body(raw)
            if isinstance(body, tuple):
                return body
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(match.group(1)):
                        comment["body"] = body
                        comment["updated_at"] = "2026-01-02T00:00:00Z"
                        return 200, comment, {}
        return 404, self._error(404), {}

    def _page(self, number: int, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(query.get("per_page", ["30"])[0]), self.page_size)
        page = int(query.get("page", ["1"])[0])
        comments = self.comments.get(number, [])
        last = max(1, -(-len(comments) // per_page))
        links = []

        def link(to: int, rel: str) -> str:
            address = f"{self.link_base or self.url}{self.prefix}/repositories/{self.repository_id}/issues/{number}/comments"
            return f'<{address}?per_page={per_page}&page={to}>; rel="{rel}"'

        if page > 1:
            links += [link(page - 1, "prev")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first")]
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, comments[(page - 1) * per_page: page * per_page], headers

    def _body(self, raw: bytes) -> str | tuple[int, Any, dict[str, str]]:
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError:
            return 400, self._error(400, "Problems parsing JSON"), {}
        body = data.get("body") if isinstance(data, dict) else None
        if not isinstance(body, str) or not body:
            return 422, self._error(422), {}
        if len(body) > MAX_BODY:
            return 422, {**self._error(422), "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                                                         "message": "body is too long (maximum is 65536 characters)"}]}, {}
        return body

    @staticmethod
    def _error(status: int, message: str | None = None) -> dict[str, Any]:
        return {"message": message if message is not None else MESSAGES.get(status, "Error"),
                "documentation_url": "https://docs.github.com/rest", "status": str(status)}


def handler(server: RestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            with server._lock:
                seen = Seen(self.command, self.path, headers, body)
                server.requests.append(seen)
                status, reply, extra = server.answer(self.command, self.path, headers, raw)
                seen.status = status
            data = json.dumps(reply).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


@contextmanager
def serving(server: RestServer) -> Iterator[RestServer]:
    """Run ``server`` on a free port of 127.0.0.1 for the ``with`` block; ``server.url`` is its address."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
