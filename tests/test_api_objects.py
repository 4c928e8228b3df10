"""The Python API takes the objects a pipeline has (issue 32): a record that is not a dict but has
``to_dict()``, ``model_dump()`` (pydantic v2), ``dict()``, or is a dataclass, and any such object
inside a dict record, is read as the CLI reads the JSON its library writes; anything else is an
error naming its type and the record. Real LangChain and llama-index objects where installed
(they are not in the test extra), pydantic models and dataclasses defined here always.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from pathlib import Path

import pydantic
import pytest

import ragscore
from conftest import DATA
from ragscore.loaders.records import Records

LANGCHAIN = DATA / "real" / "langchain"
GOLD = [{"qid": "Q1", "answerable": True, "gold_claim_substr": ["30 days"], "gold_citations": ["d1"]},
        {"qid": "Q2", "answerable": True, "gold_claim_substr": ["Ada"], "gold_citations": ["d2"]}]
TRACES = [{"qid": "Q1", "answer_json": {"claim": "Refunds within 30 days.", "citations": ["d1"]},
           "retrieved_ids": ["d1", "d3"]},
          {"qid": "Q2", "answer_json": {"claim": "It was Grace.", "citations": ["d9"]}, "retrieved_ids": ["d3", "d2"]}]


class Answer(pydantic.BaseModel):
    claim: str
    citations: tuple[str, ...]


class Trace(pydantic.BaseModel):
    qid: str
    answer_json: Answer
    retrieved_ids: list[str]


@dataclasses.dataclass
class Gold:
    qid: str
    answerable: bool
    gold_claim_substr: tuple[str, ...]
    gold_citations: list[str]


class Kind(enum.Enum):
    FACT = "fact"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Meta:
    when: datetime.datetime
    day: datetime.date
    kind: Kind
    level: Level
    tags: frozenset[str]


class Foo:
    """An object with none of the methods: no record."""


def _records(records: object, role: str = "trace") -> list[object]:
    return [record for _, record in Records(records, role)]  # type: ignore[arg-type]


def _doc(run: ragscore.Run) -> dict[str, object]:
    doc = json.loads(run.report("json"))
    del doc["inputs"]  # records are named <trace records>, a file by its path: the rest is the same
    return doc  # type: ignore[no-any-return]


def test_pydantic_models_and_dataclasses_score_as_their_dicts(isolated):
    traces = [Trace(qid=t["qid"], answer_json=Answer(**t["answer_json"]), retrieved_ids=t["retrieved_ids"])  # type: ignore[arg-type]
              for t in TRACES]
    gold = [Gold(**g) for g in GOLD]  # type: ignore[arg-type]
    assert _records(traces) == TRACES  # the tuple of citations is a list, as its JSON reads
    assert _records(gold, "gold") == GOLD
    by_objects, by_dicts = ragscore.score(gold, traces), ragscore.score(GOLD, TRACES)
    assert by_objects.metrics == by_dicts.metrics
    assert by_objects.metrics["precision"] == 0.5  # Q1 claims and cites its gold, Q2 neither
    assert by_objects.metrics["full_recall@5"] == 1.0
    assert by_objects.document["inputs"] == by_dicts.document["inputs"]  # the same records, the same digest


def test_every_command_that_takes_records_takes_objects(isolated):
    gold = [Gold(**g) for g in GOLD]  # type: ignore[arg-type]
    traces = [Trace(**t) for t in TRACES]  # type: ignore[arg-type]
    comparison = ragscore.compare(gold, traces, [Trace(**t) for t in TRACES])  # type: ignore[arg-type]
    assert comparison.deltas == ragscore.compare(GOLD, TRACES, TRACES).deltas
    assert ragscore.monitor([Trace(**t) for t in TRACES]).metrics == ragscore.monitor(TRACES).metrics  # type: ignore[arg-type]
    by_objects = ragscore.partial([Gold(**g) for g in GOLD], [Trace(**t) for t in TRACES])  # type: ignore[arg-type]
    assert by_objects.to_json() == ragscore.partial(GOLD, TRACES).to_json()
    assert ragscore.power([Gold(**g) for g in GOLD], [Trace(**t) for t in TRACES]).document == \
        ragscore.power(GOLD, TRACES).document  # type: ignore[arg-type]


def test_values_inside_a_dict_read_as_their_json(isolated):
    when = datetime.datetime(2025, 11, 24, 9, 30, tzinfo=datetime.UTC)
    meta = Meta(when, when.date(), Kind.FACT, Level.HIGH, frozenset({"b", "a", "c"}))
    record = {"qid": "Q1", "meta": meta, "pair": ("x", 1), 3: "three", "kinds": {Kind.FACT}}
    assert _records([record]) == [{"qid": "Q1", "pair": ["x", 1], "3": "three", "kinds": ["fact"], "meta": {
        "when": "2025-11-24T09:30:00+00:00", "day": "2025-11-24", "kind": "fact", "level": 3, "tags": ["a", "b", "c"]}}]
    assert type(_records([record])[0]["meta"]["level"]) is int  # type: ignore[index]


def test_a_value_that_holds_itself_is_an_error():
    looped: list[object] = ["x"]
    looped.append(looped)
    with pytest.raises(ragscore.InputError) as caught:
        ragscore.score(GOLD, [{"qid": "Q1", "retrieved_ids": looped}])
    assert str(caught.value) == "<trace records>, record 1: not JSON data: a value holds itself, or is nested too deeply"


def test_stage_records_take_objects_too():
    @dataclasses.dataclass
    class Label:
        id: str
        label: str

    pred = [{"id": "a", "label": "x"}, {"id": "b", "label": "x"}]
    by_objects = ragscore.classify([Label("a", "x"), Label("b", "y")], pred)
    assert by_objects.metrics == ragscore.classify([{"id": "a", "label": "x"}, {"id": "b", "label": "y"}], pred).metrics
    assert by_objects.metrics["accuracy"] == 0.5


def test_a_plain_dict_is_the_record_itself():
    record = {"qid": "Q1", "answer_json": {"claim": "x", "citations": ["d1"]}, "retrieved": [{"doc_id": "d1"}]}
    assert _records([record])[0] is record  # nothing copied when nothing needs converting


@pytest.mark.parametrize(("records", "message"), [
    ([{"qid": "Q1"}, {"qid": "Q2"}, Foo()],
     "<trace records>, record 3: expected a record (a dict, or an object with model_dump(), to_dict() or dict(), "
     "or a dataclass), got Foo"),
    ([("qid", "Q1")], "<trace records>, record 1: expected a record (a dict, or an object with model_dump(), "
                      "to_dict() or dict(), or a dataclass), got tuple"),
    ([{"qid": "Q1", "context": [{"page_content": "x"}, Foo()]}],
     "<trace records>, record 1: at context[1]: expected a JSON value (or an object with model_dump(), to_dict() "
     "or dict(), or a dataclass), got Foo"),
    ([{"qid": "Q1", "meta": {Foo: 1}}],
     "<trace records>, record 1: at meta: a key must be text, a number, true, false or null, got type"),
])
def test_what_cannot_be_read_is_an_error_naming_its_type_and_record(records, message):
    with pytest.raises(ragscore.InputError) as caught:
        ragscore.score(GOLD, records)
    assert str(caught.value) == message


def test_langchain_documents_score_as_the_file_langchain_wrote(ragscore, isolated):
    documents = pytest.importorskip("langchain_core.documents")
    lines = (LANGCHAIN / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    traces = []
    for line in lines:
        record = json.loads(line)
        record["context"] = [documents.Document(**d) for d in record["context"]]
        traces.append(record)
    assert _records(traces) == [json.loads(line) for line in lines]
    from_file = ragscore("score", "--gold", LANGCHAIN / "gold.jsonl", "--trace", LANGCHAIN / "traces.jsonl",
                         "--format", "json")
    assert from_file.status == 1  # precision's default gate fails: LangChain's q3 claims the wrong river
    expected = json.loads(from_file.out)
    del expected["inputs"]
    assert _doc(ragscore_api_score(LANGCHAIN / "gold.jsonl", traces)) == expected


def ragscore_api_score(gold: Path, traces: list[object]) -> ragscore.Run:
    return ragscore.score(str(gold), traces)


def test_llama_index_nodes_read_as_their_to_dict():
    schema = pytest.importorskip("llama_index.core.schema")
    lines = (DATA / "llamaindex" / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    responses = []
    for line in lines:
        record = json.loads(line)
        record["source_nodes"] = [schema.NodeWithScore(node=schema.TextNode.from_dict(d["node"]), score=d["score"])
                                  for d in record["source_nodes"]]
        assert isinstance(record["source_nodes"][0].node, schema.TextNode)
        responses.append(record)
    assert _records(responses) == [json.loads(line) for line in lines]  # what make_responses.py wrote
    node = responses[0]["source_nodes"][0]
    assert _records([node]) == [json.loads(lines[0])["source_nodes"][0]]  # a node as a record of its own too


def test_other_mappings_a_data_frame_and_an_unhashable_dataset_read_as_their_rows(isolated):
    import collections
    import types

    import pandas

    trace = {"qid": "Q1", "answer_json": {"claim": "Within 30 days.", "citations": ["d1"]}, "retrieved_ids": ["d1"]}
    expected = ragscore.score(GOLD, [trace]).metrics
    for record in (collections.OrderedDict(trace), collections.defaultdict(list, trace),
                   types.MappingProxyType(trace)):
        assert ragscore.score(GOLD, [record]).metrics == expected, type(record).__name__
    # A DataFrame iterates over its column names: its rows are the records.
    assert ragscore.score(GOLD, pandas.DataFrame([trace])).metrics == expected

    class Dataset(pydantic.BaseModel):  # an iterable that cannot be hashed, as ragas' EvaluationDataset
        samples: list[dict[str, object]]

        def __iter__(self):  # type: ignore[override]
            return iter(self.samples)

    assert ragscore.score(GOLD, Dataset(samples=[trace])).metrics == expected
