"""Citations in a model provider's own response, as a trace keeps it (issue 34).

A trace may hold the response its model provider returned: the SDK object's ``model_dump()`` (or the
provider's JSON, or that JSON as text) under ``response`` or ``raw_response``. ``provider_response``
tells the provider by the object's shape and reads its answer text (the text parts joined, as the SDKs'
own ``text`` and ``output_text`` join them) and each citation: the document it cites, the text of the
document it quotes and where, and the part of the answer it supports, each only when the provider
gives it. A citation that names several documents is one citation per document.

Where a provider cites a document by its index, the index counts the documents it was given, in order:
the trace's retrieved passages, as they were passed to the model. Offsets are read in each provider's
own unit (``Location``: as given) and the answer's are converted to characters of the answer text:

- Anthropic Messages: ``citations`` on ``text`` blocks. ``char_location``: ``document_index``,
  ``start_char_index`` (0-based) to ``end_char_index`` (exclusive), characters; ``page_location``:
  pages from 1, end exclusive; ``content_block_location`` and ``search_result_location``
  (``search_result_index``): content blocks from 0, end exclusive; ``web_search_result_location``: a URL.
  Each has ``cited_text``. The answer part a citation supports is the text block it is on.
- OpenAI Responses: ``annotations`` on ``output_text`` parts. ``url_citation`` (a URL; ``start_index`` to
  ``end_index`` in the part's text, characters, read with the end exclusive as the SDK's users slice it),
  ``file_citation`` (a file id; ``index`` is where a marker goes, not a span) and
  ``container_file_citation``. None quotes its document. Chat Completions' ``url_citation`` likewise.
- Gemini and Vertex AI: the first candidate's ``grounding_metadata``: each of ``grounding_supports``
  cites ``grounding_chunk_indices`` for a ``segment`` of the answer (``text``; ``part_index``;
  ``start_index`` to ``end_index`` in UTF-8 bytes of that part, end exclusive). A chunk's
  ``retrieved_context.text`` is the text it cites; a web chunk gives none. Snake or camel case.
- Cohere: v2 ``message.citations`` (``start``, ``end``: characters of the text content, end exclusive;
  ``text``: that part of the answer; ``sources``' ids) and v1's ``citations`` (``document_ids``).
  Neither quotes its document. A document Cohere gave its own id (``doc:0``, ``doc_0``: the model
  was passed it without one) is the passage at that index.
- Bedrock Converse: ``citationsContent`` blocks (their ``content`` is the answer part they support),
  each citation's ``sourceContent`` the text it cites and its ``location``: ``documentChar``
  (characters, read with the end exclusive, as the Claude models behind it give them),
  ``documentPage``, ``documentChunk``, ``searchResultLocation`` (content blocks) or ``web`` (a URL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

# Where a trace keeps a provider's response, in the order they are looked for.
RESPONSE_KEYS: Final = ("response", "raw_response")
NOT_PLACED: Final = (-1, -1)  # an answer span whose given offsets fall outside its text or inside a character
# Cohere's own id for a document passed without one: its index.
_COHERE_OWN_ID: Final = re.compile(r"doc[:_]([0-9]+)")


class Location(NamedTuple):
    """Offsets as a provider gives them: in which unit ("characters", "bytes", "pages", "blocks",
    "chunks"), from ``start`` to ``end``."""

    unit: str
    start: int
    end: int


class ProviderCitation(NamedTuple):
    """One citation of one document, with what the provider says of it (None: not given)."""

    provider: str                 # anthropic, openai, gemini, cohere, bedrock
    kind: str                     # the provider's name for it: char_location, url_citation, grounding_support ...
    document: int | str | None    # an index into the documents the model was given, or an id (a URL, a file id)
    cited: str | None             # the text of its document it cites
    location: Location | None     # where that text is in its document
    segment: str | None           # the part of the answer it supports, as the provider writes it
    span: tuple[int, int] | None  # that part's characters in the answer text (NOT_PLACED: the offsets are off it)
    given: Location | None        # the answer offsets as the provider gives them (None: none, or the span is a block)


class ProviderResponse(NamedTuple):
    """A provider's response read: where the trace keeps it, the provider, its answer text and citations."""

    key: str
    provider: str
    answer: str
    citations: tuple[ProviderCitation, ...]


