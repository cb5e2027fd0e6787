"""``npm run bench:ray``'s last step: the tables its parts just wrote (``out/bench-ray/<part>.md``) copied into the docs
pages that show them, between the markers ``<!-- bench:ray <part> -->`` and ``<!-- /bench:ray <part> -->``. Only
the parts that ran are copied; a page's other text is left as written. The docs test (``test/docs/docs.test.ts``)
fails on a marked section left empty, so a page never shows a placeholder where the bench's figures belong."""

from __future__ import annotations

import argparse
import os
import re
import sys

#: Each part of the bench, and the docs page that shows its table.
PAGES = {
    "levers": "docs/runtime-levers.md",
    "embed": "docs/runtime-levers.md",
    "tune": "docs/tune.md",
}


def markers(part: str) -> tuple[str, str]:
    return f"<!-- bench:ray {part} -->", f"<!-- /bench:ray {part} -->"


def splice(text: str, part: str, table: str) -> str:
    """``text`` with the section marked for ``part`` replaced by ``table``.

    :raises ValueError: the page does not hold the part's two markers once each, in order
    """
    begin, end = markers(part)
    found = (
        [m.start() for m in re.finditer(re.escape(begin), text)],
        [m.start() for m in re.finditer(re.escape(end), text)],
    )
    if len(found[0]) != 1 or len(found[1]) != 1 or found[0][0] > found[1][0]:
        raise ValueError(f"expected one '{begin}' followed by one '{end}'; found {len(found[0])} and {len(found[1])}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n\n{table.strip()}\n\n{end}{tail}"


def copy_tables(repo: str, out: str, parts: list[str]) -> list[str]:
    """Copies each part's table from ``out`` into its page under ``repo``; the pages written."""
    written = []
    for part in parts:
        page = os.path.join(repo, PAGES[part])
        with open(os.path.join(out, f"{part}.md"), encoding="utf-8") as f:
            table = f.read()
        with open(page, encoding="utf-8") as f:
            text = f.read()
        try:
            new = splice(text, part, table)
        except ValueError as e:
            raise ValueError(f"{PAGES[part]}: {e}") from None
        with open(page, "w", encoding="utf-8") as f:
            f.write(new)
        written.append(f"{PAGES[part]} ({part})")
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the repository's root")
    parser.add_argument("--out", required=True, help="the bench's output folder (out/bench-ray)")
    parser.add_argument("--parts", required=True, help="comma-separated parts that ran: levers, embed, tune")
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = [p for p in parts if p not in PAGES]
    if unknown:
        print(f"bench:ray: no docs page shows {', '.join(unknown)}; parts: {', '.join(PAGES)}", file=sys.stderr)
        return 2
    try:
        written = copy_tables(args.repo, args.out, parts)
    except (OSError, ValueError) as e:
        print(f"bench:ray: could not copy the tables into the docs: {e}", file=sys.stderr)
        return 1
    print(f"bench:ray: copied the measured tables into {', '.join(written)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
