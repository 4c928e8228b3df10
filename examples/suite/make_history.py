"""Write examples/suite/history.jsonl: the suite beside it run on five versions of the pipeline.

Version 1 answers as examples/product/baseline.jsonl does and version 5 as trace.jsonl does; the
versions between take a growing share of their answers from the newer run. The stage predictions
and the retrieval run improve alike, and each version's `release` task compares it with the one
before. Every version runs in a copy of the examples folder, so the history names the same
relative paths a run here would, and the same inputs give the same bytes:

    python examples/suite/make_history.py          # rewrites examples/suite/history.jsonl
    ragscore dashboard examples/suite/history.jsonl --html dashboard.html
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent
VERSIONS = 5
TIMES = ["2026-10-06T12:00:00Z", "2026-10-13T12:00:00Z", "2026-10-20T12:00:00Z", "2026-10-27T12:00:00Z",
         "2026-11-03T12:00:00Z"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def traces(version: int) -> list[dict]:
    """The traces of a version: each question the two runs answer differently takes the newer answer
    from a version of its own (2 to 5); version 1 also lost the citations of twenty answers (a bug
    that version 2 fixed)."""
    old, new = _lines(EXAMPLES / "product" / "baseline.jsonl"), _lines(EXAMPLES / "product" / "trace.jsonl")
    before = {t["qid"]: t for t in old}
    differing = [t["qid"] for t in new if before.get(t["qid"]) != t]
    switch = {qid: 2 + n % (VERSIONS - 1) for n, qid in enumerate(differing)}
    out = [before.get(t["qid"], t) if version < switch.get(t["qid"], 0) else t for t in new]
    if version == 1:
        stripped = 0
        for n, t in enumerate(out):
            answer = t.get("answer_json")
            if stripped < 20 and isinstance(answer, dict) and answer.get("citations"):
                out[n] = {**t, "answer_json": {**answer, "citations": []}}
                stripped += 1
    return out


def trec_run(records: list[dict], version: int) -> str:
    """The retrieval run of a version: earlier versions rank the first document third for some queries."""
    last = {t["qid"]: list(t.get("retrieved_ids") or []) for t in records}
    out = []
    for n, qid in enumerate(sorted(last)):
        ids = last[qid]
        if n % VERSIONS >= version and len(ids) > 2:
            ids = [ids[1], ids[2], ids[0], *ids[3:]]
        out += [f"{qid} Q0 {doc} {rank} {len(ids) - rank + 1:.1f} stashwell-v{version}\n"
                for rank, doc in enumerate(ids, 1)]
    return "".join(out)


def stage_predictions(folder: Path, version: int) -> None:
    """Earlier versions miss entities, guess classes and rank linking candidates worse."""
    stages = EXAMPLES / "stages"
    ner = _lines(stages / "ner_pred.jsonl")
    for d, doc in enumerate(ner):
        doc["entities"] = [e for j, e in enumerate(doc["entities"]) if (d + j) % VERSIONS < version]
    _write(folder / "ner_pred.jsonl", ner)
    classes = _lines(stages / "classify_pred.jsonl")
    for i, item in enumerate(classes):
        if i % VERSIONS >= version:
            item["label"] = "PERSON"
    _write(folder / "classify_pred.jsonl", classes)
    links = _lines(stages / "link_pred.jsonl")
    for i, item in enumerate(links):
        if i % VERSIONS >= version:
            item["candidates"] = item["candidates"][::-1]
    _write(folder / "link_pred.jsonl", links)


def main() -> int:
    from ragscore.cli import main as ragscore

    history = HERE / "history.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        for name in ("product", "retrieval", "stages", "suite"):
            shutil.copytree(EXAMPLES / name, root / name)
        (root / "suite" / "history.jsonl").unlink(missing_ok=True)
        written = Path(tmp) / "history.jsonl"
        previous = traces(1)
        for version in range(1, VERSIONS + 1):
            current = traces(version)
            _write(root / "product" / "baseline.jsonl", previous)
            _write(root / "product" / "trace.jsonl", current)
            (root / "retrieval" / "run.txt").write_text(trec_run(current, version), encoding="utf-8")
            stage_predictions(root / "stages", version)
            status = ragscore(["run", str(root / "suite" / "ragscore.toml"), "--history", str(written), "--label",
                               f"v1.{version - 1}", "--time", TIMES[version - 1], "--format", "none", "--quiet"])
            if status not in (0, 1):
                return status
            previous = current
        shutil.copyfile(written, history)
    print(f"wrote {history.relative_to(EXAMPLES.parent)} ({VERSIONS} versions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
