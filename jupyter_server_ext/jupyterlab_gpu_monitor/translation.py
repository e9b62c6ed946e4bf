"""The language of what the server says: error messages and hints, findings, the CLI's output.

The catalogues live in ``locale/<lang>/LC_MESSAGES/jupyterlab_gpu_monitor.mo`` inside this
package (built from the ``.po`` sources at install time), where JupyterLab also finds their
frontend half through the ``jupyterlab.locale`` entry point.

Two ways to pick the language:

- In the server, the language JupyterLab's frontend asked for: jupyterlab_server's
  ``translator`` follows it, and ``use_server_locale()`` gives it a bundle of ours, which it
  also uses to translate our settings schemas.
- In a terminal (the ``jupyter-gpu-monitor`` command, and by default), the terminal's locale:
  ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``, as gettext reads them.

Messages are translated when they are made: a finding, an error or a table line is in the
language in force then. Only the words change: ids, kinds and other API values stay as they are.
"""

from __future__ import annotations

import gettext as _gettext
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Protocol
from unicodedata import east_asian_width

DOMAIN = "jupyterlab_gpu_monitor"
LOCALE_DIR = Path(__file__).parent / "locale"


class Translations(Protocol):
    """What a catalogue answers: gettext's functions."""

    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...

    def pgettext(self, context: str, message: str) -> str: ...


_server_bundle: Translations | None = None


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it: for a constant that is
    translated where it is used, in the language in force then."""
    return message


def gettext(message: str) -> str:
    """``message`` in the language in force."""
    return _translations().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """``singular`` or ``plural``, as ``n`` asks, in the language in force."""
    return _translations().ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the language in force, as it reads in ``context``."""
    return _translations().pgettext(context, message)


def join_list(items: Iterable[str]) -> str:
    """Items as a list reads in the language in force: "a, b" in English, "a、b" in Chinese."""
    return pgettext("list separator", ", ").join(items)


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: two for a wide (e.g. Chinese) character."""
    return sum(2 if east_asian_width(char) in "WF" else 1 for char in text)


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns."""
    return text + " " * max(0, width - columns(text))


def use_terminal_locale() -> None:
    """Speak the terminal's language from now on (the command line)."""
    global _server_bundle
    _server_bundle = None


def use_server_locale() -> None:
    """Speak the language JupyterLab's frontend asked for from now on (the server extension).

    jupyterlab_server's ``translator`` looks for ``.mo`` files in language packs only, so it is
    given a bundle of ours for our domain, which reads our own catalogue: the translations
    handler switches it when the frontend loads a language, and the settings handler uses it
    for the ``jupyter.lab.internationalization`` domain of our schemas. In a server without
    JupyterLab or Notebook 7, nothing asks for a language: the terminal's locale stays in
    force, and the server does not pay for importing jupyterlab_server.
    """
    global _server_bundle
    # Loaded with JupyterLab's (or Notebook's) extension module: jupyter_server imports every
    # enabled extension's module before it loads any of them.
    translation_utils = sys.modules.get("jupyterlab_server.translation_utils")
    if translation_utils is None:
        return
    translator = translation_utils.translator
    bundle_class = _package_bundle_class()
    bundle = translator._TRANSLATORS.get(DOMAIN)
    if not isinstance(bundle, bundle_class):
        bundle = bundle_class(DOMAIN, translator._LOCALE)
        translator._TRANSLATORS[DOMAIN] = bundle
    _server_bundle = bundle


@cache
def _package_bundle_class() -> type:
    from jupyterlab_server.translation_utils import TranslationBundle

    class PackageBundle(TranslationBundle):
        """jupyterlab_server's bundle, reading this package's catalogue."""

        def update_locale(self, locale_: str) -> None:
            """Switch to ``locale_``: ours when JupyterLab has a language pack for it, so that
            the server and the frontend speak one language; English otherwise."""
            self._locale = locale_
            # Imported here: importlib.metadata costs ~50 ms at import, and everything that
            # speaks (the CLI, every nvidia-smi read's parser) imports this module.
            from importlib.metadata import entry_points

            packs = {entry.name for entry in entry_points(group="jupyterlab.languagepack")}
            languages = [locale_] if locale_ in packs else []
            self._translator = _gettext.translation(
                DOMAIN, localedir=LOCALE_DIR, languages=languages, fallback=True
            )

    return PackageBundle


def _translations() -> Translations:
    if _server_bundle is not None:
        return _server_bundle
    return _gettext.translation(DOMAIN, localedir=LOCALE_DIR, fallback=True)
