"""The Porter stemmer as NLTK's ``PorterStemmer()`` runs it (NLTK_EXTENSIONS mode), for ROUGE.

Written from Porter (1980), "An algorithm for suffix stripping", plus the departures
NLTK documents for its default mode: a table of irregular forms, words of one or two
letters left alone, ``-ies``/``-ied`` on four-letter words, ``y -> i`` only after a
consonant, the ``-alli``, ``-bli``, ``-fulli`` and ``-logi`` rules of Step 2, and
``*o`` also true for a two-letter vowel-consonant stem.

A rule list is applied the way the paper reads: the *first* rule whose suffix matches
decides, and if its condition fails the word is returned unchanged (later rules with a
shorter matching suffix are not tried).
"""

from __future__ import annotations

from typing import Final

__all__ = ["stem"]

_VOWELS: Final = frozenset("aeiou")

# NLTK_EXTENSIONS looks these up before any rule runs.
_IRREGULAR: Final[dict[str, str]] = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}

# Condition codes of the suffix tables below.
_M_GT_0: Final = 0  # (m>0) on the stem left after the suffix
_M_GT_1: Final = 1  # (m>1)
_LOGI: Final = 2  # NLTK: (m>0) measured on the word less its last three letters
_ION: Final = 3  # (m>1 and (*S or *T))

_STEP2: Final[tuple[tuple[str, str, int], ...]] = (
    ("ational", "ate", _M_GT_0),
    ("tional", "tion", _M_GT_0),
    ("enci", "ence", _M_GT_0),
    ("anci", "ance", _M_GT_0),
    ("izer", "ize", _M_GT_0),
    ("bli", "ble", _M_GT_0),  # Porter's later correction of ABLI -> ABLE
    ("alli", "al", _M_GT_0),
    ("entli", "ent", _M_GT_0),
    ("eli", "e", _M_GT_0),
    ("ousli", "ous", _M_GT_0),
    ("ization", "ize", _M_GT_0),
    ("ation", "ate", _M_GT_0),
    ("ator", "ate", _M_GT_0),
    ("alism", "al", _M_GT_0),
    ("iveness", "ive", _M_GT_0),
    ("fulness", "ful", _M_GT_0),
    ("ousness", "ous", _M_GT_0),
    ("aliti", "al", _M_GT_0),
    ("iviti", "ive", _M_GT_0),
    ("biliti", "ble", _M_GT_0),
    ("fulli", "ful", _M_GT_0),
    ("logi", "log", _LOGI),
)

_STEP3: Final[tuple[tuple[str, str, int], ...]] = (
    ("icate", "ic", _M_GT_0),
    ("ative", "", _M_GT_0),
    ("alize", "al", _M_GT_0),
    ("iciti", "ic", _M_GT_0),
    ("ical", "ic", _M_GT_0),
    ("ful", "", _M_GT_0),
    ("ness", "", _M_GT_0),
)

_STEP4: Final[tuple[tuple[str, str, int], ...]] = (
    ("al", "", _M_GT_1),
    ("ance", "", _M_GT_1),
    ("ence", "", _M_GT_1),
    ("er", "", _M_GT_1),
    ("ic", "", _M_GT_1),
    ("able", "", _M_GT_1),
    ("ible", "", _M_GT_1),
    ("ant", "", _M_GT_1),
    ("ement", "", _M_GT_1),
    ("ment", "", _M_GT_1),
    ("ent", "", _M_GT_1),
    ("ion", "", _ION),
    ("ou", "", _M_GT_1),
    ("ism", "", _M_GT_1),
    ("ate", "", _M_GT_1),
    ("iti", "", _M_GT_1),
    ("ous", "", _M_GT_1),
    ("ive", "", _M_GT_1),
    ("ize", "", _M_GT_1),
)


def _consonants(word: str) -> list[bool]:
    """Mark each letter of ``word`` as consonant (True) or vowel, in one pass."""
    flags: list[bool] = []
    previous = False
    for ch in word:
        if ch in _VOWELS:
            current = False
        elif ch == "y":
            # 'y' is a vowel after a consonant and a consonant at the start or after a vowel.
            current = not previous if flags else True
        else:
            current = True  # anything else, digits included, counts as a consonant
        flags.append(current)
        previous = current
    return flags


