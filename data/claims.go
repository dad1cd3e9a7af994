package data

import _ "embed"

// Claims is claims/claims.json: every claim of the two source articles, the
// runs that judge it and how its verdict is computed (labkit/ledger).
//
//go:embed claims/claims.json
var Claims []byte
