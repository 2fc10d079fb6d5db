// Bundles entry.js with plotly.js's own esbuild settings (plotly.js/esbuild-config.js: same
// plugins, aliases and defines), minified, into the file dpexplore serves.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const esbuild = require('esbuild');
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const version = require('plotly.js/package.json').version;

// plotly.js's esbuild-plugin-inline-css, with one change: its <style> element's id was the SHA-256
// of the CSS file's ABSOLUTE path, so the bundle's bytes depended on the folder it was built in
// (two checkouts gave two bundles, and an sdist's record of them never matched a rebuild). Here
// the id hashes the path relative to this folder: the same bytes wherever it is built.
const inlineCSS = {
    name: 'inline-css',
    setup(build) {
        build.onLoad({ filter: /\.(css)$/ }, async (args) => {
            const file = path.resolve(args.resolveDir, args.path);
            const id = crypto.createHash('sha256')
                .update(path.relative(__dirname, file).split(path.sep).join('/')).digest('hex');
            const css = fs.readFileSync(file, 'utf8');
            return {
                contents: `(function(){
        if (!document.getElementById('${id}')) {
            var e = document.createElement('style');
            e.id = '${id}';
            e.textContent = \`${css}\`;
            document.head.appendChild(e);
        }
    })();`,
                loader: 'js',
            };
        });
    },
};

const outfile = path.resolve(__dirname, '../../dpexplore/ui/static/plotly-dpexplore.min.js');

esbuild.build({
    entryPoints: [path.join(__dirname, 'entry.js')],
    outfile,
    format: 'iife',
    globalName: 'Plotly',
    bundle: true,
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    banner: { js: `/* plotly.js v${version} (MIT license, see LICENSE-plotly.js.txt): core + bar, heatmap, contour. ` +
                  'Built by dpexplore tools/plotly-bundle (npm ci && npm run build). */' },
    plugins: [inlineCSS, glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
    alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
    define: { global: 'window', 'define.amd': 'false' },
    target: 'es2016',
    logLevel: 'info',
}).catch(() => process.exit(1));
