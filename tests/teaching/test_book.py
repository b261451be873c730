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


def test_layers_svg_lines_boxes_up_and_leaves_out_labels_that_do_not_fit():
    from toklab.teaching.book import layers_svg

    svg = layers_svg([("chunks", [("Hi", 2), ("␣注", 4)]), ("bytes", [("48", 1)] * 6)],
                     title="t<", width=96)
    markup = svg._repr_svg_()
    assert markup.startswith("<svg") and "<title>t&lt;</title>" in markup
    assert markup.count("<rect") == 8
    assert ">chunks<" in markup and ">bytes<" in markup
    # a 16-pixel-wide box is too narrow for "48" at 11 px or more, so no label is drawn
    assert ">48<" not in markup and ">Hi<" in markup


def test_layers_svg_rejects_rows_of_different_lengths():
    from toklab.teaching.book import layers_svg

    with pytest.raises(ValueError, match="same number of units"):
        layers_svg([("a", [("x", 2)]), ("b", [("y", 3)])], title="t")
    with pytest.raises(ValueError, match="positive width"):
        layers_svg([("a", [("x", 0), ("y", 2)])], title="t")
