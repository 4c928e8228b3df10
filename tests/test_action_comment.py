"""The GitHub Action's comment step, action/post_comment.py, against a local stand-in of GitHub's REST API.

The script runs as the step runs it, a subprocess whose environment is the runner's variables (the API's
address pointing at tests/github_rest.py's server on 127.0.0.1, an event file written here): it creates
the comment once and updates that one after, finds it past the first page of comments, writes the job
summary instead (with a notice) for a fork's pull request, another event, a 403 or a 404, tries a
5xx again, never fails the job, and never writes the token or a line the runner would read as a
workflow command. tests/test_action.py runs it as a step of action.yml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from github_rest import Failure, RestServer, serving

SCRIPT = ROOT / "action" / "post_comment.py"
TOKEN = "ghs_k3Ep7h1sS3cr3tN0tInTh3L0g0000000000"
REPOSITORY = "octo-org/rag-app"
PR = 42
MARKER = "<!-- ragscore:score -->"
OUR_COMMAND = re.compile(r"::(notice|warning) title=ragscore::[^\r\n]*")


def comment(text: str, marker: str = MARKER) -> str:
    """A comment file as ragscore --pr-comment writes one: Markdown whose last line is the marker."""
    return f"## ragscore: {text}\n\n| metric | value |\n|---|---|\n| answer_accuracy | 0.9 |\n\n{marker}\n"


def event(number: int = PR, head: str | None = REPOSITORY, base: str = REPOSITORY) -> dict[str, Any]:
    """A pull_request event's payload (the parts the script reads, and a few around them)."""
    return {"action": "synchronize", "number": number,
            "pull_request": {"number": number, "state": "open", "title": "Tune the retriever",
                             "head": {"ref": "tune", "sha": "0" * 40,
                                      "repo": None if head is None else {"full_name": head, "fork": head != base}},
                             "base": {"ref": "main", "sha": "1" * 40, "repo": {"full_name": base, "fork": False}}},
            "repository": {"full_name": base}}


@pytest.fixture
def server() -> Iterator[RestServer]:
    with serving(RestServer(TOKEN, repository=REPOSITORY, page_size=2)) as running:
        yield running


