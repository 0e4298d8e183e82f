"""Studies built on the sweep engine that the papers run beside the main budget sweep.

- :mod:`.new_samples`: insert_D (Prabhu et al. 2024, §4.3, Fig. 4a): MAE vs model budget
  m' for new samples, model rankings by Sum and Confidence Sum, random and held-out-domain
  splits.
"""
