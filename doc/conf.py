"""Sphinx configuration of the dpsynth documentation.

Build, from the repository root, without activating anything::

    .venv/bin/pip install -e ".[docs]"
    .venv/bin/python -m sphinx -b html doc doc/_build/html

sphinx-gallery runs every script of ``examples/`` (in fast mode) and puts
them, with their figures, in ``doc/auto_examples`` (generated, not committed).
"""

import os

import dpsynth

# the examples run quickly and draw off-screen while the docs build
os.environ.setdefault("DPSYNTH_EXAMPLE_FAST", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

project = "dpsynth"
author = "dpsynth developers"
copyright = "dpsynth developers"
release = dpsynth.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

_HERE = os.path.dirname(os.path.abspath(__file__))
sphinx_gallery_conf = {
    "examples_dirs": os.path.join(_HERE, "..", "examples"),
    "gallery_dirs": os.path.join(_HERE, "auto_examples"),
    "filename_pattern": r"/plot_",  # run every plot_*.py and show its figures
    "download_all_examples": False,
    "remove_config_comments": True,
}

# API pages are written by hand in api.rst; no generated stub files
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_default_options = {"members": False}

exclude_patterns = ["_build", "_generated", "auto_examples/*.ipynb"]
html_theme = "alabaster"
html_title = f"dpsynth {release}"