def provider_response(obj: Mapping[str, object]) -> ProviderResponse | None:
    """Read the provider response a trace keeps (the first of ``RESPONSE_KEYS`` that holds one), else None."""
    for key in RESPONSE_KEYS:
        value = obj.get(key)
        if type(value) is str and value.lstrip()[:1] == "{":
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
                continue
        if type(value) is dict:
            read = read_response(value)
            if read is not None:
                return ProviderResponse(key, *read)
    return None


def read_response(value: dict[str, object]) -> tuple[str, str, tuple[ProviderCitation, ...]] | None:
    """Tell the provider of a response by its shape; give it, the answer text and the citations (None: no
    provider's shape)."""
    if value.get("type") == "message" and type(value.get("content")) is list:
        return ("anthropic", *_anthropic(value))
    if value.get("object") == "response" and type(value.get("output")) is list:
        return ("openai", *_openai_responses(value))
    if value.get("object") == "chat.completion" and type(value.get("choices")) is list:
        return ("openai", *_openai_chat(value))
    if type(value.get("candidates")) is list:
        return ("gemini", *_gemini(value))
    output = value.get("output")
    if type(output) is dict and type(output.get("message")) is dict:
        return ("bedrock", *_bedrock(output["message"]))
    message = value.get("message")
    if type(message) is dict and "content" in message:
        return ("cohere", *_cohere_v2(message))
    if type(value.get("text")) is str and ("generation_id" in value or "documents" in value):
        return ("cohere", *_cohere_v1(value))
    return None


def document_position(citation: ProviderCitation, ids: Sequence[str], count: int) -> int | None:
    """Where a citation's document stands among the ``count`` passages retrieved (``ids``: their ids),
    None when it is not among them."""
    document = citation.document
    if type(document) is int:
        return document if 0 <= document < count else None
    if type(document) is not str:
        return None
    if document in ids:
        return ids.index(document)
    if citation.provider == "cohere":
        own = _COHERE_OWN_ID.fullmatch(document)
        if own is not None and int(own.group(1)) < count:
            return int(own.group(1))
    return None


def cited_ids(response: ProviderResponse, ids: Sequence[str]) -> list[str]:
    """The ids the citations cite, once each in order: an index as the retrieved id at it (left out past
    the retrieved list: it names no id), an id as given."""
    out: dict[str, None] = {}
    for citation in response.citations:
        position = document_position(citation, ids, len(ids))
        if position is not None:
            out[ids[position]] = None
        elif type(citation.document) is str:
            out[citation.document] = None
    return list(out)


# --- the providers ---------------------------------------------------------------------------------

def _dicts(value: object) -> list[dict[str, object]]:
    """The objects of a list (anything else reads as none)."""
    return [v for v in value if type(v) is dict] if type(value) is list else []


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def _str(value: object) -> str | None:
    return value if type(value) is str else None


def _location(unit: str, start: object, end: object) -> Location | None:
    return Location(unit, start, end) if type(start) is int and type(end) is int else None


_ANTHROPIC_KINDS: Final = {  # kind: (document key, unit, start key, end key)
    "char_location": ("document_index", "characters", "start_char_index", "end_char_index"),
    "page_location": ("document_index", "pages", "start_page_number", "end_page_number"),
    "content_block_location": ("document_index", "blocks", "start_block_index", "end_block_index"),
    "search_result_location": ("search_result_index", "blocks", "start_block_index", "end_block_index"),
}


