"""CoNLL files (IOB2, IOBES/BIOES, IOE2, BILOU tags) as the ner stage's records.

A CoNLL file holds one token per line, its tag in a column (default the last, the token in the
first), sentences separated by blank lines, and ``-DOCSTART-`` lines between documents. Each
sentence becomes a record ``{"id", "text", "entities"}``: its tokens joined by single spaces, and
the entities decoded from its tags with character offsets into that text.

Entities are decoded as seqeval's strict mode decodes them (a test checks it on random tag
sequences). The invalid-sequence rule, in IOB2 terms: an entity starts only at a ``B-`` tag and
runs over the ``I-`` tags of the same type that follow; an ``I-`` tag with no ``B-`` of its type
before it starts nothing and is no entity (lenient decoders would start one there). In IOBES, an
entity must also end properly: ``S-X``, or ``B-X`` ... ``E-X``; ``B-X I-X`` followed by anything
but ``E-X`` is no entity.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.input_file import BOM, InputFile, decode_text
from ragscore.stages.records import Sourced

ANY: Final = "*"
SAME, DIFF = "same", "diff"

# Per scheme: allowed prefixes, and (previous prefix, prefix, tag condition) patterns that start
# an entity, continue one, and end one (checked on the token after it and its predecessor).
_Pattern = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Scheme:
    name: str
    prefixes: str
    start: frozenset[_Pattern]
    inside: frozenset[_Pattern]
    end: frozenset[_Pattern]


SCHEMES: Final = {
    "IOB2": Scheme("IOB2", "IOB", frozenset({(ANY, "B", ANY)}),
                   frozenset({("B", "I", SAME), ("I", "I", SAME)}),
                   frozenset({("I", "O", ANY), ("I", "I", DIFF), ("I", "B", ANY), ("B", "O", ANY), ("B", "I", DIFF),
                              ("B", "B", ANY)})),
    "IOE2": Scheme("IOE2", "IOE", frozenset({("O", "I", ANY), ("O", "E", ANY), ("E", "I", ANY), ("E", "E", ANY),
                                             ("I", "I", DIFF), ("I", "E", DIFF)}),
                   frozenset({("I", "E", SAME), ("I", "I", SAME)}), frozenset({("E", ANY, ANY)})),
    "IOBES": Scheme("IOBES", "IOBES", frozenset({(ANY, "B", ANY), (ANY, "S", ANY)}),
                    frozenset({("B", "I", SAME), ("B", "E", SAME), ("I", "I", SAME), ("I", "E", SAME)}),
                    frozenset({("S", ANY, ANY), ("E", ANY, ANY)})),
    "BILOU": Scheme("BILOU", "BILOU", frozenset({(ANY, "B", ANY), (ANY, "U", ANY)}),
                    frozenset({("B", "I", SAME), ("B", "L", SAME), ("I", "I", SAME), ("I", "L", SAME)}),
                    frozenset({("U", ANY, ANY), ("L", ANY, ANY)})),
}
SCHEMES["BIOES"] = SCHEMES["IOBES"]
SCHEMES["IOB"] = SCHEMES["IOB2"]


def _split(tag: str) -> tuple[str, str]:
    """A tag's prefix and type, as seqeval reads them ("B-PER" -> B, PER; "O" -> O, _)."""
    return tag[:1], tag[1:].strip("-") or "_"


def _matches(patterns: frozenset[_Pattern], prev: tuple[str, str], token: tuple[str, str]) -> bool:
    for prev_prefix, prefix, condition in patterns:
        if prev_prefix not in (ANY, prev[0]) or prefix not in (ANY, token[0]):
            continue
        if condition == ANY or (condition == SAME) == (prev[1] == token[1]):
            return True
    return False


def decode(tags: list[str], scheme: Scheme) -> list[tuple[str, int, int]]:
    """Return the (type, first token, end token exclusive) entities of one sentence's tags."""
    outside = ("O", "_")
    tokens = [_split(tag) for tag in tags] + [outside]  # an outside token ends the last entity
    entities = []
    prev = outside
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _matches(scheme.start, prev, token):
            end, last = i + 1, token
            while end < len(tokens) and _matches(scheme.inside, last, tokens[end]):
                last = tokens[end]
                end += 1
            if _matches(scheme.end, tokens[end - 1], tokens[end]):
                entities.append((token[1], i, end))
            i = end
        else:
            i += 1
        prev = tokens[i - 1]
    return entities


@dataclass(slots=True)
class Sentence:
    line: int                 # the line of its first token
    tokens: list[str]
    tags: list[str]
    tag_lines: list[int]


def sentences(file: InputFile, token_column: int = 0, tag_column: int = -1) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL file (``-DOCSTART-`` lines and blank lines separate them)."""
    current: Sentence | None = None
    for number, raw in enumerate(file.raw_lines(), 1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        fields = decode_text(raw, file.name, number).split()
        if not fields or fields[0] == "-DOCSTART-":
            if current is not None:
                yield current
                current = None
            continue
        try:
            token, tag = fields[token_column], fields[tag_column]
        except IndexError:
            raise InputError(file.name, f"expected a token and a tag (columns {token_column + 1} and "
                                        f"{tag_column if tag_column < 0 else tag_column + 1}), got {len(fields)} "
                                        "column(s)", number) from None
        if current is None:
            current = Sentence(number, [], [], [])
        current.tokens.append(token)
        current.tags.append(tag)
        current.tag_lines.append(number)
    if current is not None:
        yield current


def records(spec: str, scheme: str = "IOB2", token_column: int = 0, tag_column: int = -1) -> list[Sourced]:
    """Read a CoNLL file as ner records: id (the sentence's number), text and entities (character offsets)."""
    file = InputFile(spec)
    chosen = SCHEMES[scheme.upper()]
    out: list[Sourced] = []
    for n, sentence in enumerate(sentences(file, token_column, tag_column), 1):
        # Once per sentence: no strict= keyword (it costs every call); tag_lines has one line per tag.
        for tag, line in zip(sentence.tags, sentence.tag_lines):  # noqa: B905
            if tag[:1] not in chosen.prefixes:
                raise InputError(file.name, f"tag {tag!r} is not a {chosen.name} tag (prefixes: "
                                            f"{', '.join(chosen.prefixes)})", line)
        starts, offset = [], 0
        for token in sentence.tokens:
            starts.append(offset)
            offset += len(token) + 1
        entities = [{"start": starts[first], "end": starts[end - 1] + len(sentence.tokens[end - 1]), "type": kind}
                    for kind, first, end in decode(sentence.tags, chosen)]
        out.append(Sourced({"id": str(n), "text": " ".join(sentence.tokens), "entities": entities}, file.name,
                           sentence.line))
    return out
