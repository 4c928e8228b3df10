"""Write traces.jsonl and gold.jsonl: traces that keep a model provider's own response object, built with
the providers' SDK types and dumped as the SDKs dump them (issue 34, provider citations).

    python tests/data/providers/make_provider_examples.py

Each trace retrieved three passages, in order, and keeps the response under ``response`` (one under
``raw_response``, as the REST JSON text); none has a citations field. The responses are constructed
locally, no model or network is used: ``anthropic.types.Message``, ``openai.types.responses.Response``,
``google.genai.types.GenerateContentResponse``, ``cohere.V2ChatResponse`` and ``cohere.NonStreamedChatResponse``,
each written with ``model_dump(mode="json")``; Bedrock's Converse response, which boto3 returns as a plain
dict, is checked against botocore's service model of bedrock-runtime. Each provider has citations at
their offsets, citations with shifted offsets, and citations of the wrong document or of one not
retrieved; ``EXPECTED`` (in tests/test_provider_citations.py) holds each citation's verdict, derived by
hand. The versions that wrote the files are in sdk-versions.txt, next to this script.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anthropic.types as at
import botocore.session
import cohere
from botocore.validate import ParamValidator
from google.genai import types as gt
from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText
from openai.types.responses.response_output_text import AnnotationFileCitation, AnnotationURLCitation

HERE = Path(__file__).parent
SDKS = ("anthropic", "openai", "google-genai", "cohere", "botocore")

REFUNDS = "Refunds are accepted within 30 days of purchase. Items must be unused and in their original packaging."
SHIPPING = "Standard shipping takes 5 to 7 business days. Express shipping arrives in 2 days."
GIFT_CARDS = "Gift cards cannot be refunded or exchanged for cash."
PASSAGES = [REFUNDS, SHIPPING, GIFT_CARDS]
IDS = ["d1", "d2", "d3"]
URLS = ["https://shop.example/refunds", "https://shop.example/shipping", "https://shop.example/gift-cards"]


def span(text: str, part: str, shift: int = 0) -> tuple[int, int]:
    """Where ``part`` is in ``text`` (characters), moved by ``shift``."""
    start = text.index(part)
    return start + shift, start + len(part) + shift


# --- Anthropic -------------------------------------------------------------------------------------

def char_location(document: int, cited: str, shift: int = 0, of: int | None = None) -> at.CitationCharLocation:
    """A char_location citation of ``cited`` in passage ``of`` (default: ``document``), said to be in ``document``."""
    start, end = span(PASSAGES[document if of is None else of], cited, shift)
    return at.CitationCharLocation(type="char_location", cited_text=cited, document_index=document,
                                   document_title=None, start_char_index=start, end_char_index=end)


def message(*blocks: tuple[str, list[Any]]) -> at.Message:
    return at.Message(id="msg_01", type="message", role="assistant", model="claude-sonnet-4-5",
                      content=[at.TextBlock(type="text", text=text, citations=citations or None)
                               for text, citations in blocks],
                      stop_reason="end_turn", stop_sequence=None, usage=at.Usage(input_tokens=512, output_tokens=40))


def anthropic_traces() -> list[dict[str, Any]]:
    first = "Refunds are accepted within 30 days of purchase. "  # Anthropic cites whole sentences, space and all
    return [
        trace("anthropic-valid", message(
            ("Per the policy, ", []), ("refunds are accepted within 30 days", [char_location(0, first)]),
            (" and ", []), ("gift cards cannot be refunded", [char_location(2, GIFT_CARDS)]), (".", []))),
        trace("anthropic-shifted", message(
            ("Refunds are accepted within 30 days", [char_location(0, first, shift=7)]), (".", []))),
        trace("anthropic-wrong-document", message(
            ("Refunds are accepted within 30 days", [char_location(1, first, of=0)]), (".", []))),
        trace("anthropic-not-retrieved", message(
            ("Express shipping takes 2 days", [
                at.CitationCharLocation(type="char_location", cited_text="Express delivery in 2 days.",
                                        document_index=3, document_title=None, start_char_index=0,
                                        end_char_index=27),
                at.CitationPageLocation(type="page_location", cited_text="Express shipping arrives in 2 days.",
                                        document_index=1, document_title=None, start_page_number=1,
                                        end_page_number=2)]),
            (".", []))),
    ]


# --- OpenAI Responses -------------------------------------------------------------------------------

def openai_response(text: str, annotations: list[Any]) -> Response:
    return Response(id="resp_01", created_at=1767225600, model="gpt-5", object="response", output=[
        ResponseOutputMessage(id="msg_01", type="message", role="assistant", status="completed", content=[
            ResponseOutputText(type="output_text", text=text, annotations=annotations)])],
        parallel_tool_calls=True, tool_choice="auto", tools=[])


def openai_traces() -> list[dict[str, Any]]:
    text = "Refunds are accepted within 30 days ([shop.example](https://shop.example/refunds))."
    start, end = span(text, "([shop.example](https://shop.example/refunds))")
    return [
        trace("openai-url-citation", openai_response(text, [
            AnnotationURLCitation(type="url_citation", url=URLS[0], title="Refunds", start_index=start,
                                  end_index=end)]), ids=URLS),
        trace("openai-off-the-answer", openai_response(text, [
            AnnotationURLCitation(type="url_citation", url="https://elsewhere.example/", title="Elsewhere",
                                  start_index=start + 40, end_index=end + 40),
            AnnotationFileCitation(type="file_citation", file_id="file-gift-cards", filename="gift-cards.txt",
                                   index=len(text))]), ids=URLS),
    ]


# --- Gemini -----------------------------------------------------------------------------------------

GEMINI_ANSWER = "Refunds are accepted within 30 days \u2014 keep the receipt. Gift cards cannot be refunded."


def support(part: str, chunks: list[int], in_bytes: bool = True) -> gt.GroundingSupport:
    """A grounding support of ``part`` of the answer: its offsets in UTF-8 bytes, as Gemini gives them (or,
    wrongly, in characters)."""
    start, end = span(GEMINI_ANSWER, part)
    if in_bytes:
        start, end = len(GEMINI_ANSWER[:start].encode()), len(GEMINI_ANSWER[:end].encode())
    return gt.GroundingSupport(segment=gt.Segment(part_index=0, start_index=start, end_index=end, text=part),
                               grounding_chunk_indices=chunks, confidence_scores=[0.9] * len(chunks))


def gemini_response(supports: list[gt.GroundingSupport], order: tuple[int, ...] = (0, 1, 2)
                    ) -> gt.GenerateContentResponse:
    chunks = [gt.GroundingChunk(retrieved_context=gt.GroundingChunkRetrievedContext(
        uri=f"gs://shop-policies/{IDS[i]}.txt", title=IDS[i], text=PASSAGES[i])) for i in order]
    return gt.GenerateContentResponse(model_version="gemini-2.5-flash", candidates=[gt.Candidate(
        content=gt.Content(role="model", parts=[gt.Part(text=GEMINI_ANSWER)]), finish_reason=gt.FinishReason.STOP,
        grounding_metadata=gt.GroundingMetadata(grounding_chunks=chunks, grounding_supports=supports))])


def gemini_traces() -> list[dict[str, Any]]:
    refunds, gift_cards = "Refunds are accepted within 30 days", "Gift cards cannot be refunded."
    wrong = gemini_response([support(refunds, [1])], order=(1, 0, 2))  # chunk 1 is the refunds passage
    # The REST JSON (camel case), as text under raw_response; its chunks listed in another order than the
    # passages were retrieved in: chunk 1 (the refunds text) is passage 1 (shipping).
    raw = trace("gemini-wrong-document", wrong)
    del raw["response"]
    raw["raw_response"] = json.dumps(wrong.model_dump(mode="json", by_alias=True, exclude_none=True))
    return [
        trace("gemini-valid", gemini_response([support(refunds, [0]), support(gift_cards, [2])])),
        trace("gemini-character-offsets", gemini_response([support(gift_cards, [2], in_bytes=False)])),
        raw,
    ]


# --- Cohere -----------------------------------------------------------------------------------------

def cohere_v2(text: str, citations: list[tuple[str, int, list[str]]]) -> cohere.V2ChatResponse:
    """A v2 chat response: each citation is a part of the answer, a shift of its offsets and its sources' ids."""
    made = []
    for part, shift, ids in citations:
        start, end = span(text, part, shift)
        made.append(cohere.Citation(start=start, end=end, text=part, type="TEXT_CONTENT", content_index=0, sources=[
            cohere.DocumentSource(type="document", id=i, document={"id": i}) for i in ids]))
    return cohere.V2ChatResponse(id="chat-01", finish_reason="COMPLETE", message=cohere.AssistantMessageResponse(
        role="assistant", content=[cohere.TextAssistantMessageResponseContentItem(type="text", text=text)],
        citations=made))