def runner_env(tmp_path: Path, api: str, payload: dict[str, Any] | None, event_name: str = "pull_request") -> dict[str, str]:
    """The variables a runner sets for the step (no proxy: the server is on 127.0.0.1)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "RUNNER_", "RAGSCORE_")) and not k.lower().endswith("_proxy")}
    event_path = tmp_path / "event.json"
    if payload is not None:
        event_path.write_text(json.dumps(payload), encoding="utf-8")
    return env | {
        "NO_PROXY": "*", "GITHUB_ACTIONS": "true", "GITHUB_API_URL": api, "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event_path) if payload is not None else "",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_TOKEN": TOKEN,
        "RAGSCORE_COMMENT_FILE": str(tmp_path / "ragscore-comment.md"),
    }


def post(tmp_path: Path, api: str, body: str | None, payload: dict[str, Any] | None = None,
         **env: str) -> subprocess.CompletedProcess[str]:
    """Run the script with the comment ``body`` (None: no comment file); it must exit 0 and stay quiet."""
    if body is not None:
        (tmp_path / "ragscore-comment.md").write_bytes(body.encode("utf-8"))
    environ = runner_env(tmp_path, api, event() if payload is None else payload) | env
    result = subprocess.run([sys.executable, str(SCRIPT)], env=environ, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert TOKEN not in result.stdout
    for line in result.stdout.splitlines():  # the runner reads a line as a command after its leading blanks
        assert not line.lstrip().startswith("::") or OUR_COMMAND.fullmatch(line), line
    return result


def commands(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("::")]


def summary(tmp_path: Path) -> str:
    path = tmp_path / "summary.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def assert_in_summary(tmp_path: Path, body: str) -> None:
    text = summary(tmp_path)
    assert body.rstrip() in text
    assert text.rstrip().endswith("_ragscore could not post this as a pull-request comment; the step's log says why._")


# --- create, then update ---------------------------------------------------------------------


def test_the_first_run_creates_the_comment_and_the_second_updates_it(server: RestServer, tmp_path: Path) -> None:
    # Five comments first, two to a page: the marker stands alone only in a comment this run makes.
    server.add(PR, "LGTM")
    server.add(PR, f"Quoting the bot:\n\n{MARKER}\n\nwhy is the score down?")  # the marker, not as the last line
    server.add(PR, "another report\n\n<!-- ragscore:nightly -->\n", "github-actions[bot]", "Bot")  # another key
    server.add(PR, "nits")
    server.add(PR + 1, f"another pull request's\n\n{MARKER}\n", "github-actions[bot]", "Bot")
    server.add(PR, "one more")

    first = post(tmp_path, server.url, comment("PASS"))
    assert commands(first) == []
    assert len(server.bodies(PR)) == 6
    created = server.comments[PR][-1]
    assert created["body"] == comment("PASS") and created["user"]["type"] == "Bot"
    assert first.stdout == f"ragscore: created the comment on pull request #{PR}: {created['html_url']}\n"
    assert [(seen.method, seen.path) for seen in server.requests] == [
        ("GET", f"/repos/{REPOSITORY}/issues/{PR}/comments?per_page=100"),
        ("GET", f"/repositories/1296269/issues/{PR}/comments?per_page=2&page=2"),  # the Link header's next, as given
        ("GET", f"/repositories/1296269/issues/{PR}/comments?per_page=2&page=3"),
        ("POST", f"/repos/{REPOSITORY}/issues/{PR}/comments"),
    ]
    assert server.requests[-1].body == {"body": comment("PASS")}
    for seen in server.requests:
        assert seen.status in (200, 201)
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert seen.headers["accept"] == "application/vnd.github+json"
        assert seen.headers["x-github-api-version"] == "2022-11-28"
        assert seen.headers["user-agent"]

    server.requests.clear()
    second = post(tmp_path, server.url, comment("FAIL: answer_accuracy 0.71 < 0.8"))
    assert commands(second) == []
    assert second.stdout == f"ragscore: updated the comment on pull request #{PR}: {created['html_url']}\n"
    assert len(server.bodies(PR)) == 6  # still one ragscore comment, its body replaced
    assert server.comments[PR][-1] is created and created["body"] == comment("FAIL: answer_accuracy 0.71 < 0.8")
    assert [seen.method for seen in server.requests] == ["GET", "GET", "GET", "PATCH"]
    assert server.requests[-1].path == f"/repos/{REPOSITORY}/issues/comments/{created['id']}"
    assert server.bodies(PR + 1) == [f"another pull request's\n\n{MARKER}\n"]  # untouched
    assert summary(tmp_path) == ""  # posted: the job summary holds only what ragscore wrote there


def test_the_first_marked_comment_is_updated_and_listing_stops_there(server: RestServer, tmp_path: Path) -> None:
    earlier = server.add(PR, "old\r\n\r\n" + MARKER + "\r\n", "github-actions[bot]", "Bot")  # edited on the web: CRLF
    later = server.add(PR, comment("a duplicate"), "github-actions[bot]", "Bot")
    for n in range(4):
        server.add(PR, f"comment {n}")
    post(tmp_path, server.url, comment("new"))
    assert earlier["body"] == comment("new") and later["body"] == comment("a duplicate")
    assert [seen.method for seen in server.requests] == ["GET", "PATCH"]


def test_a_marked_comment_of_someone_who_cannot_write_is_not_taken_over(server: RestServer, tmp_path: Path) -> None:
    # Anyone can end a comment with the marker; updating it would put the report under its author's name, for
    # its author to edit. A bot's comment, or a member's (a personal token's account), is updated.
    forged = server.add(PR, f"looks good\n\n{MARKER}\n", "passer-by")
    forged["author_association"] = "CONTRIBUTOR"
    post(tmp_path, server.url, comment("PASS"))
    assert forged["body"] == f"looks good\n\n{MARKER}\n"
    assert server.bodies(PR)[1:] == [comment("PASS")] and server.comments[PR][1]["user"]["type"] == "Bot"
    post(tmp_path, server.url, comment("FAIL"))
    assert server.bodies(PR)[1:] == [comment("FAIL")]
    member = server.add(PR + 1, comment("before"), "rag-bot-account")  # MEMBER
    post(tmp_path, server.url, comment("after"), event(PR + 1))
    assert server.bodies(PR + 1) == [comment("after")] and member["body"] == comment("after")


def test_each_key_has_its_own_comment(server: RestServer, tmp_path: Path) -> None:
    post(tmp_path, server.url, comment("retrieval", "<!-- ragscore:retrieval -->"))
    post(tmp_path, server.url, comment("answers", "<!-- ragscore:answers.v2 -->"))
    post(tmp_path, server.url, comment("retrieval again", "<!-- ragscore:retrieval -->"))
    assert server.bodies(PR) == [comment("retrieval again", "<!-- ragscore:retrieval -->"),
                                 comment("answers", "<!-- ragscore:answers.v2 -->")]


def test_an_enterprise_server_api_under_a_path(tmp_path: Path) -> None:
    with serving(RestServer(TOKEN, repository=REPOSITORY, prefix="/api/v3", page_size=2)) as ghes:
        for n in range(3):
            ghes.add(PR, f"comment {n}")
        post(tmp_path, ghes.url + "/api/v3", comment("one"))
        post(tmp_path, ghes.url + "/api/v3/", comment("two"))
        assert ghes.bodies(PR)[3:] == [comment("two")]
        assert all(seen.path.startswith("/api/v3/") and seen.status in (200, 201) for seen in ghes.requests)


def test_the_body_is_posted_as_written(server: RestServer, tmp_path: Path) -> None:
    # Text from the gold set and the traces ends up in the comment: sent byte for byte, never to the log.
    hostile = ("## ragscore \u2014 \u00e9t\u00e9 \U0001f600\r\n::error::pwned\n::add-mask::x\n%0A::warning::y\n"
               "<script>alert(1)</script> $(touch pwned) `id` \x1b[31mred\n\u2028" + "x" * 60_000 + f"\n{MARKER}\n")
    result = post(tmp_path, server.url, hostile)
    assert server.bodies(PR) == [hostile]
    assert "pwned" not in result.stdout and commands(result) == []


def test_the_largest_comment_github_takes_is_posted(server: RestServer, tmp_path: Path) -> None:
    body = "x" * (65_536 - len(MARKER) - 2) + f"\n{MARKER}\n"
    assert len(body) == 65_536
    post(tmp_path, server.url, body)
    assert server.bodies(PR) == [body]


# --- when there is no pull request to write to: the job summary, and a notice ----------------


def test_a_pull_request_from_a_fork_gets_the_job_summary(server: RestServer, tmp_path: Path) -> None:
    body = comment("from a fork")
    result = post(tmp_path, server.url, body, event(head="someone/rag-app"))
    assert commands(result) == [
        f"::notice title=ragscore::pull request #{PR} comes from someone/rag-app, and a fork's pull request gets a "
        "read-only token: no comment posted; the comment is in the job summary instead"]
    assert server.requests == []
    assert_in_summary(tmp_path, body)


def test_a_deleted_fork_is_a_fork(server: RestServer, tmp_path: Path) -> None:
    result = post(tmp_path, server.url, comment("gone"), event(head=None))
    assert "comes from a deleted fork" in commands(result)[0]
    assert server.requests == []


def test_pull_request_target_posts_for_a_fork(server: RestServer, tmp_path: Path) -> None:
    # pull_request_target runs with the base repository's token, which can write.
    post(tmp_path, server.url, comment("target"), event(head="someone/rag-app"), GITHUB_EVENT_NAME="pull_request_target")
    assert server.bodies(PR) == [comment("target")]


@pytest.mark.parametrize(("event_name", "payload"), [
    ("push", {"ref": "refs/heads/main", "repository": {"full_name": REPOSITORY}}),
    ("workflow_dispatch", {"inputs": {}}),
    ("pull_request", {"pull_request": {"number": "42"}}),  # not a number
    ("pull_request", {"pull_request": {"number": True}}),
    ("pull_request", []),
])
def test_another_event_gets_the_job_summary(server: RestServer, tmp_path: Path, event_name: str, payload: Any) -> None:
    body = comment("on main")
    result = post(tmp_path, server.url, body, payload, GITHUB_EVENT_NAME=event_name)
    assert commands(result) == [f"::notice title=ragscore::not a pull request (the {event_name} event): no comment "
                                "to post; the comment is in the job summary instead"]
    assert server.requests == []
    assert_in_summary(tmp_path, body)


def test_no_event_file_is_no_pull_request(server: RestServer, tmp_path: Path) -> None:
    result = post(tmp_path, server.url, comment("x"), GITHUB_EVENT_PATH=str(tmp_path / "missing.json"))
    assert commands(result)[0].startswith("::notice title=ragscore::not a pull request")
    assert server.requests == []


@pytest.mark.parametrize(("method", "status", "message"), [
    ("GET", 403, "Resource not accessible by integration"),  # a read-only token (a private repository's fork PR)
    ("POST", 403, "Resource not accessible by integration"),  # listing is allowed, writing is not
    ("*", 404, "Not Found"),  # a token that cannot see the repository
    ("POST", 404, "Not Found"),
])
def test_a_token_that_cannot_write_gets_the_job_summary(server: RestServer, tmp_path: Path, method: str,
                                                        status: int, message: str) -> None:
    server.fail[method] = [Failure(status)]
    body = comment("read-only")
    result = post(tmp_path, server.url, body)
    assert commands(result) == [
        f"::notice title=ragscore::cannot post on pull request #{PR}: HTTP {status} ({message}). The token needs "
        "pull-requests: write (a read-only token, as a fork's pull request gets, is answered so); the comment is "
        "in the job summary instead"]
    assert server.bodies(PR) == []
    assert [seen.status for seen in server.requests][-1] == status
    assert_in_summary(tmp_path, body)


def test_a_403_on_update_gets_the_job_summary(server: RestServer, tmp_path: Path) -> None:
    mine = server.add(PR, comment("before"), "github-actions[bot]", "Bot")
    server.fail["PATCH"] = [Failure(403)]
    result = post(tmp_path, server.url, comment("after"))
    assert commands(result)[0].startswith(f"::notice title=ragscore::cannot post on pull request #{PR}: HTTP 403")
    assert mine["body"] == comment("before")
    assert_in_summary(tmp_path, comment("after"))


def test_a_comment_deleted_since_it_was_listed_is_made_anew(server: RestServer, tmp_path: Path) -> None:
    server.add(PR, comment("before"), "github-actions[bot]", "Bot")
    server.fail["PATCH"] = [Failure(404)]
    result = post(tmp_path, server.url, comment("after"))
    assert commands(result) == []
    assert [seen.method for seen in server.requests] == ["GET", "PATCH", "POST"]
    assert server.bodies(PR) == [comment("before"), comment("after")]


def test_no_summary_file_is_said(server: RestServer, tmp_path: Path) -> None:
    result = post(tmp_path, server.url, comment("x"), event(head="someone/rag-app"), GITHUB_STEP_SUMMARY="")
    assert commands(result)[0].endswith("no comment posted; no job summary to write it to either "
                                        "(GITHUB_STEP_SUMMARY is not set)")


# --- failures: tried again, then a warning; the job goes on -----------------------------------


def test_a_5xx_is_tried_again(server: RestServer, tmp_path: Path) -> None:
    server.fail["POST"] = [Failure(502, headers={"Retry-After": "0"})]
    server.fail["GET"] = [Failure(503, headers={"Retry-After": "0"})]
    result = post(tmp_path, server.url, comment("eventually"))
    assert server.bodies(PR) == [comment("eventually")]
    assert [(seen.method, seen.status) for seen in server.requests] == [
        ("GET", 503), ("GET", 200), ("POST", 502), ("GET", 200), ("POST", 201)]  # each try lists anew
    assert result.stdout.splitlines()[:2] == ["ragscore: HTTP 503 (Service Unavailable); trying again in 0 s",
                                              "ragscore: HTTP 502 (Server Error); trying again in 0 s"]
    assert commands(result) == []


def test_a_rate_limit_is_waited_for(server: RestServer, tmp_path: Path) -> None:
    server.fail["GET"] = [Failure(403, "API rate limit exceeded", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0"}),
                          Failure(429, "You have exceeded a secondary rate limit", {"Retry-After": "0"})]
    result = post(tmp_path, server.url, comment("limited"))
    assert server.bodies(PR) == [comment("limited")]
    assert commands(result) == []


def test_a_long_rate_limit_is_not_waited_for(server: RestServer, tmp_path: Path) -> None:
    server.fail["GET"] = [Failure(403, "API rate limit exceeded", {"X-RateLimit-Remaining": "0", "Retry-After": "3600"})]
    result = post(tmp_path, server.url, comment("limited"))
    assert commands(result) == [
        f"::warning title=ragscore::cannot post on pull request #{PR}: HTTP 403 (API rate limit exceeded) (3 tries); "
        "the comment is in the job summary instead"]
    assert len(server.requests) == 1


def test_a_server_that_keeps_failing_gets_a_warning(server: RestServer, tmp_path: Path) -> None:
    server.fail["*"] = [Failure(500, headers={"Retry-After": "0"})] * 3
    result = post(tmp_path, server.url, comment("down"))
    assert commands(result) == [
        f"::warning title=ragscore::cannot post on pull request #{PR}: HTTP 500 (Internal Server Error) (3 tries); "
        "the comment is in the job summary instead"]
    assert len(server.requests) == 3
    assert_in_summary(tmp_path, comment("down"))


def test_nothing_listening_is_tried_after_1_and_2_seconds_then_a_warning(tmp_path: Path) -> None:
    with serving(RestServer(TOKEN)) as gone:
        address = gone.url
    result = post(tmp_path, address, comment("x"))
    lines = result.stdout.splitlines()
    assert [line.rsplit(";", 1)[1] for line in lines[:2]] == [" trying again in 1 s", " trying again in 2 s"]
    assert lines[0].startswith("ragscore: cannot connect: ")
    (line,) = commands(result)
    assert line.startswith(f"::warning title=ragscore::cannot post on pull request #{PR}: cannot connect: ")
    assert line.endswith("(3 tries); the comment is in the job summary instead")


def test_bad_credentials_get_a_warning(server: RestServer, tmp_path: Path) -> None:
    result = post(tmp_path, server.url, comment("x"), GITHUB_TOKEN="ghs_expired")
    assert commands(result) == [f"::warning title=ragscore::cannot post on pull request #{PR}: HTTP 401 (Bad credentials); "
                                "the comment is in the job summary instead"]
    assert len(server.requests) == 1  # not tried again


def test_the_token_is_never_written(server: RestServer, tmp_path: Path) -> None:
    # A server that echoes the token in its error message: scrubbed.
    server.fail["POST"] = [Failure(422, f"token {TOKEN} is not allowed\n::error::pwned")]
    result = post(tmp_path, server.url, comment("x"))
    assert commands(result) == [f"::warning title=ragscore::cannot post on pull request #{PR}: HTTP 422 (token *** is "
                                "not allowed ::error::pwned); the comment is in the job summary instead"]
    assert TOKEN not in summary(tmp_path)


def test_api_text_cannot_start_a_line_of_the_log(server: RestServer, tmp_path: Path) -> None:
    server.fail["GET"] = [Failure(403, "no\n::error::pwned\r::add-mask::x %0A::warning::y \x1b[2J")]
    result = post(tmp_path, server.url, comment("x"))
    (line,) = commands(result)
    assert line.startswith(f"::notice title=ragscore::cannot post on pull request #{PR}: HTTP 403 (no ::error::pwned ")
    assert "%250A::warning::y \\u001b[2J)" in line  # the runner shows %0A as written; ESC shown as an escape
    assert len(result.stdout.splitlines()) == 1


def test_a_link_to_another_host_is_not_followed(server: RestServer, tmp_path: Path) -> None:
    with serving(RestServer(TOKEN, repository=REPOSITORY)) as elsewhere:
        server.link_base = elsewhere.url.replace("127.0.0.1", "localhost")
        for n in range(3):
            server.add(PR, f"comment {n}")
        result = post(tmp_path, server.url, comment("x"))
        assert elsewhere.requests == []
    (line,) = commands(result)
    assert line.startswith(f"::warning title=ragscore::cannot post on pull request #{PR}: the API gave a link to "
                           "another host (http://localhost:")
    assert server.bodies(PR) == ["comment 0", "comment 1", "comment 2"]


def test_a_redirect_is_not_followed(server: RestServer, tmp_path: Path) -> None:
    with serving(RestServer(TOKEN, repository=REPOSITORY)) as elsewhere:
        server.fail["GET"] = [Failure(307, "Temporary Redirect", {"Location": elsewhere.url + "/repos/x/y/issues/1/comments"})]
        result = post(tmp_path, server.url, comment("x"))
        assert elsewhere.requests == []
    assert commands(result)[0].startswith(f"::warning title=ragscore::cannot post on pull request #{PR}: HTTP 307")


@pytest.mark.parametrize(("env", "problem"), [
    ({"GITHUB_TOKEN": ""}, "no token (the token input is empty)"),
    ({"GITHUB_TOKEN": "  "}, "no token (the token input is empty)"),
    ({"GITHUB_REPOSITORY": "octo-org/rag-app/../x"}, "GITHUB_REPOSITORY is not owner/name"),
    ({"GITHUB_REPOSITORY": ""}, "GITHUB_REPOSITORY is not owner/name"),
    ({"GITHUB_API_URL": "file:///etc/passwd"}, "GITHUB_API_URL is not an http(s) URL"),
])
def test_a_runner_without_what_is_needed_gets_a_warning(server: RestServer, tmp_path: Path, env: dict[str, str],
                                                        problem: str) -> None:
    result = post(tmp_path, server.url, comment("x"), **env)
    assert commands(result) == [f"::warning title=ragscore::{problem}: no comment posted; the comment is in the job "
                                "summary instead"]
    assert server.requests == []


# --- the comment file ---------------------------------------------------------------------------


def test_no_comment_file_is_nothing_to_post(server: RestServer, tmp_path: Path) -> None:
    result = post(tmp_path, server.url, None)
    assert commands(result) == ["::notice title=ragscore::ragscore wrote no pull-request comment (the run step "
                                "stopped before it): nothing to post"]
    assert server.requests == [] and summary(tmp_path) == ""


@pytest.mark.parametrize("body", [
    "## ragscore\n\nno marker\n",
    f"{MARKER}\n\ntext after the marker\n",
    "## ragscore\n\n<!-- ragscore: spaced -->\n",
    "## ragscore\n\n<!-- ragscore:a/b -->\n",
    "",
])
def test_a_file_without_the_marker_is_not_posted(server: RestServer, tmp_path: Path, body: str) -> None:
    result = post(tmp_path, server.url, body)
    (line,) = commands(result)
    assert line.startswith("::warning title=ragscore::")
    assert line.endswith("does not end with a ragscore marker line (<!-- ragscore:KEY -->): not posted; the comment "
                         "is in the job summary instead")
    assert server.requests == []


def test_a_comment_longer_than_github_takes_is_not_posted(server: RestServer, tmp_path: Path) -> None:
    body = "x" * 65_536 + f"\n{MARKER}\n"
    result = post(tmp_path, server.url, body)
    assert commands(result) == ["::warning title=ragscore::the pull-request comment has 65,561 characters, more than "
                                "GitHub's 65,536: not posted; the comment is in the job summary instead"]
    assert server.requests == []
    assert_in_summary(tmp_path, body)


def test_a_comment_file_that_is_not_utf8_gets_a_warning(server: RestServer, tmp_path: Path) -> None:
    (tmp_path / "ragscore-comment.md").write_bytes(b"\xff\xfe" + MARKER.encode())
    result = post(tmp_path, server.url, None)
    assert commands(result)[0].startswith("::warning title=ragscore::cannot read the pull-request comment ")
    assert server.requests == []
