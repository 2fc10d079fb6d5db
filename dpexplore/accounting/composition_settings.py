"""The composition settings of Desfontaines (2023), "Composition for variants of differential
privacy", and its table of which optimal composition results are known: for each privacy notion
(:data:`NOTIONS`) and each setting (:data:`SETTINGS`: sequential, adaptive, fully adaptive,
concurrent), the works that prove the result and the dpexplore object that implements it, or
"open". The filters that implement the fully adaptive column are in
:mod:`dpexplore.accounting.filters` (which re-exports these names).

>>> COMPOSITION_TABLE["rho-zCDP"]["fully adaptive"].implementation
'dpexplore.accounting.filters.ZCDPFilter'
>>> sum(c.status == "open" for row in COMPOSITION_TABLE.values() for c in row.values())
2
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMPOSITION_TABLE", "TABLE_REFERENCES", "TableCell", "SETTINGS", "NOTIONS"]

SETTINGS = ("sequential", "adaptive", "fully adaptive", "concurrent")
NOTIONS = (
    "eps-DP",
    "(eps, delta)-DP",
    "Gaussian DP",
    "f-DP",
    "(alpha, eps)-Renyi DP",
    "rho-zCDP",
    "delta-approx. rho-zCDP",
)


@dataclass(frozen=True)
class TableCell:
    """One cell of Desfontaines 2023's table: the works it cites (Desfontaines 2023's labels, with dpexplore
    bibliography keys where present), "known" or "open", a footnote, and the dpexplore object
    implementing the result (dotted name) or None (known, but not in dpexplore)."""

    refs: tuple
    status: str
    implementation: str | None = None
    note: str = ""


def _cell(refs, impl=None, note=""):
    return TableCell(tuple(refs), "known", impl, note)


_OPEN = TableCell((), "open", None, "no optimal composition result known (Desfontaines 2023)")

#: The table of Desfontaines (2023), "Composition for variants of differential privacy",
#: transcribed cell by cell: COMPOSITION_TABLE[notion][setting]. Labels are Desfontaines 2023's
#: ([DMNS06] = Dwork, McSherry, Nissim & Smith 2006; [DKMMN06] = Dwork, Kenthapadi, McSherry,
#: Mironov & Naor 2006; [RRUV16] = Rogers, Roth, Ullman & Vadhan 2016; [VW21] = Vadhan & Wang
#: 2021; [KOV15] = Kairouz, Oh & Viswanath 2015; [WRRW22] = Whitehouse, Ramdas, Rogers & Wu
#: (ICML 2023); [Lyu22] = Lyu 2022; [DRS22] = Dong, Roth & Su 2022; [ST22] = Smith & Thakurta
#: 2022; [VZ22] = Vadhan & Zhang 2022; [Mir17] = Mironov 2017; [FZ21] = Feldman & Zrnic 2021;
#: [BS16] = Bun & Steinke 2016).
COMPOSITION_TABLE: dict = {
    "eps-DP": {
        "sequential": _cell(["DMNS06"], "dpexplore.accounting.composition.basic"),
        "adaptive": _cell(["DKMMN06"], "dpexplore.accounting.composition.basic"),
        "fully adaptive": _cell(["RRUV16"], "dpexplore.accounting.filters.PureDPFilter"),
        "concurrent": _cell(["VW21"]),
    },
    "(eps, delta)-DP": {
        "sequential": _cell(["KOV15"], "dpexplore.accounting.composition.optimal"),
        "adaptive": _cell(["KOV15"], "dpexplore.accounting.composition.optimal"),
        "fully adaptive": _cell(
            ["WRRW22"], "dpexplore.accounting.filters.ApproxDPFilter", "* only asymptotically optimal for small eps"
        ),
        "concurrent": _cell(["WRRW22", "Lyu22"]),
    },
    "Gaussian DP": {
        "sequential": _cell(["DRS22"], "dpexplore.accounting.composition.gdp"),
        "adaptive": _cell(["DRS22"], "dpexplore.accounting.composition.gdp"),
        "fully adaptive": _cell(["ST22"], "dpexplore.accounting.filters.GDPFilter"),
        "concurrent": _cell(["VZ22"]),
    },
    "f-DP": {
        "sequential": _cell(
            ["DRS22"],
            "dpexplore.accounting.composition.compose",
            "tight composed privacy profile of a concrete mechanism (equivalent to f-DP)",
        ),
        "adaptive": _cell(
            ["DRS22"],
            "dpexplore.accounting.composition.compose",
            "tight composed privacy profile of a concrete mechanism (equivalent to f-DP)",
        ),
        "fully adaptive": _OPEN,
        "concurrent": _cell(["VZ22"]),
    },
    "(alpha, eps)-Renyi DP": {
        "sequential": _cell(["Mir17"], "dpexplore.accounting.composition.rdp"),
        "adaptive": _cell(["Mir17"], "dpexplore.accounting.composition.rdp"),
        "fully adaptive": _cell(["FZ21"], "dpexplore.accounting.filters.RenyiFilter"),
        "concurrent": _cell(["Lyu22"]),
    },
    "rho-zCDP": {
        "sequential": _cell(["BS16"], "dpexplore.accounting.composition.zcdp"),
        "adaptive": _cell(["BS16"], "dpexplore.accounting.composition.zcdp"),
        "fully adaptive": _cell(["FZ21"], "dpexplore.accounting.filters.ZCDPFilter"),
        "concurrent": _cell(["Lyu22"]),
    },
    "delta-approx. rho-zCDP": {
        "sequential": _cell(["BS16"]),
        "adaptive": _cell(["BS16"]),
        "fully adaptive": _cell(["WRRW22"], "dpexplore.accounting.filters.ApproxZCDPFilter"),
        "concurrent": _OPEN,
    },
}

#: Desfontaines 2023's labels → dpexplore bibliography keys (``dpexplore.bibliography.references``)
TABLE_REFERENCES = {
    "DMNS06": "dwork2006calibrating",
    "DKMMN06": "dwork2006our",
    "RRUV16": "rogers2016odometers",
    "VW21": "vadhan2021concurrent",
    "KOV15": "kairouz2015composition",
    "WRRW22": "whitehouse2023fully",
    "Lyu22": "lyu2022composition",
    "DRS22": "dong2022gaussian",
    "ST22": "smith2022fully",
    "VZ22": "vadhan2022concurrent",
    "Mir17": "mironov2017",
    "FZ21": "feldman2021individual",
    "BS16": "bun2016concentrated",
}
