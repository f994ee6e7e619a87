"""Error text from OpenAI-compatible servers: finding the server's own words and trimming them.

Servers report failures in many shapes (`{"error": {"message": ...}}`, `{"detail": ...}`,
a bare string, an HTML page); `server_message` and `error_text` dig out the readable part,
and `shorten` keeps it to a length worth showing. An HTML page (a proxy's 502, a captive
portal's login form) is reduced to its title and a little of its text: markup never
reaches a notice.
"""

from __future__ import annotations

import html
import json
import re

MESSAGE_LIMIT = 500  # characters of a server's error text worth showing
REASON_LIMIT = 120  # the one-line retry notice is shorter still
PAGE_TEXT_LIMIT = 160  # of an HTML page's text, after its title

_HTML_MARKERS = ("<html", "<!doctype html", "<head", "<body", "<title")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
# Elements whose content is not text a person reads on the page.
_INVISIBLE = re.compile(
    r"<(script|style|head|noscript|template)\b[^>]*>.*?</\1\s*>|<!--.*?-->",
    re.IGNORECASE | re.DOTALL,
)
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def server_message(body: str) -> str:
    """The server's own words from an error body, whatever shape it came in."""
    body = body.strip()
    if not body:
        return ""
    if looks_like_html(body):
        return shorten(describe_html(body))
    try:
        obj = json.loads(body)
    except ValueError:
        return shorten(body)
    return shorten(error_text(obj) or body)


def error_text(obj: object) -> str:
    """The message in a parsed error object (nested `error`/`message`/`detail`), or ""."""
    if isinstance(obj, str):
        return obj.strip()
    if not isinstance(obj, dict):
        return ""
    for key in ("error", "message", "detail"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict):
            text = error_text(value)
            if text:
                return text
    return ""


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` stripped, and cut to `limit` characters (ending in "…") when longer."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def looks_like_html(text: str) -> bool:
    """True for a body that is an HTML page (not JSON, not an event stream)."""
    start = text.lstrip()[:1024].lower()
    return start.startswith("<") and any(marker in start for marker in _HTML_MARKERS)


def describe_html(page: str) -> str:
    """An HTML page in a few words: "an HTML page titled '502 Bad Gateway': nginx"."""
    found = _TITLE.search(page)
    title = _plain(found.group(1)) if found else ""
    text = _plain(_TAG.sub(" ", _INVISIBLE.sub(" ", page)))
    if title and text.startswith(title):
        text = text[len(title) :].lstrip(" :-|")  # most pages repeat the title as a heading
    described = f"an HTML page titled '{shorten(title, 100)}'" if title else "an HTML page"
    return f"{described}: {shorten(text, PAGE_TEXT_LIMIT)}" if text else described


def _plain(fragment: str) -> str:
    return _SPACE.sub(" ", html.unescape(fragment)).strip()
