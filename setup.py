"""Package list for setuptools (metadata and dependencies are in pyproject.toml).

``lifelong_core`` and its subpackages are found, so a new subpackage needs no change
here. The app is not a package in the checkout (``streamlit run app.py`` finds
``pages/`` beside it and puts its folder on ``sys.path`` for ``ui``), so it is installed
as the package ``lifelong_app`` mapped onto the repository root: app.py, pages/, ui/ and
the committed data keep their relative places.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """The root is the package ``lifelong_app``; this file is not part of it."""

    def find_package_modules(self, package, package_dir):
        return [
            m
            for m in super().find_package_modules(package, package_dir)
            if not (package == "lifelong_app" and m[1] == "setup")
        ]


setup(
    cmdclass={"build_py": BuildPy},
    packages=find_packages(include=["lifelong_core", "lifelong_core.*"])
    + ["lifelong_app", "lifelong_app.ui", "lifelong_app.pages"],
    package_dir={"lifelong_app": "."},
    package_data={
        "lifelong_app": [
            "data/lifelong_digits/*",
            "data/open_llm_leaderboard_v2/*",
            "data/vtab1k/*",
        ],
    },
)
