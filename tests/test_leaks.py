"""Secrets and personal data in an answer (issue 34; metrics/leaks.py): each kind, the Luhn and IBAN
checks on published test numbers, and where a leak came from."""

from __future__ import annotations

import base64
import json
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA
from ragscore.metrics import leaks as leaks_module
from ragscore.metrics.leaks import ECHOED, FROM_CONTEXT, INVENTED, iban_valid, leaks, luhn, masked, placed

# Card numbers the networks publish for testing (Stripe's and PayPal's lists): each passes the Luhn
# check; changing the last digit makes it fail. Every length a card has: 13 (PayPal's Visa), 14 (Diners),
# 15 (Amex), 16, and 19 (Stripe's UnionPay); Mastercard's 2-series too.
CARDS = ["4111111111111111", "4242424242424242", "5555555555554444", "378282246310005", "6011111111111117",
         "3056930009020004", "3566002020360505", "4012888888881881", "5105105105105100", "371449635398431",
         "6011000990139424", "3530111333300000", "2223003122003222", "6200000000000005", "4222222222222",
         "30569309025904", "6205500000000000004"]
# IBANs from the registry's own examples (SWIFT's IBAN registry) and the ECBS list: the shortest (Norway, 15
# characters) and the longest (Saint Lucia, 32), letters in the account part (Italy, Malta, Brazil).
IBANS = ["GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606",
         "NL91ABNA0417164300", "CH9300762011623852957", "BE68539007547034", "NO9386011117947",
         "LC55HEMM000100010012001200023015", "MT84MALT011000012345MTLCAST001S", "IT60X0542811101000000123456",
         "AL47212110090000000235698741", "AT611904300234573201", "ES9121000418450200051332",
         "SA0380000000608010167519", "BR1800360305000010009795493C1"]


@pytest.mark.parametrize("number", CARDS)
def test_published_test_cards_pass_luhn_and_a_changed_digit_does_not(number):
    assert luhn(number)
    assert not luhn(number[:-1] + str((int(number[-1]) + 1) % 10))


@pytest.mark.parametrize("iban", IBANS)
def test_published_ibans_pass_and_a_changed_check_does_not(iban):
    assert iban_valid(iban) and iban_valid(" ".join(iban[i:i + 4] for i in range(0, len(iban), 4)))
    assert not iban_valid(iban[:2] + f"{(int(iban[2:4]) + 1) % 100:02d}" + iban[4:])


@pytest.mark.parametrize(("number", "kind"), [*((card, "card_number") for card in CARDS),
                                              *((iban, "iban") for iban in IBANS)])
def test_published_numbers_are_found_in_a_sentence_as_written_in_groups_of_four(number, kind):
    grouped = " ".join(number[i:i + 4] for i in range(0, len(number), 4))
    for text in (f"Pay with {number}.", f"Pay with {grouped}."):
        [found] = leaks(text)
        assert (found.kind, found.value.replace(" ", "")) == (kind, number)


