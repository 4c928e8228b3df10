"""Which command runs, and what a usage error prints: the error and where the usage is told, never the usage block.

Also the same file twice where each file counts once (agree's annotators, --trace), and split's
--out, which names a folder.
"""

from __future__ import annotations

import os

import pytest

from conftest import EXAMPLES, write
from ragscore.cli import COMMANDS

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"


# --- a first word that is no command ------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["partitoin", "--gold", "g.jsonl"], 'unknown command "partitoin"; did you mean "partial"?'),
    (["merge-all", "--help"], 'unknown command "merge-all"; did you mean "merge"?'),
    (["scor", "--gold", "g.jsonl"], 'unknown command "scor"; did you mean "score"?'),
    (["dashbord"], 'unknown command "dashbord"; did you mean "dashboard"?'),
    (["gold.jsonl"], 'unknown command "gold.jsonl"; the commands are score, validate, init, schema, compare, ner, '
                     "classify, link, trec, qrels, partial, merge, monitor, judge, agree, split, power, run, dashboard "
                     "(ragscore --help: what each does)"),
    (["a\x1b[2Jb"], 'unknown command "a\\x1b[2Jb"; the commands are score, validate, init, schema, compare, ner, '
                    "classify, link, trec, qrels, partial, merge, monitor, judge, agree, split, power, run, dashboard "
                    "(ragscore --help: what each does)"),
])
def test_a_first_word_that_is_no_command_is_a_usage_error_naming_the_nearest(ragscore, args, message):
    run = ragscore(*args)
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")


def test_every_command_and_the_options_of_score_still_dispatch(ragscore, isolated):
    assert ragscore("--gold", GOLD, "--trace", TRACE).status == 0  # score, the default, takes no positional
    assert ragscore("--version").status == 0 and ragscore("-h").out.startswith("usage: ragscore ")
    for name in COMMANDS:
        run = ragscore(name, "--help")
        assert (run.status, run.out.split("\n")[0].split("[")[0]) == (0, f"usage: ragscore {name} "), name


# --- argparse's usage errors ----------------------------------------------------------------------

@pytest.mark.parametrize(("args", "prog", "message"), [
    (["--gold", "g.jsonl"], "ragscore", "the following arguments are required: --trace"),
    (["score", "--gold"], "ragscore score", "argument --gold: expected one argument"),
    (["trec", "q.txt", "r.txt", "--format", "pdf"], "ragscore trec",
     "argument --format: invalid choice: 'pdf' (choose from 'text', 'json', 'markdown', 'html', 'none')"),
    (["split", "--gold", "g.jsonl"], "ragscore split", "the following arguments are required: --out"),
    (["agree"], "ragscore agree", "the following arguments are required: GOLD"),
    (["--gold", "g", "--trace", "t", "--k", "0"], "ragscore", 'argument --k: expected a positive integer, got "0"'),
    # An integer is ASCII digits: Python's int() reads "1_0" as 10 (trec_eval's atol reads 1) and other scripts' digits.
    (["--gold", "g", "--trace", "t", "--k", "1_0"], "ragscore", 'argument --k: expected a positive integer, got "1_0"'),
    (["trec", "q", "r", "-M", "1_0"], "ragscore trec", 'argument -M: expected a positive integer, got "1_0"'),
    (["trec", "q", "r", "-M", "\u0661"], "ragscore trec", 'argument -M: expected a positive integer, got "\u0661"'),
    (["trec", "q", "r", "-l", "1_0"], "ragscore trec", 'argument -l: expected an integer, got "1_0"'),
    (["trec", "q", "r", "-l", "9" * 5000], "ragscore trec",
     'argument -l: expected an integer, got "' + "9" * 26 + "…[4,960 characters]…" + "9" * 14 + '"'),
])
def test_a_usage_error_is_the_error_after_one_line_pointing_at_help(ragscore, args, prog, message):
    run = ragscore(*args)
    assert (run.status, run.out) == (2, "")
    assert run.err == f"{prog}: see '{prog} --help'\n{prog}: error: {message}\n"


def test_an_option_given_twice_is_one_line_without_the_pointer(ragscore):
    run = ragscore("--gold", "a", "--gold", "b", "--trace", "t")
    assert run.err == 'ragscore: error: --gold given twice ("a", then "b"); it takes one path\n'


# --- the same file twice ----------------------------------------------------------------------------

@pytest.mark.parametrize(("second", "message"), [
    ("a.jsonl", 'agree: "a.jsonl" is named twice; give each annotator\'s gold file once'),
    ("./a.jsonl", 'agree: "a.jsonl" and "./a.jsonl" are the same file (a link?); give each annotator\'s gold file '
                  "once"),
    ("hard.jsonl", 'agree: "a.jsonl" and "hard.jsonl" are the same file (a link?); give each annotator\'s gold file '
                   "once"),
    ("soft.jsonl", 'agree: "a.jsonl" and "soft.jsonl" are the same file (a link?); give each annotator\'s gold file '
                   "once"),
])
def test_agree_refuses_one_annotators_file_given_twice(ragscore, isolated, second, message):
    write(isolated / "a.jsonl", GOLD.read_bytes())
    write(isolated / "b.jsonl", GOLD.read_bytes())
    os.link(isolated / "a.jsonl", isolated / "hard.jsonl")
    (isolated / "soft.jsonl").symlink_to("a.jsonl")
    run = ragscore("agree", "a.jsonl", "b.jsonl", second)
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    assert ragscore("agree", "a.jsonl", "b.jsonl", "--format", "none", "-q").status == 0  # two files: agreement


