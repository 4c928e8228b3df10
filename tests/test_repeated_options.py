"""A single-valued option given twice is a usage error (argparse would keep the last one silently)."""

from __future__ import annotations

import argparse

import pytest

from conftest import EXAMPLES
from ragscore.cli import COMMANDS
from ragscore.cli.common import Parser

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"
STAGES = EXAMPLES / "stages"


def usage_error(run, expected: str) -> None:
    """Exit 2, nothing on standard output, and exactly one line on standard error (no usage)."""
    assert (run.status, run.out, run.err) == (2, "", expected + "\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--gold", "a", "--trace", TRACE, "--gold", "b"], '--gold given twice ("a", then "b"); it takes one path'),
    (["--gol", "a", "--trace", TRACE, "--gold", "b"], '--gold given twice ("a", then "b"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--jso", "a", "--js", "b"], '--json given twice ("a", then "b"); it takes one path'),
    (["--trace", TRACE, "--gold=a", "--gold=b"], '--gold given twice ("a", then "b"); it takes one path'),
    (["--trace", TRACE, "--gold", "a", "--gold", "a"], '--gold given twice ("a", then "a"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--format", "json", "--format", "text"],
     '--format given twice ("json", then "text"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--json", "x", "--json", "y"], '--json given twice ("x", then "y"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--markdown", "x", "--mark", "y"],
     '--markdown given twice ("x", then "y"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "-j", "2", "--jobs", "3"], '--jobs given twice ("2", then "3"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--k", "3", "--k=4"], '--k given twice ("3", then "4"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--cutoffs", "5,1", "--cutoffs", "3"],
     '--cutoffs given twice ("1,5", then "3"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--gates", "chr=0.5", "--gates", "precision=0.5"],
     '--gates given twice ("chr=0.5", then "precision=0.5"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--scores", "a", "--scores", "b"],
     '--scores given twice ("a", then "b"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--gates-file", "a", "--gates-file", "b"],
     '--gates-file given twice ("a", then "b"); it takes one path'),
    (["--trace", TRACE, "--gold", "a\nb", "--gold", "\x1b[2J"],
     '--gold given twice ("a\\nb", then "\\x1b[2J"); it takes one path'),
])
def test_score(ragscore, isolated, args, message):
    usage_error(ragscore(*args), f"ragscore: error: {message}")
    usage_error(ragscore("score", *args), f"ragscore score: error: {message}")


def test_a_long_value_is_shortened(ragscore, isolated):
    run = ragscore("--trace", TRACE, "--gold", "x" * 5000, "--gold", "b")
    assert run.status == 2 and run.err.count("\n") == 1 and len(run.err) < 300
    assert run.err.startswith('ragscore: error: --gold given twice ("xxx') and "characters]" in run.err


def test_repeatable_options_and_flags_stay_repeatable(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--by", "category", "--by", "tags", "--explain", "A0001",
                   "--explain", "A0002", "--refusal-token", "nope", "--refusal-token", "nah", "-q", "-q",
                   "--no-fail", "--no-fail", "--strict", "--strict", "--per-question", "--per-question")
    assert run.status == 0, run.err
    assert run.out.count("A000") >= 2


def test_defaults_do_not_count(ragscore, isolated):
    # --format has a default, and --gates-file and --k come from nowhere: given once each, they are fine
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--format", "none", "-q", "--k", "3")
    assert (run.status, run.out, run.err) == (0, "", "")


def test_a_parse_leaves_no_trace_in_the_namespace():
    build, _ = COMMANDS["score"]
    args = build("ragscore").parse_args(["--gold", "g", "--trace", "t", "--json", "j"])
    assert not any(name.startswith("_") for name in vars(args))
    # and parsing twice with one parser is no repetition
    parser = build("ragscore")
    assert parser.parse_args(["--gold", "g", "--trace", "t"]).gold == "g"
    assert parser.parse_args(["--gold", "h", "--trace", "u"]).gold == "h"
    # --trace is repeatable (several files read as one); a second parse starts afresh
    assert parser.parse_args(["--gold", "g", "--trace", "t", "--trace", "u"]).trace == ["t", "u"]
    assert parser.parse_args(["--gold", "g", "--trace", "v"]).trace == ["v"]


@pytest.mark.parametrize(("args", "message"), [
    (["--gold", "a", "--gold", "b"], '--gold given twice ("a", then "b"); it takes one path'),
    (["--gold", GOLD, "--gates-file", "a", "--gates-f", "b"], '--gates-file given twice ("a", then "b"); it takes one path'),
])
def test_validate(ragscore, isolated, args, message):
    usage_error(ragscore("validate", *args), f"ragscore validate: error: {message}")
    assert ragscore("validate", "--gold", GOLD, "--lenient", "--lenient", "-q", "-q").status == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--trace", TRACE, "--baseline", TRACE, "--gold", "a", "--gold", "b"],
     '--gold given twice ("a", then "b"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--baseline-report", "a", "--baseline-report", "b"],
     '--baseline-report given twice ("a", then "b"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--baseline", TRACE, "--format", "json", "--format", "markdown"],
     '--format given twice ("json", then "markdown"); it takes one value'),
    (["--gold", GOLD, "--trace", TRACE, "--baseline", TRACE, "--json", "x", "--json", "y"],
     '--json given twice ("x", then "y"); it takes one path'),
    (["--gold", GOLD, "--trace", TRACE, "--baseline", TRACE, "--seed", "1", "--seed", "2"],
     '--seed given twice ("1", then "2"); it takes one value'),
])
def test_compare(ragscore, isolated, args, message):
    usage_error(ragscore("compare", *args), f"ragscore compare: error: {message}")


