"""A Markdown report and its images as one thing people can open anywhere.

A report links its charts. Linked by an absolute path on the machine that ran the plan, the
link is dead everywhere else (a download, the progress page, another computer), so a report is
kept as a folder: the ``.md`` with its images beside it, linked by file name
(:func:`gather_images`, used by ``report.markdown`` when it writes the file). From that folder:

* :func:`report_parts` splits the text at its local images, for a page that draws text and
  images with its own elements (the app);
* :func:`report_html` is one self-contained HTML page (the images inside as ``data:`` URIs, no
  script, no request to anywhere): the progress page shows it and anyone can download it;
* :func:`report_zip` is the ``.md`` and its images in one ZIP;
* :func:`report_images` lists the images it shows.

Images are only ever read from the report's own folder (a link that leaves it, or a file that
is not a PNG/JPEG/GIF/SVG/WebP image, stays a link and is not read). Markdown is rendered with
markdown-it-py's CommonMark and tables, raw HTML off: what a template writes is shown as text.
"""

from __future__ import annotations

import base64
import html
import io
import mimetypes
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote

from markdown_it import MarkdownIt

from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "IMAGE_SUFFIXES",
    "MAX_IMAGE_BYTES",
    "ReportImage",
    "gather_images",
    "report_html",
    "report_images",
    "report_parts",
    "report_zip",
]

IMAGE_SUFFIXES: Final = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"})
MAX_IMAGE_BYTES: Final = 20 * 2**20  # one image put inside an HTML export (a chart is ~100 KB)
# ![alt](target) / ![alt](<target with spaces>) with an optional "title"; the target is group 2.
_IMAGE: Final = re.compile(r'!\[([^\]\n]*)\]\(\s*(<[^>\n]+>|[^)\s]+)(\s+"[^"\n]*")?\s*\)')
_STYLE: Final = """
body { font-family: "Noto Sans CJK JP", "Hiragino Sans", "Yu Gothic", sans-serif;
       max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.7; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.6rem; }
th { background: #ddebf7; }
img { max-width: 100%; }
"""


@dataclass(frozen=True)
class ReportImage:
    """One image a report links: the link as written and the file it names."""

    target: str
    path: Path


def _target(raw: str) -> str:
    return raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw


def _is_local(target: str) -> bool:
    return "://" not in target and not target.startswith(("data:", "#", "mailto:"))


def _link(name: str) -> str:
    return f"<{name}>" if any(c.isspace() or c in "()" for c in name) else name


def gather_images(
    markdown: str, folder: Path, readable: Callable[[str], Path]
) -> tuple[str, list[tuple[Path, Path]]]:
    """The report text with every local image linked by its file name in ``folder`` (the
    report's own), and the copies to make there: (image, copy). An image already in ``folder``
    stays as it is; ``readable`` turns any other link into the file it may read (the run's
    ``FileAccess``): a link to no such file is a BlockError naming the image."""
    copies: dict[Path, Path] = {}
    taken: set[str] = set()

    def place(match: re.Match[str]) -> str:
        target = _target(match.group(2))
        if not _is_local(target) or _inside(folder, target) is not None:
            return match.group(0)
        name = Path(unquote(target)).name
        try:
            source = readable(unquote(target))
        except BlockError as exc:
            raise BlockError(
                f"報告書に載せる画像「{name}」を読めません。",
                code=exc.code,
                hint="ひな形の画像のパス（report.chart の chart.path など）を確かめてください。",
                details={"image": target, "reason": exc.message},
            ) from exc
        if not source.is_file():
            raise BlockError(
                f"報告書に載せる画像「{name}」が見つかりません。",
                code=ErrorCode.DEPENDENCY_NOT_FOUND,
                hint="画像を作るノード（report.chart など）の出力を、ひな形の data に渡して"
                "そのパスを書いてください。",
                details={"image": target},
            )
        if source not in copies:
            copy = folder / _free_name(source.name, taken)
            taken.add(copy.name)
            copies[source] = copy
        title = match.group(3) or ""
        return f"![{match.group(1)}]({_link(copies[source].name)}{title})"

    return _IMAGE.sub(place, markdown), list(copies.items())


def _free_name(name: str, taken: set[str]) -> str:
    stem, suffix = Path(name).stem, Path(name).suffix
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{stem}_{number}{suffix}", number + 1
    return candidate


def _inside(folder: Path, target: str) -> Path | None:
    """The image file ``target`` names inside ``folder``; None when it leads elsewhere."""
    if not _is_local(target) or Path(target).suffix.lower() not in IMAGE_SUFFIXES:
        return None
    base = folder.resolve()
    path = (base / unquote(target)).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        return None
    return path


def report_images(path: Path) -> list[ReportImage]:
    """The images of the report at ``path`` found in its folder, in the order it links them."""
    text = path.read_text(encoding="utf-8")
    found: dict[Path, ReportImage] = {}
    for match in _IMAGE.finditer(text):
        target = _target(match.group(2))
        image = _inside(path.parent, target)
        if image is not None:
            found.setdefault(image, ReportImage(target, image))
    return list(found.values())


def report_parts(path: Path) -> Iterator[str | ReportImage]:
    """The report's text cut at its images: Markdown pieces and the images between them."""
    text = path.read_text(encoding="utf-8")
    start = 0
    for match in _IMAGE.finditer(text):
        image = _inside(path.parent, _target(match.group(2)))
        if image is None:
            continue
        if text[start : match.start()].strip():
            yield text[start : match.start()]
        yield ReportImage(match.group(1) or image.name, image)
        start = match.end()
    if text[start:].strip():
        yield text[start:]


def _data_uri(path: Path) -> str | None:
    if path.stat().st_size > MAX_IMAGE_BYTES:
        return None
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def report_html(path: Path, *, title: str | None = None) -> str:
    """The report at ``path`` as one HTML page with its images inside (no script, nothing
    fetched from anywhere)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(path.read_text(encoding="utf-8"))
    for token in tokens:
        for child in token.children or []:
            if child.type != "image":
                continue
            image = _inside(path.parent, str(child.attrGet("src") or ""))
            uri = _data_uri(image) if image is not None else None
            if uri is not None:
                child.attrSet("src", uri)
    body = md.renderer.render(tokens, md.options, {})
    heading = html.escape(title or path.stem)
    return (
        '<!doctype html>\n<html lang="ja">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{heading}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n"
    )


def report_zip(path: Path) -> bytes:
    """The report and the images it links (from its folder) in one ZIP."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(path, path.name)
        for image in report_images(path):
            archive.write(image.path, image.path.relative_to(path.parent.resolve()).as_posix())
    return buffer.getvalue()