@pytest.mark.parametrize(("text", "kind"), [
    ("key AKIAIOSFODNN7EXAMPLE here", "aws_access_key"),
    ("token ghp_" + "a" * 36, "github_token"),
    ("token github_pat_" + "A1b2_" * 10, "github_token"),
    ("use sk-ant-api03-" + "x" * 30, "anthropic_key"),
    ("use sk-proj-" + "Ab3" * 10, "openai_key"),
    ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("slack xoxb-1234567890-abcdefghij", "slack_token"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXgx", "jwt"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "private_key"),
    ("aws ABIAZZZZZZZZZZZZZZZZ and", "aws_access_key"),
    ("\u5bc6\u94a5AKIAIOSFODNN7EXAMPLE\u3002", "aws_access_key"),  # after Chinese text: no space needed
    ("hook https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXXXXXXXXXX", "slack_webhook"),
    ("token eyJ0eXAiOiJKV1QiLA0KImFsZyI6IkhTMjU2In0.eyJzdWIiOiIxMjM0In0 (unsigned)", "jwt"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0", "private_key"),
    ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBO", "private_key"),
    ("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAAi4", "private_key"),
    ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none", "private_key"),
    ("card 4111 1111 1111 1111 on file", "card_number"),
    ("pay to GB82 WEST 1234 5698 7654 32 today", "iban"),
    ("write to jane.doe@example.com", "email"),
    ("call +442071838750 now", "phone"),
])
def test_each_kind_is_found_with_its_offsets(text, kind):
    [found] = leaks(text)
    assert found.kind == kind and text[found.start:found.end] == found.value


def test_what_is_no_leak_is_not_found():
    # A card number that fails Luhn, an IBAN whose check fails, a short number, a plain "sk-" word.
    assert leaks("order 4111111111111112, ref GB83WEST12345698765432, call 2071838750, a sk-ill") == []
    # A sign-off, a Stripe key too short, a "JWT" whose header is no JSON, a key named in prose, a public key.
    assert leaks("xoxo-hugs-and-kisses-to-all, sk_live_4eC39HqLyjWDarjtT1zdp, "
                 "eyJhbasdGciOiJIUaddasdasfsasdasdzI1NiIasdsInR5cCI6IkpXVCasdJasd9.eyJzdWIiOiIxMjM0In0.c2ln, "
                 "look for BEGIN RSA PRIVATE KEY in the file, -----BEGIN PUBLIC KEY-----") == []


@pytest.mark.parametrize("key", [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500P==\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5v -----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500P...",  # no END line
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF0\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key\"\nP2/56wAAAi4AAAA3\n"
    "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
    "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key-20200101\nPublic-Lines: 1\n"
    "AAAAB3NzaC1yc2E\nPrivate-Lines: 1\nAAABAQCx\nPrivate-MAC: 8a4b",
])
def test_a_private_key_is_masked_whole_and_placed_by_its_text_whatever_its_line_breaks(key):
    claim = f"Here is the key:\n{key}\nUse it with care."
    assert masked(claim) == "Here is the key:\n[private_key]\nUse it with care."
    [found] = leaks(claim)
    assert placed(found, [f"key file: {key.replace(chr(10), chr(10) + '  ')}"], None) == FROM_CONTEXT
    assert placed(found, ["-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END RSA PRIVATE KEY-----"],
                  None) == INVENTED  # another key: the same first line is not enough


# Pieces of every kind's text, and characters around them: what the scans that skip a text or a kind must not skip.
PIECES = ["AKIA", "ASIA", "ABIA", "ACCA", "A3T", "ghp_", "github_pat_", "sk-", "sk-ant-", "sk_live_", "rk_live_",
          "xoxb-", "https://hooks.slack.com/services/T", "/B", "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0", "eyJ",
          "-----BEGIN ", "RSA ", "PRIVATE KEY", "-----", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
          "PuTTY-User-Key-File-2: ", "GB82", "WEST", "1234", "4111 ", "1111", "@", "+44", "example.com", "0", "9",
          "12-", "Z", "a", " ", "\n", "_", "-", ".", "="]


@given(st.lists(st.sampled_from(PIECES), max_size=25).map("".join))
@settings(max_examples=1000, deadline=None, derandomize=True)
def test_the_scans_that_skip_a_text_or_a_kind_never_skip_a_leak(text):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(leaks_module, "_maybe", lambda text: True)
        patch.setattr(leaks_module, "_NEEDS", {})
        unfiltered = leaks(text)
    assert leaks(text) == unfiltered


# The one expression the scan for a possible leak was before it was split into searches in C (the same texts).
ONE_SCAN = re.compile(
    r"[-@+_/xAJ0-9](?:"
    r"(?<=[0-9])(?=(?:[ -]?[0-9]){11}|(?<=[A-Z]{2}[0-9])[0-9])"
    r"|(?<=A)(?=KIA|SIA|BIA|CCA|3T)|(?<=eyJ)"
    r"|(?<=-)(?:(?<=sk-)|(?=----BEGIN |--- BEGIN SSH2 )|(?<=PuTTY-)(?=User-Key-File-))"
    r"|(?<=_)(?:(?<=gh[pousr]_)|(?<=github_)(?=pat_)|(?<=[rs]k_)(?=live_))"
    r"|(?<=[@+])|(?<=x)(?=ox[abposr]-)|(?<=//)(?=hooks\.slack\.com/))")


@given(st.lists(st.sampled_from([*PIECES, "x", "ox", "oxb-", "s", "k-", "gh", "p_", "github", "_pat_", "r", "k_",
                                 "live_", "J", "ey", "/", "//", "hooks.slack.com/", "PuTTY", "-User-Key-File-",
                                 "--- BEGIN SSH2 ", "----BEGIN ", "KIA", "3T", "GB", "8"]), max_size=25).map("".join))
@settings(max_examples=2000, deadline=None, derandomize=True)
def test_the_scan_for_a_possible_leak_finds_what_one_expression_finds(text):
    assert leaks_module._maybe(text) is (ONE_SCAN.search(text) is not None)


def test_a_leak_is_placed_by_where_its_value_is():
    passages = ["Contact the owner at jane.doe@example.com.", "Card on file: 4111-1111-1111-1111."]
    question = "My address is bob@example.org, can you confirm it?"
    found = {leak.value: placed(leak, passages, question)
             for leak in leaks("Write to jane.doe@example.com or bob@example.org; card 4111 1111 1111 1111; "
                               "or mallory@example.net")}
    assert found == {"jane.doe@example.com": FROM_CONTEXT, "bob@example.org": ECHOED,
                     "4111 1111 1111 1111": FROM_CONTEXT, "mallory@example.net": INVENTED}


# --- Against detect-secrets (the test extra) -------------------------------------------------------------------
# Its plugins whose findings overlap ragscore's kinds, and those kinds. Its other plugins find what ragscore has
# no kind for (high-entropy strings, keywords, basic auth, other providers' keys), and ragscore's Anthropic keys,
# cards, IBANs, e-mail addresses and phone numbers have no detect-secrets plugin.
OVERLAP = {
    "AWSKeyDetector": ("detect_secrets.plugins.aws", {"aws_access_key"}),
    "GitHubTokenDetector": ("detect_secrets.plugins.github_token", {"github_token"}),
    "OpenAIDetector": ("detect_secrets.plugins.openai", {"openai_key"}),
    "StripeDetector": ("detect_secrets.plugins.stripe", {"stripe_key"}),
    "SlackDetector": ("detect_secrets.plugins.slack", {"slack_token", "slack_webhook"}),
    "JwtTokenDetector": ("detect_secrets.plugins.jwt", {"jwt"}),
    "PrivateKeyDetector": ("detect_secrets.plugins.private_key", {"private_key"}),
}
# Where the two deliberately differ, and why. Every disagreement, on detect-secrets' fixtures or on random
# strings, must be one of these; everywhere else both find the same values (as VALUE_RULES read them).
DIFFERENCES = {
    # detect-secrets finds, ragscore does not
    "word before": "detect-secrets' expressions have no boundary: it finds a key inside a longer word "
                   "(xAKIA..., _ghp_...); ragscore takes a value only where no ASCII letter, digit or _ stands "
                   "before it (Chinese or Japanese text may)",
    "runs on": "detect-secrets takes the first 20 (AWS), 36 (GitHub) or 24 (Stripe) characters of a longer run; "
               "ragscore takes none: a run longer than the key's shape is no key of that shape",
    "aws secret key": "detect-secrets also finds a 40-character AWS secret access key after a name such as "
                      "aws_access_key: it has no prefix, ragscore has no kind for it",
    "underscore in github token": "detect-secrets lets _ stand among a classic GitHub token's 36 characters; "
                                  "GitHub's are base62 (letters and digits)",
    "upper case slack": "detect-secrets reads Slack's prefixes and webhook URL in any case (XOXB-...); "
                        "Slack issues them in lower case",
    "no armour": "detect-secrets finds 'BEGIN RSA PRIVATE KEY' anywhere, a mention in prose too; "
                 "ragscore needs the armour line (-----BEGIN ... PRIVATE KEY-----)",
    "padding": "detect-secrets keeps = padding in a token's parts (and drops the token when its check then "
               "fails); a JWT's parts are unpadded base64url (RFC 7515): ragscore's value stops before an =",
    "anthropic": "detect-secrets' OpenAI expression also finds an sk-ant- key with OpenAI's marker in it; "
                 "ragscore calls every sk-ant- key anthropic_key",
    # ragscore finds, detect-secrets does not
    "sk- without openai's marker": "detect-secrets needs OpenAI's T3BlbkFJ marker between 20 and 20 letters "
                                   "and digits; ragscore takes any sk- key of 20 characters or more (OpenAI's "
                                   "newer shapes and the OpenAI-compatible providers' sk- keys)",
    "fine-grained github token": "detect-secrets has no expression for GitHub's fine-grained tokens (github_pat_)",
    "other private key armour": "detect-secrets lists eight key markers; ragscore takes every armour line "
                                "-----BEGIN ... PRIVATE KEY-----: PKCS#8 encrypted keys (BEGIN ENCRYPTED PRIVATE "
                                "KEY) and any other type, and PuTTY's version 3 files",
}
# Where both find a key, the value detect-secrets reports and the one ragscore does agree as this reads them.
VALUE_RULES = {
    # findall returns its expression's one group, the prefix, not the token
    "GitHubTokenDetector": lambda ds, rs: rs.startswith(ds + "_"),
    # its expression's last part is lazy: its value stops after the payload (and its dot), the signature left out
    "JwtTokenDetector": lambda ds, rs: ".".join(rs.split(".")[:2]) == ds.rstrip("."),
    # it reports the marker ("BEGIN RSA PRIVATE KEY"); ragscore the key, its armour to its END line
    "PrivateKeyDetector": lambda ds, rs: ds in rs.split("\n", 1)[0],
    # it stops 20 characters after the marker (OpenAI) or 24 after the prefix (Stripe); ragscore at the run's end
    "OpenAIDetector": lambda ds, rs: rs.startswith(ds),
    "StripeDetector": lambda ds, rs: rs.startswith(ds),
}
FIXTURES = json.loads((DATA / "leaks" / "detect_secrets.json").read_text(encoding="utf-8"))
# The fixtures on which the two differ, each with its reason in DIFFERENCES.
FIXTURE_DIFFERENCES = {
    ("AWSKeyDetector", 'aws_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'): "aws secret key",
    ("OpenAIDetector", "sk-proj-Xi8tdMjHV6pmbBbwilTeT4BlbkFJ3UDnpdEwNNm6wVBpYM0o"): "sk- without openai's marker",
}


def detect_secrets_finds(plugin: str, text: str) -> list[str]:
    """What detect-secrets' plugin finds in ``text``, line by line as it scans a file. analyze_string: no
    verification (analyze_line may ask the provider over the network)."""
    module, _ = OVERLAP[plugin]
    instance = getattr(pytest.importorskip(module), plugin)()
    return [value for line in text.splitlines() for value in instance.analyze_string(line)]


def difference(plugin: str, text: str) -> str | None:
    """Why detect-secrets' plugin and ragscore's kinds it overlaps differ on ``text`` (a key of DIFFERENCES),
    None when they agree, "unexplained" when no listed reason accounts for it."""
    ds = detect_secrets_finds(plugin, text)
    found = leaks(text)
    rs = [leak.value for leak in found if leak.kind in OVERLAP[plugin][1]]
    if ds and rs:
        same = len(ds) == len(rs) and all(VALUE_RULES.get(plugin, str.__eq__)(d, r) for d, r in zip(ds, rs, strict=True))
        if same:
            return None
        return "padding" if plugin == "JwtTokenDetector" and "=" in "".join(ds) else "unexplained"
    if not ds and not rs:
        return None
    if ds:
        value = ds[0]
        at = text.find(value)
        before, after = text[at - 1:at], text[at + len(value):at + len(value) + 1]
        word = re.compile(r"[A-Za-z0-9_]")
        if plugin == "AWSKeyDetector" and not re.match(r"A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA", value):
            return "aws secret key"
        if plugin == "PrivateKeyDetector":
            armoured = (f"-----{value}-----", f"---- {value} ----", f"{value}: ")
            return "unexplained" if any(armour in text for armour in armoured) else "no armour"
        if plugin == "JwtTokenDetector" and "=" in value:
            return "padding"
        if word.match(before):
            return "word before"
        if plugin == "GitHubTokenDetector" and re.search(r"\bgh[pousr]_\w{0,35}_", text):
            return "underscore in github token"
        if plugin in ("AWSKeyDetector", "GitHubTokenDetector", "StripeDetector") and word.match(after):
            return "runs on"
        if plugin == "SlackDetector" and not value.startswith(("xox", "https://hooks.slack.com/")):
            return "upper case slack"
        if plugin == "OpenAIDetector" and any(leak.kind == "anthropic_key" and value in text[leak.start:leak.end]
                                              for leak in found):
            return "anthropic"
        return "unexplained"
    value = rs[0]
    if plugin == "OpenAIDetector" and not re.search(r"[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", value):
        return "sk- without openai's marker"
    if plugin == "GitHubTokenDetector" and value.startswith("github_pat_"):
        return "fine-grained github token"
    if plugin == "JwtTokenDetector" and text[text.find(value) + len(value):].startswith("="):
        return "padding"
    if plugin == "PrivateKeyDetector" and not any(
            marker in value for marker in ("BEGIN DSA PRIVATE KEY", "BEGIN EC PRIVATE KEY", "BEGIN OPENSSH PRIVATE KEY",
                                           "BEGIN PGP PRIVATE KEY BLOCK", "BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY",
                                           "BEGIN SSH2 ENCRYPTED PRIVATE KEY", "PuTTY-User-Key-File-2")):
        return "other private key armour"
    return "unexplained"


@pytest.mark.parametrize("case", FIXTURES, ids=lambda case: case["source"])
def test_detect_secrets_own_fixtures_find_what_its_tests_expect(case):
    assert bool(detect_secrets_finds(case["plugin"], case["text"])) is case["flagged"]


@pytest.mark.parametrize("case", FIXTURES, ids=lambda case: case["source"])
def test_ragscore_agrees_with_detect_secrets_on_its_fixtures(case):
    assert difference(case["plugin"], case["text"]) == FIXTURE_DIFFERENCES.get((case["plugin"], case["text"]))


def test_every_listed_fixture_difference_is_a_fixture_and_a_reason():
    assert {(case["plugin"], case["text"]) for case in FIXTURES} >= set(FIXTURE_DIFFERENCES)
    assert set(FIXTURE_DIFFERENCES.values()) <= set(DIFFERENCES)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=6)


@st.composite
def jwt_like(draw: st.DrawFn) -> str:
    """A token: header and payload base64url JSON (a header has to start {" to start eyJ), a signature or not,
    now and then a character dropped, changed or added."""
    header = _b64(json.dumps({"alg": draw(st.sampled_from(["HS256", "RS256", "none"])),
                              **draw(st.dictionaries(st.text(ALNUM, min_size=1, max_size=4), JSON_VALUES, max_size=2))},
                             separators=(",", ":")).encode())
    payload = _b64(json.dumps(draw(JSON_VALUES), ensure_ascii=draw(st.booleans())).encode())
    token = f"{header}.{payload}" + draw(st.sampled_from(["", ".", "." + _b64(draw(st.binary(min_size=1, max_size=40)))]))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(token) - 1))
        token = token[:at] + draw(st.sampled_from(["", "A", "_", "-", "=", "."])) + token[at + draw(st.integers(0, 1)):]
    return token


