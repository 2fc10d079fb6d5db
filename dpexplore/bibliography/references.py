"""dpexplore's bibliography: every work the code, the apps and the docs cite.

Docstrings cite a result by author, year and theorem ("Mironov (2017), Proposition 6"); the apps
show the same short citation linked to the work (:func:`cite`), and ``docs/references.md`` is
this list rendered (:func:`bibliography_markdown`) with the table of every citation
(:func:`dpexplore.bibliography.scanner.docs_markdown`; a test keeps the two in sync).

>>> get("mironov2017").short
'Mironov 2017'
>>> cite_text("liu2022", "Theorem 2.1")
'Liu et al. (2022), Theorem 2.1'
>>> cite("mironov2017", "Prop. 6")[:52]
'<a class="dpexplore-cite" href="https://arxiv.org/ab'
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

__all__ = [
    "Reference",
    "REFERENCES",
    "NO_DOI_OR_ARXIV",
    "get",
    "cite",
    "cite_text",
    "autolink",
    "cited_keys",
    "bibliography_html",
    "bibliography_markdown",
]


@dataclass(frozen=True)
class Reference:
    """One cited work. ``short`` is its author–year label ("Liu et al. 2022")."""

    key: str
    authors: str
    title: str
    venue: str
    year: int
    url: str
    short: str
    #: other spellings of ``short`` the plain-text citations use ("Kamath, Li, Singhal & Ullman 2019")
    aliases: tuple[str, ...] = ()
    #: which version the theorem numbers the project cites follow ("arXiv v3", "journal", "post")
    numbering: str = ""

    def entry_text(self) -> str:
        """The full entry as plain text: authors (year). Title. Venue."""
        return f"{self.authors} ({self.year}). {self.title}. {self.venue}."

    def numbered_as(self) -> str:
        """Which version the theorem numbers the project cites follow: ``numbering`` if given,
        else the arXiv identifier (with its version, if the URL names one) of ``url``.

        >>> get("mironov2017").numbered_as()
        'arXiv:1702.07476v3'
        """
        if self.numbering:
            return self.numbering
        m = re.search(r"arxiv\.org/abs/(\d{4}\.\d{4,5}(?:v\d+)?)", self.url)
        if m:
            return f"arXiv:{m.group(1)}"
        m = re.search(r"doi\.org/(10\.\S+)", self.url)
        return f"the published version (doi:{m.group(1)})" if m else ""


_DPORG = "https://differentialprivacy.org"
_POST = "the post (its own numbering)"

#: every cited work, ordered by key
REFERENCES: tuple[Reference, ...] = tuple(
    sorted(
        (
            # -- posts on differentialprivacy.org -------------------------------------------------------
            Reference(
                "steinke2024pdp",
                "Thomas Steinke",
                "Tight RDP & zCDP bounds from pure DP",
                "DifferentialPrivacy.org (blog post, 27 May 2024)",
                2024,
                f"{_DPORG}/pdp-to-zcdp/",
                "Steinke 2024",
                numbering=_POST,
            ),
            Reference(
                "kamath2024onerun",
                "Gautam Kamath",
                "NeurIPS 2023 outstanding paper: privacy auditing in just one run",
                "DifferentialPrivacy.org (blog post, 2 Jan 2024)",
                2024,
                f"{_DPORG}/neurips23-op/",
                "Kamath 2024",
                numbering=_POST,
            ),
            Reference(
                "desfontaines2023composition",
                "Damien Desfontaines",
                "Open problem(s) – how generic can composition results be?",
                "DifferentialPrivacy.org (blog post, 18 Sep 2023)",
                2023,
                f"{_DPORG}/open-problems-how-generic-can-composition-be/",
                "Desfontaines 2023",
                numbering=_POST,
            ),
            Reference(
                "steinke2023down",
                "Thomas Steinke",
                "Beyond local sensitivity via down sensitivity",
                "DifferentialPrivacy.org (blog post, 12 Sep 2023)",
                2023,
                f"{_DPORG}/down-sensitivity/",
                "Steinke 2023b",
                numbering=_POST,
            ),
            Reference(
                "steinke2023inverse",
                "Thomas Steinke",
                "Beyond global sensitivity via inverse sensitivity",
                "DifferentialPrivacy.org (blog post, 5 Sep 2023)",
                2023,
                f"{_DPORG}/inverse-sensitivity/",
                "Steinke 2023a",
                numbering=_POST,
            ),
            Reference(
                "kamath2023covariance",
                "Gautam Kamath",
                "Covariance-aware private mean estimation, efficiently",
                "DifferentialPrivacy.org (blog post, 17 Jul 2023)",
                2023,
                f"{_DPORG}/colt23-bsp/",
                "Kamath 2023",
                numbering=_POST,
            ),
            Reference(
                "pujol2023groups",
                "David Pujol and Damien Desfontaines",
                "Open problem – better privacy guarantees for larger groups",
                "DifferentialPrivacy.org (blog post, 26 Jun 2023)",
                2023,
                f"{_DPORG}/open-problem-better-privacy-guarantees-for-larger-groups/",
                "Pujol & Desfontaines 2023",
                numbering=_POST,
            ),
            Reference(
                "steinke2022composition",
                "Thomas Steinke",
                "Composition basics",
                "DifferentialPrivacy.org (blog post, 1 Nov 2022)",
                2022,
                f"{_DPORG}/composition-basics/",
                "Steinke 2022",
                numbering=_POST,
            ),
            Reference(
                "canonne2022doona",
                "Clément Canonne",
                "Privacy doona: why we should hide among the clones",
                "DifferentialPrivacy.org (blog post, 24 May 2022)",
                2022,
                f"{_DPORG}/privacy-doona/",
                "Canonne 2022",
                numbering=_POST,
            ),
            # -- papers, lecture notes ----------------------------------------------------------------
            Reference(
                "vinterbo2022",
                "Staal A. Vinterbo",
                "Differential privacy for symmetric log-concave mechanisms",
                "AISTATS 2022, PMLR 151",
                2022,
                "https://proceedings.mlr.press/v151/vinterbo22a.html",
                "Vinterbo 2022",
                numbering="the AISTATS 2022 paper (PMLR 151)",
            ),
            Reference(
                "liu2022",
                "Yi Liu, Ke Sun, Bei Jiang and Linglong Kong",
                "Identification, amplification and measurement: a bridge to Gaussian differential privacy",
                "NeurIPS 2022",
                2022,
                "https://arxiv.org/abs/2210.09269",
                "Liu et al. 2022",
                numbering="the NeurIPS 2022 paper (arXiv:2210.09269)",
            ),
            Reference(
                "bassi2019",
                "Germán Bassi",
                "Differential privacy and generalization",
                "Lecture slides, KTH Royal Institute of Technology, 18 Nov 2019",
                2019,
                "",
                "Bassi 2019",
                numbering="the slides, cited by slide title",
            ),
            Reference(
                "steinke2023onerun",
                "Thomas Steinke, Milad Nasr and Matthew Jagielski",
                "Privacy auditing with one (1) training run",
                "NeurIPS 2023",
                2023,
                "https://arxiv.org/abs/2305.08846",
                "Steinke, Nasr & Jagielski 2023",
            ),
            Reference(
                "fang2022shifted",
                "Juanru Fang, Wei Dong and Ke Yi",
                "Shifted inverse: a general mechanism for monotonic functions under user differential privacy",
                "ACM CCS 2022",
                2022,
                "https://cse.hkust.edu.hk/~yike/ShiftedInverse.pdf",
                "Fang, Dong & Yi 2022",
            ),
            Reference(
                "asi2020near",
                "Hilal Asi and John C. Duchi",
                "Near instance-optimality in differential privacy",
                "arXiv:2005.10630",
                2020,
                "https://arxiv.org/abs/2005.10630",
                "Asi & Duchi 2020",
            ),
            Reference(
                "brown2023fast",
                "Gavin Brown, Samuel B. Hopkins and Adam Smith",
                "Fast, sample-efficient, affine-invariant private mean and covariance estimation "
                "for subgaussian distributions",
                "COLT 2023",
                2023,
                "https://arxiv.org/abs/2301.12250",
                "Brown, Hopkins & Smith 2023",
            ),
            Reference(
                "duchi2023fast",
                "John C. Duchi, Saminul Haque and Rohith Kuditipudi",
                "A fast algorithm for adaptive private mean estimation",
                "COLT 2023",
                2023,
                "https://arxiv.org/abs/2301.07078",
                "Duchi, Haque & Kuditipudi 2023",
            ),
            Reference(
                "feldman2021clones",
                "Vitaly Feldman, Audra McMillan and Kunal Talwar",
                "Hiding among the clones: a simple and nearly optimal analysis of privacy amplification by shuffling",
                "FOCS 2021",
                2021,
                "https://arxiv.org/abs/2012.12803",
                "Feldman, McMillan & Talwar 2021",
            ),
            Reference(
                "dwork2015generalization",
                "Cynthia Dwork, Vitaly Feldman, Moritz Hardt, Toniann Pitassi, Omer Reingold and Aaron Roth",
                "Generalization in adaptive data analysis and holdout reuse",
                'NeurIPS 2015 (the full version of their Science paper "The reusable holdout")',
                2015,
                "https://arxiv.org/abs/1506.02629",
                "Dwork et al. 2015",
                aliases=("Dwork, Feldman, Hardt, Pitassi, Reingold & Roth 2015",),
            ),
            Reference(
                "dwork2014algorithmic",
                "Cynthia Dwork and Aaron Roth",
                "The algorithmic foundations of differential privacy",
                "Foundations and Trends in Theoretical Computer Science 9(3–4)",
                2014,
                "https://doi.org/10.1561/0400000042",
                "Dwork & Roth 2014",
                numbering="the monograph (Foundations and Trends in TCS 9(3–4))",
            ),
            Reference(
                "dwork2006calibrating",
                "Cynthia Dwork, Frank McSherry, Kobbi Nissim and Adam Smith",
                "Calibrating noise to sensitivity in private data analysis",
                "TCC 2006",
                2006,
                "https://doi.org/10.1007/11681878_14",
                "Dwork et al. 2006",
                aliases=("Dwork, McSherry, Nissim & Smith 2006",),
            ),
            Reference(
                "mcsherry2007mechanism",
                "Frank McSherry and Kunal Talwar",
                "Mechanism design via differential privacy",
                "FOCS 2007",
                2007,
                "https://doi.org/10.1109/FOCS.2007.66",
                "McSherry & Talwar 2007",
            ),
            Reference(
                "balle2018improving",
                "Borja Balle and Yu-Xiang Wang",
                "Improving the Gaussian mechanism for differential privacy: analytical calibration "
                "and optimal denoising",
                "ICML 2018",
                2018,
                "https://arxiv.org/abs/1805.06530",
                "Balle & Wang 2018",
            ),
            Reference(
                "dong2022gaussian",
                "Jinshuo Dong, Aaron Roth and Weijie J. Su",
                "Gaussian differential privacy",
                "Journal of the Royal Statistical Society Series B 84(1)",
                2022,
                "https://arxiv.org/abs/1905.02383",
                "Dong, Roth & Su 2022",
                numbering="arXiv:1905.02383 (the JRSSB version numbers results differently)",
            ),
            Reference(
                "mironov2017",
                "Ilya Mironov",
                "Rényi differential privacy",
                "IEEE CSF 2017",
                2017,
                "https://arxiv.org/abs/1702.07476v3",
                "Mironov 2017",
            ),
            Reference(
                "balle2020hypothesis",
                "Borja Balle, Gilles Barthe, Marco Gaboardi, Justin Hsu and Tetsuya Sato",
                "Hypothesis testing interpretations and Rényi differential privacy",
                "AISTATS 2020",
                2020,
                "https://arxiv.org/abs/1905.09982",
                "Balle et al. 2020",
            ),
            Reference(
                "canonne2020discrete",
                "Clément L. Canonne, Gautam Kamath and Thomas Steinke",
                "The discrete Gaussian for differential privacy",
                "NeurIPS 2020",
                2020,
                "https://arxiv.org/abs/2004.00010v4",
                "Canonne, Kamath & Steinke 2020",
            ),
            Reference(
                "bun2016concentrated",
                "Mark Bun and Thomas Steinke",
                "Concentrated differential privacy: simplifications, extensions, and lower bounds",
                "TCC 2016",
                2016,
                "https://arxiv.org/abs/1605.02065",
                "Bun & Steinke 2016",
            ),
            Reference(
                "kairouz2015composition",
                "Peter Kairouz, Sewoong Oh and Pramod Viswanath",
                "The composition theorem for differential privacy",
                "ICML 2015",
                2015,
                "https://arxiv.org/abs/1311.0776",
                "Kairouz, Oh & Viswanath 2015",
            ),
            Reference(
                "dwork2010boosting",
                "Cynthia Dwork, Guy N. Rothblum and Salil Vadhan",
                "Boosting and differential privacy",
                "FOCS 2010",
                2010,
                "https://doi.org/10.1109/FOCS.2010.12",
                "Dwork, Rothblum & Vadhan 2010",
            ),
            Reference(
                "mironov2019sampled",
                "Ilya Mironov, Kunal Talwar and Li Zhang",
                "Rényi differential privacy of the sampled Gaussian mechanism",
                "arXiv:1908.10530",
                2019,
                "https://arxiv.org/abs/1908.10530",
                "Mironov, Talwar & Zhang 2019",
            ),
            Reference(
                "wang2019subsampled",
                "Yu-Xiang Wang, Borja Balle and Shiva Prasad Kasiviswanathan",
                "Subsampled Rényi differential privacy and analytical moments accountant",
                "AISTATS 2019",
                2019,
                "https://arxiv.org/abs/1808.00087",
                "Wang, Balle & Kasiviswanathan 2019",
            ),
            Reference(
                "abadi2016deep",
                "Martín Abadi, Andy Chu, Ian Goodfellow, H. Brendan McMahan, Ilya Mironov, Kunal Talwar and Li Zhang",
                "Deep learning with differential privacy",
                "ACM CCS 2016",
                2016,
                "https://arxiv.org/abs/1607.00133",
                "Abadi et al. 2016",
            ),
            Reference(
                "bu2020deep",
                "Zhiqi Bu, Jinshuo Dong, Qi Long and Weijie J. Su",
                "Deep learning with Gaussian differential privacy",
                "Harvard Data Science Review 2(3)",
                2020,
                "https://arxiv.org/abs/1911.11607",
                "Bu et al. 2020",
                aliases=("Bu, Dong, Long & Su 2020",),
            ),
            Reference(
                "zhu2022optimal",
                "Yuqing Zhu, Jinshuo Dong and Yu-Xiang Wang",
                "Optimal accounting of differential privacy via characteristic function",
                "AISTATS 2022",
                2022,
                "https://arxiv.org/abs/2106.08567",
                "Zhu, Dong & Wang 2022",
            ),
            Reference(
                "doroshenko2022connect",
                "Vadym Doroshenko, Badih Ghazi, Pritish Kamath, Ravi Kumar and Pasin Manurangsi",
                "Connect the dots: tighter discrete approximations of privacy loss distributions",
                "Proceedings on Privacy Enhancing Technologies 2022",
                2022,
                "https://arxiv.org/abs/2207.04380",
                "Doroshenko et al. 2022",
            ),
            Reference(
                "balle2018subsampling",
                "Borja Balle, Gilles Barthe and Marco Gaboardi",
                "Privacy amplification by subsampling: tight analyses via couplings and divergences",
                "NeurIPS 2018",
                2018,
                "https://arxiv.org/abs/1807.01647",
                "Balle, Barthe & Gaboardi 2018",
            ),
            Reference(
                "koskela2020computing",
                "Antti Koskela, Joonas Jälkö and Antti Honkela",
                "Computing tight differential privacy guarantees using FFT",
                "AISTATS 2020",
                2020,
                "https://arxiv.org/abs/1906.03049",
                "Koskela, Jälkö & Honkela 2020",
            ),
            Reference(
                "gopi2021numerical",
                "Sivakanth Gopi, Yin Tat Lee and Lukas Wutschitz",
                "Numerical composition of differential privacy",
                "NeurIPS 2021",
                2021,
                "https://arxiv.org/abs/2106.02848",
                "Gopi, Lee & Wutschitz 2021",
            ),
            Reference(
                "kulynych2024attack",
                "Bogdan Kulynych, Juan Felipe Gomez, Georgios Kaissis, Flavio du Pin Calmon and Carmela Troncoso",
                "Attack-aware noise calibration for differential privacy",
                "NeurIPS 2024",
                2024,
                "https://arxiv.org/abs/2407.02191",
                "Kulynych et al. 2024",
            ),
            Reference(
                "smith2022fully",
                "Adam Smith and Abhradeep Thakurta",
                "Fully adaptive composition for Gaussian differential privacy",
                "arXiv:2210.17520",
                2022,
                "https://arxiv.org/abs/2210.17520",
                "Smith & Thakurta 2022",
            ),
            Reference(
                "feldman2021individual",
                "Vitaly Feldman and Tijana Zrnic",
                "Individual privacy accounting via a Rényi filter",
                "NeurIPS 2021",
                2021,
                "https://arxiv.org/abs/2008.11193",
                "Feldman & Zrnic 2021",
            ),
            Reference(
                "whitehouse2023fully",
                "Justin Whitehouse, Aaditya Ramdas, Ryan Rogers and Zhiwei Steven Wu",
                "Fully-adaptive composition in differential privacy",
                "ICML 2023",
                2023,
                "https://arxiv.org/abs/2203.05481",
                "Whitehouse et al. 2023",
                aliases=("Whitehouse, Ramdas, Rogers & Wu 2023",),
            ),
            Reference(
                "rogers2016odometers",
                "Ryan Rogers, Aaron Roth, Jonathan Ullman and Salil Vadhan",
                "Privacy odometers and filters: pay-as-you-go composition",
                "NeurIPS 2016",
                2016,
                "https://arxiv.org/abs/1605.08294",
                "Rogers et al. 2016",
                aliases=("Rogers, Roth, Ullman & Vadhan 2016",),
            ),
            Reference(
                "karwa2018finite",
                "Vishesh Karwa and Salil Vadhan",
                "Finite sample differentially private confidence intervals",
                "ITCS 2018",
                2018,
                "https://arxiv.org/abs/1711.03908",
                "Karwa & Vadhan 2018",
            ),
            Reference(
                "kamath2019privately",
                "Gautam Kamath, Jerry Li, Vikrant Singhal and Jonathan Ullman",
                "Privately learning high-dimensional distributions",
                "COLT 2019",
                2019,
                "https://arxiv.org/abs/1805.00216",
                "Kamath et al. 2019",
                aliases=("Kamath, Li, Singhal & Ullman 2019",),
            ),
            Reference(
                "clopper1934",
                "C. J. Clopper and E. S. Pearson",
                "The use of confidence or fiducial limits illustrated in the case of the binomial",
                "Biometrika 26(4)",
                1934,
                "https://doi.org/10.1093/biomet/26.4.404",
                "Clopper & Pearson 1934",
            ),
            Reference(
                "jagielski2020auditing",
                "Matthew Jagielski, Jonathan Ullman and Alina Oprea",
                "Auditing differentially private machine learning: how private is private SGD?",
                "NeurIPS 2020",
                2020,
                "https://arxiv.org/abs/2006.07709",
                "Jagielski et al. 2020",
                aliases=("Jagielski, Ullman & Oprea 2020",),
            ),
            Reference(
                "nasr2021adversary",
                "Milad Nasr, Shuang Song, Abhradeep Thakurta, Nicolas Papernot and Nicholas Carlini",
                "Adversary instantiation: lower bounds for differentially private machine learning",
                "IEEE S&P 2021",
                2021,
                "https://arxiv.org/abs/2101.04535",
                "Nasr et al. 2021",
            ),
            Reference(
                "lyu2017sparse",
                "Min Lyu, Dong Su and Ninghui Li",
                "Understanding the sparse vector technique for differential privacy",
                "PVLDB 10(6)",
                2017,
                "https://arxiv.org/abs/1603.01699",
                "Lyu, Su & Li 2017",
            ),
            Reference(
                "okabe2008",
                "Masataka Okabe and Kei Ito",
                "Color universal design (CUD): how to make figures and presentations that are "
                "friendly to colorblind people",
                "J*Fly (web page)",
                2008,
                "https://jfly.uni-koeln.de/color/",
                "Okabe & Ito 2008",
            ),
            Reference(
                "dwork2006our",
                "Cynthia Dwork, Krishnaram Kenthapadi, Frank McSherry, Ilya Mironov and Moni Naor",
                "Our data, ourselves: privacy via distributed noise generation",
                "EUROCRYPT 2006",
                2006,
                "https://doi.org/10.1007/11761679_29",
                "Dwork, Kenthapadi et al. 2006",
                aliases=("Dwork, Kenthapadi, McSherry, Mironov & Naor 2006",),
            ),
            Reference(
                "vadhan2021concurrent",
                "Salil Vadhan and Tianhao Wang",
                "Concurrent composition of differential privacy",
                "TCC 2021",
                2021,
                "https://arxiv.org/abs/2105.14427",
                "Vadhan & Wang 2021",
            ),
            Reference(
                "lyu2022composition",
                "Xin Lyu",
                "Composition theorems for interactive differential privacy",
                "NeurIPS 2022",
                2022,
                "https://arxiv.org/abs/2207.09397",
                "Lyu 2022",
            ),
            Reference(
                "vadhan2022concurrent",
                "Salil Vadhan and Wanrong Zhang",
                "Concurrent composition theorems for differential privacy",
                "arXiv:2207.08335 (STOC 2023)",
                2022,
                "https://arxiv.org/abs/2207.08335",
                "Vadhan & Zhang 2022",
            ),
            Reference(
                "lecuyer2021practical",
                "Mathias Lécuyer",
                "Practical privacy filters and odometers with Rényi differential privacy and "
                "applications to differentially private deep learning",
                "arXiv:2103.01379",
                2021,
                "https://arxiv.org/abs/2103.01379",
                "Lécuyer 2021",
            ),
            Reference(
                "haney2023concurrent",
                "Samuel Haney, Michael Shoemate, Grace Tian, Salil Vadhan, Andrew Vyrros, Vicki Xu and Wanrong Zhang",
                "Concurrent composition for interactive differential privacy with adaptive privacy-loss parameters",
                "ACM CCS 2023",
                2023,
                "https://arxiv.org/abs/2309.05901",
                "Haney et al. 2023",
            ),
            Reference(
                "kamath2022new",
                "Gautam Kamath, Argyris Mouzakis and Vikrant Singhal",
                "New lower bounds for private estimation and a generalized fingerprinting lemma",
                "NeurIPS 2022",
                2022,
                "https://arxiv.org/abs/2205.08532",
                "Kamath, Mouzakis & Singhal 2022",
            ),
            Reference(
                "mcsherry2009privacy",
                "Frank McSherry",
                "Privacy integrated queries: an extensible platform for privacy-preserving data analysis",
                "SIGMOD 2009",
                2009,
                "https://doi.org/10.1145/1559845.1559850",
                "McSherry 2009",
            ),
            # -- works cited in docstrings only --------------------------------------------------------
            Reference(
                "machler2012",
                "Martin Mächler",
                "Accurately computing log(1 − exp(−|a|)) assessed by the Rmpfr package",
                "Rmpfr package vignette (CRAN)",
                2012,
                "https://cran.r-project.org/package=Rmpfr/vignettes/log1mexp-note.pdf",
                "Mächler 2012",
            ),
            Reference(
                "mckenna2020permute",
                "Ryan McKenna and Daniel Sheldon",
                "Permute-and-flip: a new mechanism for differentially private selection",
                "NeurIPS 2020",
                2020,
                "https://arxiv.org/abs/2010.12603",
                "McKenna & Sheldon 2020",
            ),
            Reference(
                "ding2021permute",
                "Zeyu Ding, Daniel Kifer, Sayed M. Saghaian N. E., Thomas Steinke, Yuxin Wang, "
                "Yingtai Xiao and Danfeng Zhang",
                "The permute-and-flip mechanism is identical to report-noisy-max with exponential noise",
                "arXiv:2105.07260",
                2021,
                "https://arxiv.org/abs/2105.07260",
                "Ding et al. 2021",
            ),
            Reference(
                "freedman1983",
                "David A. Freedman",
                "A note on screening regression equations",
                "The American Statistician 37(2)",
                1983,
                "https://doi.org/10.1080/00031305.1983.10482729",
                "Freedman 1983",
            ),
            Reference(
                "asoodeh2021three",
                "Shahab Asoodeh, Jiachun Liao, Flavio P. Calmon, Oliver Kosut and Lalitha Sankar",
                "Three variants of differential privacy: lossless conversion and applications",
                "IEEE Journal on Selected Areas in Information Theory 2(1)",
                2021,
                "https://arxiv.org/abs/2008.06529",
                "Asoodeh et al. 2021",
            ),
            Reference(
                "cesar2021bounding",
                "Mark Cesar and Ryan Rogers",
                "Bounding, concentrating, and truncating: unifying privacy loss composition for data analytics",
                "ALT 2021",
                2021,
                "https://arxiv.org/abs/2004.07223",
                "Cesar & Rogers 2021",
            ),
            Reference(
                "dong2020optimal",
                "Jinshuo Dong, David Durfee and Ryan Rogers",
                "Optimal differential privacy composition for exponential mechanisms",
                "ICML 2020",
                2020,
                "https://arxiv.org/abs/1909.13830",
                "Dong, Durfee & Rogers 2020",
            ),
            Reference(
                "li2012sampling",
                "Ninghui Li, Wahbeh Qardaji and Dong Su",
                "On sampling, anonymization, and differential privacy or, k-anonymization meets differential privacy",
                "ASIACCS 2012",
                2012,
                "https://arxiv.org/abs/1101.2604",
                "Li, Qardaji & Su 2012",
            ),
            Reference(
                "meiser2018tight",
                "Sebastian Meiser and Esfandiar Mohammadi",
                "Tight on budget? Tight bounds for r-fold approximate differential privacy",
                "ACM CCS 2018",
                2018,
                "https://doi.org/10.1145/3243734.3243765",
                "Meiser & Mohammadi 2018",
            ),
            Reference(
                "press2007numerical",
                "William H. Press, Saul A. Teukolsky, William T. Vetterling and Brian P. Flannery",
                "Numerical recipes: the art of scientific computing (3rd edition)",
                "Cambridge University Press",
                2007,
                "https://numerical.recipes/book.html",
                "Press et al. 2007",
                numbering="the 3rd edition",
            ),
        ),
        key=lambda r: r.key,
    )
)

_BY_KEY = {r.key: r for r in REFERENCES}

#: works whose link is neither a DOI nor an arXiv identifier, and why (every other entry has one)
NO_DOI_OR_ARXIV = {
    **{
        k: "blog post: its permanent address on differentialprivacy.org"
        for k in (
            "steinke2024pdp",
            "kamath2024onerun",
            "desfontaines2023composition",
            "steinke2023down",
            "steinke2023inverse",
            "kamath2023covariance",
            "pujol2023groups",
            "steinke2022composition",
            "canonne2022doona",
        )
    },
    "vinterbo2022": "PMLR proceedings page (PMLR assigns no DOI)",
    "bassi2019": "lecture slides with no public archived copy: no link",
    "fang2022shifted": "the authors' copy, as Steinke 2023b links it (the ACM DOI was not confirmed)",
    "okabe2008": "web page",
    "machler2012": "package vignette on CRAN",
    "press2007numerical": "book (the publisher's page)",
}


def get(key: str) -> Reference:
    """The entry for ``key``; ``KeyError`` naming the unknown key.

    >>> get("dong2022gaussian").year
    2022
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no bibliography entry with key {key!r} (see dpexplore.bibliography.references)") from None


