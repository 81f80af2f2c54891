"""The masking rule as a user meets it: what a secret looks like in a repr, a log line or an error.

``mask()`` shows ``***`` and, for a secret of 12 characters or more, its last four; a shorter one
shows nothing of itself (four of eleven characters would be over a third of it). Redaction puts
that masked form in place of every secret a message carries.
"""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from svckit._http import ApiRequest, BasicAuth, BearerAuth, RetryPolicy, SyncTransport, redact
from svckit.errors import TransportError, mask

TOKEN = "tok_live_7f3a9c2e1b"  # 19 characters


@pytest.mark.parametrize(("secret", "shown"), [
    ("abcdefghijk", "***"),             # 11 characters: too short to show any of it
    ("abcdefghijkl", "***ijkl"),        # 12: the last four
    ("abcdefghijklm", "***jklm"),       # 13
    ("a1b2c3", "***"),                  # 6
    ("x", "***"),
    ("", "***"),
    (None, "***"),
    (TOKEN, "***" + TOKEN[-4:]),
])
def test_mask_shows_the_last_four_characters_only_from_twelve_on(secret, shown):
    assert mask(secret) == shown


def test_a_pydantic_secret_is_masked_by_its_value():
    assert mask(SecretStr("abcdefghijkl")) == "***ijkl"
    assert mask(SecretStr("abcdefghijk")) == "***"
    assert mask(SecretStr("")) == "***"


def test_redact_replaces_every_occurrence_of_every_secret():
    text = f"token={TOKEN}; again {TOKEN}; password=hunter2"
    assert redact(text, (TOKEN, "hunter2")) == f"token=***{TOKEN[-4:]}; again ***{TOKEN[-4:]}; password=***"
    assert redact(text, ("", )) == text
    assert redact(text, ()) == text


def test_a_transport_redacts_its_own_secrets_in_any_text():
    t = SyncTransport("http://127.0.0.1:1", BearerAuth(TOKEN))
    assert t.redact(f"proxy said: bad token {TOKEN}") == f"proxy said: bad token ***{TOKEN[-4:]}"
    basic = SyncTransport("http://127.0.0.1:1", BasicAuth("me@example.com", "pa55word-long-enough"))
    assert basic.redact("pa55word-long-enough") == "***ough"
    assert SyncTransport("http://127.0.0.1:1").redact(f"no auth: {TOKEN}") == f"no auth: {TOKEN}"


def test_auth_reprs_show_the_masked_secret():
    assert repr(BearerAuth(TOKEN)) == f"BearerAuth(***{TOKEN[-4:]})"
    assert repr(BearerAuth("short")) == "BearerAuth(***)"
    assert repr(BasicAuth("me@example.com", "abcdefghijkl")) == "BasicAuth('me@example.com', ***ijkl)"


def test_a_connection_error_names_the_masked_token_not_the_token():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused: {request.headers['authorization']}")

    t = SyncTransport("http://127.0.0.1:1", BearerAuth(TOKEN), retry=RetryPolicy(attempts=1),
                      transport=httpx.MockTransport(handler))
    with pytest.raises(TransportError) as caught:
        t.send(ApiRequest("GET", "/PING"))
    assert str(caught.value) == f"GET http://127.0.0.1:1 failed: ConnectError: refused: Bearer ***{TOKEN[-4:]}"


def test_settings_show_their_secrets_masked_and_the_rest_as_is():
    from svckit.config import Settings

    shown = repr(Settings(kv_url="http://127.0.0.1:1", kv_token=TOKEN, kv_readonly_token="short",
                          devapi_email="me@example.com", devapi_key=None))
    assert f"kv_token=***{TOKEN[-4:]}," in shown and TOKEN not in shown
    assert "kv_readonly_token=***," in shown
    assert "kv_url='http://127.0.0.1:1'," in shown and "devapi_email='me@example.com'," in shown
    assert "devapi_key=None," in shown and shown.startswith("Settings(kv_url=") and shown.endswith("wayland_display=None)")


def test_sandbox_credentials_show_nothing_of_themselves():
    from svckit.sandbox.area import Credentials

    creds = Credentials(kv_token=TOKEN)
    assert repr(creds) == "Credentials(***)" and str(creds) == "Credentials(***)"