def test_agree_never_writes_a_report_over_an_annotators_file(ragscore, isolated):
    write(isolated / "a.jsonl", GOLD.read_bytes())
    write(isolated / "b.jsonl", GOLD.read_bytes())
    run = ragscore("agree", "a.jsonl", "b.jsonl", "--json", "a.jsonl")
    assert (run.status, run.err) == (2, 'ragscore: error: --json "a.jsonl": is the same file as GOLD "a.jsonl"; a '
                                        "report never overwrites an input or another report\n")
    assert (isolated / "a.jsonl").read_bytes() == GOLD.read_bytes()


def test_the_api_agree_refuses_the_same_file_twice(isolated):
    import ragscore

    write(isolated / "a.jsonl", GOLD.read_bytes())
    with pytest.raises(ragscore.UsageError, match=r'^agree: "a.jsonl" and "./a.jsonl" are the same file'):
        ragscore.agree(["a.jsonl", "./a.jsonl"])


@pytest.mark.parametrize(("link", "message"), [
    ("hard", "--trace: t.jsonl and other.jsonl are the same file (a link?); each file is read once"),
    ("soft", "--trace: t.jsonl and other.jsonl are the same file (a link?); each file is read once"),
    (None, "--trace: t.jsonl is named twice; each file is read once"),
])
def test_a_trace_file_given_twice_by_a_link_is_read_once(ragscore, isolated, link, message):
    write(isolated / "t.jsonl", TRACE.read_bytes())
    if link == "hard":
        os.link(isolated / "t.jsonl", isolated / "other.jsonl")
    elif link == "soft":
        (isolated / "other.jsonl").symlink_to("t.jsonl")
    other = "t.jsonl" if link is None else "other.jsonl"
    run = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--trace", other)
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")


# --- split's --out ----------------------------------------------------------------------------------

def test_split_into_the_gold_sets_own_folder_never_rewrites_it(ragscore, isolated):
    write(isolated / "train.jsonl", GOLD.read_bytes())
    run = ragscore("split", "--gold", "train.jsonl", "--out", ".")
    assert (run.status, run.err) == (2, 'ragscore: error: --out "./train.jsonl": is the same file as --gold; a split '
                                        "never overwrites an input\n")
    assert (isolated / "train.jsonl").read_bytes() == GOLD.read_bytes()
    assert sorted(p.name for p in isolated.iterdir()) == ["train.jsonl"]


@pytest.mark.parametrize("out", ["g.jsonl", "/dev/null"])
def test_split_out_names_a_folder_never_a_file(ragscore, isolated, out):
    write(isolated / "g.jsonl", GOLD.read_bytes())
    run = ragscore("split", "--gold", "g.jsonl", "--out", out)
    assert (run.status, run.out) == (2, "")
    assert run.err == (f'ragscore: error: --out "{out}": not a folder; split writes NAME.jsonl files in the folder it '
                       "names (made when missing)\n")
    assert (isolated / "g.jsonl").read_bytes() == GOLD.read_bytes()


def test_split_writes_through_a_link_that_is_no_input_and_makes_a_missing_folder(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD.read_bytes())
    (isolated / "kept.jsonl").write_text("old\n")
    (isolated / "d").mkdir()
    (isolated / "d" / "dev.jsonl").symlink_to("../kept.jsonl")
    assert ragscore("split", "--gold", "g.jsonl", "--out", "d", "-q").status == 0
    assert (isolated / "d" / "dev.jsonl").is_symlink() and (isolated / "kept.jsonl").read_text() != "old\n"
    assert ragscore("split", "--gold", "g.jsonl", "--out", "new/deeper", "-q").status == 0
    assert sorted(p.name for p in (isolated / "new" / "deeper").iterdir()) == ["dev.jsonl", "test.jsonl", "train.jsonl"]
    assert (isolated / "g.jsonl").read_bytes() == GOLD.read_bytes()


def test_the_api_split_refuses_the_gold_set_and_a_file_as_folder(isolated):
    import ragscore

    write(isolated / "train.jsonl", GOLD.read_bytes())
    with pytest.raises(ragscore.UsageError) as caught:
        ragscore.split("train.jsonl", ".")
    assert str(caught.value) == ('split: "./train.jsonl": is the gold set "train.jsonl"; a split never overwrites its '
                                 "input")
    with pytest.raises(ragscore.UsageError) as caught:
        ragscore.split("train.jsonl", "train.jsonl")
    assert str(caught.value) == ('split: out "train.jsonl": not a folder; split writes NAME.jsonl files in the folder '
                                 "it names (made when missing)")
    assert (isolated / "train.jsonl").read_bytes() == GOLD.read_bytes()


def test_init_writes_the_starter_to_standard_output_for_a_dash(ragscore, isolated):
    from ragscore.starter import STARTER_GATES

    run = ragscore("init", "-")
    assert (run.status, run.out, run.err) == (0, STARTER_GATES, "")
    assert not (isolated / "-").exists()  # was written as a file named "-"
