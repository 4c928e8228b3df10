"""Secrets and personal data in an answer (issue 34; metrics/leaks.py): each kind, the Luhn and IBAN
checks on published test numbers, and where a leak came from."""

from __future__ import annotations

import pytest

from ragscore.metrics.leaks import ECHOED, FROM_CONTEXT, INVENTED, iban_valid, leaks, luhn, placed

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


def test_a_leak_is_placed_by_where_its_value_is():
    passages = ["Contact the owner at jane.doe@example.com.", "Card on file: 4111-1111-1111-1111."]
    question = "My address is bob@example.org, can you confirm it?"
    found = {leak.value: placed(leak, passages, question)
             for leak in leaks("Write to jane.doe@example.com or bob@example.org; card 4111 1111 1111 1111; "
                               "or mallory@example.net")}
    assert found == {"jane.doe@example.com": FROM_CONTEXT, "bob@example.org": ECHOED,
                     "4111 1111 1111 1111": FROM_CONTEXT, "mallory@example.net": INVENTED}
