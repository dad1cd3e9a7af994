// Package data embeds the lab's reference data: the numbers the source
// articles publish, as tab-separated text under reference/ (columns article,
// experiment, variant, metric, value, unit, quote; lines starting with # are
// comments). Embedding them lets the lab CLI run from any directory.
package data

import "embed"

// Reference holds reference/*.tsv.
//
//go:embed reference/*.tsv
var Reference embed.FS
