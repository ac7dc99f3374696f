// Package layering holds the test that keeps coupond's import direction:
// transport -> services -> models, jobs -> services, and only cmd above it all.
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

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "coupond/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
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

func TestImportDirection(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		// Nothing but cmd may depend on the transport, the jobs or the console.
		if !under(p.ImportPath, "coupond/cmd") {
			for _, d := range p.Deps {
				for _, top := range []string{"coupond/graph", "coupond/jobs", "coupond/web"} {
					if under(d, top) && !under(p.ImportPath, top) {
						t.Errorf("%s depends on %s: only cmd may", p.ImportPath, d)
					}
				}
			}
		}
		// graph and jobs go through services, never GORM.
		if under(p.ImportPath, "coupond/graph") || under(p.ImportPath, "coupond/jobs") {
			for _, imp := range p.Imports {
				if under(imp, "gorm.io/gorm") || under(imp, "coupond/internal/testdb") {
					t.Errorf("%s imports %s: go through services", p.ImportPath, imp)
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
