"""What ``svckit demo --execute`` writes for a cell's printed lines: one output per stream, as
JupyterLab shows it, even when the kernel sent the line in two pieces (its stdout flushed between the
two writes of one ``print``, which a loaded machine's timer does)."""

from __future__ import annotations

import nbformat
import pytest

from svckit import demo

pytestmark = pytest.mark.slow

CELL = ("import sys\n"
        "print(\"the shared account's plan:\", end=' ')\n"
        "sys.stdout.flush()  # the piece goes to the front end now, as the kernel's flush timer may send it\n"
        "print('free')")


def test_a_line_printed_in_two_pieces_is_one_output_and_one_line_of_the_page(tmp_path):
    path = tmp_path / "pieces.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)]), path)
    run = demo.execute_notebook(path, tmp_path / "out", demo.kernel_env({}), timeout=120)
    assert run.ok, run.error
    [cell] = nbformat.read(tmp_path / "out" / path.name, as_version=4).cells
    assert [(o.output_type, o.name, o.text) for o in cell.outputs] == [
        ("stream", "stdout", "the shared account's plan: free\n")]
    assert "the shared account's plan: free" in run.html.read_text()
