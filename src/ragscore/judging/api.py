"""ragscore judge from Python: ``judge`` (LLM-judge scores, recorded in a ledger or replayed from it) and
``compact`` (the ledger in canonical bytes).

Each traced question is judged on each criterion of the rubric (``samples`` times; the score is the mean of
its samples'): the criterion's template filled with the question, the answer (the trace's claim), the
contexts (the trace's passage texts, from the trace or ``--corpus``, numbered and separated by blank lines)
and the reference (the gold item's first ``gold_answers`` entry, else ``gold_claim``). A judgment the
ledger holds is never asked again; replayed (``--replay``, or under ``CI`` or ``GITHUB_ACTIONS`` unless
``--record``), nothing else is asked either, and no connection is opened: a judgment the ledger lacks is
unjudged, its score null, never guessed.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any, Final

from ragscore.config import Config, for_gold
from ragscore.errors import InputError, UsageError
from ragscore.judging.client import DEFAULT_ENDPOINT, CallFailed, Client, Reply, api_key, base_url, host_of
from ragscore.judging.ledger import Appender, check_ledger_path, judgment_key, read_ledger
from ragscore.judging.replies import on_scale, read_score
from ragscore.judging.rubric import Criterion, Rubric, load_rubric
from ragscore.keywords import configured
from ragscore.loaders.records import Source, TraceSource, as_input, as_traces
from ragscore.loaders.scores import JUDGE_KEY, Judge
from ragscore.quoting import json_safe, quote

RECORD: Final = "record"
REPLAY: Final = "replay"
EXAMPLES: Final = 10  # unjudged and failed judgments named in the notes (all are counted)


@dataclass(frozen=True, slots=True)
class _Task:
    """One judgment to have: its key, the question and criterion it judges, the sample and the request."""

    key: str
    qid: str
    criterion: str
    sample: int
    body: dict[str, Any]


@dataclass
class Judgments:
    """The scores of every gold question on every criterion (None: not judged), and how each was had."""

    judge: Judge
    rows: list[tuple[str, dict[str, float | None]]]
    mode: str
    counts: dict[str, int]
    unjudged: list[tuple[str, str]] = field(default_factory=list)    # (qid, criterion): the ledger lacks it
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (qid, criterion, why)
    untraced: list[str] = field(default_factory=list)                # gold questions without a trace
    strict: bool = False
    ledger_notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """False under ``strict`` when a judgment is missing (unjudged or failed)."""
        return not (self.strict and (self.unjudged or self.failed))

    @property
    def scores(self) -> dict[str, dict[str, float | None]]:
        """Every question's scores by criterion, by qid."""
        return dict(self.rows)

    def lines(self) -> Iterator[str]:
        """The scores file: the judge's header record, then one record per gold question, in gold order."""
        header = {JUDGE_KEY: {"endpoint": self.judge.endpoint, "model": self.judge.model, "rubric": self.judge.rubric,
                              "criteria": self.judge.criteria}}
        yield _line(header)
        for qid, values in self.rows:
            yield _line({"qid": qid, **values})

    def notes(self) -> list[str]:
        """What the command line prints on standard error: the counts, then what was not judged and why."""
        from ragscore.reports.console import plural

        c = self.counts
        asked = f"{c['called']:,} asked of {self.judge.model} at {self.judge.endpoint}" if self.mode == RECORD else (
            "replayed: no call made")
        notes = [*self.ledger_notes,
                 f"judged {c['questions'] - c['untraced']:,} of {plural(c['questions'], 'question', 'questions')} on "
                 f"{plural(len(self.judge.criteria), 'criterion', 'criteria')} "
                 f"({plural(c['judgments'], 'judgment', 'judgments')}): {c['from_ledger']:,} from the "
                 f"ledger, {asked}; {c['failed']:,} failed, {c['unjudged']:,} unjudged"]
        if self.untraced:
            notes.append(f"{len(self.untraced):,} questions have no trace (null scores): "
                         + _listed([quote(q) for q in self.untraced]))
        if self.unjudged:
            notes.append(f"{len(self.unjudged):,} scores unjudged (the ledger lacks them; run with --record where "
                         "the judge can be reached, then commit the ledger): "
                         + _listed([f"{quote(q)} {c}" for q, c in self.unjudged]))
        if self.failed:
            notes.append(f"{len(self.failed):,} scores failed (null): "
                         + _listed([f"{quote(q)} {c}: {why}" for q, c, why in self.failed]))
        if self.strict and not self.passed:
            notes.append("--strict: a score is missing")
        return notes


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items[:EXAMPLES]) + (", ..." if len(items) > EXAMPLES else "")


