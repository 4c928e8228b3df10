"""Calls to an OpenAI-compatible chat completions endpoint, with the standard library alone.

``POST {endpoint}/chat/completions`` with a JSON body, the key (``RAGSCORE_JUDGE_API_KEY``, else
``OPENAI_API_KEY``; none for a local server that needs none) as a bearer token. A call is tried again
after a 429, a 5xx, a refused or reset connection or a timeout, up to ``retries`` more times: after the
``Retry-After`` the server gave (seconds or an HTTP date, at most ``MAX_WAIT``), else after 1, 2, 4, ...
seconds. A 401 or 403 (the key), a 404 (the endpoint or the model) and a redirect (never followed: it
would carry the key to wherever it points) stop the whole run (``EndpointError``);
another 4xx, a reply that is not a chat completion, and the tries running out fail that one judgment
(``CallFailed``). A broken reply (a garbled status line, a chunked body cut short) is tried again as a
reset connection is. The key is never written anywhere: every text taken from a reply is scrubbed of it.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ragscore.errors import UsageError
from ragscore.quoting import quote, shorten
from ragscore.version import __version__

KEY_VARIABLES: Final = ("RAGSCORE_JUDGE_API_KEY", "OPENAI_API_KEY")
DEFAULT_ENDPOINT: Final = "https://api.openai.com/v1"
MAX_WAIT: Final = 120.0  # seconds: a longer Retry-After is waited this long
MAX_REPLY: Final = 16 * 1024 * 1024
_DETAIL_BYTES: Final = 64 * 1024  # of an error reply, read for its message
_RETRIED: Final = frozenset({408, 409, 425, 429})  # and every 5xx
_STOPPING: Final = {401: "the endpoint refused the key", 403: "the endpoint refused the key",
                    404: "no such endpoint or model"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect (its 3xx is an HTTPError): urllib would send the Authorization header on to the new
    address, another host or plain http alike."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        return None


_OPENER: Final = urllib.request.build_opener(_NoRedirect())


class EndpointError(UsageError):
    """The endpoint refuses every call (the key, the address, the model): the run stops."""


class CallFailed(Exception):
    """One judgment could not be had: why (scrubbed of the key)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A chat completion: its text, the model the server says answered, the token usage, the seconds taken, and
    whether the text was cut off at max_tokens (finish_reason "length")."""

    text: str
    model: str | None
    usage: dict[str, Any] | None
    seconds: float
    cut: bool = False


def base_url(endpoint: str) -> str:
    """The endpoint as a judgment's key and the requests use it: http(s), no credentials or query, no final /."""
    parsed = urllib.parse.urlsplit(endpoint.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"--endpoint {quote(endpoint)}: expected an http:// or https:// URL such as "
                         f"{DEFAULT_ENDPOINT}")
    if parsed.username is not None or parsed.password is not None or parsed.query or parsed.fragment:
        raise UsageError("--endpoint: give the URL without credentials, query or fragment (the key goes in "
                         f"{KEY_VARIABLES[0]})")
    try:
        parsed.port  # noqa: B018  (a port that is no number raises here)
    except ValueError:
        raise UsageError(f"--endpoint {quote(endpoint)}: the port is not a number") from None
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))


def host_of(base: str) -> str:
    """The endpoint's host (and port, when given), as the scores file and the settings signature name the judge."""
    return urllib.parse.urlsplit(base).netloc


def api_key(environ: Mapping[str, str] = os.environ) -> str | None:
    """The key from the environment (None: send none); a UsageError, never showing it, when it holds a character an
    HTTP header cannot carry (http.client's own error would show it whole)."""
    for name in KEY_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            if not all("!" <= c <= "~" for c in value):
                raise UsageError(f"{name} holds a character a key cannot have (a space, a line break, a character "
                                 "that is not ASCII, such as a curly quote): set it to the key alone")
            return value
    return None


