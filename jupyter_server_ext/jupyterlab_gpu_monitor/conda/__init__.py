"""Python environments read from disk: conda (and mamba, micromamba, pixi) prefixes and venvs.

``discovery`` finds them without spawning conda, ``records`` reads their packages, ``export``
writes environment.yml, ``conda_cli`` runs the conda command when asked to.
"""
