"""Builds dpexplore/ui/static/jupyter-widgets-offline.js (and its license file) from npm packages.

What a static HTML page needs to render Jupyter widgets without any network, in one script:

* require.js (the AMD loader the widget manager's embed bundle runs on);
* anywidget's front end, registered as the AMD module ``anywidget`` (the widget manager looks a
  module up in require.js before it tries a CDN, so a module already defined is never fetched);
* the @jupyter-widgets/html-manager ``embed-amd.js`` bundle without its ipywidgets-7 copies
  (``@jupyter-widgets/base7``, ``controls7``: dpexplore needs ipywidgets 8, whose stored state
  never asks for them; 0.8 MB less) and without its source-map comments;
* Font Awesome's solid font (the widgets' icons: an accordion's chevron, ...) as a data: URL in
  place of the file the bundle would fetch next to the page (78 kB; the other Font Awesome fonts
  are not used by the dashboards and are left out: their icons show as empty boxes).

Usage (needs ``npm``; versions: the html-manager that ships with the installed ipywidgets 8,
the anywidget front end of the installed anywidget)::

    python tools/widgets-offline/vendor.py [--html-manager 1.0.15] [--anywidget 0.11.0] \
        [--requirejs 2.3.8] [--fontawesome 5.15.4]
"""

from __future__ import annotations

import argparse
import base64
import json
import pathlib
import re
import subprocess
import tarfile
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
OUT = REPO / "dpexplore" / "ui" / "static" / "jupyter-widgets-offline.js"
LICENSE = OUT.with_name("LICENSE-jupyter-widgets-offline.txt")
FONT_VAR = "window.__dpexploreFaSolid900"
DROP = ("@jupyter-widgets/base7", "@jupyter-widgets/controls7")
IPYWIDGETS_LICENSE = """Copyright (c) 2015 Project Jupyter Contributors
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""
REQUIREJS_LICENSE = """MIT License

Copyright jQuery Foundation and other contributors, https://jquery.org/

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
THE SOFTWARE.
"""


def unpack(spec: str, tmp: pathlib.Path) -> tuple[pathlib.Path, dict]:
    r = subprocess.run(["npm", "pack", "--silent", spec], cwd=tmp, capture_output=True, text=True, check=True)
    tgz = tmp / r.stdout.strip().splitlines()[-1]
    dest = tmp / tgz.stem
    with tarfile.open(tgz) as t:
        t.extractall(dest, filter="data")
    pkg = dest / "package"
    return pkg, json.loads((pkg / "package.json").read_text())


def trim_embed(text: str) -> str:
    """embed-amd.js is blank-line separated chunks (a license comment, one define, a source-map
    comment); keep the chunks that define nothing in DROP, without source-map comments."""
    chunks = text.split("\n\n")
    kept = [c for c in chunks if not any(f'define("{name}"' in c for name in DROP)]
    assert len(kept) == len(chunks) - len(DROP), "embed-amd.js layout changed"
    kept = [re.sub(r"\n?//# sourceMappingURL=\S+", "", c) for c in kept]
    out = "\n\n".join(kept)
    assert 'define("@jupyter-widgets/html-manager"' in out and "renderWidgets" in out
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html-manager", default="1.0.15")
    ap.add_argument("--anywidget", default="0.11.0")
    ap.add_argument("--requirejs", default="2.3.8")
    ap.add_argument("--fontawesome", default="5.15.4")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        hm, hm_meta = unpack(f"@jupyter-widgets/html-manager@{a.html_manager}", tmp)
        aw, aw_meta = unpack(f"anywidget@{a.anywidget}", tmp)
        rq, rq_meta = unpack(f"requirejs@{a.requirejs}", tmp)
        fa, fa_meta = unpack(f"@fortawesome/fontawesome-free@{a.fontawesome}", tmp)
        solid = (fa / "webfonts/fa-solid-900.woff2").read_bytes()
        (hashed,) = [p.name for p in (hm / "dist").glob("*.woff2") if p.read_bytes() == solid]
        embed = trim_embed((hm / "dist/embed-amd.js").read_text())
        embed, n = re.subn(r'\b\w+\.p\+"' + re.escape(hashed) + '"', FONT_VAR, embed)
        assert n >= 1, "the solid font's URL is not where it was"
        anywidget = (aw / "dist/index.js").read_text()
        # its one anonymous define() becomes a named one: the widget manager finds "anywidget"
        # in require.js and never asks a CDN for it
        assert anywidget.count('\ndefine(["@jupyter-widgets/base"]') == 1, "anywidget's AMD define changed"
        parts = [
            f"/* Jupyter widgets for an offline static page, built by dpexplore "
            f"tools/widgets-offline/vendor.py: requirejs {rq_meta['version']} (MIT), anywidget "
            f"{aw_meta['version']} (MIT), @jupyter-widgets/html-manager {hm_meta['version']} "
            f"embed-amd.js without base7/controls7 (BSD-3-Clause), Font Awesome Free "
            f"{fa_meta['version']} fa-solid-900.woff2 (SIL OFL 1.1); licenses in "
            f"{LICENSE.name}. */",
            (rq / "require.js").read_text(),
            "(function (define) {\n" + anywidget + "\n})(function (deps, factory) { "
            'return window.define("anywidget", deps, factory); });',
            f'{FONT_VAR}="data:font/woff2;base64,{base64.b64encode(solid).decode()}";',
            embed,
        ]
        text = "\n".join(parts) + "\n"
        assert not re.search(r"</script|<!--", text, re.I), "would end the inline <script> early"
        OUT.write_text(text)
        notices = (hm / "dist/embed.js.LICENSE.txt").read_text()
        LICENSE.write_text(
            f"{OUT.name} holds parts of four npm packages; their licenses follow.\n\n"
            f"== requirejs {rq_meta['version']} ==\n\n{REQUIREJS_LICENSE}\n"
            f"== anywidget {aw_meta['version']} ==\n\n{(aw / 'LICENSE').read_text()}\n"
            f"== @jupyter-widgets/html-manager {hm_meta['version']} (ipywidgets) ==\n\n"
            f"{IPYWIDGETS_LICENSE}\nThird-party notices of the libraries bundled in it:\n\n{notices}\n"
            f"== Font Awesome Free {fa_meta['version']}: fa-solid-900.woff2, as a data: URL ==\n\n"
            f"{(fa / 'LICENSE.txt').read_text()}"
            # Font Awesome's license names the OFL by URL only; the OFL asks for its full text
            f"\n== SIL Open Font License 1.1 (the license of the Font Awesome font above) ==\n\n"
            f"{(pathlib.Path(__file__).with_name('OFL-1.1.txt')).read_text()}"
        )
    print(f"{OUT.relative_to(REPO)}: {OUT.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