def _line(record: Mapping[str, Any]) -> str:
    return json_safe(json.dumps(record, ensure_ascii=False, allow_nan=False)) + "\n"


def in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the run is in CI (``CI`` set to anything but empty, false, no or 0; or ``GITHUB_ACTIONS`` true)."""
    ci = environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or environ.get("GITHUB_ACTIONS", "").strip().lower() == "true"


def judge(
    gold: Source | None,
    traces: TraceSource,
    *,
    rubric: str | os.PathLike[str],
    ledger: str | os.PathLike[str],
    endpoint: str | None = None,
    model: str | None = None,
    mode: str | None = None,
    jobs: int = 4,
    timeout: float = 60.0,
    retries: int = 4,
    strict: bool = False,
    config: Config | None = None,
    environ: Mapping[str, str] = os.environ,
    progress: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] | None = None,
    **settings: Any,
) -> Judgments:
    """Judge every traced question on every criterion of ``rubric`` (``gold`` None: every qid of the traces, as
    production traces are judged for ``monitor --scores``), from ``ledger`` where it holds the judgment,
    else (``mode`` "record", or None outside CI) by asking the endpoint and appending each judgment to the
    ledger as it comes back; ``mode`` "replay" (None in CI) asks nothing. ``progress(done, total)`` is called as
    the calls come back. ``settings`` as ``ragscore.score`` takes them (trace_format, trace_fields, corpus)."""
    if mode not in (None, RECORD, REPLAY):
        raise UsageError(f"judge: mode must be {RECORD!r} or {REPLAY!r}, got {mode!r}")
    if jobs < 1 or retries < 0 or not timeout > 0:
        raise UsageError("judge: jobs must be at least 1, retries at least 0 and the timeout positive")
    chosen = load_rubric(os.fspath(rubric))
    name = model or chosen.model
    if not name:
        raise UsageError("judge: give the judge's model (--model, or model in the rubric's [judge] table)")
    base = base_url(endpoint or chosen.endpoint or DEFAULT_ENDPOINT)
    replaying = mode == REPLAY or (mode is None and in_ci(environ))
    ledger_path = os.fspath(ledger)
    check_ledger_path(ledger_path)
    known = read_ledger(ledger_path)
    named = frozenset().union(*(c.fields for c in chosen.criteria))
    questions, input_notes = (_questions(gold, traces, config, settings, named) if gold is not None
                              else _trace_questions(traces, config, settings, named))
    tasks, per_question = _tasks(questions, chosen, base, name)
    judgments: dict[str, float | None] = {}
    why: dict[str, str] = {}
    from_ledger = 0
    pending: list[_Task] = []
    scales = {c.name: c.scale for c in chosen.criteria}
    for task in tasks.values():
        record = known.records.get(task.key)
        if record is not None and (replaying or record.get("score") is not None):
            from_ledger += 1
            judgments[task.key] = _recorded_score(record, scales[task.criterion], ledger_path,
                                                  known.line_of[task.key])
            if record.get("score") is None:
                why[task.key] = str(record.get("error"))
        elif not replaying:
            pending.append(task)
    called = 0
    if pending:
        client = Client(base, api_key(environ), timeout=timeout, retries=retries, sleep=sleep)
        called = _call_all(client, pending, chosen, ledger_path, jobs, judgments, why, progress)
    notes = known.notes() + input_notes
    return _finish(chosen, base, name, questions, tasks, per_question, judgments, why, from_ledger, called,
                   REPLAY if replaying else RECORD, strict, notes)


def _recorded_score(record: Mapping[str, Any], scale: str, ledger: str, line: int) -> float | None:
    """A ledger record's score, checked to be on its criterion's scale (a line edited by hand may not be): an
    InputError at its line, never a score the judge did not give."""
    score = record.get("score")
    if score is None:
        return None
    checked, problem = on_scale(score, scale)
    if problem is not None:
        raise InputError(ledger, f"a ledger record's score is off its criterion's scale: {problem} (a line edited by "
                                 "hand? delete it to judge again)", line)
    return checked


def _questions(gold: Source, traces: TraceSource, config: Config | None, settings: Mapping[str, Any],
               named: frozenset[str]) -> tuple[list[tuple[str, dict[str, str] | None]], list[str]]:
    """Every gold question in gold order, with the four texts its judgments fill in (None: it has no trace); and the
    notes on the traces (those that join no question, replace another, lack a claim or passage texts)."""
    from ragscore.finish import unreadable_hint
    from ragscore.loaders.gold import KEEP_QUESTION, KEEP_REFERENCE, load_gold
    from ragscore.parallel import choose_jobs
    from ragscore.parallel import score as score_parts
    from ragscore.reports.console import format_notes, key_notes, plural
    from ragscore.results import Wants

    gold_in, trace_in = as_input(gold, "gold"), as_traces(traces)
    chosen = for_gold(configured(config, dict(settings)), gold_in)
    run = chosen.settings
    items = load_gold(gold_in, keep=frozenset({KEEP_QUESTION, KEEP_REFERENCE}), fields=run.gold_fields,
                      trace_format=run.trace_format).items
    specs = [x for x in (gold_in, trace_in) if isinstance(x, str)]
    count = choose_jobs(None, *specs) if len(specs) == 2 else 1
    ev = score_parts(gold_in, trace_in, run, Wants(explain=frozenset(item.qid for item in items)), count)
    out: list[tuple[str, dict[str, str] | None]] = []
    untexted: list[str] = []
    for item in items:
        explained = ev.explained.get(item.qid)
        view = explained.trace if explained is not None else None
        if explained is None or view is None:
            out.append((item.qid, None))
            continue
        if _lacks_texts(view.retrieved, explained.passages):
            untexted.append(item.qid)
        contexts = "\n\n".join(f"[{n}] {text}" for n, text in enumerate(explained.passages, 1))
        out.append((item.qid, {"question": item.question or view.question or "",
                               "answer": view.claim if view.claim_from is not None else "",
                               "contexts": contexts, "reference": item.reference or ""}))
    acc = ev.accounting
    notes = [*format_notes(run, ev.settings, ev), *key_notes(ev)]
    if acc.unknown:
        notes.append(f"{plural(acc.unknown, 'trace line matches', 'trace lines match')} no gold question (not "
                     f"judged): {_some([quote(q) for _, q in acc.unknown_ids], acc.unknown)}")
    if acc.duplicates:
        replaced = _some([quote(q) for _, q in acc.duplicate_ids], acc.duplicates)
        notes.append(f"{plural(acc.duplicates, 'trace line was', 'trace lines were')} replaced by a later line for the "
                     f"same question (the last is judged): {replaced}")
    if acc.unreadable and "answer" in named:
        line, example = acc.unreadable_examples[0]
        hint = unreadable_hint(example, ev.settings.trace_format)
        notes.append(f"{plural(acc.unreadable, 'trace has', 'traces have')} no claim or refusal field (judged with "
                     f"an empty {{answer}}): {ev.traces.where(line)}: {hint}")
    notes += _untexted_note(untexted, "contexts" in named, run.corpus is not None)
    return out, notes


def _lacks_texts(retrieved: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether a trace retrieved a passage whose text neither it nor the corpus gives (empty in {contexts})."""
    return len(texts) < len(retrieved) or not all(texts)


