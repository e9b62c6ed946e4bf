"""Keep the translation catalogues in step with the code.

    python scripts/translations.py update   # extract the strings into the .pot, merge it into
                                            # each locale's .po (then translate what is new)
    python scripts/translations.py check    # fail, listing them, when a string of the code is
                                            # missing from a .po, untranslated, or stale

Strings are extracted from the TypeScript in src/ (``trans.__``, ``trans._n``, ``trans._p``,
by jupyterlab-translate's gettext-extract), from the settings schemas (the titles and
descriptions jupyterlab_server translates, by jupyterlab-translate), and from the Python package
(``gettext``, ``ngettext``, ``pgettext`` and ``N_``, by Babel). Building the wheel compiles the
.po files (hatch_build.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po
from jupyterlab_translate.constants import GETTEXT_CONFIG
from jupyterlab_translate.utils import _extract_schema_strings

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "src"
SCHEMAS = ROOT / "schema"
PACKAGE = ROOT / "jupyter_server_ext" / "jupyterlab_gpu_monitor"
DOMAIN = "jupyterlab_gpu_monitor"
LOCALE = PACKAGE / "locale"
TEMPLATE = LOCALE / f"{DOMAIN}.pot"
# Extracted comments kept for translators; gettext-extract takes any comment above a call.
TRANSLATOR_TAG = "TRANSLATORS:"
# The objects gettext-extract reads translation calls on: a call on another one is not
# extracted, so the check refuses it.
BUNDLES = sorted(
    {parser["expression"].rpartition(".")[0] for parser in GETTEXT_CONFIG["js"]["parsers"]}
)
CALL = re.compile(r"([\w.]+)\.(__|_n|_p|_np)\(\s*(\S)")
PLACEHOLDER = re.compile(r"%\d+|\{[A-Za-z_]\w*\}")
HEADER = """\
# Translations template for jupyterlab-gpu-monitor: `make translations` writes it.
# Copyright (C) jupyterlab-gpu-monitor contributors
# Distributed under the terms of the BSD-3-Clause license, as the project."""


def version() -> str:
    """The project's version, from package.json."""
    return json.loads((ROOT / "package.json").read_text())["version"]


def extract() -> Catalog:
    """Every string of the code, as a template catalogue."""
    template = Catalog(
        domain=DOMAIN,
        project=DOMAIN,
        version=version(),
        copyright_holder="jupyterlab-gpu-monitor contributors",
        header_comment=HEADER,
        fuzzy=False,
    )
    for message in (*typescript_messages(), *schema_messages(), *python_messages()):
        known = template.get(message.id, message.context)
        if known is None:
            template[message.id] = message
        else:
            known.locations.extend(message.locations)
            known.auto_comments.extend(message.auto_comments)
    return template