def _anthropic(message: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    texts: list[str] = []
    out = []
    at = 0
    for block in _dicts(message.get("content")):
        text = block.get("text")
        if block.get("type") != "text" or type(text) is not str:
            continue
        span = (at, at + len(text))
        texts.append(text)
        at = span[1]
        for c in _dicts(block.get("citations")):
            kind = _str(c.get("type")) or ""
            document: int | str | None
            if kind in _ANTHROPIC_KINDS:
                key, unit, start, end = _ANTHROPIC_KINDS[kind]
                document, location = _int(c.get(key)), _location(unit, c.get(start), c.get(end))
            elif kind == "web_search_result_location":
                document, location = _str(c.get("url")), None
            else:
                continue
            out.append(ProviderCitation("anthropic", kind, document, _str(c.get("cited_text")), location, None, span,
                                        None))
    return "".join(texts), tuple(out)


def _openai_annotations(base: int, annotations: list[dict[str, object]]) -> list[ProviderCitation]:
    """The citations among an OpenAI text's annotations (``base``: where the text starts in the answer)."""
    out = []
    for a in annotations:
        kind = _str(a.get("type")) or ""
        nested = a.get("url_citation")
        if kind == "url_citation" and type(nested) is dict:  # Chat Completions nests it
            a = nested
        if kind in ("url_citation", "container_file_citation"):
            document = _str(a.get("url") if kind == "url_citation" else a.get("file_id"))
            given = _location("characters", a.get("start_index"), a.get("end_index"))
            span = (base + given.start, base + given.end) if given is not None else None
        elif kind == "file_citation":
            document, given, span = _str(a.get("file_id")), None, None
        else:
            continue
        out.append(ProviderCitation("openai", kind, document, None, None, None, span, given))
    return out


def _openai_responses(response: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    texts: list[str] = []
    out: list[ProviderCitation] = []
    at = 0
    for item in _dicts(response.get("output")):
        if item.get("type") != "message":
            continue
        for part in _dicts(item.get("content")):
            text = part.get("text")
            if part.get("type") == "output_text" and type(text) is str:
                out += _openai_annotations(at, _dicts(part.get("annotations")))
                texts.append(text)
                at += len(text)
    return "".join(texts), tuple(out)


def _openai_chat(completion: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    choices = _dicts(completion.get("choices"))
    message = choices[0].get("message") if choices else None
    if type(message) is not dict or type(message.get("content")) is not str:
        return "", ()
    text = message["content"]
    return text, tuple(_openai_annotations(0, _dicts(message.get("annotations"))))


def _field(value: dict[str, object], name: str) -> object:
    """A Gemini field by its snake-case name (``model_dump()``) or its camel-case one (the REST JSON)."""
    if name in value:
        return value[name]
    head, *rest = name.split("_")
    return value.get(head + "".join(word.title() for word in rest))


def _gemini(response: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    candidates = _dicts(response.get("candidates"))
    if not candidates:
        return "", ()
    candidate = candidates[0]
    content = _field(candidate, "content")
    parts = _dicts(content.get("parts")) if type(content) is dict else []
    texts: list[str] = []
    starts: dict[int, int] = {}  # part index: where its text starts in the answer (text parts, not thoughts)
    at = 0
    for index, part in enumerate(parts):
        text = part.get("text")
        if type(text) is str and part.get("thought") is not True:
            starts[index] = at
            texts.append(text)
            at += len(text)
    metadata = _field(candidate, "grounding_metadata")
    if type(metadata) is not dict:
        return "".join(texts), ()
    chunks = _dicts(_field(metadata, "grounding_chunks"))
    out = []
    for support in _dicts(_field(metadata, "grounding_supports")):
        found = _field(support, "segment")
        segment = found if type(found) is dict else {}
        part_index = _int(_field(segment, "part_index")) or 0
        given = _location("bytes", _int(_field(segment, "start_index")) or 0, _field(segment, "end_index"))
        span = None
        if given is not None:
            text = parts[part_index].get("text") if part_index in starts else None
            span = _characters(text, given, starts.get(part_index, 0)) if type(text) is str else NOT_PLACED
        indices = _field(support, "grounding_chunk_indices")
        for j in indices if type(indices) is list else ():
            if type(j) is not int:
                continue
            chunk = chunks[j] if 0 <= j < len(chunks) else {}
            context = _field(chunk, "retrieved_context")
            cited = _str(context.get("text")) if type(context) is dict else None
            out.append(ProviderCitation("gemini", "grounding_support", j, cited, None, _str(segment.get("text")),
                                        span, given))
    return "".join(texts), tuple(out)


def _characters(text: str, given: Location, base: int) -> tuple[int, int]:
    """UTF-8 byte offsets of a text as characters of the answer (NOT_PLACED: off the text or inside a character)."""
    encoded = text.encode()
    if not 0 <= given.start <= given.end <= len(encoded):
        return NOT_PLACED
    try:
        start = len(encoded[:given.start].decode())
        end = start + len(encoded[given.start:given.end].decode())
    except UnicodeDecodeError:
        return NOT_PLACED
    return base + start, base + end


def _cohere(texts: list[str], starts: dict[int, int], citations: list[dict[str, object]], v1: bool
            ) -> tuple[str, tuple[ProviderCitation, ...]]:
    out = []
    for c in citations:
        if c.get("type") not in (None, "TEXT_CONTENT"):
            continue  # a citation of the model's plan or thinking, not of its answer
        given = _location("characters", c.get("start"), c.get("end"))
        block = _int(c.get("content_index")) or 0
        span = None
        if given is not None:
            span = (starts[block] + given.start, starts[block] + given.end) if block in starts else NOT_PLACED
        named = c.get("document_ids") if v1 else [s.get("id") for s in _dicts(c.get("sources"))]
        documents = [d for d in named if type(d) is str] if type(named) is list else []
        out += [ProviderCitation("cohere", "citation", d, None, None, _str(c.get("text")), span, given)
                for d in documents]
    return "".join(texts), tuple(out)


def _cohere_v2(message: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    texts: list[str] = []
    starts: dict[int, int] = {}
    at = 0
    for index, item in enumerate(_dicts(message.get("content"))):
        text = item.get("text")
        if item.get("type") == "text" and type(text) is str:
            starts[index] = at
            texts.append(text)
            at += len(text)
    return _cohere(texts, starts, _dicts(message.get("citations")), v1=False)


def _cohere_v1(response: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    text = response["text"]
    assert type(text) is str  # read_response checked it
    return _cohere([text], {0: 0}, _dicts(response.get("citations")), v1=True)


_BEDROCK_KINDS: Final = {"documentChar": "characters", "documentPage": "pages", "documentChunk": "chunks",
                         "searchResultLocation": "blocks"}


def _bedrock(message: dict[str, object]) -> tuple[str, tuple[ProviderCitation, ...]]:
    texts: list[str] = []
    out = []
    at = 0
    for block in _dicts(message.get("content")):
        plain = block.get("text")
        if type(plain) is str:
            texts.append(plain)
            at += len(plain)
            continue
        cited_block = block.get("citationsContent")
        if type(cited_block) is not dict:
            continue
        text = "".join(t for g in _dicts(cited_block.get("content")) if type(t := g.get("text")) is str)
        span = (at, at + len(text))
        texts.append(text)
        at = span[1]
        for c in _dicts(cited_block.get("citations")):
            sources = [t for s in _dicts(c.get("sourceContent")) if type(t := s.get("text")) is str]
            location = c.get("location")
            location = location if type(location) is dict else {}
            document: int | str | None = None
            where = None
            kind = next((k for k in location if type(location[k]) is dict), "")
            if kind in _BEDROCK_KINDS:
                place = location[kind]
                assert type(place) is dict
                document = _int(place.get("searchResultIndex" if kind == "searchResultLocation" else "documentIndex"))
                where = _location(_BEDROCK_KINDS[kind], place.get("start"), place.get("end"))
            elif kind == "web":
                web = location[kind]
                assert type(web) is dict
                document = _str(web.get("url"))
            else:
                continue
            out.append(ProviderCitation("bedrock", kind, document, "".join(sources) if sources else None, where, None,
                                        span, None))
    return "".join(texts), tuple(out)
