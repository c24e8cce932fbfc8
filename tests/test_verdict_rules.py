"""The verdict rules over the whole book: every row of every chapter obeys ``theorybook.check.rule_violations``.

Walks (1) every chapter package's ``verdicts.py`` — its ``PAPER_CLAIMS``, its ``deterministic_verdicts()`` and
``seeded_verdicts(seed)`` builders — and (2) the executed claims ledger (``_build/html/ledger.json``, written by
``make book``; this test is marked ``built`` and runs in ``make test-browser``, after the build), so a row
that reaches a reader can be neither a reproduction without a failing control, nor a ``reproduces``/``differs``
row on a claim of our own, nor a ``differs`` row the paper's value would pass, nor a tolerance without
provenance. It also checks that a chapter's rows live in its ``verdicts.py`` (no chapter builds a table inline)
and that pilot seeds stay disjoint from chapter and robustness seeds.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from pathlib import Path

import pytest
import verdict_runs

from theorybook.check import (
    OUTCOMES,
    PILOT_SEEDS,
    REASON_CLASSES,
    PaperClaim,
    Verdicts,
    claim_violations,
    headline_claim,
    rule_violations,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_cache  # noqa: E402

LEDGER = ROOT / "_build" / "html" / "ledger.json"
ROBUSTNESS_SEEDS = verdict_runs.ROBUSTNESS_SEEDS


CHAPTERS = [(p.stem, p) for p in chapter_cache.chapters(ROOT)]  # the _toc.yml chapters, back matter excluded
SLUGS = [s for s, _ in CHAPTERS]


def _verdicts_module(slug: str):
    return importlib.import_module(f"theorybook.{slug}.verdicts")


def _claim_ids(slug: str) -> set[str]:
    return {c.id for c in _verdicts_module(slug).PAPER_CLAIMS}


def _check_table(slug: str, v: Verdicts) -> list[str]:
    ids = _claim_ids(slug)
    bad = [f"{slug}: {msg}" for r in v.rows for msg in rule_violations(r)]
    bad += [f"{slug}: row {r.claim!r} tests unknown paper claim {r.tests!r}" for r in v.rows
            if r.tests and r.tests not in ids]
    return bad


def test_nineteen_chapters():
    assert len(CHAPTERS) == 19


@pytest.mark.parametrize("slug", SLUGS)
def test_chapter_declares_its_paper_claims(slug):
    mod = _verdicts_module(slug)
    claims = mod.PAPER_CLAIMS
    assert claims and all(isinstance(c, PaperClaim) for c in claims), f"{slug}: PAPER_CLAIMS must be PaperClaims"
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)), f"{slug}: duplicate paper-claim ids {ids}"
    assert any(c.where == "abstract" for c in claims), f"{slug}: no abstract-level claim declared"
    for c in claims:
        if c.quoted_only:
            assert c.reason_class in REASON_CLASSES, f"{slug}: quoted-only claim {c.id!r} has no reason class"
    assert sum(c.headline for c in claims) <= 1, f"{slug}: more than one headline claim"
    assert headline_claim(claims) is not None, f"{slug}: no headline claim (mark one abstract claim headline=True)"


@pytest.mark.parametrize("slug", SLUGS)
def test_builders_obey_the_rules(slug):
    mod = _verdicts_module(slug)
    pkg = importlib.import_module(f"theorybook.{slug}")
    tables = []
    if hasattr(pkg, "deterministic_verdicts"):
        tables.append(verdict_runs.deterministic(slug))
    if hasattr(pkg, "seeded_verdicts"):
        tables.append(verdict_runs.seeded(slug, verdict_runs.sample_seeds(slug)[0]))  # one the audit test re-computes
        assert getattr(pkg.seeded_verdicts, "__module__", "").endswith(".verdicts"), \
            f"{slug}: seeded_verdicts must live in verdicts.py"
    if hasattr(pkg, "deterministic_verdicts"):
        assert pkg.deterministic_verdicts.__module__.endswith(".verdicts"), \
            f"{slug}: deterministic_verdicts must live in verdicts.py"
    assert mod is not None
    bad = [m for v in tables for m in _check_table(slug, v)]
    assert not bad, "; ".join(bad)


@pytest.mark.parametrize("slug", SLUGS)
def test_pilot_seeds_are_disjoint(slug):
    pkg = importlib.import_module(f"theorybook.{slug}")
    own = set(getattr(pkg, "CHAPTER_SEEDS", ()))
    assert not own & set(PILOT_SEEDS), f"{slug}: chapter seeds overlap the pilot seeds"
    assert not set(PILOT_SEEDS) & set(ROBUSTNESS_SEEDS)


_INLINE = re.compile(r"\bVerdicts\(|\.(close|less|greater|between|equal)\([^)]*\bkind=|\.true\([^)]*\bkind=")


@pytest.mark.parametrize("slug,path", CHAPTERS, ids=SLUGS)
def test_rows_live_in_verdicts_py(slug, path):
    """A chapter shows tables that its package's verdicts.py builds; it never records a row itself."""
    text = path.read_text()
    hits = [m.group(0) for m in _INLINE.finditer(text)]
    assert not hits, f"{path.name}: rows recorded in the chapter ({hits[:3]}) — move them to theorybook.{slug}.verdicts"
    assert f"{slug}.verdicts" in text or f"{slug} import verdicts" in text or "verdicts." in text, \
        f"{path.name}: the chapter does not show its package's verdicts"