def _untexted_note(qids: Sequence[str], named: bool, corpus: bool) -> list[str]:
    if not qids or not named:
        return []
    where = "the trace or --corpus" if corpus else "the trace (--corpus gives passage texts by id)"
    return [f"{len(qids):,} judged {'trace retrieves' if len(qids) == 1 else 'traces retrieve'} passages without a "
            f"text in {where} ({{contexts}} lacks them): {_some([quote(q) for q in qids], len(qids))}"]


def _some(items: Sequence[str], total: int) -> str:
    """The first examples of ``total`` things, and "..." when there are more."""
    return ", ".join(items[:EXAMPLES]) + (", ..." if total > min(len(items), EXAMPLES) else "")


def _trace_questions(traces: TraceSource, config: Config | None, settings: Mapping[str, Any], named: frozenset[str]
                     ) -> tuple[list[tuple[str, dict[str, str] | None]], list[str]]:
    """Without a gold set: each qid of the traces in the order they first come, with the texts of its last trace
    (no reference); and the notes on the traces (without a qid, replaced by a later one, without a claim or passage
    texts)."""
    from ragscore.evaluate import open_corpus, open_input
    from ragscore.loaders.corpus import passage_texts
    from ragscore.loaders.records import no_trace_records
    from ragscore.loaders.shapes import open_records
    from ragscore.loaders.trace import DOCUMENT_ID_PATHS, parse_trace
    from ragscore.reports.console import plural

    run = configured(config, dict(settings)).settings
    source = open_input(as_traces(traces))
    corpus = open_corpus(source, run, 0, 1, joined=False)
    _, shape, records = open_records(source, run.trace_format, run.trace_fields)
    document_id = DOCUMENT_ID_PATHS if shape is None else shape.document_id
    found: dict[str, dict[str, str]] = {}
    untexted: dict[str, bool] = {}
    replaced: list[str] = []
    claimless: list[int] = []
    unnamed = lines = 0
    for line, _column, _record, obj, _key in records:
        lines += 1
        if type(obj) is dict and not any(type(obj.get(key)) in (str, int) and obj.get(key) != ""
                                         for key in ("qid", "q_id")):
            unnamed += 1  # nothing to join its scores on
            continue
        view = parse_trace(obj, source.name, line, document_id)
        if corpus is not None:
            view, obj = corpus.resolve(view, obj)  # type: ignore[arg-type]  # parse_trace checked: a dict
        if view.qid is None:
            unnamed += 1
            continue
        if view.qid in found:
            replaced.append(view.qid)
        if view.claim_from is None and view.refused_from is None:
            claimless.append(line)
        texts = passage_texts(obj)  # type: ignore[arg-type]
        untexted[view.qid] = _lacks_texts(view.retrieved, texts)
        contexts = "\n\n".join(f"[{n}] {text}" for n, text in enumerate(texts, 1))
        found[view.qid] = {"question": view.question or "", "answer": view.claim if view.claim_from is not None else "",
                           "contexts": contexts, "reference": ""}
    if not lines:
        raise no_trace_records(source, "--trace")
    notes = []
    if unnamed:
        notes.append(f"{plural(unnamed, 'trace has', 'traces have')} no qid: not judged (a scores file joins on qid)")
    if replaced:
        distinct = list(dict.fromkeys(replaced))
        notes.append(f"{plural(len(replaced), 'trace line was', 'trace lines were')} replaced by a later line for the "
                     f"same qid (the last is judged): {_some([quote(q) for q in distinct], len(distinct))}")
    if claimless and "answer" in named:
        notes.append(f"{plural(len(claimless), 'trace has', 'traces have')} no claim or refusal field (judged with an "
                     f"empty {{answer}}; --map claim=PATH reads it from another field): "
                     f"{_some([source.where(n) for n in claimless], len(claimless))}")
    notes += _untexted_note([qid for qid, lacking in untexted.items() if lacking], "contexts" in named,
                            corpus is not None)
    return list(found.items()), notes


