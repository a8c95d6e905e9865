"""Build configuration for the Cython kernels in ``dpsynth/_core``.

Metadata lives in ``pyproject.toml``; this file only declares the extension
modules.  The kernels use typed ``const`` memoryviews and libc only, so numpy
is not needed at build time.
"""
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = ["_counting", "_sampling", "_matching", "_noise"]

extensions = [
    Extension(f"dpsynth._core.{name}", [f"dpsynth/_core/{name}.pyx"])
    for name in KERNELS
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "nonecheck": False,
        },
    ),
)
