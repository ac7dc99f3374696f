//go:build crashpoints

// This file is built only with -tags crashpoints, for the fault suite
// (bench/run.sh faults): it gives serve a --crash-at flag that kills the
// process at a crash point of the redemption protocol. Production builds
// carry neither the flag nor the code.

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"coupond/services"
)

func init() { serveFlagHooks = append(serveFlagHooks, crashAtFlag) }

// crashAtFlag registers --crash-at POINT[:N]. The Nth time (default the
// first) a redemption reaches POINT, the process writes one line naming the
// point and the redemption number to stderr and sends itself SIGKILL: like
// kill -9, no deferred function runs, no answer is written, no connection is
// closed cleanly.
func crashAtFlag(fs flagSet) func(*services.Options) error {
	spec := fs.String("crash-at", "", "fault testing: SIGKILL this process the Nth time a redemption reaches POINT, given as POINT[:N]; points: "+
		strings.Join(crashPointNames(), ", "))
	return func(o *services.Options) error {
		if *spec == "" {
			return nil
		}
		point, n, err := parseCrashAt(*spec)
		if err != nil {
			return err
		}
		var reached atomic.Int64
		o.CrashPoint = func(p services.CrashPoint, redeemNo string) {
			if p != point || reached.Add(1) != n {
				return
			}
			fmt.Fprintf(os.Stderr, "crash-at: %s reached %d times, redemption %s: SIGKILL\n", p, n, redeemNo)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way; this request goes no further
		}
		return nil
	}
}

// parseCrashAt parses POINT[:N].
func parseCrashAt(spec string) (services.CrashPoint, int64, error) {
	name, count, hasCount := strings.Cut(spec, ":")
	n := int64(1)
	if hasCount {
		var err error
		if n, err = strconv.ParseInt(count, 10, 64); err != nil || n < 1 {
			return "", 0, fmt.Errorf("--crash-at %q: N must be a positive integer", spec)
		}
	}
	for _, p := range services.CrashPoints {
		if string(p) == name {
			return p, n, nil
		}
	}
	return "", 0, fmt.Errorf("--crash-at %q: unknown point; points: %s", spec, strings.Join(crashPointNames(), ", "))
}

func crashPointNames() []string {
	names := make([]string, len(services.CrashPoints))
	for i, p := range services.CrashPoints {
		names[i] = string(p)
	}
	return names
}
