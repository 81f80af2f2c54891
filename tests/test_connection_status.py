"""What a notebook's first output says about its service (svckit/connection_status.py): each area's
address as scheme, host and port, the variable it came from, credentials masked; never a secret, even
one written into a URL."""

from __future__ import annotations

from svckit import connection_status as cs
from svckit import demo
from svckit.config import Settings

SECRET = "s3cr3t-token-abcdefghijklmnop-WXYZ"


def test_an_address_keeps_scheme_host_and_port_only():
    assert cs.address("https://user:pw@eu1-fine-cat.example.io:8443/v2/kv?token=abc#x") == "https://eu1-fine-cat.example.io:8443"
    assert cs.address("http://127.0.0.1:4242/kv") == "http://127.0.0.1:4242"
    assert cs.address("http://[::1]:9/queue") == "http://[::1]:9"
    assert cs.address("not a url") == "(not a URL)"


def test_variables_are_named_and_credentials_masked_in_text_and_html():
    env = {"SVC_KV_URL": f"https://default:{SECRET}@kv.example.io/?token={SECRET}", "SVC_KV_TOKEN": SECRET,
           "QSTASH_URL": "https://qstash.example.io", "QSTASH_TOKEN": SECRET, "QSTASH_CURRENT_SIGNING_KEY": "short"}
    status = cs.from_variables(Settings.from_env(env), env)
    text, html = str(status), status._repr_html_()
    assert "the SVC_* and the vendor's variables" in text
    assert "Key-value: https://kv.example.io (SVC_KV_URL); token ***WXYZ" in text
    assert "Queue: https://qstash.example.io (QSTASH_URL); token ***WXYZ, signing key ***" in text
    assert "Vector: not set" in text and "embedded sandbox" not in text
    for shown in (text, html, repr(status)):
        assert SECRET not in shown and "short" not in shown and "default:" not in shown


def test_svckit_demo_kernels_are_told_the_sandbox_and_its_data_directory():
    env = demo.kernel_env({"SVC_KV_URL": "http://127.0.0.1:9/kv", "SVC_KV_TOKEN": SECRET}, "/tmp/sb-data")
    assert env[cs.DEMO_SANDBOX_VARIABLE] == "/tmp/sb-data"
    status = cs.from_variables(Settings.from_env(env), env)
    assert str(status).startswith("Connected to the embedded sandbox that svckit demo started (data in /tmp/sb-data)")
    assert cs.DEMO_SANDBOX_VARIABLE not in demo.kernel_env({})  # a stale one is not passed on


def test_notebook_clients_says_what_it_is_connected_to(capsys):
    env = {"SVC_QUEUE_URL": "http://127.0.0.1:9/queue", "SVC_QUEUE_TOKEN": SECRET}
    c = demo.notebook_clients(env=env)
    printed = capsys.readouterr().out
    assert printed.startswith("Connected to the service named by the SVC_* variables.")
    assert "Queue: http://127.0.0.1:9 (SVC_QUEUE_URL); token ***WXYZ" in printed and SECRET not in printed
    assert c.settings.queue_url == "http://127.0.0.1:9/queue" and demo._sandbox is None


def test_local_only_keeps_variables_that_name_this_machine():
    env = {"SVC_QUEUE_URL": "http://localhost:9/queue", "SVC_QUEUE_TOKEN": SECRET}
    c = demo.notebook_clients(env=env, local_only=True)
    assert c.settings.queue_url == "http://localhost:9/queue" and demo._sandbox is None
    assert demo._on_loopback(Settings.from_env(env))
    assert not demo._on_loopback(Settings.from_env({"SVC_QUEUE_URL": "https://qstash.example.io"}))
