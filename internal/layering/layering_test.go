// Package layering holds the test that keeps coupond's import direction:
// transports (graph, httpapi) -> services -> models, jobs -> services, and
// only cmd above it all; errcode and orderwire at the bottom, importing nothing
// of coupond; and bench, a module of its own, speaking to coupond only over
// the wire.
package layering

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg { return listPackagesIn(t, "", "coupond/...") }

// listPackagesIn lists the packages of pattern from directory dir ("" for the
// test's own), with their imports and dependencies.
func listPackagesIn(t *testing.T, dir, pattern string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", pattern)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s in %q: %v\n%s", pattern, dir, err, stderr)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

func underAny(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if under(path, p) {
			return true
		}
	}
	return false
}

func TestImportDirection(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		// Nothing but cmd may depend on the transports, the jobs or the console.
		if !under(p.ImportPath, "coupond/cmd") {
			for _, d := range p.Deps {
				for _, top := range []string{"coupond/graph", "coupond/httpapi", "coupond/jobs", "coupond/web"} {
					if under(d, top) && !under(p.ImportPath, top) {
						t.Errorf("%s depends on %s: only cmd may", p.ImportPath, d)
					}
				}
			}
		}
		// The transports, their authentication and jobs go through services,
		// never GORM or Redis.
		if underAny(p.ImportPath, "coupond/graph", "coupond/httpapi", "coupond/authn", "coupond/jobs") {
			for _, imp := range p.Imports {
				if underAny(imp, "gorm.io/gorm", "coupond/internal/testdb", "github.com/redis/go-redis/v9") {
					t.Errorf("%s imports %s: go through services", p.ImportPath, imp)
				}
			}
		}
		// Only the transports and cmd authenticate HTTP requests.
		if !underAny(p.ImportPath, "coupond/cmd", "coupond/graph", "coupond/httpapi", "coupond/authn") {
			for _, d := range p.Deps {
				if under(d, "coupond/authn") {
					t.Errorf("%s depends on %s: only the transports and cmd may", p.ImportPath, d)
				}
			}
		}
		// jobs schedules service calls and speaks services' types only.
		if under(p.ImportPath, "coupond/jobs") {
			for _, imp := range p.Imports {
				if under(imp, "coupond/models") {
					t.Errorf("%s imports %s: use the services' types", p.ImportPath, imp)
				}
			}
		}
		// The error table and the webhook wire format sit under everything:
		// every layer, and order systems outside coupond, may import them.
		if underAny(p.ImportPath, "coupond/errcode", "coupond/orderwire") {
			for _, d := range p.Deps {
				if under(d, "coupond") {
					t.Errorf("%s depends on %s: it must import nothing of coupond", p.ImportPath, d)
				}
			}
		}
		// Of coupond's code, only services (its Cache) and the Redis test
		// helper speak to Redis.
		if !underAny(p.ImportPath, "coupond/services", "coupond/internal/testredis") {
			for _, imp := range p.Imports {
				if under(imp, "github.com/redis/go-redis/v9") {
					t.Errorf("%s imports %s: only services may", p.ImportPath, imp)
				}
			}
		}
		// models is the bottom layer.
		if under(p.ImportPath, "coupond/models") {
			for _, d := range p.Deps {
				if under(d, "coupond/services") {
					t.Errorf("models depends on %s", d)
				}
			}
		}
	}
}

// bench (module coupond/bench) drives coupond over its public API. Of coupond
// it may use the webhook wire format and the reference order service, never
// services or models.
func TestBenchUsesOnlyTheWire(t *testing.T) {
	pkgs := listPackagesIn(t, "../../bench", "./...")
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d bench packages", len(pkgs))
	}
	allowed := []string{"coupond/bench", "coupond/orderwire", "coupond/internal/orderservice"}
	for _, p := range pkgs {
		for _, d := range p.Deps {
			if under(d, "coupond") && !underAny(d, allowed...) {
				t.Errorf("%s depends on %s: bench may use only %v of coupond", p.ImportPath, d, allowed[1:])
			}
		}
	}
}
