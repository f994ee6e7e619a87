"""The redactor's cheap checks before its searches change nothing it masks: for any
text (ASCII or not, with secrets, headers and tokens mixed in anywhere), the mask is
what the plain searches alone give."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.serve import redact
from ink_tui.serve.redact import MASK, Redactor

SECRETS = ["sk-configured-abcdef123456", "supersecret123", "tok3n-XYZ"]
PIECES = [
    *SECRETS,
    "Authorization: ",
    "AUTHORIZATION=",
    "authorization: Basic ",
    "Bearer ",
    "bEaReR ",
    "author",
    "beare",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "abcdefghij0123456789",
    "ı",
    "İ",
    "K",
    "ſ",
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=12), max_size=12).map("".join)


def plain_mask(redactor: Redactor, text: str) -> str:
    """The searches alone, as `_mask` ran them before its cheap checks."""
    pattern = re.compile("|".join(map(re.escape, sorted(SECRETS, key=len, reverse=True))))
    text = pattern.sub(MASK, text)
    if "PRIVATE KEY-----" in text:
        text = redact._PRIVATE_KEY.sub(redact._mask_private_key, text)
    if redact._HINT.search(text):
        text = redact._AUTH.sub(redact._mask_authorization, text)
        text = redact._BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return text


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_mask_is_what_the_plain_searches_give(text: str) -> None:
    redactor = Redactor(SECRETS)
    assert redactor._mask(text) == plain_mask(redactor, text)
    assert redact._hinted(text) == (redact._HINT.search(text) is not None)


def test_a_secret_and_a_token_in_a_long_text_are_masked() -> None:
    redactor = Redactor(SECRETS)
    text = "x" * 3000 + " Bearer abcdefghijk " + "y" * 3000 + SECRETS[1]
    shown = redactor.text(text)
    assert SECRETS[1] not in shown and "abcdefghijk" not in shown
    assert shown.count(MASK) == 2