def _tasks(questions: Sequence[tuple[str, dict[str, str] | None]], rubric: Rubric, base: str, model: str
           ) -> tuple[dict[str, _Task], dict[tuple[str, str], list[str]]]:
    """Every judgment the run needs, by key (two questions with the same inputs share one), and each question's
    keys per criterion."""
    tasks: dict[str, _Task] = {}
    per_question: dict[tuple[str, str], list[str]] = {}
    parameters = rubric.parameters()
    for qid, inputs in questions:
        if inputs is None:
            continue
        for criterion in rubric.criteria:
            prompt = criterion.render(inputs)
            keys = per_question.setdefault((qid, criterion.name), [])
            for sample in range(rubric.samples):
                key = judgment_key(base, model, criterion.signed(), parameters, sample, prompt)
                keys.append(key)
                if key not in tasks:
                    body = {"model": model, "messages": [{"role": "user", "content": prompt}], **parameters}
                    tasks[key] = _Task(key, qid, criterion.name, sample, body)
    return tasks, per_question


class _Callers:
    """``jobs`` threads that make the calls, each as a Future. Daemon threads, unlike a ThreadPoolExecutor's, which
    the interpreter waits for at exit: a run stopped (Ctrl-C, an endpoint refusing every call) ends at once, not
    after the calls under way and their retries' waits. Only the main thread writes the ledger, so nothing is lost."""

    def __init__(self, client: Client, jobs: int) -> None:
        self.client = client
        self.queue: queue.SimpleQueue[tuple[Future[Reply], Mapping[str, Any]] | None] = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._work, name=f"ragscore-judge-{n}", daemon=True)
                        for n in range(jobs)]
        for thread in self.threads:
            thread.start()

    def submit(self, body: Mapping[str, Any]) -> Future[Reply]:
        future: Future[Reply] = Future()
        self.queue.put((future, body))
        return future

    def _work(self) -> None:
        while (item := self.queue.get()) is not None:
            future, body = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self.client.complete(body))
            except BaseException as exc:  # noqa: BLE001 (handed to the main thread, which reads the future)
                future.set_exception(exc)

    def close(self, finished: bool) -> None:
        """Let the threads end; ``finished``: every call came back, so they are waited for (at once)."""
        if not finished:
            self.client.stop()
        for _ in self.threads:
            self.queue.put(None)
        if finished:
            for thread in self.threads:
                thread.join()


