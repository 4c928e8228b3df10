"""The "unicode" tokenizer: words of letters and digits in every script, CJK one token per character.

The reference tokenizers were written for English: rouge-score keeps only ``[a-z0-9]``
(so "café" becomes "caf" and "東京" no token at all) and SQuAD only strips ASCII
punctuation (so "“Paris”" keeps its quotes and "東京都" is one word). This tokenizer
is the opt-in alternative:

* the text is put in Unicode NFC and case-folded ("Straße" -> "strasse", "İ" -> "i̇");
* a token is a run of letters and digits of any script (``str.isalnum``), with the
  combining marks that follow a letter kept inside the word (Devanagari vowel signs,
  the dot of a case-folded "İ"); everything else, "_" included, separates tokens;
* Han ideographs, kana and hangul are one token per character, since those scripts
  do not put spaces between words.

On ASCII text it gives exactly rouge-score's tokens.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["TOKENIZERS", "check_tokenizer", "unicode_tokens"]

_ASCII_WORD_RE: Final = re.compile(r"[a-z0-9]+")

# A run of letters/digits (``[^\W_]`` is ``\w`` less the underscore), or a run of
# characters that are neither word characters nor white space: punctuation, symbols
# and combining marks, which Python's ``\w`` does not include.
_PIECE_RE: Final = re.compile(r"(?P<word>[^\W_]+)|[^\w\s]+")

# Scripts written without spaces between words: hangul jamo, CJK iteration/number marks,
# kana (less the combining voicing marks U+3099-309C), bopomofo, hangul compatibility
# jamo, CJK ideographs (unified, extension A, compatibility, and the supplementary
# planes 2 and 3), hangul syllables, half-width katakana and hangul.
_CJK: Final = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3038-\u303c\u3040-\u3098\u309d-\u30ff"
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f\uffa0-\uffdc"
    "\U00020000-\U0003ffff"
)
_HAS_CJK_RE: Final = re.compile(f"[{_CJK}]")
# Inside a token every non-word character is a combining mark: it stays with the
# character before it.
_CJK_SPLIT_RE: Final = re.compile(f"[{_CJK}][^\\w{_CJK}]*|[^{_CJK}]+")


def _fold(text: str) -> str:
    """Put ``text`` in NFC and case-fold it (NFC again, as folding can decompose)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def _leading_marks(piece: str) -> int:
    """Count the combining marks (categories Mn, Mc, Me) at the start of ``piece``."""
    count = 0
    for ch in piece:
        if unicodedata.category(ch)[0] != "M":
            break
        count += 1
    return count


def unicode_tokens(text: str) -> list[str]:
    """Split ``text`` into case-folded words of any script, CJK characters one per token."""
    folded = _fold(text)
    if folded.isascii():
        return _ASCII_WORD_RE.findall(folded)  # the common case, and rouge-score's answer
    tokens: list[str] = []
    open_end = -1  # where the last token ends, while a mark or letter right there may extend it
    for match in _PIECE_RE.finditer(folded):
        piece = match.group()
        if match.lastgroup == "word":
            if match.start() == open_end:
                tokens[-1] += piece  # letters after a glued mark: same word
            else:
                tokens.append(piece)
            open_end = match.end()
        elif match.start() == open_end:
            marks = _leading_marks(piece)
            if marks:
                tokens[-1] += piece[:marks]
            open_end = match.end() if marks == len(piece) else -1
        else:
            open_end = -1
    if not _HAS_CJK_RE.search(folded):
        return tokens
    split: list[str] = []
    for token in tokens:
        if _HAS_CJK_RE.search(token):
            split.extend(_CJK_SPLIT_RE.findall(token))
        else:
            split.append(token)
    return split


TOKENIZERS: Final = ("reference", "unicode")


def check_tokenizer(tokenizer: str) -> None:
    """Raise ``ValueError`` unless ``tokenizer`` names a known tokenizer."""
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r}: expected one of {', '.join(TOKENIZERS)}")
