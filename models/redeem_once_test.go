package models

import (
	"regexp"
	"strconv"
	"testing"
)

// The parameter names printed with the statement must match its placeholders
// one for one, or the benchmark's own-SQL baseline would bind the wrong values.
func TestRedeemOnceStatementNamesEveryParameter(t *testing.T) {
	sql, names := RedeemOnceStatement()
	highest := 0
	for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(sql, -1) {
		n, _ := strconv.Atoi(m[1])
		highest = max(highest, n)
	}
	if highest != len(names) {
		t.Fatalf("statement uses $1..$%d, names given for %d: %v", highest, len(names), names)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || n == "" {
			t.Fatalf("parameter name %q empty or repeated in %v", n, names)
		}
		seen[n] = true
	}
}
