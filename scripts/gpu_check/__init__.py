"""The real-GPU check behind scripts/gpu-check (its docstring says how to run it)."""
