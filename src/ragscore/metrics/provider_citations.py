"""Provider citations judged against the trace's passages and the answer (issue 34).

A citation a model provider returned (read by ``loaders/provider_responses.py``) is judged on the texts
it gives, and on nothing it does not give:

- the text it cites from its document (Anthropic's ``cited_text``, Bedrock's ``sourceContent``, a
  Gemini chunk's ``retrieved_context.text``), against the trace's text of that document: at the
  character offsets it gives, exactly or once folded (``ragscore.text.folded``), it is ``valid``;
  in the document elsewhere, ``misplaced``; not in it, ``invalid``. A citation that gives no
  character offsets (pages, blocks, chunks) says only that the text is in the document: ``valid``
  when it is, else ``invalid``;
- the part of the answer it supports (a Gemini ``segment``, a Cohere citation's ``text``), against the
  response's answer text, alike: at its offsets, elsewhere in the answer, or not there. Answer offsets
  given without a text (OpenAI's ``url_citation``) are checked only to lie inside the answer:
  ``invalid`` when they do not.

Its verdict is the worst of the checks made; ``unchecked`` when none could be made (no text of its
document given, or the trace has no text for it; no answer part given): an OpenAI URL or file
citation, a Cohere citation whose answer part is in place. It is ``retrieved`` when its document is
among the passages the trace retrieved: an index below their number, an id among their ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from ragscore.loaders.provider_responses import (
    NOT_PLACED,
    ProviderCitation,
    ProviderResponse,
    document_position,
    provider_response,
)
from ragscore.text import fold, folded

VALID: Final = "valid"
MISPLACED: Final = "misplaced"
INVALID: Final = "invalid"
UNCHECKED: Final = "unchecked"
_WORST: Final = (VALID, MISPLACED, INVALID)
# A trace without a provider response: no citation, none valid, misplaced, invalid or retrieved.
NO_CITATIONS: Final = (0.0, 0.0, 0.0, 0.0, 0.0)


class Judgement(NamedTuple):
    """What a citation's checks found (a check is None when it could not be made)."""

    verdict: str                   # valid, misplaced, invalid or unchecked
    retrieved: bool
    position: int | None           # where its document stands among the retrieved passages
    document: str | None           # the cited text against its document's text
    segment: str | None            # the answer part against the answer
    found: tuple[int, int] | None  # a misplaced cited text's characters in its document
    found_segment: tuple[int, int] | None  # a misplaced answer part's characters in the answer


def _placed(text: str, span: tuple[int, int] | None, within: str) -> tuple[str, tuple[int, int] | None]:
    """``text`` against ``within``: at ``span`` (valid), elsewhere (misplaced, with where), or not there;
    without a span, in it (valid) or not."""
    needle = folded(text)
    if span is not None and span != NOT_PLACED:
        start, end = span
        at = within[start:end] if 0 <= start <= end <= len(within) else None
        if at is not None and (at == text or folded(at) == needle):
            return VALID, None
    if needle not in folded(within):
        return INVALID, None
    if span is None:
        return VALID, None
    whole = fold(within)
    start = whole.text.find(needle)
    return MISPLACED, (whole.original(start, start + len(needle)) if start >= 0 else None)


def judge(citation: ProviderCitation, answer: str, ids: Sequence[str], texts: Sequence[str]) -> Judgement:
    """Judge one citation against the answer and the trace's retrieved ids and passage texts (one text
    per retrieved passage, in order; an id's text only when there is one text per id)."""
    position = document_position(citation, ids, len(ids) if ids else len(texts))
    text = None
    if position is not None and position < len(texts) and (not ids or len(ids) == len(texts)):
        text = texts[position]
    document = found = None
    if citation.cited is not None and folded(citation.cited) and text is not None:
        offsets = citation.location
        span = (offsets.start, offsets.end) if offsets is not None and offsets.unit == "characters" else None
        document, found = _placed(citation.cited, span, text)
    segment = found_segment = None
    if citation.segment is not None and folded(citation.segment):
        segment, found_segment = _placed(citation.segment, citation.span, answer)
    elif citation.span is not None and not 0 <= citation.span[0] <= citation.span[1] <= len(answer):
        segment = INVALID  # offsets alone, off the answer
    checks = [c for c in (document, segment) if c is not None]
    verdict = max(checks, key=_WORST.index) if checks else UNCHECKED
    return Judgement(verdict, position is not None, position, document, segment, found, found_segment)


def judge_response(response: ProviderResponse, ids: Sequence[str], texts: Sequence[str]) -> list[Judgement]:
    """Judge every citation of a response."""
    return [judge(c, response.answer, ids, texts) for c in response.citations]


def provider_counts(obj: Mapping[str, object], ids: Sequence[str], texts: Sequence[str]) -> tuple[float, ...]:
    """A trace's provider citations counted: all, valid, misplaced, invalid, retrieved (``NO_CITATIONS`` when
    it keeps no provider response)."""
    response = provider_response(obj)
    if response is None or not response.citations:
        return NO_CITATIONS
    judged = judge_response(response, ids, texts)
    verdicts = [j.verdict for j in judged]
    return (float(len(judged)), float(verdicts.count(VALID)), float(verdicts.count(MISPLACED)),
            float(verdicts.count(INVALID)), float(sum(j.retrieved for j in judged)))