def _measure(stem: str) -> int:
    """Count the VC sequences of ``stem`` (Porter's m in [C](VC){m}[V])."""
    count = 0
    previous_vowel = False
    for consonant in _consonants(stem):
        if consonant and previous_vowel:
            count += 1
        previous_vowel = not consonant
    return count


def _has_vowel(stem: str) -> bool:
    """Tell whether ``stem`` contains a vowel (Porter's *v*)."""
    return not all(_consonants(stem))


def _ends_double_consonant(word: str) -> bool:
    """Tell whether ``word`` ends in a doubled consonant (Porter's *d)."""
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _ends_cvc(word: str) -> bool:
    """Tell whether ``word`` ends consonant-vowel-consonant, last not w/x/y (*o, NLTK-extended)."""
    if len(word) >= 3:
        flags = _consonants(word)
        if flags[-3] and not flags[-2] and flags[-1] and word[-1] not in "wxy":
            return True
    if len(word) == 2:
        flags = _consonants(word)
        return not flags[0] and flags[1]
    return False


def _holds(condition: int, word: str, stem: str) -> bool:
    """Check a suffix table's condition for ``word`` whose stem is ``stem``."""
    if condition == _M_GT_0:
        return _measure(stem) > 0
    if condition == _M_GT_1:
        return _measure(stem) > 1
    if condition == _LOGI:
        return _measure(word[:-3]) > 0
    return _measure(stem) > 1 and stem[-1] in "st"  # _ION


def _apply_table(word: str, table: tuple[tuple[str, str, int], ...]) -> str:
    """Apply the first rule of ``table`` whose suffix ends ``word``; keep ``word`` if its condition fails."""
    for suffix, replacement, condition in table:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if _holds(condition, word, stem) else word
    return word


def _step1a(word: str) -> str:
    """Remove plural -s endings."""
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"  # NLTK: 'ties' -> 'tie', not 'ti'
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    """Remove -eed, -ed and -ing and tidy the stem they leave."""
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")  # NLTK extension
    if word.endswith("eed"):
        stem = word[:-3]
        return stem + "ee" if _measure(stem) > 0 else word
    if word.endswith("ed") and _has_vowel(word[:-2]):
        stem = word[:-2]
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        stem = word[:-3]
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem):
        # A doubled l, s or z stays; this also stops the (m=1 and *o) -> E rule below.
        return stem if stem[-1] in "lsz" else stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    """Turn a final y into i after a consonant (NLTK's stricter condition)."""
    if word.endswith("y"):
        stem = word[:-1]
        if len(stem) > 1 and _consonants(stem)[-1]:
            return stem + "i"
    return word


def _step2(word: str) -> str:
    """Map double suffixes to single ones (-ational -> -ate, ...)."""
    # NLTK tries -alli before the table and then runs Step 2 again on the result.
    if word.endswith("alli") and _measure(word[:-4]) > 0:
        return _step2(word[:-4] + "al")
    return _apply_table(word, _STEP2)


def _step5a(word: str) -> str:
    """Remove a final e where the measure allows."""
    if word.endswith("e"):
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _ends_cvc(stem)):
            return stem
    return word


def _step5b(word: str) -> str:
    """Undouble a final ll when the measure exceeds one."""
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        return word[:-1]
    return word


def stem(word: str) -> str:
    """Stem ``word`` exactly as NLTK's default ``PorterStemmer().stem`` does (lower-casing it first)."""
    lowered = word.lower()
    irregular = _IRREGULAR.get(lowered)
    if irregular is not None:
        return irregular
    if len(word) <= 2:  # NLTK measures the word as given, before lower-casing
        return lowered
    result = _step1a(lowered)
    result = _step1b(result)
    result = _step1c(result)
    result = _step2(result)
    result = _apply_table(result, _STEP3)
    result = _apply_table(result, _STEP4)
    result = _step5a(result)
    return _step5b(result)
