"""Citations stay self-contained, and the docs point at files and names that exist.

Code, tests and docs cite what a reader can open: a Kafka class or method, a KIP section, a
JIRA issue or a file of this repository (README.md, Conventions). These tests fail on a
reference to notes kept outside the repository, on a ``docs/*.md`` link or path that does
not resolve, and on a ``path: name`` reference whose name the file does not define (in
``docs/*.md``, README.md and model/README.md). The
mutant entries of docs/bugs.md must match ``groupcheck.mutants.MUTANTS``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from groupcheck.mutants import MUTANTS
from invariants.check import all_properties
from invariants.properties import Kind
from model.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
TEXT_SUFFIXES = (".py", ".md", ".tla", ".toml", ".json", ".cfg")

OUTSIDE_NOTES = re.compile(
    r"kafka-imp[l]|design\.md|bug[ -]catalogue|\.\./shared|§\s?\d",
    re.IGNORECASE,
)
"""Pointers to notes outside the repository (their section numbers included)."""

ALLOWED = {("tests/reports/render/test_render.py", "PNG specification §")}
"""(file, text on the line): a section of a public standard, not of a private note."""


def tracked_text_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return sorted(p for p in out.split("\0") if p.endswith(TEXT_SUFFIXES))


def test_no_citation_points_outside_the_repository() -> None:
    offending = []
    for name in tracked_text_files():
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree, not yet in the index
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not OUTSIDE_NOTES.search(line):
                continue
            if any(name == f and text in line for f, text in ALLOWED):
                continue
            offending.append(f"{name}:{number}: {line.strip()}")
    assert not offending, "citations of notes outside the repository:\n" + "\n".join(offending)


def test_the_pattern_catches_what_it_should() -> None:
    # Spelled in pieces so that this file does not match its own pattern.
    section = "\u00a7"
    for text in (
        "see kafka-" + "impl.md " + section + "5",
        "(" + section + "4.3 step 4)",
        "design" + ".md",
        "Bug " + "Catalogue #12",
        "../" + "shared/" + "research",
    ):
        assert OUTSIDE_NOTES.search(text), text
    for text in ("docs/kafka-rules.md, Reconciliation", "KAFKA-16147", "KIP-848 Fencing"):
        assert not OUTSIDE_NOTES.search(text), text


# --------------------------------------------------------------------------- doc links

REPO_PATH = re.compile(
    r"^(?:README\.md|Makefile|pyproject\.toml"
    r"|(?:model|invariants|reports|groupcheck|tests|tla|bench|scripts|docs)/[\w./-]*)"
    r"(?::\s*(?P<names>[\w.]+))?$"
)
"""A backticked repository path, optionally followed by ``: name`` (a function, class or
constant it defines; ``Class.method`` for a method)."""

MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _defines(source: str, dotted: str) -> bool:
    """Whether ``source`` defines ``dotted`` (``name`` or ``Class.member``)."""
    *owner, name = dotted.split(".")
    if owner and not re.search(rf"^class {re.escape(owner[0])}\b", source, re.MULTILINE):
        return False
    indent = r"\s+" if owner else ""
    definition = rf"^{indent}(?:def|class) {re.escape(name)}\b|^{indent}{re.escape(name)}\s*[:=]"
    return re.search(definition, source, re.MULTILINE) is not None


def _references(doc: Path) -> list[tuple[str, str | None]]:
    text = doc.read_text(encoding="utf-8")
    refs: list[tuple[str, str | None]] = []
    for code in re.findall(r"`([^`\n]+)`", text):
        match = REPO_PATH.match(code)
        if match is not None:
            refs.append((code.split(":")[0], match.group("names")))
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"^[a-z]+:|^#", target):
            continue  # a URL or an anchor
        resolved = (doc.parent / target.split("#")[0]).resolve()
        refs.append((str(resolved.relative_to(ROOT)), None))
    return refs


def _ignored(path: str) -> bool:
    """Whether git ignores ``path`` (a generated output such as ``reports/out/…``), as a
    file or as a directory."""
    if shutil.which("git") is None:
        return False
    return any(
        subprocess.run(["git", "check-ignore", "-q", p], cwd=ROOT, check=False).returncode == 0
        for p in (path, path.rstrip("/") + "/")
    )


READMES = (ROOT / "README.md", ROOT / "model" / "README.md")
"""Read-me files checked like ``docs/*.md`` (docs/architecture.md among those): the
project's, and the model's reading order."""


@pytest.mark.parametrize("doc", [*DOCS, *READMES], ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_references_resolve(doc: Path) -> None:
    missing = []
    for path, names in _references(doc):
        target = ROOT / path
        if not target.exists():
            if not _ignored(path):
                missing.append(path)
        elif names is not None and not _defines(target.read_text(encoding="utf-8"), names):
            missing.append(f"{path}: {names}")
    assert not missing, f"{doc.relative_to(ROOT)} refers to what does not exist: {missing}"


def test_kafka_rules_name_real_rules_fields() -> None:
    text = (ROOT / "docs" / "kafka-rules.md").read_text(encoding="utf-8")
    fields = set(Rules.__dataclass_fields__)
    named = set(re.findall(r"Rules fields? `(\w+)`", text))
    assert named, "docs/kafka-rules.md names no Rules field"
    assert named <= fields, f"not fields of model.rules.Rules: {sorted(named - fields)}"


# --------------------------------------------------------------------------- docs/bugs.md


def _bug_entries() -> dict[str, str]:
    text = (ROOT / "docs" / "bugs.md").read_text(encoding="utf-8")
    parts = re.split(r"^### `([\w-]+)`\n", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_bugs_doc_has_one_entry_per_mutant() -> None:
    assert sorted(_bug_entries()) == sorted(MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_bugs_doc_entry_matches_the_mutant(name: str) -> None:
    entry = _bug_entries()[name]
    mutant = MUTANTS[name]
    for field in mutant.fields:
        assert f"Rules field `{field}`" in entry
    assert f"**Scenario:** `{mutant.config.name}`" in entry
    if "**Killed by:** none — a known survivor" in entry:
        assert mutant.survivor, f"{name}: docs/bugs.md calls it a survivor; its entry does not"
        return
    killed_by = re.search(r"\*\*Killed by:\*\* (witness lost, )?`([\w.]+)`", entry)
    assert killed_by is not None
    kinds = {p.name: p.kind for p in all_properties()}
    assert killed_by.group(2) in kinds
    # A witness-lost kill names a witness (a SOMETIMES property), any other a property.
    assert (killed_by.group(1) is not None) == (kinds[killed_by.group(2)] is Kind.SOMETIMES)
    for jira in re.findall(r"KAFKA-\d+", mutant.bug):
        assert jira in entry, f"{name}: the catalogue cites {jira}, the entry does not"
