"""``python -m dpexplore.bibliography > docs/references.md``: the docs page, the bibliography and
the table of every citation (a test keeps the committed file equal to it)."""

from .scanner import docs_markdown

if __name__ == "__main__":
    print(docs_markdown(), end="")