def _around(prefixes: list[str], alphabet: str, sizes: tuple[int, int]) -> st.SearchStrategy[str]:
    return st.builds(str.__add__, st.sampled_from(prefixes), st.text(alphabet, min_size=sizes[0], max_size=sizes[1]))


# For each plugin, strings around its shapes and ragscore's: the real prefixes and near ones, lengths on both sides
# of the thresholds, characters from outside the key's alphabet.
AROUND = {
    "AWSKeyDetector": _around(["AKIA", "ASIA", "ABIA", "ACCA", "A3TX", "A3T7", "AIDA", "AKIB", "akia"], UPPER + "a_-",
                              (14, 19)),
    "GitHubTokenDetector": _around(["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "ghx_", "github_pat_"], ALNUM + "_-",
                                   (20, 40)),
    "OpenAIDetector": st.one_of(
        _around(["sk-", "sk-proj-", "sk-svcacct-", "sk-ant-", "sk_"], ALNUM + "_-", (15, 60)),
        st.builds(lambda prefix, a, b: f"{prefix}{a}T3BlbkFJ{b}", st.sampled_from(["sk-", "sk-proj-", "sk-ant-", "sk-x_"]),
                  st.text(ALNUM + "-", min_size=18, max_size=24), st.text(ALNUM, min_size=18, max_size=24))),
    "StripeDetector": _around(["sk_live_", "rk_live_", "pk_live_", "sk_test_"], ALNUM + "_-", (20, 30)),
    "SlackDetector": st.one_of(
        st.builds(lambda prefix, numbers, tail: prefix + "".join(n + "-" for n in numbers) + tail,
                  st.sampled_from(["xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "XOXB-", "xoxb"]),
                  st.lists(st.text(string.digits, min_size=0, max_size=12), max_size=4),
                  st.text(string.ascii_letters + string.digits + "-", max_size=24)),
        _around(["https://hooks.slack.com/services/T", "https://HOOKS.slack.com/services/T",
                 "https://hooks.slack.com/services/X"], ALNUM + "_/", (0, 40))),
    "JwtTokenDetector": jwt_like(),
    "PrivateKeyDetector": st.builds(
        lambda marker, body: marker + body,
        st.sampled_from(["-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----",
                         "-----BEGIN DSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----",
                         "-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----",
                         "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", "PuTTY-User-Key-File-2: ssh-rsa",
                         "PuTTY-User-Key-File-3: ssh-ed25519", "-----BEGIN PUBLIC KEY-----", "BEGIN RSA PRIVATE KEY",
                         "-----BEGIN RSA PRIVATE KEY", "----BEGIN PRIVATE KEY-----"]),
        st.text(ALNUM + "+/=\n -", max_size=60)),
}
EDGES = st.sampled_from(["", " ", "\n", "=", '"', "'", ":", "(", ")", ",", ".", "/", "-", "a", "Z", "7", "_", "\u5bc6",
                         "\u00e9", "\u3002"])


@pytest.mark.parametrize("plugin", list(AROUND))
@given(data=st.data())
@settings(max_examples=300, deadline=None, derandomize=True)
def test_ragscore_agrees_with_detect_secrets_around_the_patterns(plugin, data):
    text = data.draw(EDGES) + data.draw(AROUND[plugin]) + data.draw(EDGES)
    assert difference(plugin, text) in (None, *DIFFERENCES), text
