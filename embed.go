package herald

import "embed"

// Demo is the demo project under testdata/demo: its model (model.maql), its data (CSV
// files) and its metrics and reports (objects.json).
//
//go:embed testdata/demo/*.maql testdata/demo/*.csv testdata/demo/*.json
var Demo embed.FS
