"""Builders of the bundled demo data.

- :mod:`.digits` trains the Lifelong-Digits model zoo (:mod:`.zoo`) on scikit-learn's real
  8x8 digits rendered under natural shifts (:mod:`.shifts`) and writes the committed files
  (:mod:`.demo_files`) that ``python -m lifelong_core build-demo`` turns into a store.
- :mod:`.synthetic` generates seeded, explicitly synthetic caches for scale work.
"""
