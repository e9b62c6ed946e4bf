"""The ``jupyter-gpu-monitor`` command: the server's readings in a terminal or a script.

A Jupyter application, built as ``jupyter kernelspec`` and ``jupyter server extension`` are: each
subcommand is an application of its own that reads the server's configuration files
(``jupyter_config`` and ``jupyter_server_config``, .py and .json, in every folder of
``jupyter --paths``), so that ``c.GpuMonitor.<setting>`` applies to the command as to the server;
its options set those same settings for one run, over the files (``--command-timeout`` is
``--GpuMonitor.command_timeout``).

Help texts are translated when an application is made, once the terminal's language is in
force: traitlets reads the aliases, flags, description and examples from the instance. Its own
words around them (the headings, "Equivalent to", "Default", and ``--help-all``'s list of every
setting, which documents the server's configuration) are traitlets' and stay in English, as in
every Jupyter command.
"""

from .app import main

__all__ = ["main"]