class Client:
    """Calls one endpoint; safe to share between threads (each call opens its own connection)."""

    def __init__(self, base: str, key: str | None, *, timeout: float, retries: int,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.url = base + "/chat/completions"
        self._key = key
        self.timeout = timeout
        self.retries = retries
        self._stopped = threading.Event()
        self._sleep = sleep if sleep is not None else self._stopped.wait  # a wait that stop() ends

    def stop(self) -> None:
        """Ask no more: a call under way is not tried again (a run interrupted stops at once, not after its retries'
        waits)."""
        self._stopped.set()

    def scrub(self, text: str) -> str:
        """The text without the key (a server may echo it in an error)."""
        return text.replace(self._key, "[key]") if self._key else text

    def complete(self, body: Mapping[str, Any]) -> Reply:
        """One chat completion, tried again as the module says."""
        data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"ragscore/{__version__}"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        tries = 0
        while True:
            tries += 1
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            start = time.monotonic()
            try:
                with _OPENER.open(request, timeout=self.timeout) as response:
                    raw = _body(response, start + self.timeout)
                return self._reply(raw, time.monotonic() - start)
            except urllib.error.HTTPError as exc:
                status, wait = exc.code, retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                location = exc.headers.get("Location") if exc.headers else None
                detail = self._detail(exc)
                exc.close()
                if 300 <= status < 400:
                    raise EndpointError(
                        f"--endpoint {self.url}: the endpoint redirects (HTTP {status}) to "
                        f"{quote(self.scrub(location or ''))}; a redirect is never followed (the key would go with "
                        "it): give --endpoint the base URL it redirects to") from None
                if status in _STOPPING:
                    raise EndpointError(f"--endpoint {self.url}: {_STOPPING[status]} (HTTP {status}{detail})") from None
                if status not in _RETRIED and status < 500:
                    raise CallFailed(f"HTTP {status}{detail}") from None
                why = f"HTTP {status}{detail}"
            except TimeoutError:
                wait, why = None, f"no reply within {self.timeout:g} s"
            except urllib.error.URLError as exc:
                reason = exc.reason
                if isinstance(reason, TimeoutError):
                    wait, why = None, f"no reply within {self.timeout:g} s"
                else:
                    wait, why = None, f"cannot connect: {self.scrub(str(reason))}"
            except (ConnectionError, OSError) as exc:  # reset mid-reply, a closed connection
                wait, why = None, f"the connection failed: {self.scrub(exc.strerror or str(exc))}"
            except http.client.HTTPException as exc:  # no OSError: a garbled status line, a chunk cut short
                wait, why = None, f"a broken HTTP reply ({type(exc).__name__})"
            if tries > self.retries or self._stopped.is_set():
                raise CallFailed(f"{why} ({tries} tries)")
            self._sleep(min(wait if wait is not None else 2.0 ** (tries - 1), MAX_WAIT))
            if self._stopped.is_set():
                raise CallFailed(f"{why} ({tries} tries; stopped)")

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        """The server's message in an error reply, shortened and scrubbed (empty when it gave none)."""
        try:
            raw = exc.read(_DETAIL_BYTES)
        except (OSError, ValueError):
            return ""
        text = self._scrubbed(raw, cut=len(raw) == _DETAIL_BYTES)
        try:
            parsed = json.loads(text)
            error = parsed.get("error") if isinstance(parsed, dict) else None
            message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
            if isinstance(message, str):
                text = message
        except ValueError:
            pass
        text = " ".join(self.scrub(text).split())
        return f": {shorten(text, 200)}" if text else ""

    def _scrubbed(self, raw: bytes, *, cut: bool) -> str:
        """A reply's bytes as text without the key, scrubbed before any of it is left out; ``cut``: the bytes are the
        start of a longer reply, so that the start of a key they end in is taken off too."""
        text = self.scrub(raw.decode("utf-8", "replace"))
        if cut and self._key:
            for size in range(min(len(self._key) - 1, len(text)), 0, -1):
                if text.endswith(self._key[:size]):
                    return text[:-size]
        return text

    def _reply(self, raw: bytes, seconds: float) -> Reply:
        """Read a chat completion's text, model and usage; CallFailed when the reply is not one."""
        if len(raw) > MAX_REPLY:
            raise CallFailed(f"a reply longer than {MAX_REPLY:,} bytes")
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            raise CallFailed("the reply is not JSON: " + shorten(self._scrubbed(raw, cut=False), 120)) from None
        choices = body.get("choices") if isinstance(body, dict) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise CallFailed("the reply is not a chat completion with a message's text (choices[0].message.content)")
        model = body.get("model")
        usage = body.get("usage")
        if isinstance(usage, dict) and self._key:  # what a server writes is scrubbed wherever it may echo the key
            usage = json.loads(self.scrub(json.dumps(usage)))
        return Reply(self.scrub(content), self.scrub(model) if isinstance(model, str) else None,
                     usage if isinstance(usage, dict) else None, round(seconds, 3),
                     first.get("finish_reason") == "length")  # type: ignore[union-attr]  # a dict: its message was read


def _body(response: Any, deadline: float) -> bytes:
    """A reply's body, up to ``MAX_REPLY`` + 1 bytes, read as it comes; TimeoutError when it is still coming at the
    ``deadline`` (the socket's timeout bounds each read alone: a server that trickles its reply would pass it)."""
    parts: list[bytes] = []
    size = 0
    while size <= MAX_REPLY:
        if time.monotonic() > deadline:
            raise TimeoutError
        part = response.read1(65536)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds, or an HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None or moment.tzinfo is None:
        return None
    wait = moment.timestamp() - time.time()
    return max(0.0, wait) if math.isfinite(wait) else None
