"""What a browser page really shows a person, read in the page itself (Playwright).

A DOM holds more text than the screen shows: text a style sheet hides (``display: none``, a
zero font size), text kept for screen readers only (a 1-pixel clipped box), the names of
Material icons (a ligature font draws ``upload`` as an icon). And the screen shows text the DOM
does not hold as text: a style sheet's ``::before``/``::after`` content (how the app says
Streamlit's texts in Japanese) and an element's ``title`` tooltip. :func:`rendered_texts` gives
each text a person can read on the page now, one string per text node, pseudo-element or
tooltip.
"""

from __future__ import annotations

from typing import Final

from playwright.sync_api import Page

__all__ = ["rendered_texts"]

_READ: Final = """() => {
  const shown = (el) => {
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) return false;
    const style = getComputedStyle(el);
    if (parseFloat(style.fontSize) === 0) return false;
    if (/Material/.test(style.fontFamily)) return false;  // an icon's name, drawn as the icon
    const box = el.getBoundingClientRect();
    return box.width > 1 || box.height > 1;  // not a screen reader's clipped 1-pixel box
  };
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    const text = node.textContent.trim();
    if (text && parent && !parent.closest("script, style") && shown(parent)) texts.push(text);
  }
  for (const el of document.body.querySelectorAll("*")) {
    // A pseudo-element has its own visibility: shown inside an element hidden by visibility.
    if (!el.checkVisibility({checkOpacity: true})) continue;
    for (const pseudo of ["::before", "::after"]) {
      const style = getComputedStyle(el, pseudo);
      const content = style.content;
      const seen = style.visibility === "visible" && parseFloat(style.fontSize) > 0;
      if (content.startsWith('"') && content.length > 2 && seen) texts.push(JSON.parse(content));
    }
    if (el.title && el.checkVisibility({checkVisibilityCSS: true})) texts.push(el.title);
  }
  return texts;
}"""


def rendered_texts(page: Page) -> list[str]:
    """Each text ``page`` shows a person now (see the module docstring)."""
    texts: list[str] = page.evaluate(_READ)
    return texts
