"""dpexplore's version, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``),
``dpexplore.__version__`` and ``dpexplore --version`` print it. CHANGELOG.md says what changed."""

__version__ = "0.2.0.dev0"