def cite_text(key: str, where: str | None = None) -> str:
    """The citation as plain text, for docstrings and snippets: "Short (year), where".

    >>> cite_text("dong2022gaussian")
    'Dong, Roth & Su (2022)'
    """
    ref = get(key)
    name = ref.short.rsplit(" ", 1)[0]
    year = ref.short.rsplit(" ", 1)[1]
    out = f"{name} ({year})"
    return f"{out}, {where}" if where else out


def cite(key: str, where: str | None = None) -> str:
    """The citation as HTML for app text: "Short, where", linked to the work (a new tab), with
    the full entry as its tooltip.

    >>> "Steinke 2024, Theorem 4" in cite("steinke2024pdp", "Theorem 4")
    True
    """
    ref = get(key)
    label = html.escape(f"{ref.short}, {where}" if where else ref.short)
    numbered = f" Numbered as in {ref.numbered_as()}." if where and ref.numbered_as() else ""
    title = html.escape(ref.entry_text() + numbered, quote=True)
    if not ref.url:
        return f'<span class="dpexplore-cite" title="{title}">{label}</span>'
    return (
        f'<a class="dpexplore-cite" href="{html.escape(ref.url, quote=True)}" target="_blank" '
        f'rel="noopener" title="{title}">{label}</a>'
    )


