// plotly.js core (which includes the scatter trace and the cartesian axes, legends, annotations,
// shapes, hover and the modebar) plus the other trace types the dpexplore dashboards draw.
// Keep in sync with TRACE_TYPES in dpexplore/ui/plotwidget.py (a test checks both).
var Plotly = require('plotly.js/lib/core');

Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/heatmap'),
    require('plotly.js/lib/contour'),
]);

module.exports = Plotly;
