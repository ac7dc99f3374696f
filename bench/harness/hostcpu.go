package harness

import (
	"os"
	"strconv"
	"strings"
)

// HostCPU is a reading of the machine's CPU time counters (/proc/stat, in
// clock ticks, all CPUs together).
type HostCPU struct {
	Total, Idle, Steal float64
}

// ReadHostCPU reads the machine's CPU time counters; the zero value when they
// cannot be read.
func ReadHostCPU() HostCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return HostCPU{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseHostCPU(line)
}

// parseHostCPU reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice.
func parseHostCPU(line string) HostCPU {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return HostCPU{}
	}
	var h HostCPU
	for i, s := range f[1:] {
		v, _ := strconv.ParseFloat(s, 64)
		if i >= 8 { // guest time is already counted in user time
			break
		}
		h.Total += v
		switch i {
		case 3, 4: // idle, iowait
			h.Idle += v
		case 7:
			h.Steal += v
		}
	}
	return h
}

// HostShare is how the machine's CPU time was spent between two readings.
type HostShare struct {
	// IdlePct is the share of CPU time nobody on the machine used.
	IdlePct float64 `json:"idle_pct"`
	// StealPct is the share the hypervisor gave to other virtual machines
	// while this one had work to run: capacity the machine did not have.
	StealPct float64 `json:"steal_pct"`
}

// Since is the share of CPU time spent since the earlier reading a.
func (h HostCPU) Since(a HostCPU) HostShare {
	d := h.Total - a.Total
	if d <= 0 {
		return HostShare{}
	}
	pct := func(x float64) float64 { return float64(int(1000*x/d+0.5)) / 10 }
	return HostShare{IdlePct: pct(h.Idle - a.Idle), StealPct: pct(h.Steal - a.Steal)}
}