def _short_pattern():
    alts = []
    for r in sorted(REFERENCES, key=lambda r: -len(r.short)):
        pat = re.escape(r.short).replace("\\&", "(?:&amp;|&)").replace("&", "(?:&amp;|&)")
        alts.append(f"(?P<{r.key}>{pat})")
    return re.compile(r"(?<![\w>])(?:" + "|".join(alts) + r")(?![\w])")


_SHORT_RE = None


def autolink(text: str) -> str:
    """``text`` (HTML) with every short citation ("Mironov 2017", "Dong, Roth &amp; Su 2022")
    made a link to the work, as :func:`cite` does; text inside existing links is left alone.

    >>> autolink("(Mironov 2017, Proposition 6)").count('href="https://arxiv.org/abs/1702.07476v3"')
    1
    """
    global _SHORT_RE
    if _SHORT_RE is None:
        _SHORT_RE = _short_pattern()
    parts = re.split(r"(<a\b.*?</a>)", text, flags=re.S)
    for i in range(0, len(parts), 2):
        parts[i] = _SHORT_RE.sub(lambda m: cite(m.lastgroup), parts[i])
    return "".join(parts)


def cited_keys(text: str) -> tuple[str, ...]:
    """The keys of the works ``text`` cites by their short form, in order of first mention.

    >>> cited_keys("Mironov 2017 and Liu et al. 2022; Mironov 2017")
    ('mironov2017', 'liu2022')
    """
    global _SHORT_RE
    if _SHORT_RE is None:
        _SHORT_RE = _short_pattern()
    return tuple(dict.fromkeys(m.lastgroup for m in _SHORT_RE.finditer(text)))