def _ledger() -> dict:
    if not LEDGER.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{LEDGER} is missing: `make book` must run before the rules test in CI")
        pytest.skip(f"{LEDGER} not built (run `make book`)")
    return json.loads(LEDGER.read_text())


@pytest.mark.built
def test_executed_ledger_obeys_the_rules():
    led = _ledger()
    docs = {c["doc"].rsplit("/", 1)[-1]: c for c in led["chapters"]}
    assert set(docs) == set(SLUGS), f"ledger chapters {sorted(docs)} ≠ _toc.yml's"
    bad = []
    for slug, ch in docs.items():
        ids = {c["id"] for c in ch["claims"]}
        assert ids == _claim_ids(slug), f"{slug}: the executed chapter declares {ids}, verdicts.py {_claim_ids(slug)}"
        for t in ch["tables"]:
            for r in t["rows"]:
                bad += [f"{slug}: {m}" for m in rule_violations(r)]
                if r.get("tests") and r["tests"] not in ids:
                    bad.append(f"{slug}: row {r['claim']!r} tests unknown claim {r['tests']!r}")
                if not r["holds"]:
                    bad.append(f"{slug}: row {r['claim']!r} does not stand as registered: {r.get('reason')}")
                if r["kind"] in OUTCOMES and r.get("outcome") != r["kind"]:
                    bad.append(f"{slug}: row {r['claim']!r} registered {r['kind']!r}, evidence {r.get('outcome')!r}")
                if r["kind"] == "reproduces":
                    if not r["controls"] or any(c["passes"] for c in r["controls"]):
                        bad.append(f"{slug}: reproduction {r['claim']!r} without a failing control")
                    if all(c.get("weak") for c in r["controls"]):
                        bad.append(f"{slug}: reproduction {r['claim']!r} whose only controls are weak")
                if r["kind"] == "not_specific" and not any(c["passes"] for c in r["controls"]):
                    bad.append(f"{slug}: 'holds, not specific' row {r['claim']!r} names no passing alternative")
                if r["kind"] in ("differs", "inconclusive"):
                    if r.get("paper_passes") is not False:
                        bad.append(f"{slug}: {r['kind']} row {r['claim']!r} whose paper value was not shown to fail")
                if r["kind"] == "differs" and (r.get("planted") is None or r["planted"]["passes"]):
                    bad.append(f"{slug}: differs row {r['claim']!r} without a caught plant")
        # the chapter-level rules: every declared claim tested or quoted with its reason class; regimes scanned
        bad += [f"{slug}: {m}" for m in claim_violations(ch["claims"], [r for t in ch["tables"] for r in t["rows"]])]
    assert not bad, "; ".join(bad)
    tot = led["totals"]
    assert tot["reproduces"] == sum(c["counts"]["reproduces"] for c in docs.values())
    assert sum(tot["claims_by_outcome"].values()) == tot["claims"]
    assert sum(tot["bottom_lines_by_outcome"].values()) == len(docs)
    for slug, ch in docs.items():
        b = ch["bottom_line"]
        assert b and b["outcome"] == ch["claim_outcome"][b["claim"]]["outcome"], f"{slug}: bottom line"
        for t in ch["tables"]:
            for r in t["rows"]:
                assert "outcome" in r, f"{slug}: ledger row {r['claim']!r} without an outcome"