def cohere_traces() -> list[dict[str, Any]]:
    text = "Refunds are accepted within 30 days of purchase; express shipping arrives in 2 days."
    v1_text = "Standard shipping takes 5 to 7 business days."
    return [
        trace("cohere-valid", cohere_v2(text, [("Refunds are accepted within 30 days", 0, ["d1"])])),
        trace("cohere-shifted", cohere_v2(text, [("Refunds are accepted within 30 days", 4, ["d1"])])),
        # d9 was not retrieved; doc:1 is Cohere's own id for the second document the model was given
        trace("cohere-not-retrieved", cohere_v2(text, [("express shipping arrives in 2 days", 0, ["d9", "doc:1"])])),
        trace("cohere-v1", cohere.NonStreamedChatResponse(
            text=v1_text, generation_id="gen-01", response_id="resp-01", finish_reason="COMPLETE",
            citations=[cohere.ChatCitation(start=0, end=len(v1_text), text=v1_text, document_ids=["d2"],
                                           type="TEXT_CONTENT")],
            documents=[{"id": i, "text": t} for i, t in zip(IDS, PASSAGES, strict=True)])),
    ]


# --- Bedrock Converse -------------------------------------------------------------------------------

def converse(cited: str, location: dict[str, Any]) -> dict[str, Any]:
    """A Converse response whose answer cites ``cited`` at ``location``, checked against botocore's model."""
    response = {
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Per the policy, "},
            {"citationsContent": {"content": [{"text": "refunds are accepted within 30 days"}], "citations": [
                {"title": "policy", "sourceContent": [{"text": cited}], "location": location}]}},
            {"text": "."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 512, "outputTokens": 40, "totalTokens": 552},
        "metrics": {"latencyMs": 812},
    }
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    report = ParamValidator().validate(response, model.operation_model("Converse").output_shape)
    if report.has_errors():
        raise SystemExit(report.generate_report())
    return response


