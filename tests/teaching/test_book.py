"""The chapters' table helpers in toklab.teaching.book."""

import pytest

from toklab.teaching.book import RawHtml, chunk_boxes, html_table, md_table


def test_html_table_escapes_cells_and_keeps_raw_html():
    table = html_table(["a", "b"], [["x<y", RawHtml("<b>bold</b>")], [1, "two\nlines"]])
    out = table._repr_html_()
    assert "<th>a</th><th>b</th>" in out
    assert "<td>x&lt;y</td>" in out
    assert "<td><b>bold</b></td>" in out
    assert "<td>two<br>lines</td>" in out
    assert out.startswith('<table class="toklab-table"><thead>')
    assert repr(table).splitlines()[0] == "a | b"


def test_html_table_rejects_a_row_of_the_wrong_width():
    with pytest.raises(ValueError, match="has 1 cells; the header has 2"):
        html_table(["a", "b"], [["only one"]])


def test_chunk_boxes_is_one_escaped_box_per_label():
    boxes = chunk_boxes(["I", "'m", "<E6>"])
    assert isinstance(boxes, RawHtml)
    assert boxes.count("<span") == 3
    assert "&#x27;m" in boxes and "&lt;E6&gt;" in boxes


def test_md_table():
    assert md_table(["t", "n"], [["a", 1]], "lr").splitlines() == ["| t | n |", "|---|--:|", "| a | 1 |"]
    with pytest.raises(ValueError):
        md_table(["t"], [["a"]], "x")
