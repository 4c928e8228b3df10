"""What the repository ships beside the package: the GitHub Action (action.yml) and the pre-commit
hook (.pre-commit-hooks.yaml), run locally, and docs whose layout section is true to the tree.

The action's `run:` steps are run with bash as a runner runs them (`bash --noprofile --norc -eo
pipefail`, the GitHub_* variables and the step's `env:` set, in a workspace folder), with the
shipped examples as inputs. One step is not run: "Install ragscore" makes a virtual environment
and pip-installs this checkout into it, which would take longer than the rest of the suite's
share allows and needs the package index; the test checks its syntax and what it installs, and
hands the next step this test's own Python, in which ragscore is importable, as the
installed one. The comment step posts to tests/github_rest.py's stand-in of GitHub's REST API.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import EXAMPLES, ROOT, checked_report
from docs import doc_section, doc_text, lines_outside_fences
from github_rest import RestServer, serving

ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def clean_env() -> dict[str, str]:
    """This process's environment without the variables of a runner the tests may run under."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_")) and k not in ("CI", "NO_COLOR")}


# --- action.yml -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return load(ACTION)


def steps(action: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {step["name"]: step for step in action["runs"]["steps"]}


def test_action_is_composite_with_its_inputs(action: dict[str, Any]) -> None:
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert set(inputs) == {"gold", "trace", "gates-file", "args", "comment", "token", "sarif"}
    assert inputs["gold"]["required"] is True and inputs["trace"]["required"] is True
    assert inputs["gates-file"] == {**inputs["gates-file"], "required": False, "default": ""}
    assert inputs["args"] == {**inputs["args"], "required": False, "default": ""}
    assert inputs["sarif"] == {**inputs["sarif"], "required": False, "default": ""}
    assert inputs["comment"] == {**inputs["comment"], "required": False, "default": "false"}
    assert inputs["token"] == {**inputs["token"], "required": False, "default": "${{ github.token }}"}
    assert all(isinstance(spec["description"], str) and spec["description"] for spec in inputs.values())
    assert "outputs" not in action  # reports go where `args` says; the action uploads only `sarif`
    assert list(steps(action)) == ["Install ragscore", "Run ragscore", "Post the pull-request comment",
                                   "Upload SARIF"]
    # The comment is posted whatever the gates said, and the job's status stays the run step's.
    assert steps(action)["Post the pull-request comment"]["if"] == "always() && inputs.comment == 'true'"
    assert "continue-on-error" not in steps(action)["Post the pull-request comment"]
    for step in action["runs"]["steps"]:
        if "uses" in step:  # the one action it uses: no actions/setup-python (the job's Python and PATH stay)
            assert step["uses"] == "github/codeql-action/upload-sarif@v3"
            continue
        assert step["shell"] == "bash"  # a composite action's run step must name its shell


def test_sarif_is_uploaded_when_given_even_after_a_failed_gate(action: dict[str, Any]) -> None:
    upload = steps(action)["Upload SARIF"]
    assert upload["if"] == "always() && inputs.sarif != ''"
    assert upload["with"] == {"sarif_file": "${{ inputs.sarif }}"}


def test_sarif_reaches_ragscore(action: dict[str, Any], workspace: Path) -> None:
    result = run_action(action, workspace, gold="eval/product/gold.jsonl", trace="eval/product/trace.jsonl",
                        sarif="out $(touch pwned).sarif")
    assert result.returncode == 1  # a gate failed: the SARIF names it
    log = json.loads((workspace / "out $(touch pwned).sarif").read_text(encoding="utf-8"))
    [run] = log["runs"]
    assert {r["ruleId"] for r in run["results"]} == {"gate/failed"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {
        "eval/product/trace.jsonl"}
    assert not list(workspace.parent.rglob("pwned"))


def test_no_expression_is_pasted_into_a_script(action: dict[str, Any]) -> None:
    # Inputs reach the scripts through env: only; ${{ ... }} in a script body would be pasted in
    # before bash reads it, so an input such as $(curl ...) would run.
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


def test_install_step_installs_this_checkout(action: dict[str, Any]) -> None:
    install = steps(action)["Install ragscore"]
    subprocess.run(["bash", "-n"], input=install["run"], text=True, check=True)
    assert install["id"] == "install"
    assert '-m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"' in install["run"]
    assert 'echo "python=$venv_python" >> "$GITHUB_OUTPUT"' in install["run"]
    # Instead of running it: this test's Python stands in for the one it installs into.
    assert importlib.util.find_spec("ragscore") is not None


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace holding the shipped examples where a repository would keep them."""
    root = tmp_path / "workspace"
    (root / "eval" / "product").mkdir(parents=True)
    for name in ("gold.jsonl", "trace.jsonl"):
        shutil.copy(EXAMPLES / name, root / "eval" / name)
        shutil.copy(EXAMPLES / "product" / name, root / "eval" / "product" / name)
    (tmp_path / "runner-temp").mkdir()
    return root


TOKEN = "ghs_Th3W0rkfl0wT0k3nN0tInTh3L0g000000000"  # github.token


def condition(expression: str | None, inputs: dict[str, str], failed: bool) -> bool:
    """Whether a step runs: its `if:`, of the forms action.yml uses (a status function, && input == 'text').

    As on a runner, a condition without a status function holds only while no step failed, and
    strings are compared ignoring case.
    """
    if expression is None:
        return not failed
    statuses = {"always()": True, "success()": not failed, "failure()": failed}
    holds, has_status = True, False
    for term in (term.strip() for term in expression.split("&&")):
        if term in statuses:
            holds, has_status = holds and statuses[term], True
            continue
        match = re.fullmatch(r"inputs\.([\w-]+) == '([^']*)'", term)
        assert match, f"the test cannot read the condition {expression!r}"
        holds = holds and inputs[match.group(1)].lower() == match.group(2).lower()
    return holds and (has_status or not failed)


def run_action(action: dict[str, Any], workspace: Path, *, python: str = sys.executable,
               runner_env: dict[str, str] | None = None, ran: dict[str, subprocess.CompletedProcess[str]] | None = None,
               **given: str) -> subprocess.CompletedProcess[str]:
    """Run the action's run: steps after the install step, as a runner would (`if:` read, steps after a
    failure skipped unless their condition says always()); return the failed step's result, else the
    last one's. ``python`` is the install step's Python, ``runner_env`` more of the runner's variables,
    and ``ran`` collects each step's result by name."""
    declared = action["inputs"]
    inputs = {name.replace("_", "-"): value for name, value in given.items()}
    assert set(inputs) <= set(declared)
    outputs = {"install": {"python": python}}  # what the install step would have written
    contexts = {"github": {"token": TOKEN}}

    def evaluate(match: re.Match[str]) -> str:
        context, _, name = match.group(1).partition(".")
        if context == "inputs":
            return inputs[name]
        if context in contexts:
            return contexts[context][name]
        step_id, _, output = name.partition(".outputs.")
        assert context == "steps" and output, f"unexpected expression {match.group(0)}"
        return outputs[step_id][output]

    for name, spec in declared.items():
        if name not in inputs:
            assert not spec.get("required"), f"input {name} is required"
            inputs[name] = EXPRESSION.sub(evaluate, str(spec.get("default", "")))

    runner = workspace.parent
    env = clean_env() | {
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(runner / "github-output"),
        "GITHUB_STEP_SUMMARY": str(runner / "step-summary.md"),
        "RUNNER_TEMP": str(runner / "runner-temp"),
    } | (runner_env or {})
    failed = last = None
    for step in action["runs"]["steps"][1:]:
        if "run" not in step:  # the upload of the SARIF, an action of GitHub's: not run here
            continue
        if not condition(step.get("if"), inputs, failed is not None):
            continue
        step_env = env | {key: EXPRESSION.sub(evaluate, str(value)) for key, value in step.get("env", {}).items()}
        script = runner / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        last = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=workspace, env=step_env, capture_output=True, text=True, timeout=120)
        if ran is not None:
            ran[step["name"]] = last
        if last.returncode and failed is None:
            failed = last
    result = failed or last
    assert result is not None
    return result


