"""Post ragscore's pull-request comment, or update the one posted before: the GitHub Action's comment step.

Standard library only; it runs with the Python the action installed ragscore into, but imports none of it.
It reads its environment:

- ``RAGSCORE_COMMENT_FILE``: the comment ``ragscore --pr-comment`` wrote, Markdown whose last line is the
  marker ``<!-- ragscore:KEY -->``;
- ``GITHUB_TOKEN``: the token (the action's ``token`` input, by default the workflow's);
- ``GITHUB_API_URL`` (https://api.github.com by default), ``GITHUB_REPOSITORY`` (owner/name),
  ``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH`` (the event's JSON: ``pull_request.number``, and whether
  the head repository is another than the base's) and ``GITHUB_STEP_SUMMARY``, as the runner sets them.

It lists the pull request's comments (``GET /repos/{owner}/{repo}/issues/{number}/comments``, following
the ``Link: <...>; rel="next"`` pages), updates the first one whose last line is the marker, written by a bot
or by someone who can write to the repository (``PATCH /repos/{owner}/{repo}/issues/comments/{id}``; anyone
else's comment with the marker is left alone) or, when there is none, creates one (``POST
/repos/{owner}/{repo}/issues/{number}/comments``).

It never fails the job: a comment that cannot be posted is no reason to fail a quality gate, whose
verdict is the run step's exit status. The exit status is 0 whatever happens. When the comment cannot
be posted, its text goes to the job summary instead, with one line in the log saying why: a
``::notice`` when that is expected (not a pull request; a pull request from a fork, whose token is
read-only; a 403 or 404, a token without ``pull-requests: write``), a ``::warning`` otherwise (a 401, the
server failing three times, a comment file that is not ragscore's). A 5xx, a 429, a rate limit's 403, a
timeout or a refused connection is tried again, twice, after the ``Retry-After`` the server gave (at most
``MAX_WAIT``) or after 1 and 2 seconds; each try lists the comments anew, so a comment a failed try
created is updated, not made twice.

The token is sent to the API's own scheme, host and port only (a ``next`` link elsewhere is not
followed, and no redirect is) and never written: every text from the API is scrubbed of it and escaped
so that it cannot begin a line of the log, where a line starting ``::`` is a workflow command.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from email.message import Message
from typing import Any, Final

MAX_BODY: Final = 65_536  # characters: the longest comment GitHub takes
MARKER: Final = re.compile(r"<!-- ragscore:[A-Za-z0-9._-]+ -->")
REPOSITORY: Final = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
DEFAULT_API: Final = "https://api.github.com"
API_VERSION: Final = "2022-11-28"
TRIES: Final = 3
MAX_WAIT: Final = 60.0  # seconds: a longer Retry-After, or a rate limit reset later than this, ends the tries
TIMEOUT: Final = 30.0  # seconds for one request
MAX_PAGES: Final = 100  # of 100 comments each
MAX_REPLY: Final = 32 * 1024 * 1024  # bytes
USER_AGENT: Final = "ragscore-action"
SUMMARY_NOTE: Final = "_ragscore could not post this as a pull-request comment; the step's log says why._"
_ESCAPES: Final = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))


class Transient(Exception):
    """A failure worth another try: why, and the seconds the server asked to wait (None: not said)."""

    def __init__(self, why: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.wait = wait


class Refused(Exception):
    """An HTTP error that another try would not mend: its status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def one_line(text: str, limit: int = 300) -> str:
    """Text from outside (the API, the event) made safe inside a workflow command's message: one line, shortened.

    The runner decodes %25, %0D and %0A in a message; other control characters are shown as escapes.
    """
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    for raw, escaped in _ESCAPES:
        text = text.replace(raw, escaped)
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


class Log:
    """The lines the step writes: workflow commands and plain lines, each one line, never holding the token."""

    def __init__(self, token: str, write: Callable[[str], object] = print) -> None:
        self._token = token
        self._write = write

    def scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def command(self, name: str, message: str) -> None:
        self._write(f"::{name} title=ragscore::{one_line(self.scrub(message), 1000)}")

    def notice(self, message: str) -> None:
        self.command("notice", message)

    def warning(self, message: str) -> None:
        self.command("warning", message)

    def info(self, message: str) -> None:
        self._write("ragscore: " + one_line(self.scrub(message), 1000))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect: the token would go along to wherever it leads."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (seconds, or an HTTP date); None when absent or unreadable."""
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


def next_link(header: str | None) -> str | None:
    """The URL of the ``rel="next"`` entry of a Link header, if it has one."""
    for part in (header or "").split(","):
        match = re.fullmatch(r"\s*<([^<>]*)>(.*)", part, re.DOTALL)
        if match is None:
            continue
        for param in match.group(2).split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "rel" and "next" in value.strip().strip('"').lower().split():
                return match.group(1).strip()
    return None


def origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class GitHub:
    """Requests to one REST API with one token; no retries here (``post`` retries whole tries)."""

    def __init__(self, api: str, token: str, log: Log) -> None:
        self.api = api.rstrip("/")
        self._token = token
        self._log = log
        self._opener = urllib.request.build_opener(NoRedirect)

    def request(self, method: str, url: str, body: Mapping[str, Any] | None = None) -> tuple[Any, Message]:
        """The reply's JSON and headers; Transient or Refused on an error."""
        if origin(url) != origin(self.api):  # a next link must not carry the token elsewhere
            raise Refused(0, f"the API gave a link to another host ({self._log.scrub(url)})")
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION,
                   "User-Agent": USER_AGENT, "Authorization": f"Bearer {self._token}"}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json; charset=utf-8"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=TIMEOUT) as response:
                raw = response.read(MAX_REPLY + 1)
                reply_headers = response.headers
        except urllib.error.HTTPError as exc:
            try:
                error = self._error(exc)
            finally:
                exc.close()
            raise error from None
        except TimeoutError:
            raise Transient(f"no reply within {TIMEOUT:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise Transient(f"no reply within {TIMEOUT:g} s") from None
            raise Transient(f"cannot connect: {exc.reason}") from None
        except OSError as exc:  # a connection reset or closed mid-reply
            raise Transient(f"the connection failed: {exc.strerror or exc}") from None
        if len(raw) > MAX_REPLY:
            raise Refused(0, f"a reply longer than {MAX_REPLY:,} bytes")
        try:
            return json.loads(raw.decode("utf-8")), reply_headers
        except (ValueError, RecursionError):
            raise Refused(0, "the reply is not JSON") from None

    def _error(self, exc: urllib.error.HTTPError) -> Exception:
        status = exc.code
        headers = exc.headers if exc.headers is not None else Message()
        why = f"HTTP {status}{self._message(exc)}"
        wait = retry_after(headers.get("Retry-After"))
        limited = headers.get("X-RateLimit-Remaining") == "0"
        if status in (403, 429) and (wait is not None or limited):  # a rate limit, primary or secondary
            if wait is None:
                reset = headers.get("X-RateLimit-Reset", "")
                wait = max(0.0, int(reset) - time.time()) if reset.isdigit() else None
            return Transient(why, wait)
        if status >= 500 or status in (408, 429):
            return Transient(why, wait)
        return Refused(status, why)

    def _message(self, exc: urllib.error.HTTPError) -> str:
        """``: the API's message`` from an error reply (empty when it gave none)."""
        try:
            text = exc.read(4096).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        try:
            parsed = json.loads(text)
            if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
                text = parsed["message"]
        except ValueError:
            pass
        text = " ".join(self._log.scrub(text).split())
        return f" ({text[:200]})" if text else ""


def last_line(text: str) -> str:
    lines = text.rstrip().splitlines()
    return lines[-1].strip() if lines else ""


def trusted(comment: Mapping[str, Any]) -> bool:
    """Whether a comment may be ragscore's: written by a bot (the workflow's token is github-actions[bot]) or by
    someone who can write to the repository (a personal token's account). Anyone else can end a comment with
    the marker too, and the step must not take that comment over (its author could then edit the report)."""
    user = comment.get("user")
    return ((isinstance(user, dict) and user.get("type") == "Bot")
            or comment.get("author_association") in ("OWNER", "MEMBER", "COLLABORATOR"))


def sync_once(github: GitHub, repository: str, number: int, body: str, marker: str) -> tuple[str, Any]:
    """List the comments and update the one with the marker, or create one: ("updated"|"created", the comment)."""
    repo = "/".join(urllib.parse.quote(part, safe="") for part in repository.split("/"))
    url: str | None = f"{github.api}/repos/{repo}/issues/{number}/comments?per_page=100"
    seen: set[str] = set()
    found: int | None = None
    while url is not None and found is None:
        if url in seen or len(seen) >= MAX_PAGES:
            break
        seen.add(url)
        page, headers = github.request("GET", url)
        if not isinstance(page, list):
            raise Refused(0, "the list of comments is not a JSON array")
        for comment in page:
            if (isinstance(comment, dict) and isinstance(comment.get("body"), str)
                    and isinstance(comment.get("id"), int) and last_line(comment["body"]) == marker
                    and trusted(comment)):
                found = comment["id"]
                break
        url = next_link(headers.get("Link"))
    if found is not None:
        try:
            reply, _ = github.request("PATCH", f"{github.api}/repos/{repo}/issues/comments/{found}", {"body": body})
            return "updated", reply
        except Refused as exc:
            if exc.status != 404:
                raise
            # Deleted since it was listed: make a new one.
    reply, _ = github.request("POST", f"{github.api}/repos/{repo}/issues/{number}/comments", {"body": body})
    return "created", reply


def post(github: GitHub, repository: str, number: int, body: str, marker: str, log: Log,
         sleep: Callable[[float], None] = time.sleep) -> tuple[str, Any]:
    """``sync_once``, tried again after a transient failure (TRIES in all); the last failure raised."""
    for attempt in range(1, TRIES + 1):
        try:
            return sync_once(github, repository, number, body, marker)
        except Transient as exc:
            wait = exc.wait if exc.wait is not None else float(2 ** (attempt - 1))
            if attempt == TRIES or wait > MAX_WAIT:
                raise
            log.info(f"{exc}; trying again in {wait:g} s")
            sleep(wait)
    raise AssertionError("unreachable")


def pull_request(event_path: str) -> tuple[int | None, str | None]:
    """The event's pull request number (None: not a pull request) and, for one from a fork, the fork's name."""
    try:
        with open(event_path, encoding="utf-8") as file:
            event = json.load(file)
    except (OSError, ValueError):
        return None, None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pr, dict):
        return None, None
    number = pr.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        return None, None
    head, base = pr.get("head"), pr.get("base")
    if not isinstance(head, dict) or not isinstance(base, dict):
        return number, None
    head_repo, base_repo = head.get("repo"), base.get("repo")
    base_name = base_repo.get("full_name") if isinstance(base_repo, dict) else None
    if head_repo is None:  # the fork was deleted
        return number, "a deleted fork"
    head_name = head_repo.get("full_name") if isinstance(head_repo, dict) else None
    if isinstance(head_name, str) and isinstance(base_name, str) and head_name != base_name:
        return number, head_name
    return number, None