def bibliography_html(keys=None) -> str:
    """An HTML list of the entries ``keys`` (default: all), for an app's Theory section.

    >>> bibliography_html(["mironov2017"]).count("<li")
    1
    """
    refs = REFERENCES if keys is None else [get(k) for k in keys]
    items = []
    for r in refs:
        text = html.escape(f"{r.authors} ({r.year}). ")
        title = html.escape(r.title)
        title = (
            f'<a href="{html.escape(r.url, quote=True)}" target="_blank" rel="noopener">{title}</a>' if r.url else title
        )
        numbered = f" Numbered as in {html.escape(r.numbered_as())}." if r.numbered_as() else ""
        items.append(f'<li id="ref-{r.key}">{text}{title}. <i>{html.escape(r.venue)}</i>.{numbered}</li>')
    return '<ul class="dpexplore-bibliography">' + "".join(items) + "</ul>"


def bibliography_markdown() -> str:
    """The whole bibliography as a Markdown list (the first part of ``docs/references.md``, which
    :func:`dpexplore.bibliography.scanner.docs_markdown` completes with the table of every
    citation)."""
    lines = []
    for r in REFERENCES:
        title = f"[{r.title}]({r.url})" if r.url else r.title
        numbered = f" Numbered as in {r.numbered_as()}." if r.numbered_as() else ""
        lines.append(f'- <a id="{r.key}"></a>**{r.short}** — {r.authors} ({r.year}). {title}. *{r.venue}*.{numbered}')
    return "\n".join(lines)


if __name__ == "__main__":  # the docs page with its citation table: python -m dpexplore.bibliography
    print(bibliography_markdown())