def bedrock_traces() -> list[dict[str, Any]]:
    refunds = "Refunds are accepted within 30 days of purchase."

    def char(document: int, shift: int = 0) -> dict[str, Any]:
        start, end = span(REFUNDS, refunds, shift)
        return {"documentChar": {"documentIndex": document, "start": start, "end": end}}

    return [
        trace("bedrock-valid", converse(refunds, char(0))),
        trace("bedrock-shifted", converse(refunds, char(0, shift=3))),
        trace("bedrock-wrong-document", converse(refunds, char(2))),
        trace("bedrock-page", converse("Express shipping arrives in 2 days.",
                                       {"documentPage": {"documentIndex": 1, "start": 1, "end": 2}})),
    ]


# --- the files --------------------------------------------------------------------------------------

def answer_of(response: Any) -> str:
    """The answer text as the SDK gives it."""
    if isinstance(response, at.Message):
        return "".join(b.text for b in response.content if b.type == "text")
    if isinstance(response, Response):
        return response.output_text
    if isinstance(response, gt.GenerateContentResponse):
        return response.text or ""
    if isinstance(response, cohere.V2ChatResponse):
        return "".join(c.text for c in response.message.content or () if c.type == "text")
    if isinstance(response, cohere.NonStreamedChatResponse):
        return response.text
    return "".join(b.get("text") or b["citationsContent"]["content"][0]["text"]
                   for b in response["output"]["message"]["content"])


def trace(qid: str, response: Any, ids: list[str] = IDS) -> dict[str, Any]:
    return {"qid": qid, "question": "What does the policy say?", "answer": answer_of(response),
            "retrieved_ids": ids, "retrieved_chunks": PASSAGES,
            "response": response if isinstance(response, dict) else response.model_dump(mode="json")}


GOLD: dict[str, list[str]] = {  # each question's gold citations: the documents that hold its answer
    "anthropic-valid": ["d1", "d3"], "anthropic-shifted": ["d1"], "anthropic-wrong-document": ["d1"],
    "anthropic-not-retrieved": ["d2"], "openai-url-citation": [URLS[0]], "openai-off-the-answer": [URLS[0]],
    "gemini-valid": ["d1", "d3"], "gemini-character-offsets": ["d3"], "gemini-wrong-document": ["d1"],
    "cohere-valid": ["d1"], "cohere-shifted": ["d1"], "cohere-not-retrieved": ["d2"], "cohere-v1": ["d2"],
    "bedrock-valid": ["d1"], "bedrock-shifted": ["d1"], "bedrock-wrong-document": ["d1"], "bedrock-page": ["d2"],
}


def build() -> dict[str, str]:
    """The files' texts, by name."""
    traces = anthropic_traces() + openai_traces() + gemini_traces() + cohere_traces() + bedrock_traces()
    assert [t["qid"] for t in traces] == list(GOLD)
    gold = [{"qid": t["qid"], "question": t["question"], "answerable": True, "gold_citations": GOLD[t["qid"]]}
            for t in traces]
    return {
        "traces.jsonl": "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in traces),
        "gold.jsonl": "".join(json.dumps(g) + "\n" for g in gold),
        "sdk-versions.txt": "".join(f"{name}=={version(name)}\n" for name in SDKS),
    }


def main(out: Path = HERE) -> None:
    for name, text in build().items():
        (out / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
