"""A message's options as the SDKs send them: headers built by the qstash SDK's own code, read back."""

from __future__ import annotations

import pytest
from qstash.message import prepare_headers

from svckit.sandbox.delivery.options import FlowControl, OptionError, duration, read_options


def neutral(headers: dict[str, str]) -> dict[str, str]:
    """The headers as an area sees them: lower-case, ``upstash-`` renamed ``service-``."""
    out = {}
    for name, value in headers.items():
        name = name.lower()
        out["service-" + name[len("upstash-"):] if name.startswith("upstash-") else name] = value
    return out


def sdk_headers(**given):
    options = {"content_type": None, "method": None, "headers": None, "callback_headers": None,
                   "failure_callback_headers": None, "retries": None, "retry_delay": None, "callback": None,
                   "failure_callback": None, "delay": None, "not_before": None, "deduplication_id": None,
                   "content_based_deduplication": None, "timeout": None, "flow_control": None, "label": None, "redact": None}
    return neutral(prepare_headers(**{**options, **given}))


def test_every_option_of_the_python_sdk_reads_back():
    options = read_options(sdk_headers(
        content_type="application/json", method="PUT", headers={"X-Tenant": "acme", "Connection": "close"},
        callback_headers={"X-Cb": "1"}, failure_callback_headers={"X-Fail": "2"}, retries=2,
        retry_delay="1000 * (1 + retried)", callback="http://127.0.0.1:9/cb", failure_callback="http://127.0.0.1:9/f",
        delay=90, deduplication_id="order-1", content_based_deduplication=True, timeout="30s",
        flow_control={"key": "tenant-a", "parallelism": 2, "rate": 10, "period": 60}, label="billing",
        redact={"body": True, "header": ["Authorization"]}))
    assert options.method == "PUT"
    # forwarded: the content type and X-Tenant, never a hop-by-hop header
    assert options.forward == (("content-type", "application/json"), ("x-tenant", "acme"))
    assert (options.retries, options.retry_delay, options.delay, options.timeout) == (2, "1000 * (1 + retried)", 90, 30)
    assert options.callback.url == "http://127.0.0.1:9/cb" and options.callback.headers == (("x-cb", "1"),)
    assert options.failure_callback.url == "http://127.0.0.1:9/f"
    assert options.failure_callback.headers == (("x-fail", "2"),)
    assert options.deduplication_id == "order-1" and options.content_based_deduplication
    assert options.flow_control == FlowControl("tenant-a", "parallelism=2, rate=10, period=60s", 2, 10, 60.0)
    assert options.labels == ("billing",)
    assert options.redact == ("body", "header[Authorization]")


def test_not_before_and_a_flow_control_key_alone():
    options = read_options(sdk_headers(not_before=1_900_000_000, flow_control={"key": "k"},
                                       content_based_deduplication=False))
    assert options.not_before == 1_900_000_000
    assert options.flow_control == FlowControl("k")  # the SDK sends an empty value: no bound
    assert not options.content_based_deduplication


def test_the_js_spellings_are_read_too():
    # @upstash/qstash lower-cases names, joins labels with ",", sends "true" and a fractional timeout
    options = read_options({"service-method": "POST", "service-content-based-deduplication": "true",
                            "service-label": "a,b", "service-timeout": "1.5s",
                            "service-callback-forward-x-trace": "t", "service-callback-retries": "1",
                            "service-redact-fields": "headers[Authorization], body"})
    assert options.content_based_deduplication and options.labels == ("a", "b") and options.timeout == 1.5
    assert options.callback.headers == (("x-trace", "t"),) and options.callback.retries == 1
    assert options.redact == ("header[Authorization]", "body")


@pytest.mark.parametrize(("text", "seconds"), [("10s", 10), ("1m", 60), ("2h", 7200), ("1d", 86400),
                                               ("1d10h30m", 124200), ("1.5s", 1.5), ("250ms", 0.25), ("7", 7)])
def test_durations(text, seconds):
    assert duration("service-delay", text) == seconds


@pytest.mark.parametrize(("headers", "named"), [
    ({"service-delay": "soon"}, "Upstash-Delay: not a duration"),
    ({"service-delay": "10x"}, "Upstash-Delay: not a duration"),
    ({"service-retries": "three"}, "Upstash-Retries: must be a whole number"),
    ({"service-retries": "-1"}, "Upstash-Retries: must not be negative"),
    ({"service-method": "TRACE"}, "Upstash-Method: must be one of"),
    ({"service-timeout": "0s"}, "Upstash-Timeout: must be more than 0"),
    ({"service-retry-delay": "__import__('os').system('id')"}, "Upstash-Retry-Delay:"),
    ({"service-retry-delay": "retried.__class__"}, "Upstash-Retry-Delay:"),
    ({"service-content-based-deduplication": "yes"}, "must be true or false"),
    ({"service-flow-control-value": "parallelism=1"}, "give Upstash-Flow-Control-Key with it"),
    ({"service-flow-control-key": "k", "service-flow-control-value": "parallelism=0"}, "at least 1"),
    ({"service-flow-control-key": "k", "service-flow-control-value": "speed=3"}, "is not one of"),
    ({"service-label": "a b"}, "Upstash-Label:"),
    ({"service-redact-fields": "cookies"}, "Upstash-Redact-Fields:"),
])
def test_a_header_that_cannot_be_read_is_refused_by_name(headers, named):
    with pytest.raises(OptionError, match=named.replace("(", r"\(")):
        read_options(headers)
