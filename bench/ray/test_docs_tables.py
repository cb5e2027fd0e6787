"""The bench's tables copied into the docs pages: only the marked section changes, and a page without its markers is
refused, naming them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docs_tables import PAGES, copy_tables, markers, splice

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_only_the_marked_section_changes() -> None:
    page = "# Page\n\nBefore.\n<!-- bench:ray tune -->\nold table\n<!-- /bench:ray tune -->\nAfter.\n"
    new = splice(page, "tune", "| a |\n|---|\n| 1 |\n")
    assert (
        new == "# Page\n\nBefore.\n<!-- bench:ray tune -->\n\n| a |\n|---|\n| 1 |\n\n<!-- /bench:ray tune -->\nAfter.\n"
    )
    assert splice(new, "tune", "| a |\n|---|\n| 1 |\n") == new  # copying the same table again changes nothing


@pytest.mark.parametrize(
    "page",
    [
        "no markers at all\n",
        "<!-- /bench:ray tune -->\n<!-- bench:ray tune -->\n",
        "<!-- bench:ray tune -->\n<!-- bench:ray tune -->\n<!-- /bench:ray tune -->\n",
    ],
)
def test_a_page_without_its_markers_once_in_order_is_refused(page: str) -> None:
    with pytest.raises(
        ValueError, match="expected one '<!-- bench:ray tune -->' followed by one '<!-- /bench:ray tune -->'"
    ):
        splice(page, "tune", "| a |\n")


def test_every_part_has_its_markers_in_its_page() -> None:
    for part, page in PAGES.items():
        with open(os.path.join(REPO, page), encoding="utf-8") as f:
            text = f.read()
        begin, end = markers(part)
        assert text.count(begin) == 1 and text.count(end) == 1, (page, part)


def test_copying_writes_the_table_into_the_page(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "docs" / "tune.md").write_text(
        "x\n<!-- bench:ray tune -->\n<!-- /bench:ray tune -->\ny\n", encoding="utf-8"
    )
    (tmp_path / "out" / "tune.md").write_text("| measured |\n", encoding="utf-8")
    assert copy_tables(str(tmp_path), str(tmp_path / "out"), ["tune"]) == ["docs/tune.md (tune)"]
    assert (tmp_path / "docs" / "tune.md").read_text(
        encoding="utf-8"
    ) == "x\n<!-- bench:ray tune -->\n\n| measured |\n\n<!-- /bench:ray tune -->\ny\n"