def test_compare_keeps_its_exclusive_options(ragscore, isolated):
    run = ragscore("compare", "--gold", GOLD, "--trace", TRACE, "--baseline", TRACE, "--baseline-report", "r.json")
    assert run.status == 2 and "not allowed with argument" in run.err


@pytest.mark.parametrize("stage", ["ner", "classify", "link"])
def test_stages(ragscore, isolated, stage):
    gold, pred = STAGES / f"{stage}_gold.jsonl", STAGES / f"{stage}_pred.jsonl"
    usage_error(ragscore(stage, "--gold", gold, "--pred", "a", "--pred", "b"),
                f'ragscore {stage}: error: --pred given twice ("a", then "b"); it takes one path')
    usage_error(ragscore(stage, "--gold", "a", "--gold", "b", "--pred", pred),
                f'ragscore {stage}: error: --gold given twice ("a", then "b"); it takes one path')
    usage_error(ragscore(stage, "--gold", gold, "--pred", pred, "--format", "json", "--format", "text"),
                f'ragscore {stage}: error: --format given twice ("json", then "text"); it takes one value')
    usage_error(ragscore(stage, "--gold", gold, "--pred", pred, "--junit", "a.xml", "--junit", "b.xml"),
                f'ragscore {stage}: error: --junit given twice ("a.xml", then "b.xml"); it takes one path')
    ok = ragscore(stage, "--gold", gold, "--pred", pred, "--format", "none", "-q", "-q", "--no-fail", "--no-fail",
                  "--gates-file", STAGES / "gates.toml")
    assert ok.status == 0, ok.err


def test_link_cutoffs(ragscore, isolated):
    usage_error(ragscore("link", "--gold", STAGES / "link_gold.jsonl", "--pred", STAGES / "link_pred.jsonl",
                         "--cutoffs", "1", "--cutoffs", "2"),
                'ragscore link: error: --cutoffs given twice ("1", then "2"); it takes one value')


def test_init_and_schema_take_one_positional(ragscore, isolated):
    # Their positionals are read once; a second one is argparse's "unrecognized arguments", as before.
    run = ragscore("init", "a.toml", "b.toml")
    assert run.status == 2 and run.err.endswith("ragscore init: error: unrecognized arguments: b.toml\n")
    assert not (isolated / "a.toml").exists()
    run = ragscore("schema", "stage", "score")
    assert run.status == 2 and run.err.endswith("ragscore schema: error: unrecognized arguments: score\n")
    assert ragscore("init", "a.toml").status == 0
    assert ragscore("schema", "stage").status == 0


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_refuses_a_repeated_option(name):
    """Every command's parser is a Parser: an option of its own given twice is refused (init and schema have none)."""
    build, _ = COMMANDS[name]
    parser = build(f"ragscore {name}")
    assert isinstance(parser, Parser)
    single = [a for a in parser._actions if a.option_strings and a.nargs is None
              and type(a).__name__ == "_StoreOnce"]
    if name in ("init", "schema"):
        assert single == []
        return
    # trec takes its files as positionals, as trec_eval does; its -M and -l are options of one value;
    # merge takes partials (positionals) and gate options; monitor takes traces only (repeatable).
    expected = {"trec": {"-M", "-l"}, "merge": {"--gates", "--scores"}, "monitor": {"--window", "--gates"},
                "agree": {"--gates"}, "run": {"--history", "--label", "--time"},
                "dashboard": {"--html", "--format"}}.get(name, {"--gold"})
    assert expected <= {s for a in single for s in a.option_strings}
    for action in single:
        with pytest.raises(SystemExit) as exit_:
            values = ["1"] if not action.choices else [next(iter(action.choices))]
            option = max(action.option_strings, key=len)
            parser.parse_args([option, *values, option, *values])
        assert exit_.value.code == 2


def test_a_plain_argparse_parser_is_unchanged():
    parser = argparse.ArgumentParser()
    parser.add_argument("--x")
    assert parser.parse_args(["--x", "a", "--x", "b"]).x == "b"


def test_a_parser_added_option_with_an_explicit_store_action_is_checked(capsys):
    parser = Parser(prog="p")
    parser.add_argument("--x", action="store")
    parser.add_argument("--y", nargs="?")  # nargs: argparse's behaviour
    parser.add_argument("--z", action="append")
    assert parser.parse_args(["--y", "1", "--y", "2", "--z", "a", "--z", "b"]).y == "2"
    with pytest.raises(SystemExit):
        parser.parse_args(["--x", "1", "--x", "2"])
    assert capsys.readouterr().err == 'p: error: --x given twice ("1", then "2"); it takes one value\n'


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_only_monitor_offers_an_openmetrics_file(name):
    build, _ = COMMANDS[name]
    offered = {option for action in build(f"ragscore {name}")._actions for option in action.option_strings}
    assert ("--openmetrics" in offered) == (name == "monitor")  # no other command can write one