def _call_all(client: Client, pending: Sequence[_Task], rubric: Rubric, ledger: str, jobs: int,
              judgments: dict[str, float | None], why: dict[str, str],
              progress: Callable[[int, int], None] | None) -> int:
    """Ask the endpoint for every pending judgment, ``jobs`` at a time, appending each to the ledger as it comes
    back (a run stopped midway keeps what came back); return how many were asked."""
    criteria = {c.name: c for c in rubric.criteria}
    appender = Appender(ledger)
    callers = _Callers(client, min(jobs, len(pending)))
    running: dict[Future[Reply], _Task] = {}
    done = 0
    try:
        tasks = iter(pending)
        for task in tasks:
            running[callers.submit(task.body)] = task
            if len(running) >= jobs * 2:
                break
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                _take(future, task, criteria[task.criterion], appender, judgments, why)
                done += 1
                if progress is not None:
                    progress(done, len(pending))
                following = next(tasks, None)
                if following is not None:
                    running[callers.submit(following.body)] = following
    finally:
        # Stopped (an endpoint refusing every call, Ctrl-C): the calls under way are not waited for; what came
        # back is in the ledger already.
        for future in running:
            future.cancel()
        callers.close(finished=not running)
        appender.close()
    return done


def _take(future: Future[Reply], task: _Task, criterion: Criterion, appender: Appender,
          judgments: dict[str, float | None], why: dict[str, str]) -> None:
    """Record one call's outcome: a reply goes to the ledger (with its score, or why it has none)."""
    try:
        reply = future.result()
    except CallFailed as exc:
        judgments[task.key] = None
        why[task.key] = str(exc)
        return
    score, problem = read_score(reply.text, criterion.scale, criterion.json_field)
    if reply.cut and criterion.json_field is None and score is not None:  # (a JSON object read whole is whole)
        score, problem = None, ('the reply was cut off at max_tokens (finish_reason "length"): its last number may '
                                "not be its score (raise max_tokens, or ask for JSON: json_field)")
    judgments[task.key] = score
    if problem is not None:
        why[task.key] = problem
    appender.add({"key": task.key, "qid": task.qid, "criterion": task.criterion, "sample": task.sample,
                  "model": task.body["model"], "answered_by": reply.model, "score": score, "error": problem,
                  "reply": reply.text, "usage": reply.usage, "seconds": reply.seconds,
                  "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def _finish(rubric: Rubric, base: str, model: str, questions: Sequence[tuple[str, dict[str, str] | None]],
            tasks: Mapping[str, _Task], per_question: Mapping[tuple[str, str], list[str]],
            judgments: Mapping[str, float | None], why: Mapping[str, str], from_ledger: int, called: int, mode: str,
            strict: bool, ledger_notes: list[str]) -> Judgments:
    """Each question's score per criterion: the mean of its samples' when every one has a score."""
    from ragscore.metrics.moments import exact_mean

    rows: list[tuple[str, dict[str, float | None]]] = []
    unjudged: list[tuple[str, str]] = []
    failed: list[tuple[str, str, str]] = []
    untraced: list[str] = []
    for qid, inputs in questions:
        if inputs is None:
            untraced.append(qid)
            rows.append((qid, dict.fromkeys((c.name for c in rubric.criteria), None)))
            continue
        values: dict[str, float | None] = {}
        for criterion in rubric.criteria:
            keys = per_question[qid, criterion.name]
            scores = [judgments.get(key) for key in keys]
            if all(score is not None for score in scores):
                values[criterion.name] = exact_mean(scores)  # type: ignore[arg-type]  # every one a number
                continue
            values[criterion.name] = None
            missing = [key for key in keys if key not in judgments]
            if missing:
                unjudged.append((qid, criterion.name))
            else:
                failed.append((qid, criterion.name, next(why.get(key, "no score") for key in keys
                                                         if judgments.get(key) is None)))
        rows.append((qid, values))
    counts = {"questions": len(questions), "untraced": len(untraced), "judgments": len(tasks),
              "from_ledger": from_ledger, "called": called, "failed": len(failed), "unjudged": len(unjudged)}
    identity = Judge(host_of(base), model, rubric.sha256, {c.name: c.scale for c in rubric.criteria})
    return Judgments(identity, rows, mode, counts, unjudged, failed, untraced, strict, ledger_notes)


def compact(ledger: str | os.PathLike[str]) -> tuple[int, int]:
    """Rewrite a ledger in canonical bytes: the last record of each key, in key order; return the records before
    and after."""
    from ragscore.judging.ledger import compact as compact_ledger

    return compact_ledger(os.fspath(ledger))
