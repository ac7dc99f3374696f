package perf

import (
	"reflect"
	"testing"
)

func TestCPUReadingSince(t *testing.T) {
	before := cpuReading{machine: 10, procs: map[int]procCPUReading{
		1: {"coupond server", 2},
		2: {"postgresql client backends", 1},
		3: {"postgresql autovacuum", 4}, // ends before the second reading
		4: {"postgresql client backends", 5},
	}}
	after := cpuReading{machine: 20, procs: map[int]procCPUReading{
		1: {"coupond server", 3.5},
		2: {"postgresql client backends", 3},
		4: {"postgresql autovacuum", 0.5}, // the pid went to a new process
		5: {"postgresql other", 0.25},     // started between the readings
		6: {"generator (this process)", 0},
	}}
	want := map[string]float64{
		"coupond server":             1.5,
		"generator (this process)":   0,
		"postgresql (all processes)": 2.75,
		"postgresql client backends": 2,
		"postgresql autovacuum":      0.5,
		"postgresql other":           0.25,
		"machine (all processes)":    10,
	}
	if got := after.since(before); !reflect.DeepEqual(got, want) {
		t.Errorf("since = %v, want %v", got, want)
	}
}
