#!/usr/bin/env python3
"""An mdBook preprocessor (docs/book.toml) for links that leave the book's source.

The guide's pages link into the checkout (crates/..., scenarios/..., ARCHITECTURE.md)
with paths relative to the Markdown file, which work on a forge and in an editor. The
rendered book lives one directory deeper (docs/book/), so those links would point into
docs/ and find nothing, and mdBook would turn a link to ARCHITECTURE.md into one to
ARCHITECTURE.html. This rewrites each such link into an HTML anchor relative to the
rendered page, so the book opened from a checkout reaches the same files. Links inside
the book, anchors and URLs are left alone, and so is everything in code.

`python3 tools/book-links.py rewrite PAGE_DIR TEXT_FILE` prints one page's text
rewritten (PAGE_DIR: the page's directory relative to the book's source), for tests.
"""
import json
import os
import re
import sys

SPAN_OR_LINK = re.compile(r"(`[^`]*`)|\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def leaves(target):
    return not (target.startswith("#") or "://" in target or target.startswith("mailto:"))


def rewrite(text, src, build, page_dir):
    """`text` of a page in `page_dir` (relative to `src`) with links out of `src`
    rewritten relative to the page's place under `build`."""
    here = os.path.normpath(os.path.join(src, page_dir))
    out_dir = os.path.normpath(os.path.join(build, page_dir))

    def fix(m):
        label, target = m.group(2), m.group(3)
        if not leaves(target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, path))
        if full == src or full.startswith(src + os.sep):
            # mdBook renders a chapter README.md as index.html (its index
            # preprocessor) but leaves the links to it pointing at README.html.
            if os.path.basename(path) == "README.md":
                return f"[{label}]({path[: -len('README.md')]}index.md{target[len(path):]})"
            return m.group(0)
        rel = os.path.relpath(full, out_dir)
        if path.endswith("/"):
            rel += "/"
        if rel.endswith(".md"):
            # mdBook turns every link to a .md file, HTML anchors too, into one to
            # .html; an encoded dot is left alone and still names the file.
            rel = rel[: -len(".md")] + "%2Emd"
        href = rel + ("#" + anchor if anchor else "")
        return f'<a href="{href}">{label}</a>'

    # Rewrite the text between fenced code blocks (a link's label may span lines); a
    # code span outside a link is left alone, one in a link's label is part of it.
    out, prose, fenced = [], [], False

    def flush():
        if not prose:
            return
        text = "\n".join(prose)
        out.append(SPAN_OR_LINK.sub(lambda m: m.group(0) if m.group(1) else fix(m), text))
        prose.clear()

    for line in text.split("\n"):
        if FENCE.match(line):
            if not fenced:
                flush()
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(line)
        else:
            prose.append(line)
    flush()
    return "\n".join(out)


def walk(items, src, build):
    for item in items:
        ch = item.get("Chapter") if isinstance(item, dict) else None
        if not ch:
            continue
        if ch.get("source_path"):
            page_dir = os.path.dirname(ch["source_path"])
            ch["content"] = rewrite(ch["content"], src, build, page_dir)
        walk(ch.get("sub_items", []), src, build)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "supports":
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "rewrite":
        src = os.path.abspath("docs")
        text = open(sys.argv[3]).read()
        sys.stdout.write(rewrite(text, src, os.path.join(src, "book"), sys.argv[2]))
        return
    ctx, book = json.load(sys.stdin)
    cfg = ctx["config"]
    src = os.path.normpath(os.path.join(ctx["root"], cfg["book"].get("src", "src")))
    build = os.path.normpath(
        os.path.join(ctx["root"], cfg.get("build", {}).get("build-dir", "book"))
    )
    # mdBook 0.5 names the chapters "items", 0.4 "sections".
    walk(book.get("items", book.get("sections", [])), src, build)
    json.dump(book, sys.stdout)


if __name__ == "__main__":
    main()
