"""A data directory another user could have written is refused, with a message saying why and what to
do (svckit/sandbox/private.py); secrets are read only from the user's own files and written through a
temporary file no planted link can redirect (svckit/_files.py); and one data directory serves one
sandbox at a time (svckit/sandbox/lock.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from svckit import _files
from svckit._files import read_private, write_private
from svckit.errors import DataDirectoryInUse, UnsafePath
from svckit.sandbox import Sandbox
from tests.conftest import running

PLANTED = {"kv_token": "planted-kv-token", "kv_readonly_token": "planted-ro", "vector_token": "planted-vector",
           "devapi_key": "planted-devapi"}


def planted(data) -> None:
    """What another user leaves in a data directory: tokens of their choosing."""
    data.mkdir(exist_ok=True)
    (data / "credentials.json").write_text(json.dumps(PLANTED))


def test_a_data_directory_others_may_write_is_refused_and_nothing_in_it_is_read(tmp_path):
    data = tmp_path / "data"
    planted(data)
    os.chmod(data / "credentials.json", 0o600)
    data.chmod(0o777)  # a directory under /tmp anyone could write
    with pytest.raises(UnsafePath) as refused:
        Sandbox(data, areas=["kv"], backend="fakeredis").start()
    message = str(refused.value)
    assert f"refusing the data directory {data}" in message
    assert "group and others may write it (mode 0777)" in message and "chmod -R go-w" in message
    assert (data / "credentials.json").read_text() == json.dumps(PLANTED)  # neither used nor rewritten
    assert sorted(p.name for p in data.iterdir()) == ["credentials.json"]  # nothing made there either


def test_a_file_others_may_write_inside_is_refused_naming_it(tmp_path):
    data = tmp_path / "data"
    planted(data)
    data.chmod(0o700)
    (data / "credentials.json").chmod(0o662)
    with pytest.raises(UnsafePath, match=r"credentials\.json, in it: group and others may write it \(mode 0662\)"):
        Sandbox(data, areas=["kv"], backend="fakeredis").start()


def test_a_data_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    # Files of another owner cannot be made without root: the uid svckit trusts is made someone else's
    data = tmp_path / "data"
    planted(data)
    data.chmod(0o700)
    (data / "credentials.json").chmod(0o600)
    other = os.getuid() + 4242
    monkeypatch.setattr(_files, "owner_uid", lambda: other)
    with pytest.raises(UnsafePath) as refused:
        Sandbox(data, areas=["kv"], backend="fakeredis").start()
    assert f"it belongs to another user (uid {os.getuid()}, not {other})" in str(refused.value)
    assert "use a directory of your own instead" in str(refused.value)
    assert "chmod" not in str(refused.value)  # the user cannot change another's directory
    with pytest.raises(UnsafePath, match="belongs to another user"):
        read_private(data / "credentials.json")  # and the file itself is not read as the user's


@pytest.mark.parametrize("name", ["credentials.json", "kv_rest_tokens.json"])
def test_a_symlinked_file_of_secrets_is_refused(tmp_path, name):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(PLANTED))
    elsewhere.chmod(0o600)
    (data / name).symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="it is a symbolic link"):
        read_private(data / name)
    with pytest.raises(UnsafePath, match="symbolic link"):
        Sandbox(data, areas=["kv"], backend="fakeredis").start()
    assert elsewhere.read_text() == json.dumps(PLANTED)


def test_a_symlink_planted_beside_the_credentials_is_not_written_through(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    target = tmp_path / "victim.txt"
    target.write_text("the user's own file")
    (data / "credentials.json.tmp").symlink_to(target)  # the old fixed temporary name
    with running(data, areas=["kv"], backend="fakeredis") as sb:
        token = sb.env["SVC_KV_TOKEN"]
    assert target.read_text() == "the user's own file"
    assert json.loads((data / "credentials.json").read_text())["kv_token"] == token
    assert not (data / "credentials.json").is_symlink()


def test_the_atomic_write_creates_its_temporary_file_new_and_follows_no_link(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("kept")
    path = tmp_path / "secret.json"
    for name in ("secret.json.tmp", "secret.json.x.tmp"):
        (tmp_path / name).symlink_to(target)
    write_private(path, "s3cr3t")
    assert path.read_text() == "s3cr3t" and target.read_text() == "kept"
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    assert leftovers == ["secret.json.tmp", "secret.json.x.tmp"]  # only what was planted


def test_a_second_sandbox_on_a_data_directory_in_use_is_refused_naming_the_holder(tmp_path):
    data = tmp_path / "data"
    with running(data, areas=["account"]) as first:
        with pytest.raises(DataDirectoryInUse) as refused:
            Sandbox(data, areas=["account"]).start()
        message = str(refused.value)
        assert f"the data directory {data} is in use" in message
        assert f"pid {os.getpid()} (this process)" in message and "--data-dir" in message
        assert httpx.get(first.url + "/health", timeout=30).status_code == 200  # the first goes on serving
    with running(data, areas=["account"]):  # free again once it stopped
        pass


@pytest.mark.parametrize("case", ["others may write", "in use"])
def test_the_command_line_refuses_with_a_clear_message_and_exit_status_1(tmp_path, case):
    data = tmp_path / "data"
    data.mkdir()
    command = [sys.executable, "-m", "svckit.cli", "sandbox", "--port", "0", "--data-dir", str(data),
               "--areas", "kv", "--backend", "fakeredis"]
    if case == "others may write":
        data.chmod(0o777)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        expected = f"svckit sandbox: refusing the data directory {data}: group and others may write it (mode 0777)"
    else:
        data.chmod(0o700)
        with running(data, areas=["kv"], backend="fakeredis"):
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        expected = f"svckit sandbox: the data directory {data} is in use: {data / 'sandbox.lock'} is held by pid {os.getpid()}"
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1].startswith(expected), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
