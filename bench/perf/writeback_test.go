package perf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setWriteback sets the byte threshold for a run and its restore writes the
// host's ratio back; 0 bytes, or the host already at the value, touch
// nothing. A directory stands in for /proc/sys/vm.
func TestSetWriteback(t *testing.T) {
	tests := []struct {
		name       string
		bytes      int64
		host       map[string]string
		wantSet    bool
		wantDuring map[string]string
		wantAfter  map[string]string
	}{
		{name: "sets bytes, gives the ratio back", bytes: 8 << 20,
			host:       map[string]string{"dirty_background_bytes": "0", "dirty_background_ratio": "10"},
			wantSet:    true,
			wantDuring: map[string]string{"dirty_background_bytes": "8388608"},
			wantAfter:  map[string]string{"dirty_background_ratio": "10"}},
		{name: "gives the host's bytes back", bytes: 8 << 20,
			host:       map[string]string{"dirty_background_bytes": "67108864", "dirty_background_ratio": "0"},
			wantSet:    true,
			wantDuring: map[string]string{"dirty_background_bytes": "8388608"},
			wantAfter:  map[string]string{"dirty_background_bytes": "67108864"}},
		{name: "zero leaves the host", bytes: 0,
			host:       map[string]string{"dirty_background_bytes": "0", "dirty_background_ratio": "10"},
			wantDuring: map[string]string{"dirty_background_bytes": "0"},
			wantAfter:  map[string]string{"dirty_background_bytes": "0", "dirty_background_ratio": "10"}},
		{name: "already set", bytes: 8 << 20,
			host:       map[string]string{"dirty_background_bytes": "8388608", "dirty_background_ratio": "0"},
			wantDuring: map[string]string{"dirty_background_bytes": "8388608"},
			wantAfter:  map[string]string{"dirty_background_bytes": "8388608"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			old := vmDir
			vmDir = dir
			t.Cleanup(func() { vmDir = old })
			files := map[string]string{"dirty_expire_centisecs": "3000", "dirty_writeback_centisecs": "500"}
			for k, v := range tt.host {
				files[k] = v
			}
			for k, v := range files {
				if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			check := func(when string, want map[string]string) {
				t.Helper()
				for k, v := range want {
					b, err := os.ReadFile(filepath.Join(dir, k))
					if err != nil {
						t.Fatal(err)
					}
					if got := strings.TrimSpace(string(b)); got != v {
						t.Errorf("%s: vm.%s = %s, want %s", when, k, got, v)
					}
				}
			}
			hw, restore := setWriteback(tt.bytes)
			if hw.Set != tt.wantSet || hw.Err != "" {
				t.Fatalf("Set %v (err %q), want %v", hw.Set, hw.Err, tt.wantSet)
			}
			if hw.Before.ExpireCentisecs != 3000 || hw.Before.WritebackCentisecs != 500 {
				t.Errorf("before %+v, want expire 3000 and writeback 500", hw.Before)
			}
			check("during", tt.wantDuring)
			restore()
			check("after", tt.wantAfter)
		})
	}
}

// A host whose settings cannot be read records why and changes nothing.
func TestSetWritebackUnreadable(t *testing.T) {
	old := vmDir
	vmDir = filepath.Join(t.TempDir(), "missing")
	t.Cleanup(func() { vmDir = old })
	hw, restore := setWriteback(8 << 20)
	restore()
	if hw.Set || hw.Err == "" {
		t.Fatalf("got %+v, want not set, with the error", hw)
	}
}
