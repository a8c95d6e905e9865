"""Sphinx configuration of the dpsynth documentation.

Build with ``python -m sphinx -b html doc doc/_build/html`` after
``pip install -e ".[docs]"``.
"""

import dpsynth

project = "dpsynth"
author = "dpsynth developers"
copyright = "dpsynth developers"
release = dpsynth.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
]

# API pages are written by hand in api.rst; no generated stub files
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_default_options = {"members": False}

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"dpsynth {release}"