def typescript_messages() -> Iterator[Message]:
    """The strings of ``trans`` calls in src/ (tests aside)."""
    config = json.loads(json.dumps(GETTEXT_CONFIG))
    config["js"]["glob"] = {"pattern": "**/*.ts*(x)", "options": {"ignore": "__tests__/**"}}
    with tempfile.TemporaryDirectory() as folder:
        config["output"] = str(Path(folder) / "typescript.pot")
        config_path = Path(folder) / "config.json"
        config_path.write_text(json.dumps(config))
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        subprocess.run(
            ["gettext-extract", "--config", str(config_path)],
            cwd=SOURCES,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with open(config["output"], "rb") as extracted:
            catalog = read_po(extracted)
    for message in catalog:
        if not message.id:
            continue
        yield Message(
            message.id,
            context=message.context,
            locations=[(f"src/{path}", line) for path, line in message.locations],
            auto_comments=[
                comment for comment in message.auto_comments if comment.startswith(TRANSLATOR_TAG)
            ],
        )


def schema_messages() -> Iterator[Message]:
    """The titles and descriptions jupyterlab_server translates in our settings schemas."""
    for path in sorted(SCHEMAS.glob("*.json")):
        reference = str(path.relative_to(ROOT))
        for entry in _extract_schema_strings(json.loads(path.read_text()), reference):
            yield Message(entry["msgid"], context=entry["msgctxt"], locations=[(reference, None)])


def python_messages() -> Iterator[Message]:
    """The strings of gettext calls in the Python package."""
    for path, line, text, comments, context in extract_from_dir(
        PACKAGE,
        method_map=[("**.py", "python")],
        keywords=DEFAULT_KEYWORDS,
        comment_tags=(TRANSLATOR_TAG,),
        strip_comment_tags=False,
    ):
        yield Message(
            text,
            context=context,
            locations=[(str((PACKAGE / path).relative_to(ROOT)), line)],
            auto_comments=comments,
        )


def catalogues() -> list[Path]:
    """Each locale's catalogue."""
    return sorted(LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def update() -> int:
    """Write the template, and merge it into each locale's catalogue."""
    template = extract()
    if TEMPLATE.exists():
        with TEMPLATE.open("rb") as source:
            committed = read_po(source)
        if keys(committed) == keys(template):
            # Moved lines only: the same strings as when it was made.
            template.creation_date = committed.creation_date
    write(TEMPLATE, template)
    for path in catalogues():
        with path.open("rb") as source:
            catalog = read_po(source)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.project, catalog.version = template.project, template.version
        write(path, catalog)
        untranslated = sum(1 for message in catalog if message.id and not translated(message))
        print(f"{path.relative_to(ROOT)}: {untranslated} to translate")
    print(f"{TEMPLATE.relative_to(ROOT)}: {len(template)} strings")
    return 0


def write(path: Path, catalog: Catalog) -> None:
    """A catalogue in the .po format, the way the repository keeps it."""
    with path.open("wb") as target:
        write_po(target, catalog, width=100, ignore_obsolete=True, include_previous=False)


def check() -> int:
    """0 when every string of the code is translated in every locale; 1, listing why, when not."""
    problems = list(call_problems())
    template = extract()
    with TEMPLATE.open("rb") as source:
        committed = read_po(source)
    if keys(committed) != keys(template):
        problems.append(f"{TEMPLATE.relative_to(ROOT)} is out of date")
    for path in catalogues():
        with path.open("rb") as source:
            catalog = read_po(source)
        name = path.relative_to(ROOT)
        for key in sorted(keys(template) - keys(catalog), key=str):
            problems.append(f"{name}: missing {describe(key)}")
        for key in sorted(keys(catalog) - keys(template), key=str):
            problems.append(f"{name}: stale {describe(key)}")
        for message in catalog:
            if not message.id or (message.context, message.id) not in keys(template):
                continue
            if not translated(message):
                problems.append(f"{name}: untranslated {describe((message.context, message.id))}")
            elif not same_placeholders(message):
                problems.append(f"{name}: placeholders differ in {message.string!r}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(
            f"{len(problems)} translation problems: run `make translations`, translate what is "
            "new in each .po, and build again.",
            file=sys.stderr,
        )
        return 1
    print(f"{len(template)} strings, every one translated in {len(catalogues())} locale(s)")
    return 0


def call_problems() -> Iterator[str]:
    """Translation calls in src/ that gettext-extract would not extract."""
    for path in sorted(SOURCES.rglob("*.ts*")):
        if "__tests__" in path.parts:
            continue
        text = path.read_text()
        for call in CALL.finditer(text):
            bundle, function, first = call.groups()
            line = text.count("\n", 0, call.start()) + 1
            where = f"{path.relative_to(ROOT)}:{line}"
            if bundle not in BUNDLES:
                yield f"{where}: {bundle}.{function}() is not extracted; call it on {BUNDLES}"
            elif first not in "'\"":
                yield f"{where}: {bundle}.{function}() takes a string literal, to be extracted"


def keys(catalog: Catalog) -> set[tuple[str | None, str | tuple[str, ...]]]:
    """What identifies each message of a catalogue: its context and its id."""
    return {(message.context, message.id) for message in catalog if message.id}


def describe(key: tuple[str | None, str | tuple[str, ...]]) -> str:
    """A message's key, for a person."""
    context, message_id = key
    text = message_id if isinstance(message_id, str) else message_id[0]
    return repr(text) if context is None else f"{text!r} (context {context!r})"


def translated(message: Message) -> bool:
    """Whether a message has a translation that is not fuzzy."""
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return not message.fuzzy and all(strings)


def same_placeholders(message: Message) -> bool:
    """Whether the translation keeps the placeholders of the original (%1, {name}): a plural
    form may leave out the count, %1."""
    if isinstance(message.id, str):
        return sorted(PLACEHOLDER.findall(message.string)) == sorted(
            PLACEHOLDER.findall(message.id)
        )
    originals = set(PLACEHOLDER.findall(message.id[0])) | set(PLACEHOLDER.findall(message.id[1]))
    needed = originals - {"%1"}
    return all(needed <= set(PLACEHOLDER.findall(form)) <= originals for form in message.string)


def main() -> int:
    """Run ``update`` or ``check``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("update", "check"))
    return {"update": update, "check": check}[parser.parse_args().command]()


if __name__ == "__main__":
    sys.exit(main())
