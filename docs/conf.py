"""Sphinx configuration of the stgnn_diag documentation.

The source folder is the repository root, so that the user's guide (``docs/``), the model cards
(``models/cards/``), the experiment pages (``models/results/*/README.md``), the data page and the changelog
are read where they live and every relative link between them resolves as it does on a code host.
Build (warnings are errors)::

    sphinx-build -W --keep-going -b html -c docs . build/docs
"""
from __future__ import annotations

import importlib.metadata

project = "stgnn_diag"
author = "the stgnn_diag authors"
copyright = "2026, the stgnn_diag authors"
release = importlib.metadata.version("stgnn-diag")
version = release

root_doc = "docs/index"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}

# Only these files are pages; everything else under the repository root is ignored.
include_patterns = [
    "docs/**",
    "models/cards/*.md",
    "models/results/README.md",
    "models/results/probes.md",
    "models/results/*/*.md",
    "README.md",
    "models/results/**/*.png",
    "datasets/README.md",
    "CHANGELOG.md",
]
exclude_patterns = ["build", ".venv", ".ci-venv", ".git", "runs", "docs/conf.py"]

myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

autosummary_generate = True
autosummary_imported_members = False
# A package page lists only what the package itself defines; each object is documented once, in its module.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
# Methods inherited from Lightning keep Lightning's docstrings out of ours (their roles are Lightning's own).
autodoc_inherit_docstrings = False
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"stgnn_diag {release}"