def to_summary(body: str, environ: Mapping[str, str], log: Log) -> str:
    """Append the comment to the job summary; the words that say where it went."""
    path = environ.get("GITHUB_STEP_SUMMARY", "")
    if not path:
        return "no job summary to write it to either (GITHUB_STEP_SUMMARY is not set)"
    try:
        with open(path, "a", encoding="utf-8") as file:
            file.write(f"\n{body.rstrip()}\n\n{SUMMARY_NOTE}\n")
    except OSError as exc:
        log.warning(f"cannot write the job summary: {exc.strerror or exc}")
        return "and the job summary could not be written"
    return "the comment is in the job summary instead"


def run(environ: Mapping[str, str], log: Log) -> None:
    path = environ.get("RAGSCORE_COMMENT_FILE", "")
    try:
        with open(path, encoding="utf-8", newline="") as file:
            body = file.read()
    except FileNotFoundError:
        log.notice("ragscore wrote no pull-request comment (the run step stopped before it): nothing to post")
        return
    except (OSError, ValueError) as exc:
        log.warning(f"cannot read the pull-request comment {path}: {exc}")
        return
    marker = last_line(body)
    if not MARKER.fullmatch(marker):
        log.warning(f"{path} does not end with a ragscore marker line (<!-- ragscore:KEY -->): "
                    f"not posted; {to_summary(body, environ, log)}")
        return
    if len(body) > MAX_BODY:
        log.warning(f"the pull-request comment has {len(body):,} characters, more than GitHub's {MAX_BODY:,}: "
                    f"not posted; {to_summary(body, environ, log)}")
        return
    event_name = environ.get("GITHUB_EVENT_NAME", "")
    number, fork = pull_request(environ.get("GITHUB_EVENT_PATH", ""))
    if number is None:
        log.notice(f"not a pull request (the {event_name or 'unknown'} event): no comment to post; "
                   f"{to_summary(body, environ, log)}")
        return
    if fork is not None and event_name != "pull_request_target":
        log.notice(f"pull request #{number} comes from {fork}, and a fork's pull request gets a read-only token: "
                   f"no comment posted; {to_summary(body, environ, log)}")
        return
    repository = environ.get("GITHUB_REPOSITORY", "")
    api = environ.get("GITHUB_API_URL", "") or DEFAULT_API
    token = environ.get("GITHUB_TOKEN", "")
    problem = (
        "GITHUB_REPOSITORY is not owner/name" if not REPOSITORY.fullmatch(repository)
        else "GITHUB_API_URL is not an http(s) URL" if origin(api)[0] not in ("http", "https") or not origin(api)[1]
        else "no token (the token input is empty)" if not token.strip()
        else None)
    if problem:
        log.warning(f"{problem}: no comment posted; {to_summary(body, environ, log)}")
        return
    github = GitHub(api, token.strip(), log)
    try:
        done, comment = post(github, repository, number, body, marker, log)
    except Refused as exc:
        if exc.status in (403, 404):
            log.notice(f"cannot post on pull request #{number}: {exc}. The token needs pull-requests: write "
                       f"(a read-only token, as a fork's pull request gets, is answered so); "
                       f"{to_summary(body, environ, log)}")
        else:
            log.warning(f"cannot post on pull request #{number}: {exc}; {to_summary(body, environ, log)}")
        return
    except Transient as exc:
        log.warning(f"cannot post on pull request #{number}: {exc} ({TRIES} tries); {to_summary(body, environ, log)}")
        return
    where = comment.get("html_url") if isinstance(comment, dict) else None
    log.info(f"{done} the comment on pull request #{number}" + (f": {where}" if isinstance(where, str) else ""))


def main() -> int:
    log = Log(os.environ.get("GITHUB_TOKEN", "").strip())
    try:
        run(os.environ, log)
    except Exception as exc:  # a bug here must not fail the quality gate's job either
        log.warning(f"the comment step failed ({type(exc).__name__}: {exc}); no comment posted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