# The reader's cross-chapter view (issue 59 item 5) and the front page's chapter cards, read from the built HTML.
CARD_COUNTS = re.compile(r"(\d+) (reproduces|holds, not specific|differs|inconclusive|quoted only|own checks)")
CARD_KEYS = {"reproduces": "reproduces", "holds, not specific": "not_specific", "differs": "differs",
             "inconclusive": "inconclusive", "quoted only": "quoted"}


def _soup(path: Path):
    bs4 = pytest.importorskip("bs4")
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: `make book` must run before this test in CI")
        pytest.skip(f"{path} not built (run `make book`)")
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _front_page(html_dir: Path) -> Path:
    """The page a reader lands on: index.html, or the page its meta refresh redirects to."""
    index = (html_dir / "index.html").read_text(encoding="utf-8")
    m = re.search(r"url=([^\"'>\s]+)", index)
    return (html_dir / m.group(1)) if m else html_dir / "index.html"


@pytest.mark.built
def test_across_the_book_list_one_click_from_the_front_page():
    """The front page links straight to the ledger's list of every paper-claim row that holds but is not specific,
    differs or is inconclusive; the list holds exactly those rows of the executed book, each with its reason."""
    led = _ledger()
    html_dir = LEDGER.parent
    front = _front_page(html_dir)
    soup = _soup(front)
    links = [a["href"] for a in soup.select("main a[href]") if a["href"].endswith("#ledger-across-the-book")]
    assert links, f"{front.name}: no link to the ledger's cross-chapter list"
    target = (front.parent / links[0].split("#")[0]).resolve()
    ledger = _soup(target)
    assert ledger.select_one("#ledger-across-the-book"), f"{target.name}: the link's anchor is missing"
    expected = {"not_specific": 0, "differs": 0, "inconclusive": 0}
    for ch in led["chapters"]:
        for t in ch["tables"]:
            for r in t["rows"]:
                if r["kind"] in expected:
                    expected[r["kind"]] += 1
    rows = ledger.select("tr.ledger-across")
    got = {k: sum(r.get("data-outcome") == k for r in rows) for k in expected}
    assert got == expected, f"cross-chapter list {got} ≠ the book's rows {expected}"
    assert sum(expected.values()) > 0
    no_reason = [r.get_text(" ", strip=True)[:80] for r in rows if not r.select("td")[-1].get_text(strip=True)]
    assert not no_reason, f"rows listed without their reason: {no_reason[:3]}"


@pytest.mark.built
def test_chapter_cards_agree_with_the_tables():
    """Each front-page card's counts are its chapter's: the claims per outcome as the ledger computes them, the
    own checks as the chapter page's consistency group lists them, and a claim outcome the card counts has its
    group of rows on the chapter page."""
    led = _ledger()
    html_dir = LEDGER.parent
    front = _front_page(html_dir)
    cards = {a["data-doc"]: a for a in _soup(front).select("a.chapter-card")}
    docs = {c["doc"]: c for c in led["chapters"]}
    assert set(cards) == set(docs), f"cards {sorted(set(cards) ^ set(docs))} differ from the ledger's chapters"
    bad = []
    for doc, card in cards.items():
        ch = docs[doc]
        said = {k: int(n) for n, k in CARD_COUNTS.findall(card.select_one(".card-status").get_text(" "))}
        for label, key in CARD_KEYS.items():
            if said.get(label) != len(ch[key]):
                bad.append(f"{doc}: card says {said.get(label)} {label}, the ledger {len(ch[key])}")
        page = _soup(html_dir / f"{doc}.html")
        groups = {g["class"][-1].removeprefix("verdict-group-"): len(g.select("tr.verdict-row"))
                  for g in page.select("details.verdict-group")}
        if said.get("own checks") != ch["counts"]["consistency"] or \
                said.get("own checks") != sum(n for k, n in groups.items() if k == "consistency"):
            bad.append(f"{doc}: card says {said.get('own checks')} own checks, page {groups.get('consistency')}")
        for label, key in CARD_KEYS.items():
            if key != "quoted" and said.get(label, 0) > 0 and not groups.get(key):
                bad.append(f"{doc}: card counts {said[label]} {label} but the page has no such group")
    assert not bad, "; ".join(bad)