def test_passing_example_exits_0_and_prints_the_report(action: dict[str, Any], workspace: Path) -> None:
    result = run_action(action, workspace, gold="eval/gold.jsonl", trace="eval/trace.jsonl")
    assert result.returncode == 0, result.stderr
    report = checked_report(result.stdout)
    assert report["pass"] is True
    assert "::error" not in result.stderr
    assert (workspace.parent / "step-summary.md").read_text(encoding="utf-8").strip()


def test_failing_example_exits_1_with_annotations(action: dict[str, Any], workspace: Path) -> None:
    result = run_action(action, workspace, gold="eval/product/gold.jsonl", trace="eval/product/trace.jsonl")
    assert result.returncode == 1
    assert checked_report(result.stdout)["pass"] is False
    assert "::error title=ragscore gate under_refusal::under_refusal = 0.2500, expected <= 0.05" in result.stderr.splitlines()
    assert "FAIL" in (workspace.parent / "step-summary.md").read_text(encoding="utf-8")


def test_gates_file_and_args_reach_ragscore(action: dict[str, Any], workspace: Path) -> None:
    (workspace / "out dir").mkdir()  # ragscore writes reports into folders that exist
    (workspace / "eval" / "lax gates.toml").write_text("[gates]\nunder_refusal = 0.30\nmissing = 1\n", encoding="utf-8")
    result = run_action(action, workspace, gold="eval/product/gold.jsonl", trace="eval/product/trace.jsonl",
                        gates_file="eval/lax gates.toml",
                        args='--format text --json "out dir/ragscore report.json" --junit \'out dir/junit.xml\'')
    assert result.returncode == 0, result.stderr
    assert not result.stdout.lstrip().startswith("{")  # --format text
    assert "under_refusal" in result.stdout
    assert json.loads((workspace / "out dir" / "ragscore report.json").read_text(encoding="utf-8"))["pass"] is True
    assert (workspace / "out dir" / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")


@pytest.mark.parametrize("field", ["gold", "trace", "gates_file", "args"])
def test_no_input_runs_as_a_command(action: dict[str, Any], workspace: Path, field: str) -> None:
    hostile = "x $(touch pwned1) `touch pwned2`; touch pwned3 && touch pwned4 * ' \" ${HOME}"
    given = {"gold": "eval/gold.jsonl", "trace": "eval/trace.jsonl"}
    if field == "args":
        hostile = "$(touch pwned1) `touch pwned2` ';' touch pwned3 '&&' touch pwned4 '*' ${HOME}"
    given[field] = hostile
    result = run_action(action, workspace, **given)
    assert result.returncode == 2, result.stderr
    assert not [path.name for path in workspace.parent.rglob("pwned*")]


def test_args_with_an_unclosed_quote_is_an_error(action: dict[str, Any], workspace: Path) -> None:
    result = run_action(action, workspace, gold="eval/gold.jsonl", trace="eval/trace.jsonl", args='--json "report.json')
    assert result.returncode == 2
    assert "::error title=ragscore::cannot split the args input (an unclosed quote?)" in result.stdout


# --- the comment step: action/post_comment.py against a stand-in of GitHub's REST API -----------


REPOSITORY = "octo-org/rag-app"

def installed_python(tmp_path: Path) -> str:
    """The install step's Python: this test's own, in whose environment ragscore is installed."""
    del tmp_path
    return sys.executable


@pytest.fixture
def github(workspace: Path) -> Any:
    with serving(RestServer(TOKEN, repository=REPOSITORY, page_size=2)) as server:
        yield server


def pull_request_env(workspace: Path, server: RestServer, head: str = REPOSITORY) -> dict[str, str]:
    """The runner's variables on a pull_request event (pull request 42), the API at the stand-in."""
    event = workspace.parent / "event.json"
    event.write_text(json.dumps({"number": 42, "pull_request": {
        "number": 42, "head": {"repo": {"full_name": head}}, "base": {"repo": {"full_name": REPOSITORY}}}}),
        encoding="utf-8")
    return {"GITHUB_API_URL": server.url, "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), "NO_PROXY": "*", "no_proxy": "*"}


def test_comment_is_created_then_updated(action: dict[str, Any], workspace: Path, github: RestServer) -> None:
    github.add(42, "LGTM")
    github.add(42, "nits")
    github.add(42, "one more")  # two pages
    python = installed_python(workspace.parent)
    comment_file = workspace.parent / "runner-temp" / "ragscore-comment.md"
    ran: dict[str, subprocess.CompletedProcess[str]] = {}

    result = run_action(action, workspace, python=python, runner_env=pull_request_env(workspace, github), ran=ran,
                        gold="eval/gold.jsonl", trace="eval/trace.jsonl", comment="true")
    assert result.returncode == 0, result.stderr
    assert list(ran) == ["Run ragscore", "Post the pull-request comment"]
    posting = ran["Post the pull-request comment"]
    assert posting.returncode == 0 and posting.stderr == ""
    assert posting.stdout.startswith("ragscore: created the comment on pull request #42: https://github.com/")
    passed = comment_file.read_text(encoding="utf-8")
    assert passed.startswith("**ragscore: PASS**") and passed.rstrip().splitlines()[-1] == "<!-- ragscore:gold -->"
    assert github.bodies(42)[3:] == [passed]
    assert [seen.method for seen in github.requests] == ["GET", "GET", "POST"]
    assert TOKEN not in posting.stdout + ran["Run ragscore"].stdout + ran["Run ragscore"].stderr

    # The next push: a failing gate fails the job, and the same comment now says so.
    github.requests.clear()
    ran.clear()
    result = run_action(action, workspace, python=python, runner_env=pull_request_env(workspace, github), ran=ran,
                        gold="eval/product/gold.jsonl", trace="eval/product/trace.jsonl", comment="true")
    assert result.returncode == 1  # ragscore's status, though the comment step ran after it and passed
    assert result is ran["Run ragscore"]
    posting = ran["Post the pull-request comment"]
    assert posting.returncode == 0 and posting.stdout.startswith("ragscore: updated the comment on pull request #42")
    failed = comment_file.read_text(encoding="utf-8")
    assert failed.startswith("**ragscore: FAIL**") and failed.rstrip().splitlines()[-1] == "<!-- ragscore:gold -->"
    assert github.bodies(42)[3:] == [failed]  # one comment, its body replaced
    assert [seen.method for seen in github.requests] == ["GET", "GET", "PATCH"]
    assert "could not post" not in (workspace.parent / "step-summary.md").read_text(encoding="utf-8")


def test_comment_on_a_fork_goes_to_the_job_summary(action: dict[str, Any], workspace: Path, github: RestServer) -> None:
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    result = run_action(action, workspace, python=installed_python(workspace.parent), ran=ran,
                        runner_env=pull_request_env(workspace, github, head="someone/rag-app"),
                        gold="eval/product/gold.jsonl", trace="eval/product/trace.jsonl", comment="true")
    assert result.returncode == 1  # the gate, not the comment
    posting = ran["Post the pull-request comment"]
    assert posting.returncode == 0
    assert posting.stdout.startswith("::notice title=ragscore::pull request #42 comes from someone/rag-app")
    assert github.requests == []
    body = (workspace.parent / "runner-temp" / "ragscore-comment.md").read_text(encoding="utf-8")
    summary = (workspace.parent / "step-summary.md").read_text(encoding="utf-8")
    assert "FAIL" in summary.split(body.rstrip())[0]  # ragscore's own summary first, then the comment
    assert summary.rstrip().endswith("the step's log says why._")


def test_no_comment_by_default(action: dict[str, Any], workspace: Path, github: RestServer) -> None:
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    result = run_action(action, workspace, python=installed_python(workspace.parent), ran=ran,
                        runner_env=pull_request_env(workspace, github), gold="eval/gold.jsonl", trace="eval/trace.jsonl")
    assert result.returncode == 0, result.stderr
    assert list(ran) == ["Run ragscore"]
    assert not (workspace.parent / "runner-temp" / "ragscore-comment.md").exists()
    assert github.requests == []


def test_a_run_that_stops_early_leaves_no_comment(action: dict[str, Any], workspace: Path, github: RestServer) -> None:
    # An input error: ragscore writes nothing, and a comment file an earlier use of the action left is not posted.
    stale = workspace.parent / "runner-temp" / "ragscore-comment.md"
    stale.write_text("## old\n\n<!-- ragscore:score -->\n", encoding="utf-8")
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    result = run_action(action, workspace, python=installed_python(workspace.parent), ran=ran,
                        runner_env=pull_request_env(workspace, github), gold="eval/missing.jsonl",
                        trace="eval/trace.jsonl", comment="true")
    assert result.returncode == 2
    assert ran["Post the pull-request comment"].stdout == (
        "::notice title=ragscore::ragscore wrote no pull-request comment (the run step stopped before it): nothing to post\n")
    assert github.requests == [] and not stale.exists()


@pytest.mark.parametrize("value", ["yes", "1", "true "])
def test_comment_is_true_or_false(action: dict[str, Any], workspace: Path, github: RestServer, value: str) -> None:
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    result = run_action(action, workspace, ran=ran, runner_env=pull_request_env(workspace, github),
                        gold="eval/gold.jsonl", trace="eval/trace.jsonl", comment=value)
    assert result.returncode == 2
    assert result.stdout == "::error title=ragscore::the comment input must be true or false\n"
    assert list(ran) == ["Run ragscore"]


# --- .pre-commit-hooks.yaml ------------------------------------------------------------------


@pytest.fixture(scope="module")
def hook() -> dict[str, Any]:
    hooks = load(HOOKS)
    assert [h["id"] for h in hooks] == ["ragscore-validate"]
    return hooks[0]


def test_hook_declares_a_python_hook_on_gold_files(hook: dict[str, Any]) -> None:
    assert hook["language"] == "python"  # pre-commit pip-installs this repository for it
    assert set(hook) <= {"id", "name", "description", "language", "entry", "files", "types"}
    assert shlex.split(hook["entry"])[:2] == ["python", "-c"]
    files = re.compile(hook["files"])
    for name in ("gold.jsonl", "eval/gold.jsonl", "examples/product/gold.jsonl", "eval/gold.json",
                 "eval/gold-v2.jsonl", "eval/gold_small.jsonl", "eval/product.gold.jsonl", "eval/qa-gold.json"):
        assert files.search(name), name
    for name in ("trace.jsonl", "tests/data/golden/product.json", "eval/golden.jsonl", "goldilocks.jsonl",
                 "eval/gold.csv", "eval/gold.jsonl.bak", "gold/trace.jsonl"):
        assert not files.search(name), name


def run_hook(hook: dict[str, Any], cwd: Path, *files: str, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run the hook's entry as pre-commit does: entry, then the hook's args, then the file names.

    The entry's `python` is the hook environment's, where pre-commit installed ragscore; here
    it is this test's Python.
    """
    command = shlex.split(hook["entry"])
    assert command[0] == "python"
    return subprocess.run([sys.executable, *command[1:], *args, *files], cwd=cwd, env=clean_env(),
                          capture_output=True, text=True, timeout=120)


def test_hook_passes_good_gold_sets(hook: dict[str, Any]) -> None:
    result = run_hook(hook, ROOT, "examples/gold.jsonl", "examples/product/gold.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("ragscore: 0 errors") == 2


def test_hook_fails_on_a_broken_gold_set_among_good_ones(hook: dict[str, Any], tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "gold.jsonl", tmp_path / "gold.jsonl")
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "gold-broken.jsonl").write_text('{"qid": "a", "answerable": tru}\n', encoding="utf-8")
    result = run_hook(hook, tmp_path, "gold.jsonl", "eval/gold-broken.jsonl")
    assert result.returncode == 2
    assert "eval/gold-broken.jsonl:1:28: error: invalid JSON" in result.stdout  # problems on standard output
    assert "ragscore: 1 error" in result.stderr  # the summaries on standard error
    assert result.stderr.count("ragscore: ") == 2  # the good file was checked too


def test_hook_passes_its_args_to_every_run(hook: dict[str, Any], tmp_path: Path) -> None:
    record = json.loads((EXAMPLES / "gold.jsonl").read_text(encoding="utf-8").splitlines()[0])
    record["gold_citation"] = record.pop("gold_citations")  # a near miss: an error unless --lenient
    (tmp_path / "gold.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert run_hook(hook, tmp_path, "gold.jsonl").returncode == 2
    lenient = run_hook(hook, tmp_path, "gold.jsonl", "gold.jsonl", args=("--lenient", "-q"))
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stderr == ""  # -q: errors only


# --- docs/development.md: the layout section; the docs as the contract ------------------------


def layout() -> dict[str, str]:
    """The layout block of docs/development.md: each entry (`cli/`, `config.py`, `LICENSE`) and its text."""
    block = doc_section("Layout").split("```\n", 1)[1].split("```\n", 1)[0]
    entries: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        if line.strip().startswith("-- "):  # a layer's heading, not an entry
            continue
        if line and not line.startswith("  " * 4):  # an entry starts before the description column
            name, _, text = line.strip().partition(" ")
            entries[name] = text
        else:
            entries[name] += " " + line.strip()
    return entries


def test_the_layout_names_every_package_and_module() -> None:
    entries = layout()
    package = ROOT / "src" / "ragscore"
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if len(relative.parts) == 1:
            if path.name not in ("__init__.py", "__main__.py"):
                assert path.name in entries, f"the layout in docs/development.md does not name {relative}"
            continue
        top = relative.parts[0] + "/"
        assert top in entries, f"the layout in docs/development.md does not name {top}"
        for part in (*[p + "/" for p in relative.parts[1:-1]], path.name):
            if part != "__init__.py":
                assert re.search(rf"(?<![\w/]){re.escape(part)}", entries[top]), f"the layout in docs/development.md does not name {relative}"


def test_the_layout_names_only_what_exists() -> None:
    entries = layout()
    package = ROOT / "src" / "ragscore"
    for name, text in entries.items():
        if name == "src/ragscore/":
            continue
        where = package if (package / name).exists() else ROOT
        assert (where / name).exists(), f"the layout in docs/development.md names {name}, which does not exist"
        if name.endswith("/") and where == package:
            for mentioned in re.findall(r"[\w/][\w/.]*\.(?:py|toml|json)\b", text):
                assert list((package / name).rglob(mentioned.rsplit("/", 1)[-1])) or (package / mentioned).exists(), \
                    f"the layout in docs/development.md names {mentioned} under {name}, which does not exist"


def test_readme_is_the_contract() -> None:
    # The docs are the contract: they send the reader to no specification file outside the repository
    # (the help blocks' metavar SPEC, a gates specification, is no such file).
    prose = "\n".join(line for _, line, kind in lines_outside_fences(doc_text()) if kind == "prose")
    assert not re.search(r"\bspecification\b|\bSPEC\b", prose, re.IGNORECASE)
