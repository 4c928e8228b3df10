"""CoNLL files (IOB1, IOB2, IOBES/BIOES, IOE2, BILOU tags) as the ner stage's records.

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

IOB1 is CoNLL-2003's own tagging: an ``I-X`` tag starts an entity unless it follows ``B-X`` or
``I-X``, and ``B-X`` appears only to start an entity right after another of type X. Decoded as
seqeval's default mode (conlleval's rule) decodes it: every ``B-X`` starts an entity, and an
``I-X`` after anything but ``B-X`` or ``I-X`` starts one too. On tags valid in IOB2 the two
readings give the same entities; they differ only on an ``I-X`` that follows neither, which
IOB2 reads as no entity.

``scheme="auto"`` (the default) tells the scheme from the file's tags (see ``detect``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ragscore.errors import InputError, UsageError
from ragscore.loaders.input_file import BOM, InputFile, decode_text
from ragscore.quoting import quote
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
# IOB1 as conlleval and seqeval's default mode read it: B- always starts an entity, I- starts one
# after anything but its own type's B- or I-; an entity runs over the I- tags of its type.
SCHEMES["IOB1"] = Scheme("IOB1", "IOB",
                         frozenset({(ANY, "B", ANY), ("O", "I", ANY), ("I", "I", DIFF), ("B", "I", DIFF)}),
                         frozenset({("B", "I", SAME), ("I", "I", SAME)}),
                         frozenset({("B", "O", ANY), ("B", "B", ANY), ("B", "I", DIFF), ("I", "O", ANY),
                                    ("I", "B", ANY), ("I", "I", DIFF)}))
SCHEMES["BIOES"] = SCHEMES["IOBES"]
# The --scheme choices, and the scheme each names; a format that names a scheme fixes it.
SCHEME_CHOICES: Final = ("auto", "iob1", "iob2", "iobes", "bilou")
FORMAT_SCHEMES: Final = {"conll": "auto", "iob2": "iob2", "iobes": "iobes", "bioes": "iobes"}
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


def _starts(tags: list[str], lines: list[int], prefix: str) -> Iterator[tuple[int, str, str]]:
    """Yield (line, tag, previous tag or "" at the sentence's start) for each ``prefix`` tag that follows
    no tag of its own type's entity (neither ``B-X`` nor ``I-X`` for a tag of type X)."""
    prev = ("O", "_")
    for n, tag in enumerate(tags):
        token = _split(tag)
        if token[0] == prefix and not (prev[0] in ("B", "I") and prev[1] == token[1]):
            yield lines[n], tag, tags[n - 1] if n else ""
        prev = token


def detect(name: str, found: list[Sentence], notes: list[str] | None = None) -> str:
    """Tell a file's scheme from its tags, adding a note to ``notes`` where IOB1 and IOB2 would read it apart.

    - ``E-``/``S-`` tags: IOBES; ``L-``/``U-`` tags: BILOU (both at once is an error);
    - else, B-, I- and O tags: IOB1 when an ``I-X`` tag follows neither ``B-X`` nor ``I-X`` (it
      starts an entity in IOB1, which nothing in IOB2 writes) and no ``B-X`` tag follows anything
      but ``B-X`` or ``I-X`` (which IOB1 never writes); IOB2 otherwise. A file with both is IOB2
      with invalid sequences (a model's predictions): its stray ``I-`` tags start no entity, and a
      note counts them. On tags valid in IOB2, IOB1 and IOB2 give the same entities.
    """
    first: dict[str, tuple[int, str]] = {}
    for sentence in found:
        for tag, line in zip(sentence.tags, sentence.tag_lines):  # noqa: B905 (one line per tag)
            first.setdefault(tag[:1], (line, tag))
    for prefix, (line, tag) in sorted(first.items(), key=lambda item: item[1][0]):
        if prefix not in "BIOESLU":
            raise InputError(name, f"tag {quote(tag)} is not a CoNLL tag (prefixes: B, I, O, E, S, L, U)", line)
    iobes, bilou = [first[p] for p in "ES" if p in first], [first[p] for p in "LU" if p in first]
    if iobes and bilou:
        line, tag = max(min(iobes), min(bilou))
        other_line, other = min(bilou) if min(iobes)[0] == line else min(iobes)
        raise InputError(name, f"tag {quote(tag)} mixes BILOU and IOBES tags ({quote(other)} at line {other_line}): "
                               "choose one with --scheme", line)
    if iobes:
        if "B" not in first and "S" not in first:
            line, tag = first["E"]
            raise InputError(name, f"tag {quote(tag)}: E- tags without B- or S- tags are IOE tags, which ragscore "
                                   "does not read (it reads IOB1, IOB2, IOBES and BILOU)", line)
        return "IOBES"
    if bilou:
        return "BILOU"
    strays = [start for sentence in found for start in _starts(sentence.tags, sentence.tag_lines, "I")]
    if not strays:
        return "IOB2"
    begins = next((start for sentence in found for start in _starts(sentence.tags, sentence.tag_lines, "B")), None)
    line, tag, prev = strays[0]
    after = f"after {quote(prev)}" if prev else "at the start of its sentence"
    if begins is None:
        if notes is not None:
            notes.append(f"{name}: tags read as IOB1, CoNLL-2003's (an I- tag starts an entity unless it follows "
                         f"its own type: {quote(tag)} {after} at line {line}); --scheme iob2 reads such a tag as "
                         "no entity")
        return "IOB1"
    if notes is not None:
        count = "1 I- tag starts" if len(strays) == 1 else f"{len(strays)} I- tags start"
        notes.append(f"{name}: tags read as IOB2 (a B- tag starts an entity after O or another type, as at line "
                     f"{begins[0]}); {count} no entity, following neither B- nor I- of the same type (the first: "
                     f"{quote(tag)} {after} at line {line}); --scheme iob1 reads them as entities")
    return "IOB2"


def read(spec: str, input_format: str = "conll", scheme: str = "auto", notes: list[str] | None = None,
         token_column: int = 0, tag_column: int = -1) -> tuple[list[Sourced], str]:
    """Read a CoNLL file as ner records, and the scheme it was read in (lower case, as ``--scheme`` names it).

    ``input_format`` (conll, iob2, iobes, bioes) may name the scheme; ``scheme`` (auto, iob1, iob2,
    iobes, bilou) chooses it, and must agree with a format that names one. ``auto`` tells it from
    the tags (``detect``), adding a note to ``notes`` where the tags could be read otherwise.
    """
    if scheme not in SCHEME_CHOICES:
        raise UsageError(f"scheme: expected one of {', '.join(SCHEME_CHOICES)}, got {scheme!r}")
    named = FORMAT_SCHEMES[input_format]
    if named != "auto" and scheme not in ("auto", named):
        raise UsageError(f"--scheme {scheme} contradicts --input-format {input_format} (which reads {named.upper()} "
                         "tags): give one of them")
    chosen = scheme if scheme != "auto" else named
    file = InputFile(spec)
    found = list(sentences(file, token_column, tag_column))
    name = chosen.upper() if chosen != "auto" else detect(file.name, found, notes)
    return _records(file.name, found, SCHEMES[name]), name.lower()


def records(spec: str, scheme: str = "IOB2", token_column: int = 0, tag_column: int = -1) -> list[Sourced]:
    """Read a CoNLL file as ner records in ``scheme`` (IOB1, IOB2, IOBES, BILOU, or auto)."""
    if scheme.lower() == "auto":
        return read(spec, token_column=token_column, tag_column=tag_column)[0]
    file = InputFile(spec)
    return _records(file.name, sentences(file, token_column, tag_column), SCHEMES[scheme.upper()])


def _records(name: str, found: Iterable[Sentence], chosen: Scheme) -> list[Sourced]:
    """Decode each sentence's tags as ner records: id (the sentence's number), text and entities (character offsets)."""
    out: list[Sourced] = []
    for n, sentence in enumerate(found, 1):
        # Once per sentence: no strict= keyword (it costs every call); tag_lines has one line per tag.
        for tag, line in zip(sentence.tags, sentence.tag_lines):  # noqa: B905
            if tag[:1] not in chosen.prefixes:
                raise InputError(name, f"tag {tag!r} is not a {chosen.name} tag (prefixes: "
                                       f"{', '.join(chosen.prefixes)})", line)
        starts, offset = [], 0
        for token in sentence.tokens:
            starts.append(offset)
            offset += len(token) + 1
        entities = [{"start": starts[first], "end": starts[end - 1] + len(sentence.tokens[end - 1]), "type": kind}
                    for kind, first, end in decode(sentence.tags, chosen)]
        out.append(Sourced({"id": str(n), "text": " ".join(sentence.tokens), "entities": entities}, name,
                           sentence.line))
    return out
