// Bundles entry.js with plotly.js's own esbuild settings (plotly.js/esbuild-config.js: same
// plugins, aliases and defines), minified, into the file dpexplore serves.
const path = require('path');
const esbuild = require('esbuild');
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const InlineCSSPlugin = require('esbuild-plugin-inline-css');
const version = require('plotly.js/package.json').version;

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
    plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
    alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
    define: { global: 'window', 'define.amd': 'false' },
    target: 'es2016',
    logLevel: 'info',
}).catch(() => process.exit(1));
