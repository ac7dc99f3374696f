package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"coupond/models"
)

// runDebugRedeemSQL prints the one-shot redemption statement the server sends
// on PostgreSQL with the builtin order adapter, and its parameters' names in
// order, as JSON: {"sql": "...", "params": ["redeemNo", ...]}. The
// benchmark's own-SQL baseline runs exactly this statement in pgbench.
func runDebugRedeemSQL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("debug redeem-sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("debug redeem-sql takes no arguments")}
	}
	sql, params := models.RedeemOnceStatement()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		SQL    string   `json:"sql"`
		Params []string `json:"params"`
	}{sql, params})
}
